// The plugin in a real chain: Debian's ptp/bridge + host-local stand in for cilium-cni, in
// network namespaces, run the way Nomad runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include "common/state/state_store.h"
#include "tests/support/cni_chain.h"
#include "tests/support/netns.h"
#include "tests/support/stub_labeler.h"
#include "tests/support/temp_dir.h"

namespace cn::testing {
namespace {

using nlohmann::json;

class PluginChainTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (auto why = netns_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
    node_ = std::make_unique<NetNs>("node");
    ASSERT_TRUE(node_->ok());
  }

  // ptp or bridge with host-local first, then our plugin, as in conf-examples/cilium.conflist.
  json conflist(const std::string& head, int wait_ms = 0) const {
    json ipam = {{"type", "host-local"},
                 {"subnet", "10.251.7.0/24"},
                 {"dataDir", dir_.file("ipam")},
                 {"routes", json::array({{{"dst", "0.0.0.0/0"}}})}};
    json first = {{"type", head}, {"ipMasq", false}, {"ipam", ipam}};
    if (head == "bridge") {
      first["bridge"] = "cnbr0";
      first["isGateway"] = true;
    }
    return {{"cniVersion", GetParam()},
            {"name", "cilium"},
            {"plugins", json::array({first,
                                     {{"type", "cilium-nomad-cni"},
                                      {"state-file", dir_.file("run/state.json")},
                                      {"labeler-socket", dir_.file("run/labeler.sock")},
                                      {"wait-for-labels-ms", wait_ms}}})}};
  }

  std::vector<std::string> cni_path() const { return {"/usr/lib/cni", bin_dir()}; }

  state::StateDoc state() {
    state::StateStore store({dir_.file("run/state.json")}, system_clock(), nullptr);
    return store.load().value_or(state::StateDoc{});
  }

  // The IPv4 address actually configured on eth0 inside the allocation's namespace.
  std::string address_in(const NetNs& ns) {
    auto r = run_process({"/usr/bin/ip", "-n", ns.name(), "-j", "addr", "show", "eth0"}, {}, "");
    auto j = json::parse(r.out, nullptr, false);
    if (!j.is_array() || j.empty()) return {};
    for (const auto& a : j[0]["addr_info"]) {
      if (a["family"] == "inet") return a["local"];
    }
    return {};
  }

