#include "labeler/services/services_loop.h"

#include <map>
#include <set>
#include <thread>
#include <variant>

#include <spdlog/spdlog.h>

#include "common/nomad/model/event_frame.h"

namespace cn::labeler {

ServicesLoop::ServicesLoop(ServicesLoopDeps deps, ServicesLoopOptions options)
    : deps_(std::move(deps)),
      options_(std::move(options)),
      jitter_(BackoffJitter::seed_or_random(options_.seed)),
      wake_(true) {
  if (!deps_.log) deps_.log = spdlog::default_logger();
}

Deadline ServicesLoop::call_deadline(std::stop_token stop) const {
  return Deadline{deps_.clock.now() + options_.call_timeout, std::move(stop)};
}

void ServicesLoop::run(std::stop_token stop) {
  deps_.log->info("services started: lb_api={} check_interval_ms={} resync_s={}",
                  to_string(deps_.sync.lb_api()), options_.check_interval.count(),
                  options_.resync_interval.count());
  std::jthread events([this](std::stop_token st) { event_loop(st); });
  std::jthread watch([this](std::stop_token st) { watch_loop(st); });
  std::stop_callback forward(stop, [&] {
    events.request_stop();
    watch.request_stop();
  });
  pass_loop(stop);
  deps_.log->info("services stopped: passes={}", passes_.load());
}

void ServicesLoop::publish(const ServicesPass& pass) {
  std::size_t ready = 0;
  std::size_t not_ready = 0;
  for (const auto& service : pass.checked.services) {
    for (const auto& backend : service.backends) {
      (backend.state == BackendState::ready ? ready : not_ready) += 1;
    }
  }
  // A service without a VIP is in both the claim's and the catalog's problems: counted once.
  std::set<std::pair<std::string, std::string>> services_out;
  std::size_t backends_out = 0;
  for (const auto* problems :
       {&pass.claim_problems, &pass.catalog.problems, &pass.checked.problems}) {
    for (const auto& problem : *problems) {
      if (problem.alloc_id.empty()) {
        services_out.emplace(problem.nomad_namespace, problem.name);
      } else {
        backends_out += 1;
      }
    }
  }
  deps_.metrics.services("served").Set(static_cast<double>(pass.checked.services.size()));
  deps_.metrics.services("left_out").Set(static_cast<double>(services_out.size()));
  deps_.metrics.service_backends("ready").Set(static_cast<double>(ready));
  deps_.metrics.service_backends("not_ready").Set(static_cast<double>(not_ready));
  deps_.metrics.service_backends("left_out").Set(static_cast<double>(backends_out));
  if (pass.lb_written) {
    deps_.metrics.services_last_write_timestamp().Set(
        static_cast<double>(unix_millis(deps_.clock.wall_now())) / 1000.0);
  }
}

void ServicesLoop::pass_loop(std::stop_token stop) {
  BackoffStrategy backoff(options_.backoff, jitter_);
  const MonoTime start = deps_.clock.now();
  MonoTime next_check = start + options_.check_interval;
  MonoTime next_resync = start + options_.resync_interval;
  MonoTime retry_at = MonoTime::max();
  bool pass_due = false;
  while (!stop.stop_requested()) {
    // A pass that is wanted (a kick, a relist) waits out the backoff after a failed one; the
    // check poll and the resync keep their own times.
    const bool wanted = pass_due || relist_due_;
    const MonoTime pass_at = retry_at == MonoTime::max() ? deps_.clock.now() : retry_at;
    const MonoTime wake_at =
        wanted ? std::min({next_check, next_resync, pass_at}) : std::min(next_check, next_resync);
    if (deps_.clock.now() < wake_at) {
      if (wake_.wait_until(deps_.clock, wake_at, stop)) pass_due = true;
      continue;  // the loop's head decides again with what woke it
    }
    pass_due = wake_.take() || pass_due;
    const MonoTime now = deps_.clock.now();
    if (now >= next_resync) {
      relist_due_ = true;
      // Until the relist succeeds, the backoff times it, not the resync period.
      next_resync = now + options_.resync_interval;
    }
    const bool may_pass = now >= pass_at;
    if (!((pass_due || relist_due_) && may_pass)) {
      if (now < next_check) continue;
      next_check = now + options_.check_interval;
      auto polled = deps_.sync.poll_own_checks(call_deadline(stop));
      deps_.calls.record(Peer::nomad, polled);
      if (!polled) {
        deps_.log->warn(
            "services: this node's checks not read, kept as they were: kind={} "
            "error=\"{}\"",
            to_string(polled.error().kind), polled.error().message);
        continue;
      }
      // Our report changed: serve it here now rather than after our own watch sees it.
      if (*polled) pass_due = true;
      continue;
    }

    const bool relist = relist_due_.exchange(false);
    pass_due = false;
    Result<ServicesPass> pass = deps_.sync.run_once(call_deadline(stop), relist);
    if (stop.stop_requested()) break;
    deps_.calls.record(Peer::nomad, pass);
    deps_.metrics.services_passes(pass.has_value()).Increment();
    if (on_pass_) on_pass_(pass);
    if (!pass) {
      if (relist) relist_due_ = true;
      const auto delay = backoff.next_delay();
      retry_at = deps_.clock.now() + delay;
      deps_.log->warn(
          "services pass failed, the agent keeps what it serves: kind={} error=\"{}\" "
          "retry_ms={}",
          to_string(pass.error().kind), pass.error().message, delay.count());
      continue;
    }
    backoff.reset();
    retry_at = MonoTime::max();
    next_check = deps_.clock.now() + options_.check_interval;
    if (relist) {
      next_resync = deps_.clock.now() + options_.resync_interval;
      first_listed_.kick();
    }
    passes_ += 1;
    publish(*pass);
    if (pass->variable_problems != last_variable_problems_) {
      for (const auto& p : pass->variable_problems) {
        deps_.log->warn("services: VIP variable for jobs not written: service={}/{} error=\"{}\"",
                        p.nomad_namespace, p.name, p.reason);
      }
      last_variable_problems_ = pass->variable_problems;
    }
    if (!pass->report_error.empty()) {
      deps_.log->warn(
          "services: this node's report not published, the other nodes keep its last "
          "one: error=\"{}\"",
          pass->report_error);
    }
    if (pass->lb_written) {
      deps_.log->info("services: load balancer updated: lb_api={} services={} problems={}",
                      to_string(deps_.sync.lb_api()), pass->checked.services.size(),
                      pass->checked.problems.size() + pass->claim_problems.size() +
                          pass->catalog.problems.size());
    }
  }
}

void ServicesLoop::event_loop(std::stop_token stop) {
  // The stream resumes after the index of a listing: none before the first one.
  if (!first_listed_.wait_until(deps_.clock, MonoTime::max(), stop)) return;
  BackoffStrategy backoff(options_.backoff, jitter_);
  while (!stop.stop_requested()) {
    nomad::EventStreamQuery query;
    query.topic = "Service";
    query.nomad_namespace = "*";
    query.index = deps_.sync.registrations_index() + 1;
    bool got_line = false;
    std::optional<Error> bad_line;
    auto status = deps_.nomad.event_stream(
        query,
        [&](std::string_view line) {
          auto message = nomad::parse_event_frame(line);
          if (!message) {
            bad_line = message.error();
            return false;
          }
          got_line = true;
          if (auto* frame = std::get_if<nomad::EventFrame>(&*message)) {
            if (deps_.sync.apply_events(*frame)) wake_.kick();
          }
          return !stop.stop_requested();
        },
        options_.stream_idle_timeout, stop);
    if (stop.stop_requested()) break;
    if (got_line || status) {
      deps_.calls.record(Peer::nomad, nullptr);
    } else {
      deps_.calls.record(Peer::nomad, &status.error());
    }
    // Events may have been lost while the stream was down: list everything again.
    relist_due_ = true;
    wake_.kick();
    if (got_line && !bad_line) backoff.reset();
    const Error error = bad_line  ? *bad_line
                        : !status ? status.error()
                                  : Error{ErrorKind::transport, "event stream ended", 0, 0};
    const auto delay = backoff.next_delay();
    deps_.log->warn(
        "services: event stream ended, relisting and reconnecting: kind={} "
        "error=\"{}\" retry_ms={}",
        to_string(error.kind), error.message, delay.count());
    if (!deps_.clock.sleep_for(delay, stop)) break;
  }
}

void ServicesLoop::watch_loop(std::stop_token stop) {
  BackoffStrategy backoff(options_.backoff, jitter_);
  std::uint64_t index = 0;
  std::map<std::string, std::uint64_t> seen;  // path -> ModifyIndex under the prefix
  while (!stop.stop_requested()) {
    auto listed = deps_.nomad.variables(
        options_.variables_namespace, options_.variables_prefix, index, options_.watch_wait,
        deps_.clock.now() + options_.watch_wait + options_.call_timeout, stop);
    if (stop.stop_requested()) break;
    deps_.calls.record(Peer::nomad, listed);
    if (!listed) {
      const auto delay = backoff.next_delay();
      deps_.log->warn(
          "services: watch of reports and VIPs failed: kind={} error=\"{}\" "
          "retry_ms={}",
          to_string(listed.error().kind), listed.error().message, delay.count());
      if (!deps_.clock.sleep_for(delay, stop)) break;
      continue;
    }
    backoff.reset();
    std::map<std::string, std::uint64_t> now;
    for (const auto& meta : listed->value) now[meta.path] = meta.modify_index;
    // The first answer only sets the baseline (the first pass reads everything anyway); after
    // that, only what this node has not read or written itself is worth a pass.
    if (index != 0 && now != seen && !deps_.sync.has_seen(now)) wake_.kick();
    seen = std::move(now);
    if (listed->index < index) {
      index = 0;  // went backwards (servers restored): ask from scratch
    } else {
      index = listed->index;
    }
    // Nomad floors its indexes at 1; an index 0 would make every query answer at once.
    if (index == 0 && !deps_.clock.sleep_for(options_.backoff.floor, stop)) break;
  }
}

}  // namespace cn::labeler
