// How the engine's C entry points fail: every call runs `guarded`, so an
// exception becomes a topo_engine_status and one line for Slurm's log, and
// none crosses into Slurm.
#pragma once

#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "common/error.h"
#include "db/error.h"
#include "plugin/engine/engine.h"

namespace topo::engine {

// An error with the status the caller gets.
struct EngineError : std::runtime_error {
  EngineError(topo_engine_status s, const std::string& what) : std::runtime_error(what), status(s) {}
  topo_engine_status status;
};

// `text` into the caller's buffer, cut to fit and always terminated.
void write_message(char* msg, size_t size, std::string_view text);

// `text` in a malloc'd string the caller frees.
char* copy_out(const std::string& text);

template <class F>
int guarded(char* msg, size_t size, F&& f) {
  write_message(msg, size, "");
  try {
    return f();
  } catch (const EngineError& e) {
    write_message(msg, size, e.what());
    return e.status;
  } catch (const ParseError& e) {
    write_message(msg, size, e.what());
    return TOPO_ENGINE_CONFIG;
  } catch (const DbError& e) {
    write_message(msg, size, e.what());
    return TOPO_ENGINE_DATABASE;
  } catch (const std::system_error& e) {
    write_message(msg, size, e.what());
    return TOPO_ENGINE_CONFIG;
  } catch (const std::bad_alloc&) {
    write_message(msg, size, "out of memory");
    return TOPO_ENGINE_INTERNAL;
  } catch (const std::exception& e) {
    write_message(msg, size, fmt::format("internal error: {}", e.what()));
    return TOPO_ENGINE_INTERNAL;
  } catch (...) {
    write_message(msg, size, "internal error: an unknown exception");
    return TOPO_ENGINE_INTERNAL;
  }
}

}  // namespace topo::engine
