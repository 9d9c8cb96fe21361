#include "tests/fakes/nomad/go_values.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace cn::fakes {

namespace {

struct Unit {
  std::string_view name;
  double nanos;
};

// Longest names first so "ms" is not read as "m" followed by garbage.
constexpr Unit kUnits[] = {{"ns", 1.0}, {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"ms", 1e6},
                           {"s", 1e9},  {"m", 60e9}, {"h", 3600e9}};

}  // namespace

std::optional<std::chrono::nanoseconds> parse_go_duration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s.front() == '-' || s.front() == '+') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds{0};
  if (s.empty()) return std::nullopt;
  double total = 0;
  while (!s.empty()) {
    std::size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    std::string number(s.substr(0, i));
    if (number == "." || number.find('.') != number.rfind('.')) return std::nullopt;
    s.remove_prefix(i);
    const Unit* unit = nullptr;
    for (const auto& u : kUnits) {
      if (s.starts_with(u.name) && (!unit || u.name.size() > unit->name.size())) unit = &u;
    }
    if (!unit) return std::nullopt;
    s.remove_prefix(unit->name.size());
    total += std::stod(number) * unit->nanos;
  }
  if (total > 9.2e18) return std::nullopt;  // Go reports overflow as an error
  auto ns = static_cast<std::int64_t>(std::llround(total));
  return std::chrono::nanoseconds{negative ? -ns : ns};
}

std::string rfc3339_nano(std::int64_t unix_nanos) {
  std::int64_t secs = unix_nanos / 1'000'000'000;
  std::int64_t frac = unix_nanos % 1'000'000'000;
  if (frac < 0) {
    frac += 1'000'000'000;
    --secs;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  std::string out = buf;
  if (frac != 0) {
    std::snprintf(buf, sizeof buf, ".%09lld", static_cast<long long>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "Z";
}

std::int64_t unix_nanos(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string IdGenerator::hex(int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(static_cast<std::size_t>(digits));
  for (int i = 0; i < digits; ++i) out += kHex[rng_() & 0xF];
  return out;
}

std::string IdGenerator::uuid() {
  return hex(8) + "-" + hex(4) + "-" + hex(4) + "-" + hex(4) + "-" + hex(12);
}

}  // namespace cn::fakes
