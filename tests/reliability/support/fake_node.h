#pragma once
// One simulated Nomad client node for the fault suite: the fake Cilium agent on a unix socket,
// the fake Nomad on loopback TCP with job "web" registered, a state directory, and the three
// steps of an allocation start done the way the real components do them (Nomad places it,
// cilium-cni creates a reserved:init endpoint, our plugin binary runs ADD, the client reports
// the address). The labeler under test is either the real binary (labeler_argv) or the
// in-process daemon, at the test's choice.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::reliability {

// The labels job "web" (group "app", namespace "default") must end with, without meta labels.
extern const std::vector<std::string> kWebLabels;
// With --meta-labels team (job meta team=payments).
extern const std::vector<std::string> kWebLabelsWithTeam;

struct FakeNodeOptions {
  std::chrono::milliseconds identity_delay{30};  // resolution is asynchronous, as in the agent
  fakes::FakeNomadConfig nomad;
  std::map<std::string, std::string> job_meta = {{"team", "payments"}};
  // The agent's --labels patterns (empty: the agent's defaults).
  std::vector<std::string> agent_label_patterns;
};

class FakeNode {
 public:
  explicit FakeNode(FakeNodeOptions options = {});
  ~FakeNode();
  FakeNode(const FakeNode&) = delete;
  FakeNode& operator=(const FakeNode&) = delete;

  fakes::FakeCiliumAgent& agent() const { return *agent_; }
  fakes::FakeNomad& nomad() const { return *nomad_; }
  const testing::TempDir& dir() const { return dir_; }
  std::string cilium_socket() const { return dir_.file("cilium.sock"); }
  std::string labeler_socket() const { return dir_.file("run/labeler.sock"); }
  std::string state_file() const { return dir_.file("run/state.json"); }
  std::string node_id() const;

  // Nomad places an allocation of `job` on this node (pending, no address yet).
  std::string place(const std::string& job = "web");
  // cilium-cni's part of ADD: an endpoint with no labels (reserved:init, identity 5).
  void create_endpoint(const std::string& alloc, const std::string& ip);
  // The Nomad client's report once the network is up.
  void report_network(const std::string& alloc, const std::string& ip);
  // All three: an allocation whose endpoint exists and waits for labels.
  std::string running_alloc(const std::string& ip);

  // What cilium-cni hands our plugin, and what it must print unchanged.
  static nlohmann::json prev_result(const std::string& ip);
  nlohmann::json plugin_conf(const std::string& ip, int wait_ms,
                             const std::string& state_file) const;
  // The real plugin binary, as Nomad runs it.
  testing::ProcessResult plugin_add(const std::string& alloc, const std::string& ip, int wait_ms,
                                    const std::string& cni_args = "",
                                    const std::string& state_file = "") const;

  // The real plugin binary's DEL, as Nomad runs it when the allocation stops.
  testing::ProcessResult plugin_del(const std::string& alloc, const std::string& ip) const;

  std::optional<nlohmann::json> endpoint_of(const std::string& alloc) const;
  // Sorted security-relevant labels of the resolved identity (empty if no endpoint).
  std::vector<std::string> identity_labels(const std::string& alloc) const;
  // The endpoint carries exactly `labels` and a resolved (non-reserved) identity.
  bool labeled(const std::string& alloc, const std::vector<std::string>& labels) const;
  bool wait_labeled(const std::string& alloc, const std::vector<std::string>& labels,
                    std::chrono::milliseconds timeout = std::chrono::seconds{20}) const;
  // Label writes the agent accepted (2xx) for this allocation's current endpoint number (both
  // PATCH forms); refused, dropped and stalled attempts are not writes.
  int label_writes(const std::string& alloc) const;

  // `cilium-nomad-labeler run` against this node, plus `extra` flags. Info level by default:
  // debug lines cost real time under the sanitizers.
  std::vector<std::string> labeler_argv(const std::vector<std::string>& extra = {},
                                        const std::string& log_level = "info") const;
  // The environment the daemon gets: Nomad's address and the sanitizer settings of this test.
  std::map<std::string, std::string> labeler_env(
      const std::map<std::string, std::string>& extra = {}) const;

 private:
  FakeNodeOptions options_;
  testing::TempDir dir_;
  std::unique_ptr<fakes::FakeCiliumAgent> agent_;
  std::unique_ptr<fakes::FakeNomad> nomad_;
};

// Sanitizer reports a child process printed (it may die of them without failing any check).
std::string sanitizer_report(const std::string& log);

// The state file as the plugin and labeler write it: {"schema":1,"allocations":{id: entry}}.
// Parsed generically, so the check does not depend on the store's own reader.
struct StateFileView {
  bool parsed = false;
  std::string error;
  nlohmann::json allocations = nlohmann::json::object();
  std::string text;
};
StateFileView read_state_file(const std::string& path);

}  // namespace cn::reliability
