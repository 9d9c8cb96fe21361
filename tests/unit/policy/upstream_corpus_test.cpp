// Agreement with upstream: the example and test policies of
// cilium/cilium, one object per file in tests/data/policies/upstream/, each with the verdict an
// agent with default options gives it and the verdict `policy validate` must give, in
// MANIFEST.tsv (columns and provenance: tests/data/policies/upstream/README.md).
//
// A row whose `pending` column names a feature the validator does not have yet (an agent
// capability, unknown-field refusal) is a known gap: the test requires the validator to still
// disagree there, so that the list of gaps stays exact and a feature that closes one says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/policy/policy_document.h"
#include "common/policy/policy_text.h"
#include "tests/support/child_process.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::policy {
namespace {

struct UpstreamCorpusRow {
  std::string file;
  std::string upstream;
  std::string agent;    // what an agent with default options does with it: load / refuse
  std::string expect;   // what `policy validate` must answer: load / refuse
  std::string pending;  // "-", or the features ('+'-joined) whose absence makes this a gap
  std::string reason;
};

std::string upstream_corpus_dir() {
  return cn::testing::source_dir() + "/tests/data/policies/upstream";
}

std::vector<UpstreamCorpusRow> read_upstream_manifest() {
  std::vector<UpstreamCorpusRow> rows;
  std::istringstream in(cn::testing::read_file(upstream_corpus_dir() + "/MANIFEST.tsv"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::size_t start = 0;
    for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
      cells.push_back(line.substr(start, tab - start));
    }
    cells.push_back(line.substr(start));
    EXPECT_EQ(cells.size(), 6u) << line;
    if (cells.size() != 6) continue;
    rows.push_back({cells[0], cells[1], cells[2], cells[3], cells[4], cells[5]});
  }
  return rows;
}

// Upstream applies these files with kubectl, which puts a CiliumNetworkPolicy without
// metadata.namespace into the namespace "default". We refuse such a file as it stands (a CNP is
// per Nomad namespace: docs/policies.md), so its rules are judged as kubectl would submit them.
// Returns nullopt when the text is taken as it is.
std::optional<std::string> upstream_as_submitted(const std::string& text) {
  auto doc = parse_policy_text(text);
  if (!doc || !doc->is_object()) return std::nullopt;
  const auto kind = doc->find("kind");
  if (kind == doc->end() || *kind != "CiliumNetworkPolicy") return std::nullopt;
  auto& metadata = (*doc)["metadata"];
  if (!metadata.is_object() || metadata.contains("namespace")) return std::nullopt;
  metadata["namespace"] = "default";
  return doc->dump();
}

std::string upstream_verdict(const Status& s) {
  return s ? "load" : "refuse";
}

TEST(UpstreamCorpus, ManifestListsEveryFileOnceWithAVerdictAndAReason) {
  auto rows = read_upstream_manifest();
  std::set<std::string> listed;
  for (const auto& row : rows) {
    SCOPED_TRACE(row.file);
    EXPECT_TRUE(listed.insert(row.file).second) << "listed twice";
    EXPECT_TRUE(row.agent == "load" || row.agent == "refuse") << row.agent;
    EXPECT_TRUE(row.expect == "load" || row.expect == "refuse") << row.expect;
    EXPECT_NE(row.upstream.find('@'), std::string::npos) << "upstream path@commit";
    // Every refusal, and every place where we answer differently from the agent, says why.
    if (row.agent == "refuse" || row.expect == "refuse" || row.pending != "-") {
      EXPECT_GT(row.reason.size(), 20u) << "no reason given";
    }
  }
  std::set<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(upstream_corpus_dir())) {
    if (e.path().extension() == ".yaml") on_disk.insert(e.path().filename().string());
  }
  EXPECT_EQ(on_disk, listed);
  EXPECT_GE(rows.size(), 40u);
}

TEST(UpstreamCorpus, ValidatorGivesEveryObjectItsVerdictAndTheGapListIsExact) {
  int agreed = 0;
  int gaps = 0;
  for (const auto& row : read_upstream_manifest()) {
    SCOPED_TRACE(row.file + " (" + row.upstream + ")");
    std::string text = cn::testing::read_file(upstream_corpus_dir() + "/" + row.file);
    ASSERT_FALSE(text.empty());
    std::string checked = text;
    if (auto submitted = upstream_as_submitted(text)) {
      // As it stands the file is refused, for the namespace when nothing else is wrong.
      auto raw = validate_policy_document(text);
      ASSERT_FALSE(raw);
      if (row.expect == "load") {
        EXPECT_TRUE(raw.error().message.starts_with("/metadata/namespace: required"))
            << raw.error().message;
      }
      checked = *submitted;
    }
    auto result = validate_policy_document(checked);
    std::string got = upstream_verdict(result);
    std::string why = result ? std::string("OK") : result.error().message;
    if (row.pending == "-") {
      EXPECT_EQ(got, row.expect) << "validator: " << why << "\nmanifest reason: " << row.reason;
      ++agreed;
    } else {
      EXPECT_NE(got, row.expect) << "the gap is closed: the validator now answers " << got
                                 << " as expected; remove pending=" << row.pending
                                 << " from MANIFEST.tsv (and update docs/policies.md)";
      ++gaps;
    }
  }
  EXPECT_GT(agreed, 0);
  EXPECT_GT(gaps, 0);
}

