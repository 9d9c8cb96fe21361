#include "bench/support/labeler_stack.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "bench/support/wait_until.h"
#include "tests/support/process.h"

namespace cn::bench {
namespace {

using nlohmann::json;

const std::vector<std::string> kFinalLabels = {
    "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
    "nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"};

}  // namespace

LabelerStack::LabelerStack(StackOptions options) : options_(std::move(options)) {
  fakes::FakeCiliumAgentConfig ac;
  ac.socket_path = dir_.file("cilium.sock");
  ac.identity_delay = options_.identity_delay;
  ac.rate_limits = options_.rate_limits;
  agent_ = std::make_unique<fakes::FakeCiliumAgent>(ac);
  agent_->start();

  fakes::FakeNomadConfig nc;
  nc.publish_delay = options_.publish_delay;
  nomad_ = std::make_unique<fakes::FakeNomad>(nc);
  if (!nomad_->start()) throw std::runtime_error("fake Nomad did not start");
  fakes::JobSpec web;
  web.id = "web";
  if (!nomad_->register_job(web)) throw std::runtime_error("cannot register job web");
  nomad_->set_latency(options_.nomad_latency);

  std::vector<std::string> args{testing::bin_dir() + "/cilium-nomad-labeler",
                                "run",
                                "--cilium-socket",
                                ac.socket_path,
                                "--nomad-addr",
                                nomad_->address(),
                                "--node-id",
                                nc.node_id,
                                "--socket",
                                dir_.file("labeler.sock"),
                                "--state-file",
                                dir_.file("state.json"),
                                "--watch",
                                options_.watch,
                                "--metrics-addr",
                                ""};
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  labeler_ = std::make_unique<ChildProcess>(args, dir_.file("labeler.log"));
  // Ready once the watcher runs: it starts after the first reconcile, and the notification
  // socket listens before either. Without a watcher, once the first reconcile listed the node.
  auto reconciled = [&] {
    return wait_until([&] { return nomad_->request_counts()["node_allocations"] > 0; },
                      std::chrono::seconds{20});
  };
  bool ready = options_.watch == "events" ? nomad_->wait_for_streams(1, std::chrono::seconds{20})
               : options_.watch == "none" ? reconciled()
                                          : nomad_->wait_for_blocked(1, std::chrono::seconds{20});
  if (!ready) throw std::runtime_error("labeler not ready:\n" + labeler_->log_tail());
}

LabelerStack::~LabelerStack() {
  labeler_->stop();
  nomad_->stop();
  agent_->stop();
}

bool LabelerStack::wait_watch_caught_up(std::chrono::milliseconds timeout) {
  return nomad_->wait_for_blocked_after(nomad_->current_index(), timeout);
}

PluginTarget LabelerStack::plugin(int wait_for_labels_ms) const {
  return {testing::bin_dir() + "/cilium-nomad-cni", dir_.file("state.json"),
          dir_.file("labeler.sock"), wait_for_labels_ms};
}

std::vector<std::pair<std::string, std::string>> LabelerStack::place(int count) {
  std::vector<fakes::PlaceRequest> reqs(static_cast<std::size_t>(count));
  for (auto& r : reqs) r.job_id = "web";
  auto ids = nomad_->place_allocs(std::move(reqs));
  if (!ids) throw std::runtime_error("place_allocs: " + ids.error().message);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& id : *ids) {
    int n = next_ip_++;
    // 10.200.1.10 upwards: clear of the router (.0.1) and the health endpoint (.0.2).
    out.emplace_back(id,
                     "10.200." + std::to_string(1 + n / 200) + "." + std::to_string(10 + n % 200));
  }
  return out;
}

void LabelerStack::create_endpoint(const std::string& alloc_id, const std::string& ipv4) {
  auto ep = agent_->create_endpoint({{"container-id", alloc_id},
                                     {"container-interface-name", "eth0"},
                                     {"interface-name", "lxc" + alloc_id.substr(0, 8)},
                                     {"addressing", {{"ipv4", ipv4}}},
                                     {"state", "waiting-for-identity"},
                                     {"sync-build-endpoint", true}});
  if (!ep) throw std::runtime_error("create endpoint: " + ep.error().message);
}

void LabelerStack::report_network(const std::string& alloc_id, const std::string& ipv4) {
  if (!nomad_->set_network_status(alloc_id, {ipv4, "", "eth0"}))
    throw std::runtime_error("set_network_status");
}

std::optional<std::map<std::string, InitSpan>> LabelerStack::wait_labeled(
    const std::vector<std::string>& allocs, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::map<std::string, InitSpan> done;
    json state = agent_->dump_state();
    for (const auto& ep : state["endpoints"]) {
      auto id = ep.value("container-id", "");
      if (id.empty() || !ep["identity"].is_number()) continue;
      if (ep["identity"].get<long long>() < 256) continue;  // init (5) or another reserved one
      if (ep["identity-labels"].get<std::vector<std::string>>() != kFinalLabels) continue;
      done[id] = InitSpan{ep["id"].get<long long>(), ep["created-unix-us"].get<long long>(),
                          ep["identity-resolved-unix-us"].get<long long>()};
    }
    bool all =
        std::all_of(allocs.begin(), allocs.end(), [&](const auto& a) { return done.contains(a); });
    if (all) return done;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    // The spans come from the agent's own timestamps, so the poll period costs no precision.
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
}

}  // namespace cn::bench
