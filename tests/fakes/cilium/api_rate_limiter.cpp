#include "tests/fakes/cilium/api_rate_limiter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "common/util/mutex.h"

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

namespace {

// strconv.ParseBool's spellings.
std::optional<bool> parse_go_bool(const std::string& v) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") return true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False")
    return false;
  return std::nullopt;
}

// The agent's parsePositiveInt: base 10, no sign games, no overflow.
Result<int> parse_non_negative_int(const std::string& v) {
  if (v.empty() || !std::all_of(v.begin(), v.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      }))
    return fail("unable to parse positive integer \"" + v + "\"");
  const long long n = std::stoll(v);
  if (n > std::numeric_limits<int>::max())
    return fail("unable to parse positive integer \"" + v + "\": overflow");
  return static_cast<int>(n);
}

// "<number>/<interval>", the interval a Go duration whose leading 1 may be left out ("2/s",
// "10/m", "5/10s"); a bare number of nanoseconds is refused, as the agent refuses it.
Result<double> parse_rate(const std::string& v) {
  const std::size_t slash = v.find('/');
  if (slash == std::string::npos) return fail("not in the form number/interval");
  const double count = std::stod(v.substr(0, slash));
  std::string interval = v.substr(slash + 1);
  if (interval.empty()) return fail("empty interval");
  if (std::all_of(interval.begin(), interval.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
    return fail("interval \"" + interval + "\" must contain duration suffix");
  if (!std::isdigit(static_cast<unsigned char>(interval[0]))) interval = "1" + interval;
  auto d = parse_go_duration(interval);
  if (!d) return std::unexpected(d.error());
  if (d->count() <= 0) return fail("interval must be positive");
  return count / std::chrono::duration<double>(*d).count();
}

Status merge_key(RateLimitParams& p, std::string key, const std::string& value) {
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto set_int = [&value](int& field) -> Status {
    auto n = parse_non_negative_int(value);
    if (!n) return std::unexpected(n.error());
    field = *n;
    return {};
  };
  auto set_duration = [&value](std::chrono::nanoseconds& field) -> Status {
    auto d = parse_go_duration(value);
    if (!d) return std::unexpected(d.error());
    field = *d;
    return {};
  };
  auto set_bool = [&value](bool& field) -> Status {
    const auto b = parse_go_bool(value);
    if (!b) return fail("unable to parse bool \"" + value + "\"");
    field = *b;
    return {};
  };
  if (key == "rate-limit") {
    auto r = parse_rate(value);
    if (!r) return std::unexpected(r.error());
    p.rate_per_sec = *r;
    return {};
  }
  if (key == "rate-burst") return set_int(p.burst);
  if (key == "parallel-requests") return set_int(p.parallel_requests);
  if (key == "min-parallel-requests") return set_int(p.min_parallel_requests);
  if (key == "max-parallel-requests") return set_int(p.max_parallel_requests);
  if (key == "mean-over") return set_int(p.mean_over);
  if (key == "skip-initial") return set_int(p.skip_initial);
  if (key == "max-wait-duration") return set_duration(p.max_wait);
  if (key == "min-wait-duration") return set_duration(p.min_wait);
  if (key == "estimated-processing-duration") return set_duration(p.estimated_processing);
  if (key == "auto-adjust") return set_bool(p.auto_adjust);
  if (key == "log") {
    bool ignored = false;
    return set_bool(ignored);
  }
  if (key == "delayed-adjustment-factor") {
    p.delayed_adjustment_factor = std::stod(value);
    return {};
  }
  if (key == "max-adjustment-factor") {
    p.max_adjustment_factor = std::stod(value);
    return {};
  }
  return fail("unknown rate limiting option \"" + key + "\"");
}

}  // namespace

Result<std::pair<std::string, RateLimitParams>> parse_api_rate_limit(
    const std::string& spec, const std::map<std::string, RateLimitParams>& base) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos) return fail("expected <group>=<key>:<value>,...: " + spec);
  const std::string group = spec.substr(0, eq);
  // A group the agent has no defaults for starts from zero values, as NewAPILimiterFromConfig.
  RateLimitParams p;
  if (const auto it = base.find(group); it != base.end()) p = it->second;
  std::string_view rest = std::string_view(spec).substr(eq + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (!item.empty()) {
      const std::size_t colon = item.find(':');
      if (colon == std::string_view::npos)
        return fail("expected key:value in " + std::string(item));
      const std::string key(item.substr(0, colon));
      const std::string value(item.substr(colon + 1));
      try {
        if (auto merged = merge_key(p, key, value); !merged)
          return fail("bad rate limit option " + key + ":" + value + ": " + merged.error().message);
      } catch (const std::exception&) {
        return fail("bad value for " + key + ": " + value);
      }
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return std::make_pair(group, p);
}

namespace {

// cc pkg/rate/api_limiter.go: the fallbacks of NewAPILimiter and the semaphore's resolution
// (each admitted request takes kSemaphoreSize / P of it, P read when it arrives).
constexpr int kDefaultMeanOver = 10;
constexpr double kDefaultDelayedAdjustmentFactor = 0.5;
constexpr double kDefaultMaxAdjustmentFactor = 100.0;
constexpr long long kSemaphoreSize = 10'000'000;
constexpr const char* kWaitCancelled =
    "request cancelled while waiting for rate limiting slot: context canceled";

RateLimitParams with_fallbacks(RateLimitParams p) {
  if (p.mean_over == 0) p.mean_over = kDefaultMeanOver;
  if (p.min_parallel_requests == 0) p.min_parallel_requests = 1;
  if (p.burst == 0) p.burst = 1;
  if (p.delayed_adjustment_factor == 0.0)
    p.delayed_adjustment_factor = kDefaultDelayedAdjustmentFactor;
  if (p.max_adjustment_factor == 0.0) p.max_adjustment_factor = kDefaultMaxAdjustmentFactor;
  return p;
}

}  // namespace

struct ApiRateLimiter::Shared {
  struct Waiter {
    long long weight = 0;
    std::stop_source wake;
    bool granted = false;
  };

  Shared(Clock& c, const RateLimitParams& p)
      : clock(c),
        params(p),
        rate(p.rate_per_sec),
        burst(p.burst),
        parallel(p.parallel_requests),
        tokens(p.burst),
        last(c.now()) {}

  // x/time/rate's advance: tokens accrue at the current rate and are capped by the current burst
  // every time, so a burst lowered by an adjustment takes effect at the next reservation.
  void refill(MonoTime now) REQUIRES(mu) {
    const double elapsed = std::max(0.0, std::chrono::duration<double>(now - last).count());
    tokens = std::min<double>(burst, tokens + elapsed * rate);
    last = std::max(last, now);
  }

  // semaphore.Weighted: grant from the front while the front fits, so a big waiter is not
  // overtaken by smaller ones behind it.
  void grant_waiters() REQUIRES(mu) {
    while (!waiters.empty() && kSemaphoreSize - semaphore_used >= waiters.front()->weight) {
      auto next = waiters.front();
      waiters.pop_front();
      semaphore_used += next->weight;
      next->granted = true;
      next->wake.request_stop();
    }
  }

  void release(long long weight) REQUIRES(mu) {
    semaphore_used -= weight;
    grant_waiters();
  }

  double mean_processing_seconds() const REQUIRES(mu) {
    if (processing.empty()) return 0;
    double sum = 0;
    for (const auto d : processing) sum += std::chrono::duration<double>(d).count();
    return sum / static_cast<double>(processing.size());
  }

  // requestFinished for a success: the new mean sets the factor, and the factor rescales the
  // initial rate, burst and parallel allowance, each kept within a factor F of where it started.
  void record_success(std::chrono::nanoseconds took) REQUIRES(mu) {
    processing.push_back(took);
    while (processing.size() > static_cast<std::size_t>(params.mean_over)) processing.pop_front();
    if (!params.auto_adjust || params.estimated_processing.count() == 0) return;
    const double max_f = params.max_adjustment_factor;
    const double mean = mean_processing_seconds();
    const double estimated = std::chrono::duration<double>(params.estimated_processing).count();
    // A mean of zero is an infinite factor in Go's float division; the clamp makes it F.
    double f = mean > 0 ? estimated / mean : max_f;
    f = std::max(1.0 / max_f, std::min(max_f, f));
    adjustment_factor = f;
    auto within_factor = [max_f](double value, double initial) {
      return std::max(initial / max_f, std::min(initial * max_f, value));
    };
    auto delayed = [&](double initial, double lower, double upper) {
      double n = initial + (initial * f - initial) * params.delayed_adjustment_factor;
      if (lower > 0 && n < lower) n = lower;
      if (upper > 0 && n > upper) n = upper;
      return n;
    };
    const double p0 = params.parallel_requests;
    parallel = static_cast<int>(
        within_factor(delayed(p0, params.min_parallel_requests, params.max_parallel_requests), p0));
    if (params.rate_per_sec > 0) {
      const MonoTime now = clock.now();
      refill(now);  // SetLimit/SetBurst account the tokens earned so far at the old values
      rate = within_factor(params.rate_per_sec * f, params.rate_per_sec);
      const double b0 = params.burst;
      burst = static_cast<int>(
          std::lround(within_factor(delayed(b0, params.min_parallel_requests, 0), b0)));
    }
  }

  Clock& clock;
  const RateLimitParams params;
  mutable Mutex mu;
  double rate GUARDED_BY(mu);
  int burst GUARDED_BY(mu);
  int parallel GUARDED_BY(mu);
  double adjustment_factor GUARDED_BY(mu) = 0;
  double tokens GUARDED_BY(mu);
  MonoTime last GUARDED_BY(mu);
  long long scheduled GUARDED_BY(mu) = 0;
  long long semaphore_used GUARDED_BY(mu) = 0;
  std::deque<std::shared_ptr<Waiter>> waiters GUARDED_BY(mu);
  std::deque<std::chrono::nanoseconds> processing GUARDED_BY(mu);  // the last mean_over successes
};

ApiRateLimiter::Slot::Slot(Slot&& other) noexcept
    : shared_(std::move(other.shared_)),
      semaphore_weight_(other.semaphore_weight_),
      served_(other.served_),
      started_(other.started_) {
  other.shared_.reset();
}

ApiRateLimiter::Slot& ApiRateLimiter::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    done();
    shared_ = std::move(other.shared_);
    other.shared_.reset();
    semaphore_weight_ = other.semaphore_weight_;
    served_ = other.served_;
    started_ = other.started_;
  }
  return *this;
}

