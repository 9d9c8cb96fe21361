// NDJSON framing + event frame parsing. The first two bytes pick the chunk size and the line
// limit; the rest is the stream. Checks that framing does not depend on how the bytes were
// chunked, and that every allocation that comes out of a frame has a valid ID.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/nomad/model/event_frame.h"
#include "common/nomad/model/ndjson_framer.h"
#include "common/util/alloc_id.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Framed {
  std::vector<std::string> lines;
  bool failed = false;
  bool truncated = false;
};

Framed frame(std::string_view stream, std::size_t chunk, std::size_t max_line) {
  cn::nomad::NdjsonFramer framer(max_line);
  Framed out;
  for (std::size_t i = 0; i < stream.size(); i += chunk) {
    auto lines = framer.feed(stream.substr(i, chunk));
    if (!lines) {
      out.failed = true;
      return out;
    }
    out.lines.insert(out.lines.end(), lines->begin(), lines->end());
  }
  out.truncated = !framer.finish().has_value();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::size_t chunk = 1 + data[0] % 64;
  std::size_t max_line = 16 + static_cast<std::size_t>(data[1]) * 256;
  std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);

  Framed chunked = frame(stream, chunk, max_line);
  Framed whole = frame(stream, stream.size() + 1, max_line);
  check(chunked.failed == whole.failed);
  if (chunked.failed) return 0;
  check(chunked.lines == whole.lines);
  check(chunked.truncated == whole.truncated);

  for (const auto& line : chunked.lines) {
    check(line.size() <= max_line && !line.empty() && line.find('\n') == std::string::npos);
    auto msg = cn::nomad::parse_event_frame(line);
    if (!msg) continue;
    if (const auto* f = std::get_if<cn::nomad::EventFrame>(&*msg)) {
      for (const auto& event : f->events) {
        check(!(event.allocation && event.payload_error));
        if (event.allocation) check(cn::is_valid_alloc_id(event.allocation->id));
      }
    }
  }
  return 0;
}
