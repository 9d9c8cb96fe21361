// The plugin's log lines (cni-plugin/plugin_log_sink.h): the line format the spdlog pattern gave
// before the plugin wrote its own sink, and the log-file's opening rules.
#include <sys/stat.h>
#include <unistd.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cni-plugin/plugin_log_sink.h"
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

// The plugin runs as root with a log path from the netconf: what is planted at that path must
// not redirect, block or forge its lines.
TEST_F(PluginTest, ALinkAtTheLogPathIsNotFollowed) {
  const std::string victim = dir_.file("victim");
  cn::testing::write_file(victim, "untouched\n");
  ASSERT_EQ(::symlink(victim.c_str(), dir_.file("plugin.log").c_str()), 0);
  auto c = conf();
  c["log-file"] = dir_.file("plugin.log");
  auto out = invoke("ADD", c);
  EXPECT_EQ(out.exit_code, 0) << "logging never fails an allocation";
  EXPECT_EQ(cn::testing::read_file(victim), "untouched\n");
  EXPECT_NE(out.stderr_data.find("cannot open log-file"), std::string::npos) << out.stderr_data;
}

TEST_F(PluginTest, AFifoAtTheLogPathIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(dir_.file("plugin.log").c_str(), 0600), 0);
  auto c = conf();
  c["log-file"] = dir_.file("plugin.log");
  auto out = invoke("ADD", c);  // an open(2) that waited for a reader would never return
  EXPECT_EQ(out.exit_code, 0);
  // Without a reader the non-blocking open itself fails (ENXIO); with one, fstat refuses it.
  EXPECT_NE(out.stderr_data.find("cannot open log-file"), std::string::npos) << out.stderr_data;
}

TEST_F(PluginTest, TheLogFileIsCreatedReadableByOwnerAndGroupOnly) {
  const mode_t old_umask = ::umask(0);
  auto c = conf();
  c["log-file"] = dir_.file("plugin.log");
  auto out = invoke("ADD", c);
  ::umask(old_umask);
  ASSERT_EQ(out.exit_code, 0);
  struct stat st {};
  ASSERT_EQ(::stat(dir_.file("plugin.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640U);
}

TEST_F(PluginTest, AFullLogFileIsRotatedOnce) {
  const std::string log = dir_.file("plugin.log");
  cn::testing::write_file(log, std::string(PluginLogSink::kMaxLogBytes, 'x'));
  auto c = conf();
  c["log-file"] = log;
  ASSERT_EQ(invoke("ADD", c).exit_code, 0);
  struct stat st {};
  ASSERT_EQ(::stat((log + ".1").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, PluginLogSink::kMaxLogBytes) << "the full file, kept as .1";
  auto lines = lines_of(cn::testing::read_file(log));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(std::regex_match(lines[0], line_format())) << lines[0];
}

TEST_F(PluginTest, ANewlineInCniArgsCannotForgeALogLine) {
  auto e = env("ADD");
  e["CNI_ARGS"] =
      "NOMAD_JOB_ID=web\n2026-01-01T00:00:00.000Z info cilium-nomad-cni pid=1 add "
      "alloc=forged\x1b[2K;NOMAD_NAMESPACE=default;NOMAD_GROUP_NAME=app;"
      "NOMAD_ALLOC_ID=" +
      std::string(kAllocId);
  auto out = invoke(e, conf().dump());
  ASSERT_EQ(out.exit_code, 0) << out.stdout_data;
  auto lines = lines_of(out.stderr_data);
  ASSERT_EQ(lines.size(), 1u) << out.stderr_data;
  EXPECT_NE(lines[0].find("web\\n2026-01-01"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("\\x1b[2K"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace cn::plugin
