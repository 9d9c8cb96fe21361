#include "tests/fakes/cilium/api_rate_limiter.h"

#include <algorithm>
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
      } else if (key == "parallel-requests") {
        p.parallel_requests = std::stoi(value);
      } else if (key != "max-parallel-requests" && key != "min-parallel-requests" &&
                 key != "auto-adjust" && key != "log" && key != "estimated-processing-duration" &&
                 key != "mean-over") {
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

namespace {

// cc pkg/rate/api_limiter.go: defaultMeanOver, and the errors a waiting request can end with.
constexpr std::size_t kMeanOver = 10;
constexpr const char* kWaitCancelled =
    "request cancelled while waiting for rate limiting slot: context canceled";

}  // namespace

struct ApiRateLimiter::Shared {
  struct Waiter {
    std::stop_source wake;
    bool granted = false;
  };

  Shared(Clock& c, double initial_tokens) : clock(c), tokens(initial_tokens), last(c.now()) {}

  // Caller holds mu. A freed parallel slot goes straight to the oldest waiter.
  void release_parallel() {
    if (waiters.empty()) {
      --in_flight;
      return;
    }
    auto next = waiters.front();
    waiters.pop_front();
    next->granted = true;
    next->wake.request_stop();
  }

  std::chrono::nanoseconds mean_processing() const {
    if (processing.empty()) return std::chrono::nanoseconds{0};
    std::chrono::nanoseconds sum{0};
    for (const auto d : processing) sum += d;
    return sum / static_cast<long>(processing.size());
  }

  Clock& clock;
  std::mutex mu;
  double tokens;
  MonoTime last;
  int in_flight = 0;
  std::deque<std::shared_ptr<Waiter>> waiters;
  std::deque<std::chrono::nanoseconds> processing;  // the last kMeanOver served requests
};

ApiRateLimiter::Slot::Slot(Slot&& other) noexcept
    : shared_(std::move(other.shared_)),
      holds_parallel_(other.holds_parallel_),
      served_(other.served_),
      started_(other.started_) {
  other.shared_.reset();
}

ApiRateLimiter::Slot& ApiRateLimiter::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    done();
    shared_ = std::move(other.shared_);
    other.shared_.reset();
    holds_parallel_ = other.holds_parallel_;
    served_ = other.served_;
    started_ = other.started_;
  }
  return *this;
}

void ApiRateLimiter::Slot::done() {
  if (!shared_) return;
  std::lock_guard lock(shared_->mu);
  if (served_) {
    shared_->processing.push_back(shared_->clock.now() - started_);
    if (shared_->processing.size() > kMeanOver) shared_->processing.pop_front();
  }
  if (holds_parallel_) shared_->release_parallel();
  shared_.reset();
}

ApiRateLimiter::ApiRateLimiter(Clock& clock, RateLimitParams params)
    : clock_(clock),
      params_(params),
      shared_(std::make_shared<Shared>(clock, static_cast<double>(params.burst))) {}

bool ApiRateLimiter::take_parallel_slot(MonoTime deadline, std::stop_token stop) {
  auto waiter = std::make_shared<Shared::Waiter>();
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->in_flight < params_.parallel_requests) {
      ++shared_->in_flight;
      return true;
    }
    shared_->waiters.push_back(waiter);
  }
  {
    std::stop_callback forward(stop, [&waiter] { waiter->wake.request_stop(); });
    clock_.sleep_until(deadline, waiter->wake.get_token());
  }
  std::lock_guard lock(shared_->mu);
  if (waiter->granted) return true;
  std::erase(shared_->waiters, waiter);
  return false;
}

ApiRateLimiter::Admission ApiRateLimiter::admit(std::stop_token stop,
                                                const std::function<bool()>& client_gone) {
  Admission a;
  a.slot.shared_ = shared_;
  auto refuse = [&a](std::string text) {
    a.slot.done();
    a.refused = std::move(text);
    return std::move(a);
  };
  const MonoTime scheduled = clock_.now();
  bool waited = false;

  if (params_.parallel_requests > 0) {
    // Without a maximum wait only the stop ends the wait; a year stands in for "forever".
    const MonoTime deadline = params_.max_wait.count() > 0
                                  ? scheduled + params_.max_wait
                                  : scheduled + std::chrono::hours(24 * 365);
    bool queued = false;
    {
      std::lock_guard lock(shared_->mu);
      queued = shared_->in_flight >= params_.parallel_requests;
    }
    waited = queued;
    if (!take_parallel_slot(deadline, stop)) {
      return refuse("timed out while waiting to be served with " +
                    std::to_string(params_.parallel_requests) + " parallel requests: " +
                    (stop.stop_requested() ? "context canceled" : "context deadline exceeded"));
    }
    a.slot.holds_parallel_ = true;
  }

  bool reserved = false;
  if (params_.rate_per_sec > 0) {
    const auto waited_for_slot = clock_.now() - scheduled;
    MonoTime ready_at;
    std::optional<std::string> too_long;
    std::chrono::nanoseconds pacing{0};
    {
      std::lock_guard lock(shared_->mu);
      const MonoTime now = clock_.now();
      const double elapsed = std::chrono::duration<double>(now - shared_->last).count();
      shared_->last = now;
      shared_->tokens =
          std::min<double>(params_.burst, shared_->tokens + elapsed * params_.rate_per_sec);
      shared_->tokens -= 1;  // reserve first, as x/time/rate does; waiters queue behind each other
      ready_at = now;
      if (shared_->tokens < 0) {
        // Microsecond rounding keeps the message readable ("2s", not "1.999999999s").
        const auto wait = std::chrono::microseconds(
            static_cast<long long>(std::llround(-shared_->tokens / params_.rate_per_sec * 1e6)));
        if (params_.max_wait.count() > 0 && wait + waited_for_slot > params_.max_wait) {
          shared_->tokens += 1;  // the reservation is cancelled before the pacing sleep
          pacing = shared_->mean_processing();
          too_long = "request would have to wait " + go_duration(wait) +
                     " to be served (maximum wait duration: " +
                     go_duration(params_.max_wait - waited_for_slot) + ")";
        } else {
          ready_at = now + wait;
        }
      }
    }
    if (too_long) {
      if (pacing.count() > 0) clock_.sleep_for(pacing, stop);
      return refuse(*too_long);
    }
    reserved = true;
    if (ready_at > clock_.now()) {
      waited = true;
      if (!clock_.sleep_until(ready_at, stop)) {
        std::lock_guard lock(shared_->mu);
        shared_->tokens += 1;
        reserved = false;
      }
    }
  }
  if (stop.stop_requested() || (waited && client_gone && client_gone())) {
    if (reserved) {
      std::lock_guard lock(shared_->mu);
      shared_->tokens += 1;  // only a request that is processed keeps its reservation
    }
    return refuse(kWaitCancelled);
  }
  a.slot.served_ = true;
  a.slot.started_ = clock_.now();
  return a;
}

}  // namespace cn::fakes::cilium
