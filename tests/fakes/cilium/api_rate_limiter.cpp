#include "tests/fakes/cilium/api_rate_limiter.h"

#include <cmath>
#include <cstdio>

namespace cn::fakes::cilium {

namespace {

// Go prints fractions without trailing zeros: 1.5s, 2.000001s.
std::string fraction(long long whole, long long frac, int digits) {
  std::string out = std::to_string(whole);
  if (frac == 0) return out;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*lld", digits, frac);
  std::string f = buf;
  while (!f.empty() && f.back() == '0') f.pop_back();
  return out + "." + f;
}

}  // namespace

std::string go_duration(std::chrono::nanoseconds d) {
  long long ns = d.count();
  if (ns == 0) return "0s";
  std::string sign;
  if (ns < 0) {
    sign = "-";
    ns = -ns;
  }
  if (ns < 1000) return sign + std::to_string(ns) + "ns";
  if (ns < 1000000) return sign + fraction(ns / 1000, ns % 1000, 3) + "µs";
  if (ns < 1000000000) return sign + fraction(ns / 1000000, ns % 1000000, 6) + "ms";
  const long long secs_total = ns / 1000000000;
  const long long frac = ns % 1000000000;
  const long long h = secs_total / 3600;
  const long long m = (secs_total % 3600) / 60;
  const long long s = secs_total % 60;
  std::string out = sign;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  return out + fraction(s, frac, 9) + "s";
}

Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text) {
  if (text == "0") return std::chrono::nanoseconds{0};
  double total = 0;
  std::size_t i = 0;
  if (text.empty()) return fail("empty duration");
  while (i < text.size()) {
    std::size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.'))
      ++j;
    if (j == i) return fail("invalid duration \"" + std::string(text) + "\"");
    const double num = std::stod(std::string(text.substr(i, j - i)));
    std::size_t k = j;
    while (k < text.size() && !std::isdigit(static_cast<unsigned char>(text[k])) && text[k] != '.')
      ++k;
    const std::string_view unit = text.substr(j, k - j);
    double mult;
    if (unit == "ns")
      mult = 1;
    else if (unit == "us" || unit == "µs")
      mult = 1e3;
    else if (unit == "ms")
      mult = 1e6;
    else if (unit == "s")
      mult = 1e9;
    else if (unit == "m")
      mult = 60e9;
    else if (unit == "h")
      mult = 3600e9;
    else
      return fail("unknown unit \"" + std::string(unit) + "\" in duration \"" + std::string(text) +
                  "\"");
    total += num * mult;
    i = k;
  }
  return std::chrono::nanoseconds(static_cast<long long>(std::llround(total)));
}

Result<std::pair<std::string, RateLimitParams>> parse_api_rate_limit(
    const std::string& spec, const std::map<std::string, RateLimitParams>& base) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos) return fail("expected <group>=<key>:<value>,...: " + spec);
  const std::string group = spec.substr(0, eq);
  RateLimitParams p;
  if (const auto it = base.find(group); it != base.end()) p = it->second;
  std::string_view rest = std::string_view(spec).substr(eq + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) return fail("expected key:value in " + std::string(item));
    const std::string key(item.substr(0, colon));
    std::string value(item.substr(colon + 1));
    try {
      if (key == "rate-limit") {
        if (value.ends_with("/s")) value.resize(value.size() - 2);
        p.rate_per_sec = std::stod(value);
      } else if (key == "rate-burst") {
        p.burst = std::stoi(value);
      } else if (key == "max-wait-duration") {
        auto d = parse_go_duration(value);
        if (!d) return std::unexpected(d.error());
        p.max_wait = *d;
      } else if (key != "max-parallel-requests" && key != "min-parallel-requests" &&
                 key != "auto-adjust" && key != "parallel-requests" && key != "log" &&
                 key != "estimated-processing-duration" && key != "mean-over") {
        return fail("unknown rate limit key " + key);
      }
    } catch (const std::exception&) {
      return fail("bad value for " + key + ": " + value);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return std::make_pair(group, p);
}

ApiRateLimiter::ApiRateLimiter(Clock& clock, RateLimitParams params)
    : clock_(clock), params_(params), tokens_(params.burst), last_(clock.now()) {}

std::optional<std::string> ApiRateLimiter::acquire(std::stop_token stop) {
  if (params_.rate_per_sec <= 0) return std::nullopt;
  MonoTime ready_at;
  {
    std::lock_guard lock(mu_);
    const MonoTime now = clock_.now();
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    tokens_ = std::min<double>(params_.burst, tokens_ + elapsed * params_.rate_per_sec);
    tokens_ -= 1;  // reserve first, as x/time/rate does; waiters queue behind each other
    if (tokens_ >= 0) return std::nullopt;
    // Microsecond rounding keeps the message readable ("2s", not "1.999999999s").
    const auto wait = std::chrono::microseconds(
        static_cast<long long>(std::llround(-tokens_ / params_.rate_per_sec * 1e6)));
    if (params_.max_wait.count() > 0 && wait > params_.max_wait) {
      tokens_ += 1;
      return "request would have to wait " + go_duration(wait) +
             " to be served (maximum wait duration: " + go_duration(params_.max_wait) + ")";
    }
    ready_at = now + wait;
  }
  clock_.sleep_until(ready_at, std::move(stop));
  return std::nullopt;
}

}  // namespace cn::fakes::cilium
