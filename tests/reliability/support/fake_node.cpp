#include "tests/reliability/support/fake_node.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <stdexcept>

namespace cn::reliability {

using nlohmann::json;

const std::vector<std::string> kWebLabels = {
    "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
    "nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"};
const std::vector<std::string> kWebLabelsWithTeam = {"k8s:io.cilium.k8s.policy.cluster=default",
                                                     "k8s:io.kubernetes.pod.namespace=default",
                                                     "nomad:nomad.group=app",
                                                     "nomad:nomad.job=web",
                                                     "nomad:nomad.namespace=default",
                                                     "nomad:team=payments"};

FakeNode::FakeNode(FakeNodeOptions options) : options_(std::move(options)) {
  fakes::FakeCiliumAgentConfig ac;
  ac.socket_path = cilium_socket();
  ac.identity_delay = options_.identity_delay;
  ac.label_patterns = options_.agent_label_patterns;
  agent_ = std::make_unique<fakes::FakeCiliumAgent>(ac);
  agent_->start();
  nomad_ = std::make_unique<fakes::FakeNomad>(options_.nomad);
  if (auto ok = nomad_->start(); !ok) throw std::runtime_error(ok.error().message);
  fakes::JobSpec web;
  web.id = "web";
  web.meta = options_.job_meta;
  if (auto ok = nomad_->register_job(web); !ok) throw std::runtime_error(ok.error().message);
}

FakeNode::~FakeNode() {
  if (agent_) agent_->stop();
  if (nomad_) nomad_->stop();
}

std::string FakeNode::node_id() const {
  return options_.nomad.node_id;
}

std::string FakeNode::place(const std::string& job) {
  fakes::PlaceRequest req;
  req.job_id = job;
  auto id = nomad_->place_alloc(req);
  if (!id) throw std::runtime_error("place: " + id.error().message);
  return *id;
}

void FakeNode::create_endpoint(const std::string& alloc, const std::string& ip) {
  auto ep = agent_->create_endpoint({{"container-id", alloc},
                                     {"container-interface-name", "eth0"},
                                     {"interface-name", "lxc" + alloc.substr(0, 8)},
                                     {"addressing", {{"ipv4", ip}}},
                                     {"state", "waiting-for-identity"},
                                     {"sync-build-endpoint", true}});
  if (!ep) throw std::runtime_error("create endpoint: " + ep.error().message);
}

void FakeNode::report_network(const std::string& alloc, const std::string& ip) {
  if (auto ok = nomad_->set_network_status(alloc, {ip, "", "eth0"}); !ok) {
    throw std::runtime_error("network status: " + ok.error().message);
  }
}

std::string FakeNode::running_alloc(const std::string& ip) {
  std::string id = place();
  report_network(id, ip);
  create_endpoint(id, ip);
  return id;
}

json FakeNode::prev_result(const std::string& ip) {
  return {{"cniVersion", "1.0.0"},
          {"interfaces",
           json::array({{{"name", "lxc1"}}, {{"name", "eth0"}, {"sandbox", "/var/run/netns/x"}}})},
          {"ips",
           json::array({{{"interface", 1}, {"address", ip + "/32"}, {"gateway", "10.200.0.1"}}})}};
}

json FakeNode::plugin_conf(const std::string& ip, int wait_ms,
                           const std::string& state_file) const {
  return {{"cniVersion", "1.0.0"},
          {"name", "cilium"},
          {"type", "cilium-nomad-cni"},
          {"state-file", state_file.empty() ? this->state_file() : state_file},
          {"labeler-socket", labeler_socket()},
          {"wait-for-labels-ms", wait_ms},
          {"prevResult", prev_result(ip)}};
}

testing::ProcessResult FakeNode::plugin_add(const std::string& alloc, const std::string& ip,
                                            int wait_ms, const std::string& cni_args,
                                            const std::string& state_file) const {
  std::map<std::string, std::string> env = {
      {"CNI_COMMAND", "ADD"},       {"CNI_CONTAINERID", alloc},
      {"CNI_IFNAME", "eth0"},       {"CNI_NETNS", "/var/run/netns/x"},
      {"CNI_PATH", "/opt/cni/bin"}, {"CNI_ARGS", cni_args}};
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return testing::run_process({testing::bin_dir() + "/cilium-nomad-cni"}, env,
                              plugin_conf(ip, wait_ms, state_file).dump());
}

testing::ProcessResult FakeNode::plugin_del(const std::string& alloc, const std::string& ip) const {
  std::map<std::string, std::string> env = {{"CNI_COMMAND", "DEL"},
                                            {"CNI_CONTAINERID", alloc},
                                            {"CNI_IFNAME", "eth0"},
                                            {"CNI_NETNS", "/var/run/netns/x"},
                                            {"CNI_PATH", "/opt/cni/bin"}};
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return testing::run_process({testing::bin_dir() + "/cilium-nomad-cni"}, env,
                              plugin_conf(ip, 0, "").dump());
}

std::optional<json> FakeNode::endpoint_of(const std::string& alloc) const {
  return agent_->endpoint("cni-attachment-id:" + alloc + ":eth0");
}

std::vector<std::string> FakeNode::identity_labels(const std::string& alloc) const {
  auto ep = endpoint_of(alloc);
  if (!ep) return {};
  const json& labels = (*ep)["status"]["identity"]["labels"];
  if (!labels.is_array()) return {};
  auto out = labels.get<std::vector<std::string>>();
  std::sort(out.begin(), out.end());
  return out;
}

bool FakeNode::labeled(const std::string& alloc, const std::vector<std::string>& labels) const {
  auto ep = endpoint_of(alloc);
  if (!ep) return false;
  const json& identity = (*ep)["status"]["identity"];
  if (!identity.is_object() || !identity["id"].is_number_integer() ||
      identity["id"].get<long long>() < 256) {
    return false;
  }
  return identity_labels(alloc) == labels;
}

bool FakeNode::wait_labeled(const std::string& alloc, const std::vector<std::string>& labels,
                            std::chrono::milliseconds timeout) const {
  return agent_->wait_endpoint(
      "cni-attachment-id:" + alloc + ":eth0",
      [&](const std::optional<json>&) { return labeled(alloc, labels); }, timeout);
}

int FakeNode::label_writes(const std::string& alloc) const {
  auto ep = endpoint_of(alloc);
  if (!ep) return 0;
  const std::string base = "/v1/endpoint/" + std::to_string((*ep)["id"].get<long long>());
  int n = 0;
  for (const auto& r : agent_->requests()) {
    bool applied = r.status >= 200 && r.status < 300;
    if (applied && r.method == "PATCH" && (r.path == base || r.path == base + "/labels")) ++n;
  }
  return n;
}

std::vector<std::string> FakeNode::labeler_argv(const std::vector<std::string>& extra,
                                                const std::string& log_level) const {
  std::vector<std::string> argv = {testing::bin_dir() + "/cilium-nomad-labeler",
                                   "run",
                                   "--cilium-socket",
                                   cilium_socket(),
                                   "--nomad-addr",
                                   nomad_->address(),
                                   "--node-id",
                                   node_id(),
                                   "--socket",
                                   labeler_socket(),
                                   "--state-file",
                                   state_file(),
                                   "--metrics-addr",
                                   "",
                                   "--log-level",
                                   log_level};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::map<std::string, std::string> FakeNode::labeler_env(
    const std::map<std::string, std::string>& extra) const {
  std::map<std::string, std::string> env;
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  for (const auto& [k, v] : extra) env[k] = v;
  return env;
}

std::string sanitizer_report(const std::string& log) {
  static const std::regex report(
      R"((ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|runtime error:)[^\n]*)");
  std::smatch m;
  return std::regex_search(log, m, report) ? m.str() : std::string();
}

StateFileView read_state_file(const std::string& path) {
  StateFileView view;
  view.text = testing::read_file(path);
  json j = json::parse(view.text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    view.error = "not a JSON object";
    return view;
  }
  if (j.contains("allocations") && j["allocations"].is_object())
    view.allocations = j["allocations"];
  view.parsed = true;
  return view;
}

}  // namespace cn::reliability
