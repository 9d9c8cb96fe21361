// The three labeler situations the plugin must survive: absent, silent (deadline), confirming.
#include "tests/support/stub_labeler.h"
#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

using cn::testing::StubLabeler;
using nlohmann::json;

TEST_F(PluginTest, LabelerAbsentFailsOpen) {
  auto c = conf();
  c["wait-for-labels-ms"] = 3000;
  auto out = invoke("ADD", c);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(json::parse(out.stdout_data), cilium_result());
  EXPECT_NE(out.stderr_data.find("labeler=unreachable"), std::string::npos) << out.stderr_data;
  EXPECT_EQ(state().allocations.count(kAllocId), 1u);  // left for the labeler's reconcile
}

TEST_F(PluginTest, SilentLabelerIsCutOffByTheDeadline) {
  StubLabeler labeler(dir_.file("labeler.sock"), StubLabeler::Mode::kSilent);
  auto c = conf();
  c["wait-for-labels-ms"] = 150;
  auto out = invoke("ADD", c);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(json::parse(out.stdout_data), cilium_result());
  EXPECT_NE(out.stderr_data.find("labeler=timeout"), std::string::npos) << out.stderr_data;
  ASSERT_TRUE(labeler.wait_for_requests(1));
  EXPECT_EQ(labeler.requests()[0].wait_ms, 150);
}

TEST_F(PluginTest, ConfirmingLabelerIsReportedAndGetsTheWholeRequest) {
  StubLabeler labeler(dir_.file("labeler.sock"), StubLabeler::Mode::kConfirm);
  auto c = conf();
  c["wait-for-labels-ms"] = 3000;
  auto out = invoke("ADD", c);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_NE(out.stderr_data.find("labeler=labeled"), std::string::npos) << out.stderr_data;
  ASSERT_TRUE(labeler.wait_for_requests(1));
  auto req = labeler.requests()[0];
  EXPECT_EQ(req.op, notify::Op::kAdd);
  EXPECT_EQ(req.alloc_id, kAllocId);
  EXPECT_EQ(req.ifname, "eth0");
  EXPECT_EQ(req.ips, std::vector<std::string>{"10.200.3.17"});
  EXPECT_EQ(req.nomad.job_id, "web");
  EXPECT_EQ(req.nomad.group, "app");
  EXPECT_EQ(req.nomad.namespace_, "default");
}

TEST_F(PluginTest, DelNotifiesTheLabeler) {
  StubLabeler labeler(dir_.file("labeler.sock"), StubLabeler::Mode::kConfirm);
  auto e = env("DEL");
  e.erase("CNI_ARGS");
  ASSERT_EQ(invoke(e, conf().dump()).exit_code, 0);
  ASSERT_TRUE(labeler.wait_for_requests(1));
  EXPECT_EQ(labeler.requests()[0].op, notify::Op::kDel);
}

TEST_F(PluginTest, LogFileReceivesTheLinesInsteadOfStderr) {
  auto c = conf();
  c["log-file"] = dir_.file("plugin.log");
  auto out = invoke("ADD", c);
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.stderr_data.find("add alloc="), std::string::npos);
  EXPECT_NE(
      cn::testing::read_file(dir_.file("plugin.log")).find("add alloc=" + std::string(kAllocId)),
      std::string::npos);
}

}  // namespace
}  // namespace cn::plugin