void ApiRateLimiter::Slot::finish(bool succeeded) {
  if (!shared_) return;
  {
    MutexLock lock(shared_->mu);
    if (semaphore_weight_ > 0) shared_->release(semaphore_weight_);
    if (served_ && succeeded) shared_->record_success(shared_->clock.now() - started_);
  }
  shared_.reset();
}

ApiRateLimiter::ApiRateLimiter(Clock& clock, RateLimitParams params)
    : clock_(clock),
      params_(with_fallbacks(params)),
      shared_(std::make_shared<Shared>(clock, params_)) {}

ApiRateLimiter::Current ApiRateLimiter::current() const {
  MutexLock lock(shared_->mu);
  return Current{shared_->rate, shared_->burst, shared_->parallel, shared_->adjustment_factor,
                 shared_->mean_processing_seconds()};
}

bool ApiRateLimiter::take_parallel_share(long long weight, MonoTime deadline,
                                         std::stop_token stop) {
  auto waiter = std::make_shared<Shared::Waiter>();
  waiter->weight = weight;
  {
    MutexLock lock(shared_->mu);
    if (shared_->waiters.empty() && kSemaphoreSize - shared_->semaphore_used >= weight) {
      shared_->semaphore_used += weight;
      return true;
    }
    shared_->waiters.push_back(waiter);
  }
  {
    std::stop_callback forward(stop, [&waiter] { waiter->wake.request_stop(); });
    clock_.sleep_until(deadline, waiter->wake.get_token());
  }
  MutexLock lock(shared_->mu);
  // Granted just as the wait ended: Go's semaphore keeps the grant too.
  if (waiter->granted) return true;
  const bool was_front = !shared_->waiters.empty() && shared_->waiters.front() == waiter;
  std::erase(shared_->waiters, waiter);
  // A departing front waiter may have been what held smaller ones back.
  if (was_front) shared_->grant_waiters();
  return false;
}

