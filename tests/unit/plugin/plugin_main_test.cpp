// plugin_main is the process around the verbs: CNI_* from the environment, stdin through a
// reader, outcome through writers. These tests cover what only it handles: exceptions from
// outside the verbs (reading stdin, writing the outcome), where no prevResult is known yet.
#include <vector>

#include "cni-plugin/plugin_logger.h"
#include "cni-plugin/plugin_main.h"
#include "tests/unit/plugin/injected_exceptions.h"
#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

using nlohmann::json;

// An environ-style block: owned "KEY=value" strings and the null-terminated pointer array.
class EnvBlock {
 public:
  explicit EnvBlock(const std::map<std::string, std::string>& env) {
    entries_.push_back(
        "PATH=/usr/bin");  // a non-CNI variable, as Nomad passes its whole environment
    for (const auto& [k, v] : env) entries_.push_back(k + "=" + v);
    for (const auto& e : entries_) pointers_.push_back(e.c_str());
    pointers_.push_back(nullptr);
  }
  const char* const* envp() const { return pointers_.data(); }

 private:
  std::vector<std::string> entries_;
  std::vector<const char*> pointers_;
};

class PluginMainTest : public PluginTest {
 protected:
  int run(const std::map<std::string, std::string>& env, std::function<std::string()> read_stdin,
          FaultHook fault_hook = nullptr) {
    EnvBlock block(env);
    PluginIo io{std::move(read_stdin), [this](std::string_view d) { stdout_ += d; },
                [this](std::string_view d) { stderr_ += d; }};
    PluginContext ctx{system_clock(), std::move(fault_hook)};
    return plugin_main(block.envp(), io, ctx);
  }
  std::function<std::string()> stdin_of(const json& c) {
    return [text = c.dump()] { return text; };
  }

  std::string stdout_;
  std::string stderr_;
};

TEST_F(PluginMainTest, RunsTheVerbWithStdinAndWritesItsOutcome) {
  EXPECT_EQ(run(env("ADD"), stdin_of(conf())), 0) << stderr_;
  EXPECT_EQ(json::parse(stdout_), cilium_result());
  EXPECT_EQ(state().allocations.count(kAllocId), 1u);
}

TEST_F(PluginMainTest, FingerprintProbeNeverReadsStdin) {
  EXPECT_EQ(
      run({}, []() -> std::string { throw std::logic_error("stdin read without CNI_COMMAND"); }),
      0);
  EXPECT_EQ(stdout_, "");
  EXPECT_EQ(stderr_.rfind("CNI cilium-nomad-cni plugin v", 0), 0u) << stderr_;
}

TEST_F(PluginMainTest, AddFailsOpenThroughTheWritersWhenAStepThrows) {
  auto hook = [](Step reached) {
    if (reached == Step::kLabelerNotify) throw_injected(Injected::kBadAlloc);
  };
  EXPECT_EQ(run(env("ADD"), stdin_of(conf()), hook), 0);
  EXPECT_EQ(json::parse(stdout_), cilium_result());
  EXPECT_NE(stderr_.find("add threw"), std::string::npos) << stderr_;
}

// Reading stdin failed, so there is no prevResult to pass on: ADD can only report "try again
// later" (code 11); the verbs that never fail on our trouble exit 0.
class ExceptionBeforeConfigTest : public PluginMainTest,
                                  public ::testing::WithParamInterface<std::string> {};

TEST_P(ExceptionBeforeConfigTest, AddReportsTryAgainLaterOthersExitZero) {
  const std::string& command = GetParam();
  int exit_code = run(env(command), []() -> std::string { throw_injected(Injected::kBadAlloc); });
  if (command == "ADD" || command == "VERSION") {
    EXPECT_EQ(exit_code, 1);
    json j = json::parse(stdout_, nullptr, false);
    ASSERT_TRUE(j.is_object()) << stdout_;
    EXPECT_EQ(j["code"], 11);
    EXPECT_EQ(j["msg"], "internal error");
    EXPECT_EQ(j["details"], "std::bad_alloc");
    EXPECT_EQ(j["cniVersion"], "1.1.0");
  } else {
    EXPECT_EQ(exit_code, 0);
    EXPECT_EQ(stdout_, "");
  }
  std::string log_line = verb_log_name(command) +
                         " threw outside the verb's fail-open handling: error=\"std::bad_alloc\"";
  EXPECT_NE(stderr_.find(log_line), std::string::npos) << stderr_;
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, ExceptionBeforeConfigTest,
                         ::testing::Values("ADD", "DEL", "CHECK", "GC", "STATUS", "VERSION"));

TEST_F(PluginMainTest, ExceptionNotFromStdExceptionIsNamedInTheError) {
  EXPECT_EQ(run(env("ADD"), []() -> std::string { throw 42; }), 1);
  EXPECT_EQ(json::parse(stdout_)["details"], "an exception not derived from std::exception");
}

TEST_F(PluginMainTest, FailingToWriteTheLogKeepsTheDecidedExitCode) {
  EnvBlock block(env("ADD"));
  std::string out;
  PluginIo io{
      stdin_of(conf()), [&](std::string_view d) { out += d; },
      [](std::string_view) { throw std::system_error(std::make_error_code(std::errc::io_error)); }};
  PluginContext ctx{system_clock()};
  EXPECT_EQ(plugin_main(block.envp(), io, ctx), 0);
  EXPECT_EQ(json::parse(out), cilium_result());
}

}  // namespace
}  // namespace cn::plugin
