// The state file across versions: it is versioned by its "schema" key, and every layout a
// released plugin or labeler wrote (tests/data/state) must still be read, and rewritten without
// losing anything, by this version. A file of a schema this version does not know is not
// silently taken for one it does.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/state/state_entry.h"
#include "common/state/state_lines.h"
#include "common/state/state_store.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::state {
namespace {

constexpr const char* kLabeled = "0b4f2d6e-1c3a-4e5f-9a7b-8c9d0e1f2a3b";
constexpr const char* kBare = "7e8f9a0b-2c3d-4e5f-8a9b-0c1d2e3f4a5b";
constexpr const char* kDeleted = "5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f";
constexpr const char* kNew = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a";

std::string golden(const std::string& name) {
  return cn::testing::read_file(cn::testing::source_dir() + "/tests/data/state/" + name);
}

class StateUpgradeTest : public ::testing::Test {
 protected:
  // A store on a copy of the golden file, as the new binary finds it after the upgrade.
  StateStore store_on(const std::string& name) {
    cn::testing::write_file(path(), golden(name));
    return StateStore({path(), std::chrono::milliseconds{2000}}, system_clock(), nullptr);
  }
  std::string path() const { return dir_.file("state.json"); }
  cn::testing::TempDir dir_;
};

TEST_F(StateUpgradeTest, TheFirstReleaseLayoutIsReadWithEveryField) {
  ASSERT_FALSE(golden("schema1-first-release.json").empty());
  auto s = store_on("schema1-first-release.json");
  auto doc = s.load();
  ASSERT_TRUE(doc) << doc.error().message;
  ASSERT_EQ(doc->allocations.size(), 2u);
  const StateEntry& labeled = doc->allocations.at(kLabeled);
  EXPECT_EQ(labeled.ips, std::vector<std::string>{"10.200.0.12"});
  EXPECT_EQ(labeled.added_unix_ms, 1795983000000);
  EXPECT_EQ(labeled.nomad, (NomadFields{"global", "default", "web", "app"}));
  ASSERT_TRUE(labeled.labeled.has_value());
  EXPECT_EQ(labeled.labeled->endpoint_id, 1734);
  EXPECT_EQ(labeled.labeled->identity, 48213);
  EXPECT_EQ(labeled.labeled->labels.size(), 3u);
  EXPECT_FALSE(labeled.last_attempt.has_value());
  EXPECT_TRUE(labeled.unknown.empty());
  const StateEntry& bare = doc->allocations.at(kBare);
  EXPECT_EQ(bare.nomad, NomadFields{});
  EXPECT_FALSE(bare.labeled.has_value());
  EXPECT_TRUE(doc->deleted.empty());
  // Reading is not a reason to write: the old file stays as it was until something changes.
  EXPECT_EQ(cn::testing::read_file(path()), golden("schema1-first-release.json"));
}

TEST_F(StateUpgradeTest, ThePluginsFirstAddAfterTheUpgradeKeepsEveryOldEntry) {
  auto s = store_on("schema1-first-release.json");
  auto before = s.load();
  ASSERT_TRUE(before);
  ASSERT_TRUE(s.update_entry(
      kNew,
      [](std::optional<StateEntry>& e) {
        e = StateEntry{};
        e->ifname = "eth0";
        e->ips = {"10.200.0.14"};
        return true;
      },
      StateStore::Creation::allowed));
  auto after = s.load();
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->allocations.size(), 3u);
  EXPECT_EQ(after->allocations.at(kLabeled), before->allocations.at(kLabeled));
  EXPECT_EQ(after->allocations.at(kBare), before->allocations.at(kBare));
  // Rewritten in today's framing, so the next plugin run takes the one-line path.
  EXPECT_TRUE(split_state_lines(cn::testing::read_file(path())).has_value());
  const std::string text = cn::testing::read_file(path());
  EXPECT_TRUE(text.starts_with("{\"schema\":1,")) << text;
}

TEST_F(StateUpgradeTest, TodaysLayoutIsReadAndWrittenBackByteForByte) {
  const std::string text = golden("schema1-lines.json");
  auto doc = state_from_json(text);
  ASSERT_TRUE(doc) << doc.error();
  EXPECT_EQ(doc->allocations.size(), 2u);
  ASSERT_EQ(doc->deleted.size(), 1u);
  EXPECT_EQ(doc->deleted.at(kDeleted), 1796115700000);
  ASSERT_TRUE(doc->allocations.at(kBare).last_attempt.has_value());
  EXPECT_EQ(doc->allocations.at(kBare).last_attempt->reason, "labels_filtered");
  // A writer change that alters these bytes is a format change: keep it readable by the
  // released versions, or raise the schema and add a file here.
  EXPECT_EQ(to_text(*doc), text);
}

TEST_F(StateUpgradeTest, ASchemaThisVersionDoesNotKnowIsRefusedByName) {
  std::string text = golden("schema1-lines.json");
  text.replace(text.find("\"schema\":1"), 10, "\"schema\":2");
  auto doc = state_from_json(text);
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error(), "unsupported schema 2");
  std::string unversioned = golden("schema1-first-release.json");
  unversioned.replace(unversioned.find("\"schema\": 1"), 11, "\"version\": 1");
  auto missing = state_from_json(unversioned);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "missing integer \"schema\"");
}

}  // namespace
}  // namespace cn::state
