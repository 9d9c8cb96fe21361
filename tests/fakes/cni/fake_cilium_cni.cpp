#include "tests/fakes/cni/fake_cilium_cni.h"

#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "tests/fakes/http/raw_http_client.h"
#include "tests/support/child_process.h"

namespace cn::fakes::cni_fake {

using nlohmann::json;

namespace {

using cn::testing::ProcessResult;

const std::vector<std::string> kSupported = {"0.3.0", "0.3.1", "0.4.0", "1.0.0"};
constexpr const char* kAbout = "CNI fake-cilium-cni plugin v1.17.0-fake";

struct CniError {
  int code;
  std::string msg;
  std::string details;
};

struct NetConf {
  json raw;
  std::string cni_version;
  std::string name;
  std::string socket;
  json ipam;  // null: derive from the agent
  std::chrono::milliseconds timeout{10000};
};

struct Ip {
  std::string address;  // without prefix length
  std::string gateway;
  bool v6 = false;
};

struct PtpResult {
  std::string host_ifname, host_mac, container_mac;
  std::vector<Ip> ips;
};

class Plugin {
 public:
  Plugin(const std::map<std::string, std::string>& env, std::string input)
      : env_(env), input_(std::move(input)) {}

  PluginOutput run();

 private:
  std::string env(const std::string& key) const {
    const auto it = env_.find(key);
    return it == env_.end() ? std::string() : it->second;
  }
  std::optional<CniError> require_env(const std::vector<std::string>& keys) const;
  std::optional<CniError> load_conf();
  Result<RawHttpResponse> agent(const std::string& method, const std::string& path,
                                const std::string& body = "");
  Result<json> ensure_ipam();
  Result<ProcessResult> ptp(const std::string& command);
  std::optional<CniError> cmd_add();
  std::optional<CniError> cmd_del();
  std::optional<CniError> cmd_check();
  json format_result(const PtpResult& r) const;
  void log(const std::string& line) { out_.err += "fake-cilium-cni: " + line + "\n"; }

