// Whatever throws inside a verb once the config is parsed, the allocation's networking does not
// fail because of us: ADD passes prevResult on, DEL, CHECK, GC and STATUS exit 0, and one log
// line names the verb, the step and the exception.
#include <algorithm>
#include <ostream>
#include <sstream>
#include <vector>

#include "cni-plugin/plugin_logger.h"
#include "tests/unit/plugin/injected_exceptions.h"
#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

using nlohmann::json;

struct FaultCase {
  std::string command;
  Step step;
  Injected injected;
};

std::ostream& operator<<(std::ostream& os, const FaultCase& c) {
  return os << c.command << " at " << step_name(c.step) << " throws " << injected_name(c.injected);
}

std::string fault_case_name(const ::testing::TestParamInfo<FaultCase>& param_info) {
  std::string name = param_info.param.command + "_" +
                     std::string(step_name(param_info.param.step)) + "_" +
                     injected_name(param_info.param.injected);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// Every step each verb reaches with the fixture's input (CHECK with an empty state file rebuilds
// the entry, so it writes and notifies too).
std::vector<FaultCase> all_cases() {
  const std::vector<std::pair<std::string, std::vector<Step>>> steps_by_verb = {
      {"ADD",
       {Step::kConfigParsed, Step::kStateWrite, Step::kStateWritten, Step::kLabelerNotify,
        Step::kLabelerNotified, Step::kOutput}},
      {"DEL",
       {Step::kConfigParsed, Step::kStateWrite, Step::kStateWritten, Step::kLabelerNotify,
        Step::kLabelerNotified, Step::kOutput}},
      {"CHECK",
       {Step::kConfigParsed, Step::kStateRead, Step::kStateWrite, Step::kStateWritten,
        Step::kLabelerNotify, Step::kLabelerNotified, Step::kOutput}},
      {"GC", {Step::kConfigParsed, Step::kStateWrite, Step::kStateWritten, Step::kOutput}},
      {"STATUS", {Step::kConfigParsed, Step::kOutput}},
  };
  std::vector<FaultCase> cases;
  for (const auto& [command, steps] : steps_by_verb) {
    for (Step step : steps) {
      for (Injected injected : {Injected::kBadAlloc, Injected::kJson, Injected::kSystemError}) {
        cases.push_back({command, step, injected});
      }
    }
  }
  return cases;
}

std::vector<std::string> lines_containing(const std::string& text, const std::string& needle) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) found.push_back(line);
  }
  return found;
}

class FailOpenTest : public PluginTest, public ::testing::WithParamInterface<FaultCase> {
 protected:
  // GC and STATUS need 1.1.0; prevResult stays at 1.0.0 so that ADD's output shows the stamp.
  json input() const {
    auto c = conf("1.1.0");
    c["prevResult"] = cilium_result("1.0.0");
    return c;
  }
};

TEST_P(FailOpenTest, ExceptionAtEveryStepFailsOpen) {
  const FaultCase& c = GetParam();
  bool thrown = false;
  auto out = invoke(env(c.command), input().dump(), [&](Step reached) {
    if (reached != c.step) return;
    thrown = true;
    throw_injected(c.injected);
  });
  ASSERT_TRUE(thrown) << "the verb never reached this step, so the case proves nothing";

  EXPECT_EQ(out.exit_code, 0) << out.stdout_data << out.stderr_data;
  if (c.command == "ADD") {
    json expected = cilium_result("1.0.0");
    expected["cniVersion"] = "1.1.0";
    EXPECT_EQ(json::parse(out.stdout_data, nullptr, false), expected) << out.stdout_data;
  } else {
    EXPECT_EQ(out.stdout_data, "");
  }

  auto lines = lines_containing(out.stderr_data, verb_log_name(c.command) + " threw");
  ASSERT_EQ(lines.size(), 1u) << out.stderr_data;
  EXPECT_NE(lines[0].find("step=" + std::string(step_name(c.step)) + " "), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find(injected_what(c.injected)), std::string::npos) << lines[0];
}

INSTANTIATE_TEST_SUITE_P(EveryVerbStepAndException, FailOpenTest, ::testing::ValuesIn(all_cases()),
                         fault_case_name);

TEST_F(PluginTest, FailOpenLogLineGoesToTheConfiguredLogFile) {
  auto c = conf();
  c["log-file"] = dir_.file("plugin.log");
  auto out = invoke(env("ADD"), c.dump(), [](Step reached) {
    if (reached == Step::kStateWrite) throw_injected(Injected::kSystemError);
  });
  EXPECT_EQ(out.exit_code, 0);
  auto lines = lines_containing(cn::testing::read_file(dir_.file("plugin.log")), "add threw");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("alloc=" + std::string(kAllocId)), std::string::npos) << lines[0];
}

TEST_F(PluginTest, AddWithoutPrevResultIsStillAnInputErrorWhenAStepThrows) {
  auto c = conf();
  c.erase("prevResult");
  auto out = invoke(env("ADD"), c.dump(), [](Step) { throw_injected(Injected::kBadAlloc); });
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(json::parse(out.stdout_data)["code"], 7);
}

TEST_F(PluginTest, MalformedInputStillGetsTheErrorWhileAHookIsSet) {
  bool reached = false;
  auto out = invoke(env("ADD"), "{\"cniVersion\":", [&](Step) { reached = true; });
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(json::parse(out.stdout_data)["code"], 6);
  EXPECT_FALSE(reached) << "no verb step runs on input that does not parse";
}

}  // namespace
}  // namespace cn::plugin
