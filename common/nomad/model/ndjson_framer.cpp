#include "common/nomad/model/ndjson_framer.h"

#include <algorithm>

namespace cn::nomad {

namespace {

constexpr std::size_t kQuotedTail = 200;

bool is_blank(std::string_view s) {
  return std::ranges::all_of(s, [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

void emit(std::string_view line, std::vector<std::string>& out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!is_blank(line)) out.emplace_back(line);
}

}  // namespace

Result<std::vector<std::string>> NdjsonFramer::feed(std::string_view chunk) {
  if (failed_) return fail("NDJSON stream already failed (line too long)");
  std::vector<std::string> lines;
  while (!chunk.empty()) {
    auto nl = chunk.find('\n');
    std::string_view piece = chunk.substr(0, nl);
    if (buffer_.size() + piece.size() > max_line_) {
      failed_ = true;
      buffer_.clear();
      return fail("NDJSON line longer than " + std::to_string(max_line_) + " bytes");
    }
    if (nl == std::string_view::npos) {
      buffer_.append(piece);
      break;
    }
    if (buffer_.empty()) {
      emit(piece, lines);
    } else {
      buffer_.append(piece);
      emit(buffer_, lines);
      buffer_.clear();
    }
    chunk.remove_prefix(nl + 1);
  }
  return lines;
}

Status NdjsonFramer::finish() {
  if (failed_) return fail("NDJSON stream already failed (line too long)");
  if (is_blank(buffer_)) {
    buffer_.clear();
    return {};
  }
  std::string tail = buffer_.substr(0, kQuotedTail);
  std::size_t size = buffer_.size();
  buffer_.clear();
  return fail("NDJSON stream ended inside a line (" + std::to_string(size) +
              " bytes, no newline): " + tail);
}

void NdjsonFramer::reset() {
  buffer_.clear();
  failed_ = false;
}

}  // namespace cn::nomad
