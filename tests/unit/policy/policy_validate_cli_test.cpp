// `cilium-nomad-labeler policy validate` through the built binary: output and exit codes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/support/child_process.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn {
namespace {

testing::ProcessResult validate(std::vector<std::string> args) {
  std::vector<std::string> argv = {testing::bin_dir() + "/cilium-nomad-labeler", "policy"};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run_process(argv, testing::with_sanitizer_options({}), "",
                              std::chrono::seconds{30});
}

std::string data(const std::string& name) {
  return testing::source_dir() + "/tests/data/policies/" + name;
}

TEST(PolicyValidateCommand, AllValidExitsZeroWithOkPerFile) {
  auto r = validate(
      {"validate", data("good/ccnp-netreap-style.yaml"), data("good/cnp-namespaced.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(data("good/ccnp-netreap-style.yaml") + ": OK\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(data("good/cnp-namespaced.json") + ": OK\n"), std::string::npos) << r.out;
}

TEST(PolicyValidateCommand, AnyInvalidExitsOneWithPathInsideTheDocument) {
  auto r =
      validate({"validate", data("good/cnp-namespaced.json"), data("bad/port-out-of-range.yaml")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find(": OK"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(data("bad/port-out-of-range.yaml") +
                       ": /spec/ingress/0/toPorts/0/ports/0/port: \"70000\" is not a port"),
            std::string::npos)
      << r.err;
}

TEST(PolicyValidateCommand, NetreapRuleArrayIsCheckedAsTheDistributorWrapsIt) {
  auto r = validate({"validate", data("netreap/rules.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": OK (rule array"), std::string::npos) << r.out;
}

TEST(PolicyValidateCommand, MissingFileIsInvalidNotACrash) {
  auto r = validate({"validate", "/nonexistent/policy.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/policy.yaml: cannot read"), std::string::npos) << r.err;
}

// Checked against the upstream defaults unless --agent-option says otherwise; the later of two
// assignments wins.
TEST(PolicyValidateCommand, APolicyNeedingAnOptionOffByDefaultIsRefusedWithTheOption) {
  const std::string file = data("needs-option/ccnp-from-nodes.yaml");
  auto r = validate({"validate", file});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(file + ": /spec/ingress/0/fromNodes: fromNodes needs the agent option "
                              "enable-node-selector-labels (off by default"),
            std::string::npos)
      << r.err;
  r = validate({"validate", "--agent-option", "enable-node-selector-labels=true", file});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = validate({"validate", "--agent-option", "enable-node-selector-labels=true", "--agent-option",
                "enable-node-selector-labels=false", file});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(validate({"validate", "--agent-option", "enable-foo=true", file}).exit_code, 2);
  EXPECT_EQ(validate({"validate", "--agent-option", "enable-l7-proxy=yes", file}).exit_code, 2);
}

TEST(PolicyValidateCommand, BadUsageExitsTwo) {
  EXPECT_EQ(validate({"validate"}).exit_code, 2);
  EXPECT_EQ(validate({}).exit_code, 2);
  EXPECT_EQ(validate({"validate", "--no-such-flag", data("good/cnp-namespaced.json")}).exit_code,
            2);
}

// --nomad-namespace: the files are taken for variables of that namespace (docs/policies.md
// "Delegation"); the operator's namespace (--policy-namespace, default "default") may write all.
TEST(PolicyValidateCommand, NomadNamespaceAppliesTheDelegationRule) {
  const std::string ccnp = data("good/ccnp-netreap-style.yaml");
  const std::string rules = data("netreap/rules.json");
  EXPECT_EQ(validate({"validate", ccnp, rules}).exit_code, 0);
  auto team = validate({"validate", "--nomad-namespace", "team-a", ccnp, rules});
  EXPECT_EQ(team.exit_code, 1);
  EXPECT_NE(team.err.find(ccnp + ": /kind: not delegated: a variable in Nomad namespace "
                                 "\"team-a\" (not the operator's namespace \"default\")"),
            std::string::npos)
      << team.err;
  EXPECT_NE(team.err.find(rules + ": /kind: not delegated: "), std::string::npos) << team.err;
  auto op = validate({"validate", "--nomad-namespace", "ops", "--policy-namespace", "ops", ccnp});
  EXPECT_EQ(op.exit_code, 0) << op.err;

  // A CNP without a namespace is the variable's; one naming another namespace is refused.
  cn::testing::TempDir tmp;
  const std::string cnp = tmp.file("cnp.json");
  cn::testing::write_file(cnp, R"({"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
    "metadata": {"name": "x"}, "spec": {"endpointSelector": {}, "ingress": [{}]}})");
  EXPECT_EQ(validate({"validate", "--nomad-namespace", "team-a", cnp}).exit_code, 0);
  const std::string other = tmp.file("other.json");
  cn::testing::write_file(other, R"({"apiVersion": "cilium.io/v2",
    "kind": "CiliumNetworkPolicy", "metadata": {"name": "x", "namespace": "team-b"},
    "spec": {"endpointSelector": {}, "ingress": [{}]}})");
  auto refused = validate({"validate", "--nomad-namespace", "team-a", other});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find(other + ": /metadata/namespace: not delegated: "), std::string::npos)
      << refused.err;
}

}  // namespace
}  // namespace cn
