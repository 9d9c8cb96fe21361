#pragma once
// One node under test: the fake Cilium agent and the fake Nomad in this process (so the bench
// reads their models and request logs directly), and the real cilium-nomad-labeler binary as a
// child talking to them over their sockets. The plugin runs as its own processes beside it.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/support/bench_dir.h"
#include "bench/support/child_process.h"
#include "bench/support/plugin_call.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace cn::bench {

struct StackOptions {
  std::string watch = "node";  // the labeler's --watch
  bool rate_limits = false;    // true: the fake agent at Cilium's default API rate limits
  std::chrono::milliseconds nomad_latency{1};
  // Nomad clients batch allocation updates to the servers every 200 ms.
  std::chrono::milliseconds publish_delay{200};
  std::chrono::milliseconds identity_delay{0};
  std::vector<std::string> extra_args;  // more `run` flags
};

// An endpoint's life on the agent clock (system clock, microseconds since the epoch).
struct InitSpan {
  long long endpoint_id = 0;
  long long created_us = 0;
  long long resolved_us = 0;  // the final identity applied: the end of reserved:init
  double init_ms() const { return static_cast<double>(resolved_us - created_us) / 1000.0; }
};

class LabelerStack {
 public:
  explicit LabelerStack(StackOptions options);  // throws std::runtime_error when a part fails
  ~LabelerStack();
  LabelerStack(const LabelerStack&) = delete;
  LabelerStack& operator=(const LabelerStack&) = delete;

  fakes::FakeCiliumAgent& agent() { return *agent_; }
  fakes::FakeNomad& nomad() { return *nomad_; }
  pid_t labeler_pid() const { return labeler_->pid(); }
  PluginTarget plugin(int wait_for_labels_ms) const;

  // Allocations of job "web" placed on this node in one plan; returns {alloc ID, its IPv4}.
  std::vector<std::pair<std::string, std::string>> place(int count);
  // cilium-cni's part of ADD: the endpoint, without labels (reserved:init, identity 5).
  void create_endpoint(const std::string& alloc_id, const std::string& ipv4);
  // The Nomad client's report after ADD; the fake publishes it after the sync delay.
  void report_network(const std::string& alloc_id, const std::string& ipv4);
  // Waits (bounded) until the node watch has asked Nomad again from the current index: its last
  // answer showed every allocation placed so far.
  bool wait_watch_caught_up(std::chrono::milliseconds timeout);
  // Waits (bounded) until every endpoint of `allocs` carries the job's final identity.
  std::optional<std::map<std::string, InitSpan>> wait_labeled(
      const std::vector<std::string>& allocs, std::chrono::milliseconds timeout);
  std::string labeler_log_tail() const { return labeler_->log_tail(); }

 private:
  StackOptions options_;
  BenchDir dir_;
  std::unique_ptr<fakes::FakeCiliumAgent> agent_;
  std::unique_ptr<fakes::FakeNomad> nomad_;
  std::unique_ptr<ChildProcess> labeler_;
  int next_ip_ = 0;
};

}  // namespace cn::bench
