#include "common/util/go_duration.h"

#include <array>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>

namespace cn {

std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "0") return std::chrono::milliseconds{0};
  double total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.'))
      ++i;
    if (i == start) return std::nullopt;
    double value = 0;
    try {
      value = std::stod(std::string(text.substr(start, i - start)));
    } catch (...) {
      return std::nullopt;
    }
    std::size_t unit_start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) == 0 &&
           text[i] != '.')
      ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit == "ns")
      scale = 1e-6;
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs")
      scale = 1e-3;
    else if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1e3;
    else if (unit == "m")
      scale = 60e3;
    else if (unit == "h")
      scale = 3600e3;
    else
      return std::nullopt;
    total_ms += value * scale;
  }
  if (total_ms < 0 || total_ms > 1e12) return std::nullopt;
  return std::chrono::milliseconds{std::llround(total_ms)};
}

std::string format_go_duration(std::chrono::milliseconds d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string text;
  if (ms < 0) {
    text = "-";
    ms = -ms;
  }
  if (ms < 1000) return text + std::to_string(ms) + "ms";
  static constexpr std::array<std::pair<long long, const char*>, 3> kUnits = {
      {{3'600'000, "h"}, {60'000, "m"}, {1'000, "s"}}};
  for (const auto& [size, unit] : kUnits) {
    if (ms >= size) {
      text += std::to_string(ms / size) + unit;
      ms %= size;
    }
  }
  // Go writes the seconds with a fraction ("1.5s"); a whole-millisecond remainder is rare in a
  // flag, so it is written as its own "ms" part, which parse_go_duration reads back alike.
  if (ms > 0) text += std::to_string(ms) + "ms";
  return text;
}

}  // namespace cn
