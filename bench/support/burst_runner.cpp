#include "bench/support/burst_runner.h"

#include <algorithm>
#include <latch>
#include <mutex>
#include <thread>

namespace cn::bench {
namespace {

long long unix_us(WallTime t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

double ms_between(MonoTime from, MonoTime to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// When the fakes saw the labeler's calls for one allocation, relative to the plugin's exec.
void trace_steps(LabelerStack& stack, const std::string& alloc, const InitSpan& span,
                 const PluginRun& run, AllocSample& s) {
  for (const auto& r : stack.nomad().requests()) {
    if (r.route == "allocation" && r.target.find(alloc) != std::string::npos) {
      s.nomad_answered_ms = ms_between(run.started_mono, r.at);
      break;
    }
  }
  const std::string patch_path = "/v1/endpoint/" + std::to_string(span.endpoint_id);
  for (const auto& r : stack.agent().requests()) {
    if (r.method == "GET" && s.endpoint_get_ms == 0 && r.path.find(alloc) != std::string::npos) {
      s.endpoint_get_ms = ms_between(run.started_mono, r.received);
    }
    if (r.method == "PATCH" && r.path == patch_path && s.patch_ms == 0)
      s.patch_ms = ms_between(run.started_mono, r.received);
  }
  // The agent stamps the identity on the system clock; the plugin's start is known on both.
  s.identity_ms = static_cast<double>(span.resolved_us - unix_us(run.started)) / 1000.0;
}

}  // namespace

StackOptions stack_options(Design design) {
  StackOptions options;
  switch (design) {
    case Design::kPlugin:
    case Design::kPluginWatchFirst:
      options.watch = "node";
      break;
    case Design::kPluginNomadGet:
      options.watch = "none";
      options.extra_args = {"--cni-args-first=false"};
      break;
    case Design::kEventStream:
      options.watch = "events";
      break;
  }
  return options;
}

bool runs_plugin(Design design) {
  return design != Design::kEventStream;
}

BurstResult run_burst(LabelerStack& stack, Design design, int allocs,
                      std::chrono::milliseconds deadline) {
  BurstResult result;
  auto placed = stack.place(allocs);
  if (design == Design::kPluginWatchFirst && !stack.wait_watch_caught_up(deadline)) {
    result.error = "the node watch did not see the placement:\n" + stack.labeler_log_tail();
    return result;
  }
  const PluginTarget target = stack.plugin(3000);
  std::vector<PluginRun> runs(placed.size());
  std::mutex error_mu;
  {
    // All allocations of the burst start together, as when Nomad places a job's group count.
    std::latch go(static_cast<std::ptrdiff_t>(placed.size()));
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < placed.size(); ++i) {
      threads.emplace_back([&, i] {
        const auto& [id, ip] = placed[i];
        go.arrive_and_wait();
        try {
          stack.create_endpoint(id, ip);
          if (runs_plugin(design))
            runs[i] = run_plugin(target, "ADD", id, plugin_netconf(target, ip));
          stack.report_network(id, ip);
        } catch (const std::exception& e) {
          std::lock_guard lock(error_mu);
          result.error = e.what();
        }
      });
    }
  }
  if (!result.error.empty()) return result;
  std::vector<std::string> ids;
  for (const auto& [id, ip] : placed) ids.push_back(id);
  auto spans = stack.wait_labeled(ids, deadline);
  if (!spans) {
    result.error = "not every endpoint reached its final identity in time; labeler log:\n" +
                   stack.labeler_log_tail();
    return result;
  }
  for (std::size_t i = 0; i < placed.size(); ++i) {
    const InitSpan& span = spans->at(placed[i].first);
    AllocSample s;
    s.alloc_id = placed[i].first;
    s.init_ms = span.init_ms();
    if (runs_plugin(design)) {
      if (runs[i].exit_code != 0) {
        result.error = "plugin ADD failed: " + runs[i].err;
        return result;
      }
      s.plugin_ms = runs[i].ms;
      s.plugin_labeled = runs[i].err.find("labeler=labeled") != std::string::npos;
      s.exposed_ms =
          std::max(0.0, static_cast<double>(span.resolved_us - unix_us(runs[i].ended)) / 1000.0);
      trace_steps(stack, placed[i].first, span, runs[i], s);
    } else {
      s.exposed_ms = s.init_ms;  // ADD returned when cilium-cni did: the workload starts under init
    }
    result.samples.push_back(std::move(s));
  }
  result.complete = true;
  return result;
}

}  // namespace cn::bench
