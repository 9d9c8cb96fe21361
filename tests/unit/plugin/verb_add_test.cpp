#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

using nlohmann::json;

TEST_F(PluginTest, AddPrintsPrevResultUnchangedAndExitsZero) {
  for (std::string version : {"0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    auto out = invoke("ADD", conf(version));
    ASSERT_EQ(out.exit_code, 0) << out.stdout_data << out.stderr_data;
    EXPECT_EQ(json::parse(out.stdout_data), cilium_result(version)) << version;
  }
}

TEST_F(PluginTest, AddStampsTheConfigVersionOnAPrevResultWithoutOne) {
  auto c = conf("1.0.0");
  c["prevResult"].erase("cniVersion");
  auto out = invoke("ADD", c);
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_EQ(json::parse(out.stdout_data)["cniVersion"], "1.0.0");
}

TEST_F(PluginTest, AddRecordsTheAllocationWithNomadFieldsFromCniArgs) {
  auto out = invoke("ADD", conf());
  ASSERT_EQ(out.exit_code, 0) << out.stderr_data;
  auto doc = state();
  ASSERT_EQ(doc.allocations.count(kAllocId), 1u);
  const auto& e = doc.allocations.at(kAllocId);
  EXPECT_EQ(e.ifname, "eth0");
  EXPECT_EQ(e.netns, "/var/run/netns/" + std::string(kAllocId));
  EXPECT_EQ(e.ips, std::vector<std::string>{"10.200.3.17"});
  EXPECT_EQ(e.nomad.namespace_, "default");
  EXPECT_EQ(e.nomad.job_id, "web");
  EXPECT_EQ(e.nomad.group, "app");
  EXPECT_EQ(e.nomad.region, "global");
  EXPECT_GT(e.added_unix_ms, 0);
  EXPECT_FALSE(e.added_at.empty());
  EXPECT_FALSE(e.labeled.has_value());
}

TEST_F(PluginTest, AddWithoutCniArgsRecordsNoNomadFields) {
  auto e = env("ADD");
  e.erase("CNI_ARGS");  // Nomad before 1.9.4
  auto out = invoke(e, conf().dump());
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_EQ(state().allocations.at(kAllocId).nomad, state::NomadFields{});
}

TEST_F(PluginTest, AddRecordsDualStackAndIpv6OnlyAddresses) {
  auto c = conf();
  c["prevResult"]["ips"] = json::array({{{"interface", 1}, {"address", "fd00::17/128"}},
                                        {{"interface", 1}, {"address", "10.200.3.17/32"}}});
  ASSERT_EQ(invoke("ADD", c).exit_code, 0);
  EXPECT_EQ(state().allocations.at(kAllocId).ips,
            (std::vector<std::string>{"fd00::17", "10.200.3.17"}));

  c["prevResult"]["ips"] = json::array({{{"interface", 1}, {"address", "fd00::17/128"}}});
  ASSERT_EQ(invoke("ADD", c).exit_code, 0);
  EXPECT_EQ(state().allocations.at(kAllocId).ips, std::vector<std::string>{"fd00::17"});
}

TEST_F(PluginTest, AddWithNoSandboxInterfaceStillSucceedsAndRecordsNoAddress) {
  auto c = conf();
  c["prevResult"]["interfaces"][1].erase("sandbox");
  auto out = invoke("ADD", c);
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_NE(out.stderr_data.find("no address on a sandbox interface"), std::string::npos);
  EXPECT_TRUE(state().allocations.at(kAllocId).ips.empty());
}

TEST_F(PluginTest, AddFailsOpenWhenTheStateFileCannotBeWritten) {
  auto c = conf();
  cn::testing::write_file(dir_.file("not-a-dir"), "x");
  c["state-file"] = dir_.file("not-a-dir/state.json");
  auto out = invoke("ADD", c);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(json::parse(out.stdout_data), cilium_result());
  EXPECT_NE(out.stderr_data.find("state write failed"), std::string::npos);
}

TEST_F(PluginTest, RepeatedAddKeepsLabelerFindingsForTheSameAttachment) {
  ASSERT_EQ(invoke("ADD", conf()).exit_code, 0);
  state::StateStore store({dir_.file("state/state.json")}, system_clock(), nullptr);
  ASSERT_TRUE(store.update([](state::StateDoc& doc) {
    doc.allocations.at(kAllocId).labeled = state::LabeledInfo{7, 300, {"nomad:nomad.job=web"}, "t"};
    return true;
  }));
  ASSERT_EQ(invoke("ADD", conf()).exit_code, 0);
  ASSERT_TRUE(state().allocations.at(kAllocId).labeled.has_value());
  EXPECT_EQ(state().allocations.at(kAllocId).labeled->endpoint_id, 7);
}

TEST_F(PluginTest, CheckPassesWhenTheEntryExists) {
  ASSERT_EQ(invoke("ADD", conf()).exit_code, 0);
  auto before = state_text();
  auto out = invoke("CHECK", conf());
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_TRUE(out.stdout_data.empty());
  EXPECT_EQ(state_text(), before);
}

TEST_F(PluginTest, CheckRecreatesAMissingEntryFromPrevResult) {
  auto out = invoke("CHECK", conf());
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_TRUE(out.stdout_data.empty());
  EXPECT_EQ(state().allocations.at(kAllocId).ips, std::vector<std::string>{"10.200.3.17"});
}

}  // namespace
}  // namespace cn::plugin
