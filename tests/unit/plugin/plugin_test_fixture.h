#pragma once
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cni-plugin/invocation.h"
#include "common/state/state_store.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/temp_dir.h"

namespace cn::plugin {

using cn::testing::kAllocId;

// What cilium-cni prints (cni.md section 5), the shape our plugin receives as prevResult.
inline nlohmann::json cilium_result(const std::string& version = "1.0.0") {
  return nlohmann::json::parse(R"({
    "cniVersion": ")" + version +
                               R"(",
    "interfaces": [
      {"name": "lxc5b2f3c9d1e0a", "mac": "9a:0c:51:7e:2b:44"},
      {"name": "eth0", "mac": "e6:3d:8f:10:aa:07", "sandbox": "/var/run/docker/netns/8e1f0c2a7b3d"}],
    "ips": [{"interface": 1, "address": "10.200.3.17/32", "gateway": "10.200.3.1"}],
    "routes": [{"dst": "10.200.3.1/32"}, {"dst": "0.0.0.0/0", "gw": "10.200.3.1"}]})");
}

class PluginTest : public ::testing::Test {
 protected:
  nlohmann::json conf(const std::string& version = "1.0.0") const {
    return {{"cniVersion", version},
            {"name", "cilium"},
            {"type", "cilium-nomad-cni"},
            {"state-file", dir_.file("state/state.json")},
            {"labeler-socket", dir_.file("labeler.sock")},
            {"wait-for-labels-ms", 0},
            {"prevResult", cilium_result(version)}};
  }

  std::map<std::string, std::string> env(const std::string& command) const {
    return {{"CNI_COMMAND", command},
            {"CNI_CONTAINERID", kAllocId},
            {"CNI_IFNAME", "eth0"},
            {"CNI_NETNS", "/var/run/netns/" + std::string(kAllocId)},
            {"CNI_PATH", "/opt/cni/bin"},
            {"CNI_ARGS",
             "NOMAD_GROUP_NAME=app;IgnoreUnknown=true;NOMAD_ALLOC_ID=" + std::string(kAllocId) +
                 ";example=value;NOMAD_REGION=global;NOMAD_JOB_ID=web;NOMAD_NAMESPACE=default"}};
  }

  Outcome invoke(const std::map<std::string, std::string>& e, const std::string& stdin_data,
                 FaultHook fault_hook = nullptr) {
    PluginContext ctx{system_clock(), std::move(fault_hook)};
    return run_cni(Invocation{e, stdin_data}, ctx);
  }
  Outcome invoke(const std::string& command, const nlohmann::json& c) {
    return invoke(env(command), c.dump());
  }

  state::StateDoc state() {
    state::StateStore store({dir_.file("state/state.json")}, system_clock(), nullptr);
    auto doc = store.load();
    EXPECT_TRUE(doc.has_value());
    return doc.value_or(state::StateDoc{});
  }

  std::string state_text() const { return cn::testing::read_file(dir_.file("state/state.json")); }

  cn::testing::TempDir dir_;
};

}  // namespace cn::plugin
