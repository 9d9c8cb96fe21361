// The plugin's log lines (cni-plugin/plugin_log_sink.h): the line format the spdlog pattern gave
// before the plugin wrote its own sink, and the log-file's opening rules.
#include <unistd.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// "2026-11-29T20:22:59.205Z info cilium-nomad-cni pid=123 add alloc=..."
const std::regex& line_format() {
  static const std::regex format(
      R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z (info|warning|error) cilium-nomad-cni pid=(\d+) (.*)$)");
  return format;
}

TEST_F(PluginTest, ALogLineCarriesUtcTimeLevelPidAndMessage) {
  auto out = invoke("ADD", conf());
  ASSERT_EQ(out.exit_code, 0) << out.stdout_data;
  auto lines = lines_of(out.stderr_data);
  ASSERT_EQ(lines.size(), 1u) << out.stderr_data;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[0], m, line_format())) << lines[0];
  EXPECT_EQ(m[1], "warning") << "no labeler listens: the ADD line is a warning";
  EXPECT_EQ(m[2], std::to_string(::getpid()));
  EXPECT_TRUE(m[3].str().starts_with("add alloc=" + std::string(kAllocId) + " ")) << m[3];
  EXPECT_TRUE(out.stderr_data.ends_with("\n"));
}

TEST_F(PluginTest, TheLogFileIsCreatedWithItsDirectoriesAndAppendedTo) {
  auto c = conf();
  c["log-file"] = dir_.file("logs/cni/plugin.log");
  for (int i = 0; i < 2; ++i) {
    auto out = invoke("ADD", c);
    ASSERT_EQ(out.exit_code, 0) << out.stdout_data;
    EXPECT_EQ(out.stderr_data, "") << "the lines go to the file, not to the runtime";
  }
  auto lines = lines_of(cn::testing::read_file(dir_.file("logs/cni/plugin.log")));
  ASSERT_EQ(lines.size(), 2u);
  for (const auto& line : lines) EXPECT_TRUE(std::regex_match(line, line_format())) << line;
}

TEST_F(PluginTest, ALogFileThatCannotBeOpenedLeavesTheLinesOnStderr) {
  cn::testing::write_file(dir_.file("not-a-dir"), "");
  auto c = conf();
  c["log-file"] = dir_.file("not-a-dir/plugin.log");
  auto out = invoke("ADD", c);
  EXPECT_EQ(out.exit_code, 0) << "logging never fails an allocation";
  auto lines = lines_of(out.stderr_data);
  ASSERT_EQ(lines.size(), 2u) << out.stderr_data;
  EXPECT_NE(lines[0].find("warning cilium-nomad-cni pid="), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("cannot open log-file, logging to stderr: path=" +
                          dir_.file("not-a-dir/plugin.log")),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(" add alloc="), std::string::npos) << lines[1];
}

}  // namespace
}  // namespace cn::plugin
