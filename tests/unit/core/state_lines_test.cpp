#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "common/state/state_lines.h"
#include "common/state/state_store.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"

namespace cn::state {
namespace {

using cn::testing::numbered_alloc_id;

StateEntry entry(int i) {
  StateEntry e;
  e.ifname = "eth0";
  e.netns = "/var/run/netns/" + std::to_string(i);
  e.ips = {"10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1)};
  e.added_at = "2026-11-29T20:00:00.000Z";
  e.added_unix_ms = 1795982400000 + i;
  e.nomad = {"global", "default", "job-" + std::to_string(i), "g"};
  if (i % 3 == 0)
    e.labeled = LabeledInfo{i, 1000 + i, {"nomad:nomad.job=job"}, "2026-11-29T20:00:01.000Z"};
  if (i % 5 == 0) e.unknown = {{"future", "ü\n\"quoted\""}};
  return e;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(StateLines, SplitsWhatToTextWritesAndJoinsItBackByteForByte) {
  for (int n : {0, 1, 2, 7}) {
    StateDoc doc;
    for (int i = 0; i < n; ++i) doc.allocations[numbered_alloc_id(i)] = entry(i);
    std::string text = to_text(doc);
    auto lines = split_state_lines(text);
    ASSERT_TRUE(lines) << text;
    ASSERT_EQ(lines->size(), static_cast<std::size_t>(n));
    EXPECT_EQ(join_state_lines(*lines), text);
  }
}

// The plugin writes its one-line change as pieces of the old text (edit_state_line): for every
// kind of edit at every position, they must join to exactly what join_state_lines makes of the
// edited lines.
TEST(StateLines, AnEditInPlaceGivesWhatAJoinOfTheEditedLinesGives) {
  const std::string body = "{\"ifname\":\"eth1\"}";
  for (int n : {0, 1, 2, 5}) {
    std::vector<std::string> ids;
    // Every other numbered ID, so that a new one can land before, between and after them.
    for (int i = 0; i < n; ++i) ids.push_back(numbered_alloc_id(2 * i + 1));
    std::vector<std::string> bodies;
    for (int i = 0; i < n; ++i) bodies.push_back("{\"n\":" + std::to_string(i) + "}");
    std::vector<StateLine> lines;
    for (int i = 0; i < n; ++i) lines.push_back({ids[i], bodies[i]});
    const std::string text = join_state_lines(lines);
    auto split = split_state_lines(text);
    ASSERT_TRUE(split) << text;
    for (int target = 0; target <= 2 * n; ++target) {
      const std::string id = numbered_alloc_id(target);
      for (const std::string& new_body : {body, std::string()}) {
        std::vector<StateLine> want = lines;
        auto pos = std::find_if(want.begin(), want.end(),
                                [&](const StateLine& l) { return l.alloc_id >= id; });
        const bool found = pos != want.end() && pos->alloc_id == id;
        if (found && new_body.empty()) {
          want.erase(pos);
        } else if (found) {
          pos->body = new_body;
        } else if (!new_body.empty()) {
          want.insert(pos, StateLine{id, new_body});
        }
        auto edit = edit_state_line(text, *split, id, new_body);
        std::string got = std::string(edit.before) + edit.middle + std::string(edit.after);
        EXPECT_EQ(got, join_state_lines(want))
            << "lines=" << n << " target=" << target << " body=" << new_body;
        EXPECT_TRUE(split_state_lines(got)) << got;
      }
    }
  }
}

TEST(StateLines, AnyOtherLayoutIsLeftToTheFullParser) {
  StateDoc doc;
  doc.allocations[numbered_alloc_id(1)] = entry(1);
  doc.allocations[numbered_alloc_id(2)] = entry(2);
  const std::string text = to_text(doc);
  const std::string indented = to_json(doc).dump(2);
  std::string unsorted = text;
  // Swap the two entry lines: valid JSON, but not the framing (IDs must ascend).
  auto first = unsorted.find('\n') + 1;
  auto second = unsorted.find('\n', first) + 1;
  auto end = unsorted.find('\n', second);
  std::string a = unsorted.substr(first, second - first - 2);  // without ",\n"
  std::string b = unsorted.substr(second, end - second);
  unsorted = unsorted.substr(0, first) + b + ",\n" + a + unsorted.substr(end);
  for (const std::string& other :
       {indented, unsorted, text.substr(0, text.size() - 2), std::string{}, std::string("{}"),
        text.substr(0, text.find('\n') + 1) + "\"not-an-id\":{}\n}}\n"}) {
    EXPECT_FALSE(split_state_lines(other)) << other;
  }
  EXPECT_TRUE(state_from_json(unsorted)) << "still a valid document for the full parser";
}

class UpdateEntryTest : public ::testing::Test {
 protected:
  StateStore store() { return StateStore({path_}, clock_, nullptr); }
  ManualClock clock_;  // fixed wall time: tombstones carry it
  cn::testing::TempDir dir_;
  std::string path_ = dir_.file("run/state.json");
};

// The one-line path must leave exactly the bytes the whole-document path would have written.
TEST_F(UpdateEntryTest, WritesTheSameBytesAsTheWholeDocumentPath) {
  std::mt19937 rng(7);
  StateDoc model;
  auto s = store();
  for (int step = 0; step < 300; ++step) {
    int i = static_cast<int>(rng() % 40);
    const std::string id = numbered_alloc_id(i);
    const bool remove = rng() % 3 == 0;
    ASSERT_TRUE(s.update_entry(
        id,
        [&](std::optional<StateEntry>& current) {
          EXPECT_EQ(current.has_value(), model.allocations.contains(id));
          if (remove) {
            current.reset();
          } else {
            current = entry(i + step);
          }
          return true;
        },
        StateStore::Creation::allowed));
    if (remove) {
      // A removed entry leaves a tombstone; removing an absent one changes nothing.
      if (model.allocations.erase(id) > 0) model.deleted[id] = unix_millis(clock_.wall_now());
    } else {
      model.allocations[id] = entry(i + step);
      model.deleted.erase(id);
    }
    ASSERT_EQ(read_file(path_), to_text(model)) << "step " << step;
  }
}

TEST_F(UpdateEntryTest, AHandWrittenValidFileIsUpdatedThroughTheFullParser) {
  StateDoc doc;
  doc.allocations[numbered_alloc_id(1)] = entry(1);
  std::filesystem::create_directories(dir_.file("run"));
  write_file(path_, to_json(doc).dump(2));
  ASSERT_TRUE(store().update_entry(
      numbered_alloc_id(2),
      [&](std::optional<StateEntry>& current) {
        EXPECT_FALSE(current);
        current = entry(2);
        return true;
      },
      StateStore::Creation::allowed));
  doc.allocations[numbered_alloc_id(2)] = entry(2);
  EXPECT_EQ(read_file(path_), to_text(doc)) << "rewritten in the usual framing, nothing lost";
}

TEST_F(UpdateEntryTest, ABadLineInTheUsualFramingIsQuarantinedLikeAnyCorruptFile) {
  StateDoc doc;
  doc.allocations[numbered_alloc_id(1)] = entry(1);
  doc.allocations[numbered_alloc_id(2)] = entry(2);
  std::string text = to_text(doc);
  auto pos = text.find("\"ips\":[");
  text.replace(pos, 7, "\"ips\":5,\"x\":[");  // framing intact, content wrong
  std::filesystem::create_directories(dir_.file("run"));
  write_file(path_, text);
  int calls = 0;
  ASSERT_TRUE(store().update_entry(
      numbered_alloc_id(1),
      [&](std::optional<StateEntry>& current) {
        ++calls;
        EXPECT_FALSE(current) << "the corrupt file's entries are not trusted";
        current = entry(1);
        return true;
      },
      StateStore::Creation::allowed));
  EXPECT_EQ(calls, 1);
  StateDoc expected;
  expected.allocations[numbered_alloc_id(1)] = entry(1);
  EXPECT_EQ(read_file(path_), to_text(expected));
  int asides = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_.file("run"))) {
    if (f.path().filename().string().starts_with("state.json.corrupt-")) {
      ++asides;
      EXPECT_EQ(read_file(f.path()), text) << "kept aside byte for byte";
    }
  }
  EXPECT_EQ(asides, 1);
}

TEST_F(UpdateEntryTest, UnchangedOrAbsentRemovalWritesNothing) {
  auto s = store();
  const auto allowed = StateStore::Creation::allowed;
  ASSERT_TRUE(s.update_entry(
      numbered_alloc_id(1),
      [](std::optional<StateEntry>& current) {
        current.reset();
        return true;
      },
      allowed));
  EXPECT_FALSE(std::filesystem::exists(path_)) << "removing an absent entry creates no file";
  ASSERT_TRUE(s.update_entry(
      numbered_alloc_id(1),
      [](std::optional<StateEntry>& current) {
        current = entry(1);
        return true;
      },
      allowed));
  auto before = std::filesystem::last_write_time(path_);
  std::string text = read_file(path_);
  ASSERT_TRUE(s.update_entry(
      numbered_alloc_id(1), [](std::optional<StateEntry>&) { return false; }, allowed));
  EXPECT_EQ(read_file(path_), text);
  EXPECT_EQ(std::filesystem::last_write_time(path_), before);
}

TEST_F(UpdateEntryTest, RemovalLeavesATombstoneThatOnlyCreationReplaces) {
  auto s = store();
  const auto id = numbered_alloc_id(1);
  ASSERT_TRUE(s.update_entry(
      id,
      [](std::optional<StateEntry>& current) {
        current = entry(1);
        return true;
      },
      StateStore::Creation::allowed));
  bool removed = false;
  ASSERT_TRUE(s.remove_entry(id, removed));
  EXPECT_TRUE(removed);
  int calls = 0;
  ASSERT_TRUE(s.update_entry(
      id,
      [&](std::optional<StateEntry>& current) {
        ++calls;
        current = entry(2);
        return true;
      },
      StateStore::Creation::forbidden));
  EXPECT_EQ(calls, 0) << "an update-only writer never sees a tombstoned allocation";
  auto doc = s.load();
  ASSERT_TRUE(doc);
  EXPECT_FALSE(doc->allocations.contains(id));
  EXPECT_EQ(doc->deleted.at(id), unix_millis(clock_.wall_now()));
  ASSERT_TRUE(s.remove_entry(id, removed));
  EXPECT_FALSE(removed) << "a repeated DEL finds the tombstone";

  ASSERT_TRUE(s.update_entry(
      id,
      [](std::optional<StateEntry>& current) {
        EXPECT_FALSE(current);
        current = entry(3);
        return true;
      },
      StateStore::Creation::allowed));
  doc = s.load();
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->allocations.at(id), entry(3))
      << "ADD after DEL (a restarted network) replaces the tombstone";
  EXPECT_FALSE(doc->deleted.contains(id));
}

TEST_F(UpdateEntryTest, TombstonesSurviveTheWholeDocumentPath) {
  StateDoc doc;
  doc.allocations[numbered_alloc_id(1)] = entry(1);
  doc.deleted[numbered_alloc_id(2)] = 1'800'000'000'000;
  auto parsed = state_from_json(to_text(doc));
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(*parsed, doc);
  const std::string text = to_text(doc);
  auto lines = split_state_lines(text);
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), 2U);
  EXPECT_EQ(tombstone_from_text((*lines)[1].body), 1'800'000'000'000);
  EXPECT_FALSE(tombstone_from_text((*lines)[0].body));
}

}  // namespace
}  // namespace cn::state
