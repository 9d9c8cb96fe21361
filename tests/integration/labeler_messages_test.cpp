// What the labeler binary tells an operator before it runs: `run --help` names every environment
// variable the clients read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/process.h"

namespace cn::labeler {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The variables read by the Nomad and Cilium clients, from their sources: a variable added there
// and not to the help fails the test below.
std::set<std::string> variables_read() {
  static const std::regex kRead(R"re((?:read|getenv)\("([A-Z][A-Z0-9_]+)")re");
  std::set<std::string> out;
  for (const char* dir : {"common/nomad/client", "common/cilium/client"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(testing::source_dir()) / dir)) {
      std::ifstream in(entry.path());
      std::ostringstream s;
      s << in.rdbuf();
      const std::string src = s.str();
      for (auto it = std::sregex_iterator(src.begin(), src.end(), kRead);
           it != std::sregex_iterator(); ++it) {
        out.insert((*it)[1]);
      }
    }
  }
  return out;
}

TEST(LabelerHelp, RunHelpListsEveryEnvironmentVariableRead) {
  const auto names = variables_read();
  // The scan must find the clients' variables, or it checks nothing.
  ASSERT_TRUE(names.contains("NOMAD_TOKEN") && names.contains("CILIUM_SOCK") &&
              names.contains("NOMAD_UNIX_ADDR"))
      << names.size();
  auto r = testing::run_process({testing::bin_dir() + "/cilium-nomad-labeler", "run", "--help"}, {},
                                "", 10s);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const auto& name : names) {
    EXPECT_NE(r.out.find("  " + name + " "), std::string::npos) << name << " missing in:\n"
                                                                << r.out;
  }
}

}  // namespace
}  // namespace cn::labeler
