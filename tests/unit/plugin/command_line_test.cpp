// The plugin's answers to a person at a shell (--version, --help) must never reach a runtime's
// invocation: a runtime passes no arguments and sets CNI_COMMAND, and Nomad's fingerprint
// passes neither.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cni-plugin/command_line.h"

namespace cn::plugin {
namespace {

struct Answer {
  std::optional<int> code;
  std::string out;
  std::string err;
};

Answer answer(std::vector<const char*> args, std::vector<const char*> env = {"PATH=/usr/bin"}) {
  Answer a;
  env.push_back(nullptr);
  PluginIo io{[] { return std::string(); }, [&a](std::string_view d) { a.out += d; },
              [&a](std::string_view d) { a.err += d; }};
  a.code = answer_command_line(args, env.data(), io);
  return a;
}

TEST(PluginCommandLine, NoArgumentsIsThePluginItself) {
  auto a = answer({});
  EXPECT_FALSE(a.code.has_value());
  EXPECT_EQ(a.out + a.err, "");
}

TEST(PluginCommandLine, ArgumentsAreIgnoredUnderARuntime) {
  auto a = answer({"--version"}, {"CNI_COMMAND=ADD"});
  EXPECT_FALSE(a.code.has_value());
  EXPECT_EQ(a.out + a.err, "");
}

TEST(PluginCommandLine, VersionPrintsNameAndVersionFirstOnStdout) {
  auto a = answer({"--version"});
  ASSERT_EQ(a.code, 0);
  EXPECT_TRUE(a.out.starts_with(std::string("cilium-nomad-cni v") + CN_VERSION + "\n")) << a.out;
  EXPECT_NE(a.out.find("1.1.0"), std::string::npos) << "lists the CNI protocol versions";
  EXPECT_EQ(a.err, "");
}

TEST(PluginCommandLine, HelpNamesTheOptionsOnStdout) {
  auto a = answer({"--help"});
  ASSERT_EQ(a.code, 0);
  EXPECT_TRUE(a.out.starts_with("Usage: cilium-nomad-cni")) << a.out;
  EXPECT_NE(a.out.find("--version"), std::string::npos);
  EXPECT_NE(a.out.find("wait-for-labels-ms"), std::string::npos);
  EXPECT_EQ(a.err, "");
}

TEST(PluginCommandLine, AnythingElseIsAUsageError) {
  for (const auto& args :
       std::vector<std::vector<const char*>>{{"--bogus"}, {"version"}, {"--version", "--help"}}) {
    auto a = answer(args);
    EXPECT_EQ(a.code, 2) << args.front();
    EXPECT_EQ(a.out, "") << "stdout is for CNI JSON and the answers above";
    EXPECT_NE(a.err.find(args.front()), std::string::npos) << a.err;
  }
}

}  // namespace
}  // namespace cn::plugin