// docs/policies.md, "Agreement with upstream", states the counts; they must be the manifest's.
TEST(UpstreamCorpus, DocsStateTheManifestsCounts) {
  auto rows = read_upstream_manifest();
  int agent_load = 0;
  int expect_load = 0;
  int gaps = 0;
  std::map<std::string, int> gaps_by_feature;
  for (const auto& row : rows) {
    agent_load += row.agent == "load";
    expect_load += row.expect == "load";
    if (row.pending != "-") {
      ++gaps;
      std::size_t start = 0;
      for (std::size_t plus; start <= row.pending.size(); start = plus + 1) {
        plus = std::min(row.pending.find('+', start), row.pending.size());
        ++gaps_by_feature[row.pending.substr(start, plus - start)];
      }
    }
  }
  const int objects = static_cast<int>(rows.size());
  char summary[256];
  std::snprintf(summary, sizeof summary,
                "%d objects; an agent with default options loads %d and refuses %d; "
                "`policy validate` must load %d and refuse %d; %d known gaps",
                objects, agent_load, objects - agent_load, expect_load, objects - expect_load,
                gaps);
  std::string docs = cn::testing::read_file(cn::testing::source_dir() + "/docs/policies.md");
  // The docs wrap lines; compare with runs of whitespace made single spaces.
  std::string flat;
  for (char c : docs) {
    bool space = c == ' ' || c == '\n';
    if (space && !flat.empty() && flat.back() == ' ') continue;
    flat += space ? ' ' : c;
  }
  EXPECT_NE(flat.find(summary), std::string::npos) << "docs/policies.md should say: " << summary;
  for (const auto& [feature, n] : gaps_by_feature) {
    std::string item = "`" + feature + "`: " + std::to_string(n);
    EXPECT_NE(flat.find(item), std::string::npos) << "docs/policies.md should say: " << item;
  }
}

cn::testing::ProcessResult upstream_validate_cli(const std::vector<std::string>& files) {
  std::vector<std::string> argv = {cn::testing::bin_dir() + "/cilium-nomad-labeler", "policy",
                                   "validate"};
  argv.insert(argv.end(), files.begin(), files.end());
  return cn::testing::run_process(argv, cn::testing::with_sanitizer_options({}), "",
                                  std::chrono::seconds{30});
}

// The same verdicts through the built binary, for a handful of files: clusterwide and
// namespaced objects as they stand, and one CNP as kubectl would submit it.
TEST(UpstreamCorpus, PolicyValidateCommandAgreesOnASample) {
  const std::string dir = upstream_corpus_dir() + "/";
  auto loads = upstream_validate_cli({dir + "ex-kubernetes-clusterwide-health.yaml",
                                      dir + "ex-servicemesh-policy-default-deny.yaml",
                                      dir + "ex-kubernetes-namespace-isolate-namespaces-2.yaml",
                                      dir + "test-ccnp-to-entities-all-deny.yaml"});
  EXPECT_EQ(loads.exit_code, 0) << loads.out << loads.err;
  EXPECT_NE(loads.out.find("isolate-namespaces-2.yaml: OK\n"), std::string::npos) << loads.out;

  auto cidr = upstream_validate_cli({dir + "test-ccnp-host-ingress-from-cidr-to-ports.yaml"});
  EXPECT_EQ(cidr.exit_code, 1);
  EXPECT_NE(cidr.err.find("/spec/ingress/0/fromCIDR/0: \"NODE_WITHOUT_CILIUM_IP/32\""),
            std::string::npos)
      << cidr.err;

  cn::testing::TempDir tmp;
  auto submitted =
      upstream_as_submitted(cn::testing::read_file(dir + "test-invalid-cnp.yaml")).value_or("");
  ASSERT_FALSE(submitted.empty());
  cn::testing::write_file(tmp.file("invalid-cnp.json"), submitted);
  auto udp = upstream_validate_cli({tmp.file("invalid-cnp.json")});
  EXPECT_EQ(udp.exit_code, 1);
  EXPECT_NE(udp.err.find("L7 rules can only apply to TCP"), std::string::npos) << udp.err;

  // As it stands (no namespace) the file is taken for a variable of --nomad-namespace, as the
  // distributor takes it (docs/policies.md "Delegation"): the same refusal as submitted.
  auto as_is = upstream_validate_cli({dir + "test-invalid-cnp.yaml"});
  EXPECT_EQ(as_is.exit_code, 1);
  EXPECT_NE(as_is.err.find("L7 rules can only apply to TCP"), std::string::npos) << as_is.err;
}

}  // namespace
}  // namespace cn::policy
