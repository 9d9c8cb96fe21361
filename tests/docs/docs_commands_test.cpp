#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/docs/doc_commands.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::testing {
namespace {

namespace fs = std::filesystem;

std::vector<DocCommand> documented_commands() {
  std::vector<DocCommand> out;
  const fs::path root = source_dir();
  auto add = [&](const std::vector<DocCommand>& found) {
    out.insert(out.end(), found.begin(), found.end());
  };
  // The fakes' reference lives beside their code; its commands are checked like the docs'.
  std::vector<fs::path> markdown = {root / "README.md", root / "tests/fakes/README.md"};
  for (const auto* dir : {"conf-examples", "docs"}) {
    for (const auto& entry : fs::directory_iterator(root / dir)) {
      const auto& p = entry.path();
      std::string rel = fs::relative(p, root).string();
      if (p.extension() == ".md") add(markdown_commands(rel, read_file(p.string())));
      if (p.extension() == ".hcl" && p.string().ends_with(".nomad.hcl")) {
        add(job_file_commands(rel, read_file(p.string())));
      }
      if (p.extension() == ".service") add(unit_file_commands(rel, read_file(p.string())));
    }
  }
  for (const auto& p : markdown) {
    add(markdown_commands(fs::relative(p, root).string(), read_file(p.string())));
  }
  return out;
}

ProcessResult run_ours(const std::string& binary, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {bin_dir() + "/" + binary};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, with_sanitizer_options({}), "", std::chrono::seconds{30});
}

// What one subcommand chain of the labeler accepts, from its own --help (cached).
struct HelpFacts {
  std::set<std::string> flags;
  std::set<std::string> subcommands;
};

const HelpFacts& help_of(const std::string& binary, const std::vector<std::string>& chain) {
  static std::map<std::pair<std::string, std::vector<std::string>>, HelpFacts> cache;
  auto key = std::make_pair(binary, chain);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto args = chain;
  args.push_back("--help");
  auto result = run_ours(binary, args);
  HelpFacts facts;
  static const std::regex flag_re(R"(^\s+(?:-\w,)?(--[A-Za-z0-9-]+))");
  static const std::regex sub_re(R"(^\s{2}([a-z][a-z-]*)\s{2,})");
  bool in_subcommands = false;
  std::istringstream in(result.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("Subcommands:")) {
      in_subcommands = true;
      continue;
    }
    if (!line.starts_with(" ")) in_subcommands = false;
    std::smatch m;
    if (std::regex_search(line, m, flag_re)) facts.flags.insert(m[1]);
    if (in_subcommands && std::regex_search(line, m, sub_re)) facts.subcommands.insert(m[1]);
  }
  return cache[key] = std::move(facts);
}

TEST(DocsCommands, EveryDocumentedFlagExists) {
  auto commands = documented_commands();
  ASSERT_GT(commands.size(), 5U) << "the collector found almost nothing: is it broken?";
  for (const auto& c : commands) {
    if (c.binary != "cilium-nomad-labeler") continue;
    std::vector<std::string> chain;
    std::size_t i = 0;
    while (i < c.args.size() && help_of(c.binary, chain).subcommands.contains(c.args[i])) {
      chain.push_back(c.args[i++]);
    }
    const auto& help = help_of(c.binary, chain);
    for (; i < c.args.size(); ++i) {
      const std::string& a = c.args[i];
      if (!a.starts_with("--")) continue;
      std::string flag = a.substr(0, a.find('='));
      EXPECT_TRUE(help.flags.contains(flag))
          << c.where << ": `" << c.binary << " " << (chain.empty() ? "" : chain[0]) << "` has no "
          << flag;
    }
  }
}

// A documented command is run when it can run here: help, version, and `policy validate` of
// files the repository holds. Anything else needs an agent or Nomad.
bool runnable(const DocCommand& c, std::vector<std::string>& args) {
  args = c.args;
  bool informational = std::ranges::any_of(c.args,
                                           [](const std::string& a) {
                                             return a == "--help" || a == "-h" || a == "--version";
                                           }) ||
                       (c.args.size() == 1 && c.args[0] == "version");
  if (informational) return true;
  if (c.args.size() > 2 && c.args[0] == "policy" && c.args[1] == "validate") {
    for (std::size_t i = 2; i < args.size(); ++i) {
      fs::path p = fs::path(source_dir()) / args[i];
      if (!fs::exists(p)) return false;
      args[i] = p.string();
    }
    return true;
  }
  return false;
}

TEST(DocsCommands, DocumentedCommandsThatCanRunHereSucceed) {
  int ran = 0;
  for (const auto& c : documented_commands()) {
    std::vector<std::string> args;
    if (!runnable(c, args)) continue;
    auto result = run_ours(c.binary, args);
    ++ran;
    EXPECT_EQ(result.exit_code, 0)
        << c.where << ": " << c.binary << " exited " << result.exit_code << "\n"
        << result.out << result.err;
  }
  EXPECT_GT(ran, 0) << "no documented command could run: the docs lost every runnable example";
}

TEST(DocCommandsCollector, ReadsMarkdownJobAndUnitFiles) {
  auto md = markdown_commands("x.md",
                              "text `cilium-nomad-labeler run --x` is not a block\n"
                              "```sh\n"
                              "$ sudo cilium-nomad-labeler policy validate \\\n"
                              "    a.yaml 'b c.yaml'   # comment --bogus\n"
                              "nomad job run x.hcl\n"
                              "NOMAD_TOKEN=x /usr/bin/cilium-nomad-labeler state --json | jq .\n"
                              "```\n");
  ASSERT_EQ(md.size(), 2U);
  EXPECT_EQ(md[0].where, "x.md:3");
  EXPECT_EQ(md[0].args, (std::vector<std::string>{"policy", "validate", "a.yaml", "b c.yaml"}));
  EXPECT_EQ(md[1].args, (std::vector<std::string>{"state", "--json"}));

  auto job = job_file_commands(
      "j.hcl", "config {\n  args = [\n    \"run\",\n    # \"--x\", \"1\",\n  ]\n}\n");
  ASSERT_EQ(job.size(), 1U);
  EXPECT_EQ(job[0].args, (std::vector<std::string>{"run", "--x", "1"}));

  auto unit = unit_file_commands("u.service",
                                 "[Service]\nExecStart=/usr/bin/cilium-nomad-labeler run \\\n"
                                 "    --socket /s\nRestart=always\n");
  ASSERT_EQ(unit.size(), 1U);
  EXPECT_EQ(unit[0].where, "u.service:2");
  EXPECT_EQ(unit[0].args, (std::vector<std::string>{"run", "--socket", "/s"}));
}

}  // namespace
}  // namespace cn::testing
