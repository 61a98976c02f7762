#include "plugin/engine/engine_error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace topo::engine {

void write_message(char* msg, size_t size, std::string_view text) {
  if (!msg || size == 0) return;
  size_t n = std::min(size - 1, text.size());
  std::memcpy(msg, text.data(), n);
  msg[n] = '\0';
}

char* copy_out(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

}  // namespace topo::engine
