#include "tests/fakes/cilium/agent_state.h"

#include "tests/fakes/cilium/endpoint_options.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "tests/fakes/cilium/endpoint_model.h"

namespace cn::fakes {

using cilium::FakeEndpoint;
using cilium::IdPrefix;
using nlohmann::json;

std::map<std::string, cilium::RateLimitParams> cilium_default_rate_limits(
    [[maybe_unused]] CiliumVersion v) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  // apiRateLimitDefaults: cc daemon/cmd/api_limits.go (stored version id 28593487263 in the
  // search index), moved unchanged to cc daemon/restapi/api_limits.go (stored at 21d690e) in
  // the newest tree. The 60 s create wait and create's minimum of 2 parallel came with cilium PR
  // #25805 (merged June 2023, before 1.14), so every release the fake emulates (1.15 to 1.20)
  // has the same table; docs.cilium.io "API Rate Limiting" still shows the older 15 s. Per-tag
  // files could not be opened here (the repository is too large to fetch), so a release that
  // changed a value after 1.14 would not be reflected. Fields in RateLimitParams order: rate,
  // burst, max wait, parallel, auto-adjust, estimated processing, mean over, min parallel, max
  // parallel, min wait, delayed factor, skip initial, max factor (0: upstream fallback).
  return {
      {"endpoint-create", {0.5, 4, seconds(60), 4, true, seconds(2), 0, 2, 0, seconds(0), 0, 4, 0}},
      {"endpoint-delete",
       {0, 0, seconds(0), 4, true, milliseconds(200), 0, 4, 0, seconds(0), 0, 0, 0}},
      {"endpoint-get",
       {4, 4, seconds(10), 4, true, milliseconds(200), 0, 2, 0, seconds(0), 0, 4, 0}},
      {"endpoint-patch", {0.5, 4, seconds(15), 4, true, seconds(1), 0, 0, 0, seconds(0), 0, 4, 0}},
      {"endpoint-list",
       {1, 4, seconds(0), 2, true, milliseconds(300), 0, 2, 0, seconds(0), 0, 0, 0}},
  };
}