  std::map<std::string, std::string> env_;
  std::string input_;
  NetConf conf_;
  PluginOutput out_;
};

std::string error_json(const std::string& version, const CniError& e) {
  json j{{"cniVersion", version.empty() ? "1.0.0" : version}, {"code", e.code}, {"msg", e.msg}};
  if (!e.details.empty()) j["details"] = e.details;
  return j.dump() + "\n";
}

std::string strip_prefix_len(const std::string& cidr) {
  return cidr.substr(0, cidr.find('/'));
}

std::optional<CniError> Plugin::require_env(const std::vector<std::string>& keys) const {
  std::string missing;
  for (const auto& k : keys) {
    if (env(k).empty()) missing += (missing.empty() ? "" : " ") + k;
  }
  if (missing.empty()) return std::nullopt;
  return CniError{4, "required env variables [" + missing + "] missing", ""};
}

std::optional<CniError> Plugin::load_conf() {
  try {
    conf_.raw = json::parse(input_);
  } catch (const json::parse_error& e) {
    return CniError{6, "failed to decode network configuration", e.what()};
  }
  if (!conf_.raw.is_object())
    return CniError{6, "failed to decode network configuration", "not an object"};
  conf_.cni_version = conf_.raw.value("cniVersion", "0.1.0");
  conf_.name = conf_.raw.value("name", "");
  const std::string env_sock = env("CILIUM_SOCK");
  conf_.socket =
      conf_.raw.value("socket", env_sock.empty() ? "/var/run/cilium/cilium.sock" : env_sock);
  if (conf_.raw.contains("ipam"))
    conf_.ipam = conf_.raw["ipam"];
  else if (conf_.raw.contains("delegate-ipam"))
    conf_.ipam = conf_.raw["delegate-ipam"];
  conf_.timeout = std::chrono::milliseconds(conf_.raw.value("agent-timeout-ms", 10000));
  if (std::find(kSupported.begin(), kSupported.end(), conf_.cni_version) == kSupported.end()) {
    std::string list;
    for (const auto& v : kSupported) list += (list.empty() ? "" : " ") + v;
    return CniError{1, "incompatible CNI versions",
                    "config is \"" + conf_.cni_version + "\", plugin supports [" + list + "]"};
  }
  return std::nullopt;
}

Result<RawHttpResponse> Plugin::agent(const std::string& method, const std::string& path,
                                      const std::string& body) {
  return http_request(HttpTarget::unix_socket(conf_.socket), method, path, body, {}, conf_.timeout);
}

Result<json> Plugin::ensure_ipam() {
  if (!conf_.ipam.is_null()) return conf_.ipam;
  auto cfg = agent("GET", "/v1/config");
  if (!cfg || cfg->status != 200) return fail("cannot derive ipam: agent config unavailable");
  const json c = json::parse(cfg->body, nullptr, false);
  const json v4 = c.is_object() ? c["status"]["addressing"]["ipv4"] : json();
  if (!v4.is_object() || !v4.contains("alloc-range"))
    return fail("agent config has no ipv4 alloc-range");
  json ipam{{"type", "host-local"}, {"subnet", v4["alloc-range"]}};
  if (v4.contains("ip")) ipam["gateway"] = v4["ip"];
  return ipam;
}

Result<ProcessResult> Plugin::ptp(const std::string& command) {
  std::string cni_path = env("CNI_PATH");
  if (cni_path.empty()) cni_path = "/opt/cni/bin:/usr/lib/cni";
  std::string exe;
  std::size_t start = 0;
  while (start <= cni_path.size()) {
    const std::size_t colon = cni_path.find(':', start);
    const std::string dir =
        cni_path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    const std::string candidate = dir + "/ptp";
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) {
      exe = candidate;
      break;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (exe.empty()) return fail("ptp plugin not found in CNI_PATH " + cni_path);
  auto ipam = ensure_ipam();
  if (!ipam) return std::unexpected(ipam.error());
  json netconf{
      {"cniVersion", conf_.cni_version}, {"name", conf_.name}, {"type", "ptp"}, {"ipam", *ipam}};
  if (conf_.raw.contains("mtu")) netconf["mtu"] = conf_.raw["mtu"];
  cn::testing::Environment child_env = env_;
  child_env["CNI_COMMAND"] = command;
  child_env["CNI_PATH"] = cni_path;
  constexpr auto kDeadline = std::chrono::seconds(60);
  auto r = cn::testing::run_process({exe}, child_env, netconf.dump(), kDeadline);
  if (!r.started) return fail(r.err);
  if (r.timed_out)
    return fail(exe + " did not finish within " + std::to_string(kDeadline.count()) + " s");
  return r;
}

CniError delegate_error(const std::string& what, const ProcessResult& r) {
  const json e = json::parse(r.out, nullptr, false);
  if (e.is_object() && e.contains("code")) {
    return CniError{e.value("code", 999), what + ": " + e.value("msg", ""), e.value("details", "")};
  }
  return CniError{999, what + " failed (exit " + std::to_string(r.exit_code) + ")", r.err};
}

json Plugin::format_result(const PtpResult& r) const {
  const bool legacy = conf_.cni_version != "1.0.0";  // 0.3.x/0.4.0 results carry ips[].version
  json ips = json::array();
  json routes = json::array();
  std::vector<Ip> ordered = r.ips;
  // cilium-cni lists IPv6 before IPv4 in dual stack.
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Ip& a, const Ip& b) { return a.v6 && !b.v6; });
  for (const auto& ip : ordered) {
    json e{{"interface", 1}, {"address", ip.address + (ip.v6 ? "/128" : "/32")}};
    if (!ip.gateway.empty()) e["gateway"] = ip.gateway;
    if (legacy) e["version"] = ip.v6 ? "6" : "4";
    ips.push_back(e);
    if (!ip.gateway.empty()) {
      routes.push_back({{"dst", ip.gateway + (ip.v6 ? "/128" : "/32")}});
      routes.push_back({{"dst", ip.v6 ? "::/0" : "0.0.0.0/0"}, {"gw", ip.gateway}});
    }
  }
  json host{{"name", r.host_ifname}};
  if (!r.host_mac.empty()) host["mac"] = r.host_mac;
  json cont{{"name", env("CNI_IFNAME")}, {"sandbox", env("CNI_NETNS")}};
  if (!r.container_mac.empty()) cont["mac"] = r.container_mac;
  return json{{"cniVersion", conf_.cni_version},
              {"interfaces", json::array({host, cont})},
              {"ips", ips},
              {"routes", routes}};
}

std::optional<CniError> Plugin::cmd_add() {
  if (auto e = require_env({"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME"})) return e;
  // cilium-cni waits for the agent before touching the network: nothing to undo if it is down.
  auto cfg = agent("GET", "/v1/config");
  if (!cfg) return CniError{11, "unable to connect to Cilium agent", cfg.error().message};
  if (cfg->status != 200) {
    return CniError{11, "Cilium agent not ready",
                    "GET /v1/config: HTTP " + std::to_string(cfg->status)};
  }

  auto added = ptp("ADD");
  if (!added) return CniError{999, "ptp ADD", added.error().message};
  if (added->exit_code != 0) return delegate_error("ptp ADD", *added);
  const json res = json::parse(added->out, nullptr, false);
  PtpResult pr;
  if (res.is_object() && res.contains("interfaces") && res["interfaces"].size() >= 2) {
    pr.host_ifname = res["interfaces"][0].value("name", "");
    pr.host_mac = res["interfaces"][0].value("mac", "");
    pr.container_mac = res["interfaces"][1].value("mac", "");
  }
  if (res.is_object() && res.contains("ips")) {
    for (const auto& ip : res["ips"]) {
      const std::string addr = strip_prefix_len(ip.value("address", ""));
      pr.ips.push_back({addr, ip.value("gateway", ""), addr.find(':') != std::string::npos});
    }
  }
  auto undo = [this](CniError e) {
    if (auto del = ptp("DEL"); !del || del->exit_code != 0) log("undo: ptp DEL failed");
    return e;
  };
  if (pr.host_ifname.empty() || pr.ips.empty())
    return undo(CniError{999, "unexpected ptp result", added->out});

  json addressing = json::object();
  for (const auto& ip : pr.ips) {
    addressing[ip.v6 ? "ipv6" : "ipv4"] = ip.address;
  }
  json put{{"container-id", env("CNI_CONTAINERID")},
           {"container-interface-name", env("CNI_IFNAME")},
           {"interface-name", pr.host_ifname},
           {"addressing", addressing},
           {"datapath-configuration", json::object()},
           {"state", "waiting-for-identity"},
           {"sync-build-endpoint", true}};
  if (const unsigned idx = ::if_nametoindex(pr.host_ifname.c_str()); idx != 0)
    put["interface-index"] = idx;
  if (!pr.host_mac.empty()) put["host-mac"] = pr.host_mac;
  if (!pr.container_mac.empty()) put["mac"] = pr.container_mac;
  auto created = agent("PUT", "/v1/endpoint/cilium-local:0", put.dump());
  if (!created)
    return undo(CniError{11, "unable to connect to Cilium agent", created.error().message});
  if (created->status != 201) {
    return undo(CniError{999, "unable to create endpoint",
                         "PUT /v1/endpoint/cilium-local:0: HTTP " +
                             std::to_string(created->status) + " " + created->body});
  }
  log("ADD " + env("CNI_CONTAINERID") + ":" + env("CNI_IFNAME") + " ip " + pr.ips.front().address +
      " host " + pr.host_ifname);
  out_.out = format_result(pr).dump() + "\n";
  return std::nullopt;
}

std::optional<CniError> Plugin::cmd_del() {
  if (auto e = require_env({"CNI_CONTAINERID", "CNI_IFNAME"})) return e;
  // Best effort, like cilium-cni: 404 and an absent agent are fine.
  auto deleted =
      agent("DELETE", "/v1/endpoint", json{{"container-id", env("CNI_CONTAINERID")}}.dump());
  if (!deleted) {
    log("agent unreachable on DEL (" + deleted.error().message + "); endpoint left to the agent");
  } else if (deleted->status != 200 && deleted->status != 404) {
    log("DELETE /v1/endpoint: HTTP " + std::to_string(deleted->status) + " " + deleted->body);
  }
  if (conf_.ipam.is_null() && !ensure_ipam()) {
    log("no ipam config and no agent: skipping ptp DEL");
    return std::nullopt;
  }
  auto removed = ptp("DEL");
  if (!removed) return CniError{999, "ptp DEL", removed.error().message};
  if (removed->exit_code != 0) return delegate_error("ptp DEL", *removed);
  return std::nullopt;
}

std::optional<CniError> Plugin::cmd_check() {
  if (auto e = require_env({"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME"})) return e;
  auto health = agent("GET", "/v1/healthz");
  if (!health) return CniError{11, "unable to connect to Cilium agent", health.error().message};
  const std::string id = "cni-attachment-id:" + env("CNI_CONTAINERID") + ":" + env("CNI_IFNAME");
  auto ep = agent("GET", "/v1/endpoint/" + id + "/healthz");
  if (!ep) return CniError{11, "unable to connect to Cilium agent", ep.error().message};
  if (ep->status != 200) {
    return CniError{100, "failed to get endpoint health", "HTTP " + std::to_string(ep->status)};
  }
  const json h = json::parse(ep->body, nullptr, false);
  if (h.is_object() && h.value("overallHealth", "") == "Failure") {
    return CniError{101, "endpoint is unhealthy", ep->body};
  }
  return std::nullopt;
}

PluginOutput Plugin::run() {
  const std::string command = env("CNI_COMMAND");
  if (command.empty()) {
    std::string list;
    for (const auto& v : kSupported) list += (list.empty() ? "" : ", ") + v;
    out_.err = std::string(kAbout) + "\nCNI protocol versions supported: " + list + "\n";
    return out_;
  }
  if (command == "VERSION") {
    const json in = json::parse(input_, nullptr, false);
    const std::string v = in.is_object() ? in.value("cniVersion", "1.0.0") : "1.0.0";
    out_.out = json{{"cniVersion", v}, {"supportedVersions", kSupported}}.dump() + "\n";
    return out_;
  }
  std::optional<CniError> err = load_conf();
  if (!err) {
    if (command == "ADD")
      err = cmd_add();
    else if (command == "DEL")
      err = cmd_del();
    else if (command == "CHECK")
      err = cmd_check();
    else
      err = CniError{4, "unknown CNI_COMMAND: " + command, ""};
  }
  if (err) {
    out_.out = error_json(conf_.cni_version, *err);
    out_.exit_code = 1;
    log(command + " failed: " + err->msg + (err->details.empty() ? "" : " (" + err->details + ")"));
  }
  return out_;
}

}  // namespace

PluginOutput run(const std::map<std::string, std::string>& env, const std::string& stdin_text) {
  return Plugin(env, stdin_text).run();
}

}  // namespace cn::fakes::cni_fake
