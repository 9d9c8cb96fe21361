// CHECK needs cniVersion 0.4.0, GC and STATUS need 1.1.0; older configs get the error (code 1 and
// the msg text) the reference plugin library returns. ADD, DEL and VERSION run at every version.
#include <filesystem>
#include <ostream>

#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

using nlohmann::json;

struct VersionCase {
  std::string command;
  std::string version;
  bool allowed;
};

std::ostream& operator<<(std::ostream& os, const VersionCase& c) {
  return os << c.command << "@" << c.version << (c.allowed ? " allowed" : " refused");
}

std::string version_case_name(const ::testing::TestParamInfo<VersionCase>& param_info) {
  std::string name = param_info.param.command + "_" + param_info.param.version;
  std::erase(name, '.');
  return name;
}

class VersionRulesTest : public PluginTest, public ::testing::WithParamInterface<VersionCase> {};

TEST_P(VersionRulesTest, FollowsTheSpecVersionForEachVerb) {
  const auto& c = GetParam();
  auto out = invoke(c.command, conf(c.version));
  if (c.allowed) {
    EXPECT_EQ(out.exit_code, 0) << out.stdout_data << out.stderr_data;
    return;
  }
  EXPECT_EQ(out.exit_code, 1);
  json j = json::parse(out.stdout_data, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out.stdout_data;
  EXPECT_EQ(j["code"], 1) << out.stdout_data;
  EXPECT_EQ(j["msg"], "config version does not allow " + c.command);
  EXPECT_EQ(j["cniVersion"], c.version);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("state/state.json"))) << "refused before any work";
}

INSTANTIATE_TEST_SUITE_P(
    AllVerbs, VersionRulesTest,
    ::testing::Values(VersionCase{"CHECK", "0.3.0", false}, VersionCase{"CHECK", "0.3.1", false},
                      VersionCase{"CHECK", "0.4.0", true}, VersionCase{"CHECK", "1.0.0", true},
                      VersionCase{"CHECK", "1.1.0", true}, VersionCase{"GC", "0.3.1", false},
                      VersionCase{"GC", "0.4.0", false}, VersionCase{"GC", "1.0.0", false},
                      VersionCase{"GC", "1.1.0", true}, VersionCase{"STATUS", "0.3.1", false},
                      VersionCase{"STATUS", "0.4.0", false}, VersionCase{"STATUS", "1.0.0", false},
                      VersionCase{"STATUS", "1.1.0", true}, VersionCase{"ADD", "0.3.0", true},
                      VersionCase{"ADD", "1.1.0", true}, VersionCase{"DEL", "0.3.0", true},
                      VersionCase{"DEL", "1.1.0", true}, VersionCase{"VERSION", "0.3.0", true},
                      VersionCase{"VERSION", "0.1.0", true}, VersionCase{"VERSION", "9.9.9", true}),
    version_case_name);

}  // namespace
}  // namespace cn::plugin
