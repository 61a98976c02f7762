#include "common/line_source.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"

namespace topo {

namespace {
// The first block fits most inputs whole (a topo_aware.conf, a busy file);
// blocks double while the input goes on, up to kBlock, and past it only to
// hold a line longer than the block.
constexpr size_t kFirstBlock = 4 << 10;
constexpr size_t kBlock = 64 << 10;
}  // namespace

LineSource::LineSource(std::istream& in, std::string file, size_t max_line, uint64_t max_bytes)
    : in_(in),
      file_(std::move(file)),
      max_line_(max_line),
      max_bytes_(max_bytes),
      buf_(std::min(kFirstBlock, max_line + 1)) {}

bool LineSource::next(std::string_view& line) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    size_t length = nl ? static_cast<size_t>(nl - start) : end_ - begin_;
    if (length > max_line_)
      throw ParseError(file_, number_ + 1,
                       fmt::format("line longer than {} bytes; expected text lines of this format", max_line_));
    if (nl || (eof_ && begin_ < end_)) {
      line = std::string_view(start, length);
      begin_ += length + (nl ? 1 : 0);
      ++number_;
      return true;
    }
    if (eof_) return false;
    refill();
  }
}

void LineSource::refill() {
  std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  bool line_fills_block = end_ == buf_.size();
  bool input_goes_on = buf_.size() < kBlock && read_ >= buf_.size();
  if (line_fills_block || input_goes_on) buf_.resize(std::min(buf_.size() * 2, max_line_ + 1));
  in_.read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
  size_t got = static_cast<size_t>(in_.gcount());
  end_ += got;
  read_ += got;
  if (got == 0) eof_ = true;
  if (read_ > max_bytes_)
    throw ParseError(file_, number_ + 1, fmt::format("more than {} bytes; expected a file of this format", max_bytes_));
}

std::string read_all(std::istream& in, const std::string& file, uint64_t max_bytes) {
  std::string text;
  std::vector<char> block(kBlock);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    size_t got = static_cast<size_t>(in.gcount());
    if (text.size() + got > max_bytes)
      throw ParseError(file, 0, fmt::format("more than {} bytes; expected a file of this format", max_bytes));
    text.append(block.data(), got);
  }
  if (in.bad()) throw ParseError(file, 0, "read error");
  return text;
}

}  // namespace topo