namespace cilium {
namespace {

cilium::LabelFilter make_filter(const std::vector<std::string>& patterns) {
  auto f = cilium::LabelFilter::make(patterns);
  if (!f) throw std::invalid_argument(f.error().message);
  return std::move(*f);
}

std::string uuid_from(std::mt19937_64& rng) {
  const std::uint64_t a = rng(), b = rng();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

cn::Error api_error(int status, const std::string& message) {
  return cn::http_error(status, json(message).dump());
}

}  // namespace

AgentState::AgentState(const FakeCiliumAgentConfig& config, Clock& clk)
    : cfg(config),
      clock(clk),
      filter(make_filter(config.label_patterns)),
      identities(config.seed),
      rng(config.seed),
      scheduler(clk) {
  rebuild_limiters();
  add_reserved_endpoints();
}

void AgentState::rebuild_limiters() {
  limiters.clear();
  if (!cfg.rate_limits) return;
  auto params = cilium_default_rate_limits(cfg.version);
  for (const auto& [group, p] : cfg.rate_limit_overrides) params[group] = p;
  for (const auto& [group, p] : params) {
    limiters[group] = std::make_shared<cilium::ApiRateLimiter>(clock, p);
  }
}

std::uint16_t AgentState::allocate_id() {
  // cc pkg/endpointmanager/idallocator: IDs 1..4095, handed out in no useful order.
  std::uniform_int_distribution<int> dist(1, 4095);
  for (;;) {
    const auto id = static_cast<std::uint16_t>(dist(rng));
    const bool used = std::any_of(endpoints.begin(), endpoints.end(),
                                  [id](const auto& kv) { return kv.second.id == id; });
    if (!used) return id;
  }
}

std::uint64_t AgentState::uid_of(const FakeEndpoint& ep) const {
  for (const auto& [uid, e] : endpoints) {
    if (&e == &ep) return uid;
  }
  return 0;
}

void AgentState::add_log(FakeEndpoint& ep, const std::string& state, const std::string& message) {
  ep.state = state;
  ep.log.push_back({"ok", message, state, clock.wall_now()});
  if (ep.log.size() > 32) ep.log.erase(ep.log.begin());
}

void AgentState::add_reserved_endpoints() {
  const WallTime now = clock.wall_now();
  if (cfg.host_endpoint) {
    FakeEndpoint host;
    host.id = allocate_id();
    host.labels.orchestration_identity = cilium::labels_from_model({"reserved:host"});
    host.identity = identities.resolve(host.labels.identity_labels());
    host.interface_name = "cilium_host";
    host.created = host.last_identity_resolution = now;
    host.controller_uuid = uuid_from(rng);
    host.regenerations = 1;
    add_log(
        host, "ready",
        "Successfully regenerated endpoint program (Reason: Initial build on endpoint creation)");
    endpoints.emplace(next_uid++, std::move(host));
  }
  if (cfg.health_endpoint) {
    FakeEndpoint health;
    health.id = allocate_id();
    health.container_name = "cilium-health";
    health.labels.orchestration_identity = cilium::labels_from_model({"reserved:health"});
    health.identity = identities.resolve(health.labels.identity_labels());
    health.interface_name = "lxc_health";
    health.ipv4 = cfg.health_ipv4;
    health.created = health.last_identity_resolution = now;
    health.controller_uuid = uuid_from(rng);
    health.regenerations = 1;
    add_log(
        health, "ready",
        "Successfully regenerated endpoint program (Reason: Initial build on endpoint creation)");
    endpoints.emplace(next_uid++, std::move(health));
  }
}

void AgentState::reset_endpoints() {
  endpoints.clear();
  identities.reset();
  rng.seed(cfg.seed);
  next_uid = 1;
  add_reserved_endpoints();
}

void AgentState::renumber() {
  std::vector<std::uint16_t> old;
  for (auto& [uid, ep] : endpoints) {
    old.push_back(ep.id);
    ep.id = 0;  // free every number first so the new ones are drawn from the whole pool
  }
  std::size_t i = 0;
  for (auto& [uid, ep] : endpoints) {
    std::uint16_t id;
    do {
      id = allocate_id();
    } while (id == old[i]);  // a renumbering that keeps an ID would hide client bugs
    ep.id = id;
    ++i;
  }
}

cilium::ModelContext AgentState::model_context() const {
  return cilium::ModelContext{clock.wall_now(), policy_revision};
}

cilium::DaemonView AgentState::daemon_view() const {
  cilium::DaemonView v;
  v.ipv4_router_ip = cfg.ipv4_router_ip;
  v.ipv4_alloc_range = cfg.ipv4_alloc_range;
  v.ipv6_router_ip = cfg.ipv6_router_ip;
  v.ipv6_alloc_range = cfg.ipv6_alloc_range;
  v.cilium_state = health_state;
  v.cilium_msg = health_msg;
  // As getStatus words it (daemon/cmd/status.go in 1.16, pkg/status/status_collector.go
  // later, cilium/cilium): "<version> (v<version>-<revision>)"; the state is a field of its own.
  const std::string release = to_string(cfg.version) + "." + std::to_string(cfg.version_patch);
  v.version_text = release + " (v" + release + "-fake)";
  v.cluster_name = cfg.cluster_name;
  if (cfg.report_options) v.options = cfg.options;
  v.policy_audit_mode = cfg.policy_audit_mode;
  for (const auto& [uid, ep] : endpoints) {
    if (!ep.ipv4.empty()) v.allocated_ipv4.push_back(ep.ipv4);
  }
  return v;
}

FakeEndpoint* AgentState::find(const cilium::EndpointRef& ref) {
  return const_cast<FakeEndpoint*>(std::as_const(*this).find(ref));
}

const FakeEndpoint* AgentState::find(const cilium::EndpointRef& ref) const {
  // Emulated 1.20 never gets here with a legacy prefix: parse_endpoint_ref refuses them.
  const FakeEndpoint* best = nullptr;
  for (const auto& [uid, ep] : endpoints) {
    bool hit = false;
    const bool legacy_ok = !ep.disable_legacy_identifiers;
    switch (ref.prefix) {
      case IdPrefix::cilium_local:
        hit = ep.id == ref.local_id;
        break;
      case IdPrefix::cilium_global:
        hit = false;
        break;
      case IdPrefix::cni_attachment_id:
        hit = !ep.cni_attachment_id().empty() && ep.cni_attachment_id() == ref.value;
        break;
      case IdPrefix::cep_name:
        hit = !ep.k8s_pod_name.empty() && ep.k8s_namespace + "/" + ep.k8s_pod_name == ref.value;
        break;
      case IdPrefix::container_id:
        hit = legacy_ok && ep.container_id == ref.value;
        break;
      case IdPrefix::container_name:
        hit = legacy_ok && ep.container_name == ref.value;
        break;
      case IdPrefix::pod_name:
        hit = legacy_ok && !ep.k8s_pod_name.empty() &&
              ep.k8s_namespace + "/" + ep.k8s_pod_name == ref.value;
        break;
      case IdPrefix::docker_endpoint:
        hit = !ep.docker_endpoint_id.empty() && ep.docker_endpoint_id == ref.value;
        break;
      case IdPrefix::ipv4:
        hit = !ep.ipv4.empty() && ep.ipv4 == ref.value;
        break;
      case IdPrefix::ipv6:
        hit = !ep.ipv6.empty() && ep.ipv6 == ref.value;
        break;
    }
    if (hit && (!best || ep.id < best->id)) best = &ep;
  }
  return best;
}

FakeEndpoint* AgentState::lookup(std::string_view raw_id, std::string& error_body, int& status) {
  auto ref = cilium::parse_endpoint_ref(raw_id, cfg.version != CiliumVersion::v1_20);
  if (!ref) {
    status = 400;
    error_body = json(ref.error().message).dump();
    return nullptr;
  }
  FakeEndpoint* ep = find(*ref);
  if (!ep) {
    status = 404;
    error_body.clear();
    return nullptr;
  }
  return ep;
}

Result<std::uint64_t> AgentState::create(const cilium::ChangeRequest& req) {
  const cilium::LabelMap template_labels =
      cilium::labels_from_model(req.labels.value_or(std::vector<std::string>{}));
  if (const auto reserved = cilium::reserved_in(template_labels); !reserved.empty()) {
    std::string list;
    for (const auto& r : reserved) list += (list.empty() ? "" : ",") + r;
    return std::unexpected(api_error(400, "not allowed to add reserved labels: " + list));
  }
  auto [identity_labels, info_labels] = filter.split(template_labels);
  if (!template_labels.empty() && identity_labels.empty()) {
    return std::unexpected(api_error(400, "no valid labels provided"));
  }

  if (req.id != 0) {
    cilium::EndpointRef ref;
    ref.local_id = static_cast<std::uint16_t>(req.id);
    if (find(ref)) {
      return std::unexpected(
          api_error(400, "endpoint ID " + std::to_string(req.id) + " already exists"));
    }
  }
  FakeEndpoint ep;
  ep.container_id = req.container_id;
  ep.container_interface_name = req.container_interface_name;
  if (const std::string att = ep.cni_attachment_id(); !att.empty()) {
    cilium::EndpointRef ref{cilium::IdPrefix::cni_attachment_id, att, 0};
    if (find(ref)) {
      return std::unexpected(
          api_error(400, "endpoint for CNI attachment ID " + att + " already exists"));
    }
  }
  if (req.addressing) {
    for (const auto& [prefix, ip] : {std::pair{IdPrefix::ipv4, req.addressing->ipv4},
                                     std::pair{IdPrefix::ipv6, req.addressing->ipv6}}) {
      if (ip.empty()) continue;
      if (find(cilium::EndpointRef{prefix, ip, 0})) {
        return std::unexpected(api_error(400, "IP " + ip + " is already in use"));
      }
    }
    ep.ipv4 = req.addressing->ipv4;
    ep.ipv4_pool = req.addressing->ipv4_pool_name;
    ep.ipv4_expiration_uuid = req.addressing->ipv4_expiration_uuid;
    ep.ipv6 = req.addressing->ipv6;
    ep.ipv6_pool = req.addressing->ipv6_pool_name;
    ep.ipv6_expiration_uuid = req.addressing->ipv6_expiration_uuid;
  }
  ep.id = req.id != 0 ? static_cast<std::uint16_t>(req.id) : allocate_id();
  ep.container_name = req.container_name;
  ep.interface_name = req.interface_name;
  ep.interface_index = req.interface_index;
  ep.mac = req.mac;
  ep.host_mac = req.host_mac;
  ep.k8s_pod_name = req.k8s_pod_name;
  ep.k8s_namespace = req.k8s_namespace;
  ep.k8s_uid = req.k8s_uid;
  ep.netns_cookie = req.netns_cookie;
  ep.docker_endpoint_id = req.docker_endpoint_id;
  ep.docker_network_id = req.docker_network_id;
  ep.disable_legacy_identifiers = req.disable_legacy_identifiers;
  ep.policy_enabled = req.policy_enabled;
  ep.options = default_endpoint_options(cfg.policy_audit_mode);
  ep.created = clock.wall_now();
  ep.controller_uuid = uuid_from(rng);
  // No identity labels and no pod labels: the endpoint starts as reserved:init (identity 5).
  ep.labels.orchestration_identity =
      identity_labels.empty() ? cilium::labels_from_model({"reserved:init"}) : identity_labels;
  ep.labels.orchestration_info = info_labels;

  const std::uint64_t uid = next_uid++;
  auto [it, inserted] = endpoints.emplace(uid, std::move(ep));
  FakeEndpoint& stored = it->second;
  if (req.sync_build_endpoint) {
    // The PUT returns after the first regeneration, so the endpoint is ready right away.
    stored.identity = identities.resolve(stored.labels.identity_labels());
    stored.last_identity_resolution = clock.wall_now();
    stored.regenerations = 1;
    add_log(
        stored, "ready",
        "Successfully regenerated endpoint program (Reason: Initial build on endpoint creation)");
  } else {
    add_log(stored, req.state.empty() ? "waiting-for-identity" : req.state, "Endpoint creation");
    identity_labels_changed(stored, uid);
  }
  return uid;
}

void AgentState::remove(std::uint64_t uid) {
  endpoints.erase(uid);
  regenerated.notify_all();
}

void AgentState::restore_all() {
  for (auto& [uid, ep] : endpoints) {
    const std::uint64_t rev = ++ep.identity_revision;
    add_log(ep, "restoring", "Restoring endpoint after agent restart");
    scheduler.after(cfg.regeneration_step, [this, uid = uid, rev] { resolve_identity(uid, rev); });
  }
}

void AgentState::identity_labels_changed(FakeEndpoint& ep, std::uint64_t uid) {
  const std::uint64_t rev = ++ep.identity_revision;
  add_log(ep, "waiting-for-identity",
          "Triggering identity resolution due to updated identity labels");
  scheduler.after(cfg.identity_delay, [this, uid, rev] { resolve_identity(uid, rev); });
}

void AgentState::regenerate(FakeEndpoint& ep, std::uint64_t uid, const std::string& reason) {
  const std::uint64_t rev = ++ep.identity_revision;
  add_log(ep, "waiting-to-regenerate", reason);
  scheduler.after(cfg.regeneration_step,
                  [this, uid, rev] { regeneration_step(uid, rev, "regenerating"); });
}

void AgentState::resolve_identity(std::uint64_t uid, std::uint64_t rev) {
  std::lock_guard lock(mu);
  const auto it = endpoints.find(uid);
  if (it == endpoints.end() || it->second.identity_revision != rev) return;  // obsolete
  FakeEndpoint& ep = it->second;
  const cilium::LabelMap wanted = ep.labels.identity_labels();
  if (ep.identity && ep.identity->labels == cilium::labels_to_model(wanted)) {
    add_log(ep, "ready", "Identity is unchanged");
    return;
  }
  cilium::Identity ident = identities.resolve(wanted);
  // identity-change-grace-period: keep the old identity a while so that policy for the new one
  // can propagate; skipped when leaving init (cc pkg/endpoint/endpoint.go identityLabelsChanged).
  if (ep.identity && ep.identity->id != cilium::kIdentityInit &&
      cfg.identity_grace_period.count() > 0) {
    scheduler.after(cfg.identity_grace_period,
                    [this, uid, rev, ident] { apply_identity(uid, rev, ident); });
    return;
  }
  ep.identity = ident;
  ep.last_identity_resolution = clock.wall_now();
  add_log(ep, "waiting-to-regenerate", "Set identity for this endpoint");
  scheduler.after(cfg.regeneration_step,
                  [this, uid, rev] { regeneration_step(uid, rev, "regenerating"); });
}

void AgentState::apply_identity(std::uint64_t uid, std::uint64_t rev, cilium::Identity ident) {
  std::lock_guard lock(mu);
  const auto it = endpoints.find(uid);
  if (it == endpoints.end() || it->second.identity_revision != rev) return;
  it->second.identity = std::move(ident);
  it->second.last_identity_resolution = clock.wall_now();
  add_log(it->second, "waiting-to-regenerate", "Set identity for this endpoint");
  scheduler.after(cfg.regeneration_step,
                  [this, uid, rev] { regeneration_step(uid, rev, "regenerating"); });
}

void AgentState::regeneration_step(std::uint64_t uid, std::uint64_t rev,
                                   const std::string& next_state) {
  std::lock_guard lock(mu);
  const auto it = endpoints.find(uid);
  if (it == endpoints.end() || it->second.identity_revision != rev) return;
  FakeEndpoint& ep = it->second;
  if (next_state == "regenerating") {
    add_log(ep, "regenerating", "Regenerating endpoint: updated security labels");
    scheduler.after(cfg.regeneration_step,
                    [this, uid, rev] { regeneration_step(uid, rev, "ready"); });
    return;
  }
  ++ep.regenerations;
  ++policy_revision;
  add_log(ep, "ready",
          "Successfully regenerated endpoint program (Reason: updated security labels)");
  regenerated.notify_all();
}

}  // namespace cilium
}  // namespace cn::fakes