  TempDir dir_;
  std::unique_ptr<NetNs> node_;
};

TEST_P(PluginChainTest, AddCheckDelDelWithPtpAndBridge) {
  for (std::string head : {"ptp", "bridge"}) {
    SCOPED_TRACE(head);
    NetNs alloc_ns("alloc");
    ASSERT_TRUE(alloc_ns.ok());
    std::string alloc = random_alloc_id();
    CniChain chain(conflist(head), node_->name(), cni_path());
    auto env = nomad_cni_env("ADD", alloc, alloc_ns.path(), cni_path());

    auto add = chain.add(env);
    ASSERT_TRUE(add.ok) << add.steps.back().result.out << add.steps.back().result.err;
    ASSERT_EQ(add.steps.size(), 2u);
    // Our stdout is the previous plugin's result, unchanged.
    EXPECT_EQ(json::parse(add.steps[1].result.out), json::parse(add.steps[0].result.out));

    auto doc = state();
    ASSERT_EQ(doc.allocations.count(alloc), 1u);
    const auto& entry = doc.allocations.at(alloc);
    std::string real_ip = address_in(alloc_ns);
    ASSERT_FALSE(real_ip.empty());
    EXPECT_EQ(entry.ips, std::vector<std::string>{real_ip});
    EXPECT_EQ(entry.ifname, "eth0");
    EXPECT_EQ(entry.netns, alloc_ns.path());
    EXPECT_EQ(entry.nomad.job_id, "web");

    if (GetParam() != "0.3.1") {  // CHECK exists from 0.4.0 on
      auto check = chain.check(env, add.final_result);
      EXPECT_TRUE(check.ok) << check.steps.back().result.out << check.steps.back().result.err;
    }

    auto del = chain.del(env, add.final_result);
    EXPECT_TRUE(del.ok) << del.steps.back().result.out << del.steps.back().result.err;
    EXPECT_EQ(del.steps[0].type, "cilium-nomad-cni") << "DEL runs in reverse";
    EXPECT_TRUE(del.steps[0].result.out.empty());
    EXPECT_EQ(state().allocations.count(alloc), 0u);

    auto again = chain.del(env, add.final_result);
    EXPECT_TRUE(again.ok) << again.steps.back().result.out << again.steps.back().result.err;
  }
}

TEST_P(PluginChainTest, SilentLabelerDelaysAddOnlyUntilTheDeadline) {
  std::filesystem::create_directories(dir_.file("run"));
  StubLabeler labeler(dir_.file("run/labeler.sock"), StubLabeler::Mode::kSilent);
  NetNs alloc_ns("alloc");
  std::string alloc = random_alloc_id();
  CniChain chain(conflist("ptp", 300), node_->name(), cni_path());
  auto env = nomad_cni_env("ADD", alloc, alloc_ns.path(), cni_path());
  auto add = chain.add(env);
  ASSERT_TRUE(add.ok) << add.steps.back().result.err;
  EXPECT_NE(add.steps[1].result.err.find("labeler=timeout"), std::string::npos)
      << add.steps[1].result.err;
  ASSERT_TRUE(labeler.wait_for_requests(1));
  EXPECT_EQ(labeler.requests()[0].ips, std::vector<std::string>{address_in(alloc_ns)});
  chain.del(env, add.final_result);
}

INSTANTIATE_TEST_SUITE_P(CniVersions, PluginChainTest, ::testing::Values("0.3.1", "0.4.0", "1.0.0"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return "v" + name;
                         });

// 100 plugin processes at once on one state file, as when Nomad places many allocations.
TEST(PluginConcurrency, HundredParallelAddsThenDelsLoseNothing) {
  TempDir dir;
  json conf = {{"cniVersion", "1.0.0"},
               {"name", "cilium"},
               {"type", "cilium-nomad-cni"},
               {"state-file", dir.file("run/state.json")},
               {"labeler-socket", dir.file("run/labeler.sock")},
               {"wait-for-labels-ms", 0}};
  constexpr int kAllocs = 100;
  std::vector<std::string> ids;
  for (int i = 0; i < kAllocs; ++i) ids.push_back(random_alloc_id());

  auto run_all = [&](const std::string& command) {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < kAllocs; ++i) {
      threads.emplace_back([&, i] {
        json c = conf;
        c["prevResult"] = {
            {"cniVersion", "1.0.0"},
            {"interfaces", json::array({{{"name", "eth0"}, {"sandbox", "/x"}}})},
            {"ips", json::array({{{"interface", 0},
                                  {"address", "10.252." + std::to_string(i / 200) + "." +
                                                  std::to_string(i % 200 + 1) + "/32"}}})}};
        auto env = nomad_cni_env(command, ids[i], "/var/run/netns/x", {bin_dir()});
        auto r = run_process({bin_dir() + "/cilium-nomad-cni"}, env, c.dump());
        if (r.exit_code != 0) ++failures;
      });
    }
    for (auto& t : threads) t.join();
    return failures.load();
  };

  ASSERT_EQ(run_all("ADD"), 0);
  state::StateStore store({dir.file("run/state.json")}, system_clock(), nullptr);
  auto doc = store.load();
  ASSERT_TRUE(doc);
  ASSERT_EQ(doc->allocations.size(), static_cast<std::size_t>(kAllocs));
  std::set<std::string> ips;
  for (const auto& id : ids) {
    ASSERT_EQ(doc->allocations.count(id), 1u);
    ips.insert(doc->allocations.at(id).ips.at(0));
  }
  EXPECT_EQ(ips.size(), static_cast<std::size_t>(kAllocs)) << "no entry got another's address";

  ASSERT_EQ(run_all("DEL"), 0);
  doc = store.load();
  ASSERT_TRUE(doc);
  EXPECT_TRUE(doc->allocations.empty());
}

}  // namespace
}  // namespace cn::testing
