// `--version` on both built binaries, as help2man (packaging/make-man-page.sh) and operators
// call it: exit 0, "<name> v<version>" as the first line of stdout. The labeler's `version`
// subcommand says the same. tests/package/ checks the installed copies in the .deb.
#include <gtest/gtest.h>

#include <unistd.h>

#include "tests/support/process.h"

namespace cn::testing {
namespace {

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

void expect_version(const std::string& name, const std::vector<std::string>& args) {
  const std::string bin = bin_dir() + "/" + name;
  if (::access(bin.c_str(), X_OK) != 0) GTEST_SKIP() << bin << " is not built";
  std::vector<std::string> argv{bin};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_process(argv, with_sanitizer_options({}), "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(first_line(r.out), name + " v" + CN_VERSION) << r.out;
}

TEST(VersionFlags, LabelerDashDashVersion) {
  expect_version("cilium-nomad-labeler", {"--version"});
}

TEST(VersionFlags, LabelerVersionSubcommand) {
  expect_version("cilium-nomad-labeler", {"version"});
}

TEST(VersionFlags, PluginDashDashVersion) {
  expect_version("cilium-nomad-cni", {"--version"});
}

}  // namespace
}  // namespace cn::testing
