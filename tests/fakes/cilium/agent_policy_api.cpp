// The fake agent's static policy directory: starting the watcher with the agent's settings,
// GET /v1/policy, and the policy report of the control API.
#include <stdexcept>

#include "tests/fakes/cilium/agent_endpoint_api.h"
#include "tests/fakes/cilium/agent_state.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/cilium/policy_directory.h"

namespace cn::fakes {

using nlohmann::json;

void FakeCiliumAgent::start_policy_directory() {
  if (config_.version == CiliumVersion::v1_15) {
    throw std::invalid_argument("static-cnp-path needs Cilium 1.16 or later (emulating 1.15)");
  }
  policy_repository_ = std::make_unique<cilium::PolicyRepository>();
  cilium::PolicyDirectoryOptions opts;
  opts.path = config_.static_cnp_path;
  // policy-default-local-cluster is on by default from 1.19 (cilium PR #40108); of the emulated
  // releases only 1.20 is that recent.
  if (config_.version == CiliumVersion::v1_20) opts.injection.cluster_name = config_.cluster_name;
  opts.log = [this](const std::string& line) {
    {
      std::lock_guard lock(agent_log_mu_);
      agent_log_.push_back(line);
    }
    if (config_.on_log) config_.on_log(line);
  };
  opts.fatal = config_.on_fatal;
  opts.changed = [this](std::uint64_t revision) {
    std::lock_guard lock(state_->mu);
    // Endpoints report the repository revision they realized; the fake realizes at once.
    state_->policy_revision = std::max(state_->policy_revision + 1, revision);
  };
  policy_directory_ =
      std::make_unique<cilium::PolicyDirectory>(std::move(opts), *policy_repository_);
  if (auto st = policy_directory_->start(); !st) throw std::runtime_error(st.error().message);
}

HttpResponse FakeCiliumAgent::policy_get() {
  // "Will be removed in v1.19" (openapi.yaml); whether it still answers there is unverified, so
  // the emulated 1.20 routes it nowhere.
  if (config_.version == CiliumVersion::v1_20) {
    return cilium::json_response(404,
                                 json{{"code", 404}, {"message", "path /v1/policy was not found"}});
  }
  if (!policy_repository_)
    return cilium::json_response(200, json{{"policy", "[]"}, {"revision", 1}});
  return cilium::json_response(200, policy_repository_->rules_model());
}

json FakeCiliumAgent::policies() const {
  std::vector<cilium::EndpointLabels> eps;
  {
    std::lock_guard lock(state_->mu);
    for (const auto& [uid, ep] : state_->endpoints) {
      eps.push_back(cilium::EndpointLabels{ep.id, ep.labels.identity_labels()});
    }
  }
  json out = policy_repository_ ? policy_repository_->report(eps)
                                : json{{"revision", 1}, {"policies", json::array()}};
  out["static_cnp_path"] = config_.static_cnp_path;
  out["cluster_name"] = config_.cluster_name;
  out["log"] = agent_log();
  return out;
}

std::vector<std::string> FakeCiliumAgent::agent_log() const {
  std::lock_guard lock(agent_log_mu_);
  return agent_log_;
}

}  // namespace cn::fakes