ApiRateLimiter::Admission ApiRateLimiter::admit(std::stop_token stop,
                                                const std::function<bool()>& client_gone) {
  Admission a;
  a.slot.shared_ = shared_;
  auto refuse = [&a](std::string text) {
    a.slot.failed();
    a.refused = std::move(text);
    return std::move(a);
  };
  const MonoTime scheduled = clock_.now();
  bool skip = false;
  int parallel = 0;
  double pacing_seconds = 0;
  {
    MutexLock lock(shared_->mu);
    ++shared_->scheduled;
    skip = params_.skip_initial > 0 && shared_->scheduled <= params_.skip_initial;
    parallel = shared_->parallel;
    pacing_seconds = shared_->mean_processing_seconds();
  }
  if (skip) {
    a.slot.served_ = true;
    a.slot.started_ = clock_.now();
    return a;
  }
  bool waited = false;

  if (parallel > 0) {
    // Without a maximum wait only the stop ends the wait; a year stands in for "forever".
    const MonoTime deadline = params_.max_wait.count() > 0
                                  ? scheduled + params_.max_wait
                                  : scheduled + std::chrono::hours(24 * 365);
    const long long weight = kSemaphoreSize / parallel;
    if (!take_parallel_share(weight, deadline, stop)) {
      return refuse("timed out while waiting to be served with " + std::to_string(parallel) +
                    " parallel requests: " +
                    (stop.stop_requested() ? "context canceled" : "context deadline exceeded"));
    }
    a.slot.semaphore_weight_ = weight;
    waited = clock_.now() > scheduled;
  }

  const auto waited_for_share = clock_.now() - scheduled;
  std::chrono::nanoseconds delay{0};
  bool reserved = false;
  {
    MutexLock lock(shared_->mu);
    if (params_.rate_per_sec > 0) {
      const MonoTime now = clock_.now();
      shared_->refill(now);
      shared_->tokens -= 1;  // reserve first, as x/time/rate does; waiters queue behind each other
      reserved = true;
      if (shared_->tokens < 0) {
        // Microsecond rounding keeps the message readable ("2s", not "1.999999999s").
        delay = std::chrono::microseconds(
            static_cast<long long>(std::llround(-shared_->tokens / shared_->rate * 1e6)));
      }
    }
  }
  if (params_.min_wait > delay) delay = params_.min_wait;
  if (params_.max_wait.count() > 0 && delay + waited_for_share > params_.max_wait) {
    if (reserved) {
      MutexLock lock(shared_->mu);
      shared_->tokens += 1;  // the reservation is given back before the pacing sleep
    }
    if (pacing_seconds > 0) {
      clock_.sleep_for(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::duration<double>(pacing_seconds)),
                       stop);
    }
    return refuse("request would have to wait " + go_duration(delay) +
                  " to be served (maximum wait duration: " +
                  go_duration(params_.max_wait - waited_for_share) + ")");
  }
  if (delay.count() > 0) {
    waited = true;
    if (!clock_.sleep_for(delay, stop)) {
      if (reserved) {
        MutexLock lock(shared_->mu);
        shared_->tokens += 1;
      }
      return refuse(kWaitCancelled);
    }
  }
  if (stop.stop_requested() || (waited && client_gone && client_gone())) {
    if (reserved) {
      MutexLock lock(shared_->mu);
      shared_->tokens += 1;  // only a request that is processed keeps its reservation
    }
    return refuse(kWaitCancelled);
  }
  a.slot.served_ = true;
  a.slot.started_ = clock_.now();
  return a;
}

}  // namespace cn::fakes::cilium
