#include "labeler/cluster/duty_runner.h"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

namespace cn::labeler::cluster {

DutyRunner::DutyRunner(LeaderElection& election, Clock& clock,
                       std::vector<std::unique_ptr<Duty>> duties, PassObserver observer,
                       std::shared_ptr<spdlog::logger> log, std::chrono::milliseconds poll)
    : election_(election),
      clock_(clock),
      duties_(std::move(duties)),
      observer_(std::move(observer)),
      log_(log ? std::move(log) : spdlog::default_logger()),
      poll_(poll) {}

DutyRunner::~DutyRunner() {
  join();
}

void DutyRunner::start(std::stop_token stop) {
  for (auto& duty : duties_) {
    Duty* d = duty.get();
    threads_.emplace_back([this, d, stop] { run_duty(*d, stop); });
  }
}

void DutyRunner::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void DutyRunner::run_duty(Duty& duty, std::stop_token stop) {
  // A failed pass is retried sooner than its interval, but never in a tight loop.
  BackoffStrategy backoff(
      BackoffPolicy{std::chrono::seconds{1},
                    std::min<std::chrono::milliseconds>(duty.interval(), std::chrono::minutes{1}),
                    std::chrono::milliseconds{500}});
  MonoTime next_due = clock_.now();
  while (!stop.stop_requested()) {
    LeaderView view = election_.view();
    MonoTime now = clock_.now();
    if (!view.leading || !view.fence || now < next_due) {
      MonoTime wake = now + poll_;
      if (view.leading && next_due < wake) wake = next_due;
      clock_.sleep_until(wake, stop);
      continue;
    }
    // The pass stops on shutdown and when this term ends, whichever comes first.
    std::stop_source pass_stop;
    std::stop_callback on_stop(stop, [&pass_stop] { pass_stop.request_stop(); });
    std::stop_callback on_term_end(election_.term_token(),
                                   [&pass_stop] { pass_stop.request_stop(); });
    PassOutcome outcome;
    try {
      outcome = duty.run_pass(*view.fence, pass_stop.get_token());
    } catch (const std::exception& e) {
      // A bug in one duty must not take the labeler's node duties down with it.
      log_->error("cluster duty pass threw: duty={} error=\"{}\"", to_string(duty.name()),
                  e.what());
      outcome.end = PassEnd::read_failed;
    }
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - now);
    if (outcome.end == PassEnd::fence_lost) election_.fence_refused(*view.fence);
    if (outcome.end == PassEnd::complete) {
      backoff.reset();
      next_due = now + duty.interval();
    } else {
      next_due = clock_.now() + backoff.next_delay();
    }
    // The duties log what they found; this line is the pass's end, the same for every duty.
    const bool notable = outcome.end != PassEnd::complete || outcome.deleted > 0 ||
                         duty.name() == DutyName::identity_gc;
    log_->log(outcome.end != PassEnd::complete && outcome.end != PassEnd::stopped
                  ? spdlog::level::warn
                  : (notable ? spdlog::level::info : spdlog::level::debug),
              "cluster duty pass: duty={} end={} took_ms={} deleted={}", to_string(duty.name()),
              to_string(outcome.end), took.count(), outcome.deleted);
    if (observer_) observer_(duty.name(), outcome, took);
  }
}

}  // namespace cn::labeler::cluster
