// `policy status` as a terminal shows it: the default table fits 100 columns however long the
// variable paths, directories and reasons; --wide shows every cell whole; --json the file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "labeler/commands/policy_status_command.h"
#include "labeler/commands/text_table.h"
#include "labeler/policy/policy_status.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler::policy {
namespace {

class PolicyStatusCommandTest : public ::testing::Test {
 protected:
  PolicyStatusCommandTest() {
    PolicyStatus status;
    status.nomad_namespace = "platform-networking";
    status.prefix = "cilium/policies";
    status.directory = "/var/lib/cilium-nomad/policies";
    status.updated_unix_ms = 1'796'000'000'000;
    for (const std::string name : {"payments-frontend-to-backend-allow-https", "web", "dns"}) {
      PolicyRecord rec;
      rec.variable_path = "cilium/policies/" + name;
      rec.name = name;
      rec.file = status.directory + "/nomad-" + name + ".yaml";
      rec.seen_index = rec.applied_index = 123456;
      rec.state = PolicyState::applied;
      rec.changed_unix_ms = 1'795'999'000'000;
      status.policies[rec.variable_path] = rec;
    }
    auto& bad = status.policies["cilium/policies/dns"];
    bad.state = PolicyState::invalid;
    bad.reason = kReason;
    testing::write_file(file_, to_text(status));
  }

  static constexpr const char* kReason =
      "spec.egress[0].toPorts[0].rules.dns[0].matchPattern: \"*.*.example.com\" is not a valid "
      "DNS pattern: a wildcard must be the first label only, and only once; the last good file "
      "stays";

  testing::TempDir dir_;
  std::string file_ = dir_.file("policy-status.json");
};

TEST_F(PolicyStatusCommandTest, DefaultTableFitsOneHundredColumns) {
  auto text = render_policy_status(file_, StatusView::table, system_clock());
  ASSERT_TRUE(text) << text.error().message;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), kTableWidth) << line;
  EXPECT_NE(text->find("nomad-web.yaml"), std::string::npos) << *text;
  EXPECT_NE(text->find("invalid: spec.eg"), std::string::npos) << *text;
  // Each row names its variable's namespace (older status files: the operator's).
  EXPECT_NE(text->find("NAMESPACE"), std::string::npos) << *text;
  EXPECT_NE(text->find("platform-networking  cilium/policies/dns"), std::string::npos) << *text;
  EXPECT_NE(text->find("operator namespace: platform-networking"), std::string::npos) << *text;
  EXPECT_NE(text->find("..."), std::string::npos) << "the long reason is cut\n" << *text;
  EXPECT_NE(text->find("--wide"), std::string::npos) << "it says how to see it whole\n" << *text;
}

TEST_F(PolicyStatusCommandTest, WideShowsEveryCellWhole) {
  auto text = render_policy_status(file_, StatusView::wide, system_clock());
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find(kReason), std::string::npos) << *text;
  EXPECT_NE(text->find("/var/lib/cilium-nomad/policies/nomad-web.yaml"), std::string::npos);
}

TEST_F(PolicyStatusCommandTest, JsonIsTheStatusFile) {
  auto text = render_policy_status(file_, StatusView::json, system_clock());
  ASSERT_TRUE(text) << text.error().message;
  auto doc = nlohmann::json::parse(*text);
  EXPECT_EQ(doc["policies"].size(), 3u);
  EXPECT_EQ(doc["namespace"], "platform-networking");
}

TEST(TextTable, NarrowsTheWidestColumnFirstAndKeepsHeaders) {
  const std::string table =
      render_table({{"A", "LONG"}, {"x", std::string(200, 'y')}, {"zz", "short"}}, 40);
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "A   LONG");
  std::getline(lines, line);
  EXPECT_EQ(line.size(), 40u) << line;
  EXPECT_TRUE(line.ends_with("...")) << line;
  std::getline(lines, line);
  EXPECT_EQ(line, "zz  short");
}

}  // namespace
}  // namespace cn::labeler::policy
