// `cilium-nomad-labeler explain` as an operator runs it at 3 a.m.: the built binary, over the curl
// clients, against a fake node, after the in-process daemon labeled (or failed to label) and
// stopped.
#include <gtest/gtest.h>

#include <functional>

#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/in_process_labeler.h"
#include "tests/support/eventually.h"

namespace cn::reliability {
namespace {

using nlohmann::json;

// The daemon runs its startup reconcile until `done` holds, then stops: explain must work with
// no daemon.
bool reconcile_until(FakeNode& node, const std::function<bool()>& done) {
  InProcessLabeler labeler(node, InProcessLabeler::config_for(node));
  if (!labeler.start()) return false;
  bool ok = testing::eventually(done);
  labeler.stop();
  return ok;
}

json explain(const FakeNode& node, const std::string& alloc, int& exit_code) {
  auto result =
      testing::run_process({testing::bin_dir() + "/cilium-nomad-labeler", "explain", alloc,
                            "--json", "--cilium-socket", node.cilium_socket(), "--state-file",
                            node.state_file(), "--nomad-addr", node.nomad().address()},
                           node.labeler_env(), "");
  exit_code = result.exit_code;
  EXPECT_TRUE(json::accept(result.out)) << result.out << result.err;
  return json::accept(result.out) ? json::parse(result.out) : json();
}

TEST(ExplainDiagnosis, LabeledAllocationWithTheDaemonStoppedAndNoWriteOfItsOwn) {
  FakeNode node;
  auto alloc = node.running_alloc("10.200.1.10");
  ASSERT_TRUE(reconcile_until(node, [&] { return node.labeled(alloc, kWebLabels); }));
  const int writes = node.label_writes(alloc);
  int code = -1;
  json out = explain(node, alloc.substr(0, 8), code);
  EXPECT_EQ(code, 0) << out.dump(2);
  EXPECT_EQ(out["allocation"], alloc);
  EXPECT_EQ(out["verdict"]["kind"], "labeled");
  EXPECT_EQ(out["nomad"]["job"], "web");
  EXPECT_EQ(node.label_writes(alloc), writes) << "explain never writes";
}

TEST(ExplainDiagnosis, AgentLabelsFilterTrapIsNamedWithItsFix) {
  // An agent that keeps only k8s: labels in identities: nomad: labels become derived.
  FakeNodeOptions options;
  options.agent_label_patterns = {"k8s:.*"};
  FakeNode node(options);
  auto alloc = node.running_alloc("10.200.1.11");
  // The agent moves the labels first and resolves the identity after (state
  // waiting-for-identity): explain judges the identity, so wait for it.
  ASSERT_TRUE(reconcile_until(node, [&] {
    auto ep = node.endpoint_of(alloc);
    return ep && !(*ep)["status"]["labels"].value("derived", json::array()).empty() &&
           (*ep)["status"].value("state", "") == "ready";
  }));
  int code = -1;
  json out = explain(node, alloc, code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(out["verdict"]["kind"], "labels_filtered") << out.dump(2);
  EXPECT_NE(out["verdict"]["fix"].get<std::string>().find("--labels"), std::string::npos);
}

}  // namespace
}  // namespace cn::reliability
