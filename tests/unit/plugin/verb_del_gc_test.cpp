#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

using nlohmann::json;

constexpr const char* kOtherAlloc = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";

TEST_F(PluginTest, DelRemovesTheEntryAndIsIdempotent) {
  ASSERT_EQ(invoke("ADD", conf()).exit_code, 0);
  auto e = env("DEL");
  e.erase("CNI_ARGS");  // Nomad sends none on DEL
  auto first = invoke(e, conf().dump());
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_TRUE(first.stdout_data.empty());
  EXPECT_EQ(state().allocations.count(kAllocId), 0u);
  auto second = invoke(e, conf().dump());
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_TRUE(second.stdout_data.empty());
}

TEST_F(PluginTest, DelSucceedsWithoutPrevResultOrStateDirectory) {
  auto c = conf();
  c.erase("prevResult");
  cn::testing::write_file(dir_.file("blocker"), "x");
  c["state-file"] = dir_.file("blocker/state.json");
  auto out = invoke("DEL", c);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_TRUE(out.stdout_data.empty());
}

TEST_F(PluginTest, DelLeavesOtherAllocationsAlone) {
  ASSERT_EQ(invoke("ADD", conf()).exit_code, 0);
  auto e = env("ADD");
  e["CNI_CONTAINERID"] = kOtherAlloc;
  ASSERT_EQ(invoke(e, conf().dump()).exit_code, 0);
  ASSERT_EQ(invoke("DEL", conf()).exit_code, 0);
  auto doc = state();
  EXPECT_EQ(doc.allocations.count(kAllocId), 0u);
  EXPECT_EQ(doc.allocations.count(kOtherAlloc), 1u);
}

TEST_F(PluginTest, GcDropsEntriesMissingFromValidAttachments) {
  for (std::string key : {"cni.dev/valid-attachments", "cni.dev/attachments"}) {
    ASSERT_EQ(invoke("ADD", conf()).exit_code, 0);
    auto e = env("ADD");
    e["CNI_CONTAINERID"] = kOtherAlloc;
    ASSERT_EQ(invoke(e, conf().dump()).exit_code, 0);

    auto c = conf("1.1.0");
    c.erase("prevResult");
    c[key] = json::array({{{"containerID", kOtherAlloc}, {"ifname", "eth0"}}});
    auto out = invoke({{"CNI_COMMAND", "GC"}, {"CNI_PATH", "/opt/cni/bin"}}, c.dump());
    EXPECT_EQ(out.exit_code, 0) << key;
    EXPECT_TRUE(out.stdout_data.empty());
    auto doc = state();
    EXPECT_EQ(doc.allocations.count(kAllocId), 0u) << key;
    EXPECT_EQ(doc.allocations.count(kOtherAlloc), 1u) << key;
  }
}

TEST_F(PluginTest, StatusSucceeds) {
  auto c = conf("1.1.0");
  c.erase("prevResult");
  auto out = invoke({{"CNI_COMMAND", "STATUS"}}, c.dump());
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_TRUE(out.stdout_data.empty());
}

TEST_F(PluginTest, VersionListsSupportedVersions) {
  auto out = invoke({{"CNI_COMMAND", "VERSION"}}, R"({"cniVersion":"0.4.0"})");
  ASSERT_EQ(out.exit_code, 0);
  auto j = json::parse(out.stdout_data);
  EXPECT_EQ(j["cniVersion"], "0.4.0");
  EXPECT_EQ(j["supportedVersions"], json::array({"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}));
}

TEST_F(PluginTest, NoCommandPrintsAVersionLineOnStderrOnly) {
  auto out = invoke(std::map<std::string, std::string>{}, std::string{});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_TRUE(out.stdout_data.empty());
  EXPECT_EQ(out.stderr_data.rfind("CNI cilium-nomad-cni plugin v", 0), 0u) << out.stderr_data;
}

}  // namespace
}  // namespace cn::plugin
