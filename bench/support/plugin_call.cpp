#include "bench/support/plugin_call.h"

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace cn::bench {

using nlohmann::json;

std::string plugin_netconf(const PluginTarget& target, const std::string& ipv4) {
  json conf = {
      {"cniVersion", "1.0.0"},
      {"name", "cilium"},
      {"type", "cilium-nomad-cni"},
      {"state-file", target.state_file},
      {"labeler-socket", target.labeler_socket},
      {"wait-for-labels-ms", target.wait_for_labels_ms},
      {"prevResult",
       {{"cniVersion", "1.0.0"},
        {"interfaces",
         json::array(
             {{{"name", "lxc5b2f3c9d1e0a"}, {"mac", "9a:0c:51:7e:2b:44"}},
              {{"name", "eth0"}, {"mac", "e6:3d:8f:10:aa:07"}, {"sandbox", "/var/run/netns/x"}}})},
        {"ips",
         json::array({{{"interface", 1}, {"address", ipv4 + "/32"}, {"gateway", "10.200.0.1"}}})},
        {"routes", json::array({{{"dst", "10.200.0.1/32"}},
                                {{"dst", "0.0.0.0/0"}, {"gw", "10.200.0.1"}}})}}}};
  return conf.dump();
}

PluginRun run_plugin(const PluginTarget& target, const std::string& verb,
                     const std::string& alloc_id, const std::string& netconf) {
  std::map<std::string, std::string> env = {
      {"CNI_COMMAND", verb},
      {"CNI_CONTAINERID", alloc_id},
      {"CNI_IFNAME", "eth0"},
      {"CNI_NETNS", "/var/run/netns/x"},
      {"CNI_PATH", "/opt/cni/bin"},
      {"CNI_ARGS",
       "IgnoreUnknown=true;NOMAD_REGION=global;NOMAD_NAMESPACE=default;NOMAD_JOB_ID=web;"
       "NOMAD_GROUP_NAME=app;NOMAD_ALLOC_ID=" +
           alloc_id}};
  PluginRun run;
  run.started = std::chrono::system_clock::now();
  auto start = std::chrono::steady_clock::now();
  run.started_mono = start;
  auto r = testing::run_process({target.binary}, env, netconf);
  auto end = std::chrono::steady_clock::now();
  run.ended = std::chrono::system_clock::now();
  run.ms = std::chrono::duration<double, std::milli>(end - start).count();
  run.exit_code = r.exit_code;
  run.err = std::move(r.err);
  return run;
}

}  // namespace cn::bench
