#include "labeler/services/lb_rest_writer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <spdlog/spdlog.h>

namespace cn::labeler {

namespace {

// The agent's refusal of a frontend (daemon/cmd/loadbalancer.go in 1.16,
// pkg/service/service_api_handler.go in 1.17, cilium/cilium). Among its reasons: the frontend
// is already served under another ID, which the text names.
constexpr int kInvalidFrontendStatus = 460;
constexpr std::string_view kRegisteredWithId = "already registered with ID ";

// Every backend the same weight: a missing or zero weight would put it in maintenance.
constexpr std::uint16_t kBackendWeight = 100;

// The agent keys a frontend by address, port, protocol and scope.
struct RestFrontendKey {
  std::string ip;
  std::uint16_t port = 0;
  std::string protocol;
  std::string scope;

  bool operator<(const RestFrontendKey& o) const {
    return std::tie(ip, port, protocol, scope) < std::tie(o.ip, o.port, o.protocol, o.scope);
  }
};

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string canonical_ip(const std::string& text) {
  auto address = parse_ip_address(text);
  return address ? ip_text(*address) : text;
}

RestFrontendKey rest_key_of(const cilium::ServiceFrontend& fe) {
  return {canonical_ip(fe.ip), fe.port, lowercase(fe.protocol), lowercase(fe.scope)};
}

std::string rest_frontend_text(const cilium::ServiceFrontend& fe) {
  return fe.ip + ":" + std::to_string(fe.port) + "/" + fe.protocol;
}

// What the agent holds and what is wanted, in one form: the agent may spell a protocol in
// capitals or an address differently, 1.16 reports no backend protocol, and an empty state is
// active.
cilium::ServiceSpec comparable(cilium::ServiceSpec spec) {
  spec.frontend.ip = canonical_ip(spec.frontend.ip);
  spec.frontend.protocol = lowercase(spec.frontend.protocol);
  spec.frontend.scope = lowercase(spec.frontend.scope);
  for (auto& be : spec.backends) {
    be.ip = canonical_ip(be.ip);
    be.protocol.clear();
    if (be.state.empty()) be.state = "active";
  }
  std::sort(spec.backends.begin(), spec.backends.end(), [](const auto& a, const auto& b) {
    return std::tie(a.ip, a.port) < std::tie(b.ip, b.port);
  });
  return spec;
}

// ready -> active. not_ready -> maintenance: the one state that only the service API sets and
// that the agent never changes by itself (the state transitions in pkg/loadbalancer/
// loadbalancer.go of cilium/cilium; quarantined is the agent's own health checker's, which may
// make it active again). A backend in maintenance stays in the service but takes no new
// connections, as the state file's maintenance does from 1.18.5.
std::string_view rest_backend_state(BackendState state) {
  return state == BackendState::ready ? "active" : "maintenance";
}

std::optional<std::string_view> rest_frontend_protocol(LbProtocol protocol) {
  switch (protocol) {
    case LbProtocol::tcp:
      return "tcp";
    case LbProtocol::udp:
      return "udp";
    case LbProtocol::sctp:
      return std::nullopt;  // the REST API's enum has tcp, udp and any only
  }
  return std::nullopt;
}

bool in_ranges(const std::vector<IpPrefix>& ranges, const IpPrefix& address) {
  return std::any_of(ranges.begin(), ranges.end(), [&](const IpPrefix& range) {
    return range.v6 == address.v6 && prefix_contains(range, address);
  });
}

// "the service provided is already registered with ID 7, please use that ID instead of 9" -> 7.
std::optional<std::int64_t> registered_id(const Error& error) {
  if (error.status != kInvalidFrontendStatus) return std::nullopt;
  const auto at = error.message.find(kRegisteredWithId);
  if (at == std::string::npos) return std::nullopt;
  const char* begin = error.message.data() + at + kRegisteredWithId.size();
  const char* end = error.message.data() + error.message.size();
  std::int64_t id = 0;
  auto [p, ec] = std::from_chars(begin, end, id);
  if (ec != std::errc{} || p == begin || id < kFirstRestServiceId || id > kLastRestServiceId) {
    return std::nullopt;
  }
  return id;
}

// No answer at all: the agent is gone, and every further call would fail the same way.
bool agent_unreachable(const Error& error) {
  return error.kind == ErrorKind::transport || error.kind == ErrorKind::timeout ||
         error.kind == ErrorKind::cancelled;
}

struct WantedService {
  cilium::ServiceSpec spec;
  std::string what;                            // "10.96.0.2:80/tcp (prod/api)"
  std::optional<cilium::ServiceSpec> current;  // what the agent holds under spec.id
};

// One agent service per VIP port; what cannot be one goes to `report`.
std::vector<WantedService> wanted_services(const std::vector<LbService>& services,
                                           const std::vector<IpPrefix>& ranges,
                                           LbRestReport& report) {
  std::vector<WantedService> wanted;
  for (const auto& svc : services) {
    const std::string name = svc.nomad_namespace + "/" + svc.name;
    if (!in_ranges(ranges, svc.vip)) {
      report.failures.push_back(ip_text(svc.vip) + " (" + name +
                                "): the VIP is outside the VIP ranges, not written");
      continue;
    }
    for (const auto& port : svc.ports) {
      WantedService w;
      auto& spec = w.spec;
      spec.frontend.ip = ip_text(svc.vip);
      spec.frontend.port = static_cast<std::uint16_t>(port.port);
      auto protocol = rest_frontend_protocol(port.protocol);
      spec.frontend.protocol =
          protocol ? std::string(*protocol) : lowercase(std::string(to_string(port.protocol)));
      spec.frontend.scope = "external";
      w.what = rest_frontend_text(spec.frontend) + " (" + name + ")";
      if (!protocol) {
        report.failures.push_back(w.what + ": the REST API has no " +
                                  std::string(to_string(port.protocol)) + " frontends");
        continue;
      }
      for (const auto& be : svc.backends) {
        for (const auto& be_port : be.ports) {
          if (be_port.name != port.name) continue;
          cilium::ServiceBackend b;
          b.ip = ip_text(be.address);
          b.port = static_cast<std::uint16_t>(be_port.port);
          // Read by 1.17 only; 1.16's decoder drops the unknown member.
          b.protocol = std::string(to_string(be_port.protocol));
          b.state = std::string(rest_backend_state(be.state));
          b.weight = kBackendWeight;
          b.node_name = be.node_name;
          spec.backends.push_back(std::move(b));
        }
      }
      spec.type = "ClusterIP";
      spec.name = svc.name;
      spec.nomad_namespace = svc.nomad_namespace;
      spec.ext_traffic_policy = "Cluster";
      spec.int_traffic_policy = "Cluster";
      wanted.push_back(std::move(w));
    }
  }

  return wanted;
}

struct RestApplyContext {
  cilium::CiliumServicesApi& agent;
  spdlog::logger& log;
  LbRestReport& report;
  const Deadline& deadline;
};

// A refusal goes to the report; only an agent that does not answer is an error.
Status write_rest_service(RestApplyContext& c, WantedService& w,
                          std::set<std::int64_t>& wanted_ids) {
  if (w.spec.id == 0) return {};
  if (w.current && comparable(*w.current) == comparable(w.spec)) {
    ++c.report.unchanged;
    return {};
  }
  auto put = c.agent.put_service(w.spec, c.deadline);
  // Served under another ID after all (put there since the list was read): take that one.
  if (auto other = put ? std::nullopt : registered_id(put.error());
      other && !wanted_ids.contains(*other)) {
    c.log.info("cilium service moved to the agent's ID frontend={} id={} agent_id={}", w.what,
               w.spec.id, *other);
    wanted_ids.erase(w.spec.id);
    w.spec.id = *other;
    wanted_ids.insert(*other);
    put = c.agent.put_service(w.spec, c.deadline);
  }
  if (put) {
    ++c.report.written;
    return {};
  }
  if (agent_unreachable(put.error())) {
    return std::unexpected(with_context("Cilium agent: writing " + w.what, put.error()));
  }
  c.report.failures.push_back("PUT " + w.what + " ID " + std::to_string(w.spec.id) + ": " +
                              put.error().message);
  c.log.warn("cilium service not written frontend={} id={} error=\"{}\"", w.what, w.spec.id,
             put.error().message);
  return {};
}

Status delete_rest_service(RestApplyContext& c, const cilium::ServiceSpec& extra) {
  auto del = c.agent.delete_service(extra.id, c.deadline);
  if (del || del.error().kind == ErrorKind::not_found) {
    ++c.report.deleted;
    return {};
  }
  if (agent_unreachable(del.error())) {
    return std::unexpected(
        with_context("Cilium agent: deleting service " + std::to_string(extra.id), del.error()));
  }
  c.report.failures.push_back("DELETE " + rest_frontend_text(extra.frontend) + " ID " +
                              std::to_string(extra.id) + ": " + del.error().message);
  c.log.warn("cilium service not deleted frontend={} id={} error=\"{}\"",
             rest_frontend_text(extra.frontend), extra.id, del.error().message);
  return {};
}

}  // namespace

LbRestWriter::LbRestWriter(cilium::CiliumServicesApi& agent, LbRestWriterOptions options)
    : agent_(agent),
      options_(std::move(options)),
      log_(options_.log ? options_.log : spdlog::default_logger()) {}

// The list is read on every apply rather than cached: it is one call on the local socket, and
// it sees an agent restart, a manual `cilium service delete` or a frontend another writer put
// in the range without any rule for when a cache went stale.
Result<bool> LbRestWriter::apply(const std::vector<LbService>& services, const Deadline& deadline) {
  report_ = {};
  auto listed = agent_.services(deadline);
  if (!listed)
    return std::unexpected(with_context("Cilium agent: listing services", listed.error()));

  std::set<std::int64_t> used_ids;
  std::map<RestFrontendKey, std::vector<cilium::ServiceSpec>> owned;  // by ID within a key
  for (auto& spec : *listed) {
    used_ids.insert(spec.id);
    auto address = parse_ip_address(spec.frontend.ip);
    if (!address || !in_ranges(options_.vip_ranges, *address)) continue;
    owned[rest_key_of(spec.frontend)].push_back(std::move(spec));
  }
  for (auto& [key, specs] : owned) {
    std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  }

  std::vector<WantedService> wanted = wanted_services(services, options_.vip_ranges, report_);

  // IDs: the one already serving the frontend, else the lowest no listed service uses. An
  // owned key's further IDs (never made by this writer) become extras.
  std::set<RestFrontendKey> taken;
  for (auto& w : wanted) {
    auto it = owned.find(rest_key_of(w.spec.frontend));
    if (it == owned.end() || it->second.empty() || taken.contains(it->first)) continue;
    taken.insert(it->first);
    w.spec.id = it->second.front().id;
    w.current = it->second.front();
  }
  std::int64_t next_id = kFirstRestServiceId;
  for (auto& w : wanted) {
    if (w.spec.id != 0) continue;
    while (next_id <= kLastRestServiceId && used_ids.contains(next_id)) ++next_id;
    if (next_id > kLastRestServiceId) {
      report_.failures.push_back(w.what + ": no free service ID left on the agent");
      continue;
    }
    w.spec.id = next_id;
    used_ids.insert(next_id);
  }
  std::vector<const cilium::ServiceSpec*> extras;
  for (const auto& [key, specs] : owned) {
    for (std::size_t i = taken.contains(key) ? 1 : 0; i < specs.size(); ++i) {
      extras.push_back(&specs[i]);
    }
  }
  std::set<std::int64_t> wanted_ids;
  for (const auto& w : wanted) wanted_ids.insert(w.spec.id);
  RestApplyContext ctx{agent_, *log_, report_, deadline};

  for (auto& w : wanted) {
    if (auto st = write_rest_service(ctx, w, wanted_ids); !st) return std::unexpected(st.error());
  }

  for (const auto* extra : extras) {
    // An extra whose ID a PUT above just took over is that PUT's now.
    if (wanted_ids.contains(extra->id)) continue;
    if (auto st = delete_rest_service(ctx, *extra); !st) return std::unexpected(st.error());
  }
  return report_.written + report_.deleted > 0;
}

}  // namespace cn::labeler
