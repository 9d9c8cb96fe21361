#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "common/state/state_store.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/temp_dir.h"

namespace cn::state {
namespace {

using cn::testing::numbered_alloc_id;

class StateStoreTest : public ::testing::Test {
 protected:
  StateStore store(std::chrono::milliseconds lock_timeout = std::chrono::milliseconds{2000}) {
    return StateStore({dir_.file("run/state.json"), lock_timeout}, system_clock(), nullptr);
  }
  cn::testing::TempDir dir_;
};

TEST_F(StateStoreTest, MissingFileIsEmptyAndDirectoryIsRootOnly) {
  auto s = store();
  auto doc = s.load();
  ASSERT_TRUE(doc);
  EXPECT_TRUE(doc->allocations.empty());
  auto perms = std::filesystem::status(dir_.file("run")).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_all);
}

TEST_F(StateStoreTest, RoundTripKeepsEveryFieldAndUnknownKeys) {
  auto s = store();
  StateEntry e;
  e.ifname = "eth0";
  e.netns = "/var/run/netns/x";
  e.ips = {"10.0.0.2", "fd00::2"};
  e.added_at = "2026-11-29T20:00:00.000Z";
  e.added_unix_ms = 1795982400000;
  e.nomad = {"global", "default", "web", "app"};
  e.labeled = LabeledInfo{1734, 48213, {"nomad:nomad.job=web"}, "2026-11-29T20:00:00.010Z"};
  e.last_attempt = LastAttempt{"labels_filtered", "the agent's --labels filter drops nomad: labels",
                               "2026-11-29T20:00:01.000Z"};
  e.unknown = {{"future_field", {1, 2}}};
  ASSERT_TRUE(s.update([&](StateDoc& d) {
    d.allocations[numbered_alloc_id(1)] = e;
    return true;
  }));
  auto doc = s.load();
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->allocations.at(numbered_alloc_id(1)), e);
  auto perms = std::filesystem::status(dir_.file("run/state.json")).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(StateStoreTest, NoWriteWhenNothingChanged) {
  auto s = store();
  ASSERT_TRUE(s.update([](StateDoc& d) {
    d.allocations[numbered_alloc_id(1)].ifname = "eth0";
    return true;
  }));
  auto before = std::filesystem::last_write_time(dir_.file("run/state.json"));
  auto inode_before = std::filesystem::hard_link_count(dir_.file("run/state.json"));
  ASSERT_TRUE(s.update([](StateDoc&) { return false; }));
  EXPECT_EQ(std::filesystem::last_write_time(dir_.file("run/state.json")), before);
  EXPECT_EQ(std::filesystem::hard_link_count(dir_.file("run/state.json")), inode_before);
}

TEST_F(StateStoreTest, OrphanTempFilesOfDeadWritersAreRemovedAndNothingElse) {
  auto s = store();
  ASSERT_TRUE(s.update([&](StateDoc& d) {
    d.allocations[numbered_alloc_id(1)] = StateEntry{};
    return true;
  }));
  for (const char* name :
       {"state.json.tmp.4242.0", "state.json.tmp.4243.7", "state.json.corrupt-1795982400000",
        "other.json.tmp.1.0", "labeler.sock"}) {
    std::ofstream(dir_.file(std::string("run/") + name)) << "x";
  }
  auto removed = s.remove_orphan_temp_files();
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 2);
  std::set<std::string> left;
  for (const auto& f : std::filesystem::directory_iterator(dir_.file("run")))
    left.insert(f.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"state.json", "state.json.lock",
                                         "state.json.corrupt-1795982400000", "other.json.tmp.1.0",
                                         "labeler.sock"}));
  auto doc = s.load();
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->allocations.size(), 1u);
}

TEST_F(StateStoreTest, CorruptFileIsKeptAsideAndAFreshOneStarted) {
  std::filesystem::create_directories(dir_.file("run"));
  for (const std::string& garbage : std::vector<std::string>{
           "{not json", "[]", "{\"schema\":99}", "{\"schema\":1,\"allocations\":{\"../x\":{}}}",
           "{\"schema\":1,\"allocations\":{\"" + numbered_alloc_id(1) + "\":{\"ips\":5}}}", ""}) {
    SCOPED_TRACE(garbage);
    cn::testing::write_file(dir_.file("run/state.json"), garbage);
    auto s = store();
    auto doc = s.load();
    ASSERT_TRUE(doc);
    EXPECT_TRUE(doc->allocations.empty());
    int aside = 0;
    for (const auto& f : std::filesystem::directory_iterator(dir_.file("run"))) {
      if (f.path().filename().string().rfind("state.json.corrupt-", 0) == 0) {
        ++aside;
        EXPECT_EQ(cn::testing::read_file(f.path()), garbage);
        std::filesystem::remove(f.path());
      }
    }
    EXPECT_EQ(aside, 1);
    auto fresh = state_from_json(cn::testing::read_file(dir_.file("run/state.json")));
    EXPECT_TRUE(fresh) << "a fresh, valid file replaces the corrupt one";
  }
}

TEST_F(StateStoreTest, LastAttemptIsStrictAndOmittedWhenAbsent) {
  StateEntry e;
  e.ifname = "eth0";
  EXPECT_EQ(entry_to_text(e).find("last_attempt"), std::string::npos);
  e.last_attempt = LastAttempt{"endpoint_not_found", "no endpoint yet", "2026-11-29T20:00:00Z"};
  auto text = entry_to_text(e);
  EXPECT_NE(text.find(R"("last_attempt":{"at":"2026-11-29T20:00:00Z","detail":"no endpoint yet",)"
                      R"("reason":"endpoint_not_found"})"),
            std::string::npos)
      << text;
  auto back = entry_from_text(text);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(*back, e);
  EXPECT_TRUE(back->unknown.empty()) << "a known key, not kept as unknown";
  for (const char* bad : {R"({"last_attempt":"labels_filtered"})",
                          R"({"last_attempt":{"reason":7}})", R"({"last_attempt":{"at":[]}})"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(entry_from_text(bad));
  }
}

TEST_F(StateStoreTest, EveryWriteReportsTheEntriesTheNewFileHolds) {
  std::vector<std::size_t> seen;
  auto s = store();
  s.set_on_written([&](std::size_t entries) { seen.push_back(entries); });
  auto add = [&](int i) {
    return s.update_entry(
        numbered_alloc_id(i),
        [](std::optional<StateEntry>& e) {
          e.emplace().ifname = "eth0";
          return true;
        },
        StateStore::Creation::allowed);
  };
  ASSERT_TRUE(add(1));
  ASSERT_TRUE(add(2));
  bool removed = false;
  ASSERT_TRUE(s.remove_entry(numbered_alloc_id(1), removed));  // leaves a tombstone, not an entry
  ASSERT_TRUE(s.update([](StateDoc& d) {
    d.allocations[numbered_alloc_id(3)].ifname = "eth0";
    return true;
  }));
  ASSERT_TRUE(s.update([](StateDoc&) { return false; }));  // no write, no report
  EXPECT_EQ(seen, (std::vector<std::size_t>{1, 2, 1, 2}));
  auto counted = count_state_entries(dir_.file("run/state.json"));
  ASSERT_TRUE(counted) << counted.error().message;
  EXPECT_EQ(*counted, 2u) << "the tombstone is no entry";
  cn::testing::write_file(dir_.file("run/other.json"), "{\"schema\":1, \"allocations\": {\"" +
                                                           numbered_alloc_id(4) + "\": {}}}");
  EXPECT_EQ(count_state_entries(dir_.file("run/other.json")).value_or(99), 1u)
      << "a file out of the line framing is counted by the full parser";
  EXPECT_EQ(count_state_entries(dir_.file("run/none.json")).value_or(99), 0u);
}

// `state` and `explain` read through this: they must leave no trace and never hide a problem.
TEST_F(StateStoreTest, ReadOnlyReadCreatesNothingAndReportsMissingAndCorruptFiles) {
  auto missing = read_state_file(dir_.file("run/state.json"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "no such file: " + dir_.file("run/state.json"));
  EXPECT_FALSE(std::filesystem::exists(dir_.file("run"))) << "no directory created";

  std::filesystem::create_directories(dir_.file("run"));
  const std::string garbage =
      "{\"schema\":1,\"allocations\":{\"" + numbered_alloc_id(1) + "\":{\"ips\":5}}}";
  cn::testing::write_file(dir_.file("run/state.json"), garbage);
  auto corrupt = read_state_file(dir_.file("run/state.json"));
  ASSERT_FALSE(corrupt);
  EXPECT_NE(corrupt.error().message.find(dir_.file("run/state.json")), std::string::npos);
  EXPECT_NE(corrupt.error().message.find("/ips: expected an array"), std::string::npos)
      << corrupt.error().message;
  EXPECT_EQ(cn::testing::read_file(dir_.file("run/state.json")), garbage) << "not repaired";

  std::filesystem::remove(dir_.file("run/state.json"));
  ASSERT_TRUE(store().update([](StateDoc& d) {
    d.allocations[numbered_alloc_id(2)].ifname = "eth0";
    return true;
  }));
  std::filesystem::remove(dir_.file("run/state.json.lock"));
  auto good = read_state_file(dir_.file("run/state.json"));
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good->allocations.size(), 1u);
  std::set<std::string> names;
  for (const auto& f : std::filesystem::directory_iterator(dir_.file("run")))
    names.insert(f.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"state.json"})) << "no lock file, nothing set aside";
}

TEST_F(StateStoreTest, LockTimeoutIsBoundedAndReported) {
  auto s = store(std::chrono::milliseconds{50});
  ASSERT_TRUE(s.load());
  int fd = ::open(dir_.file("run/state.json.lock").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  auto r = s.update([](StateDoc&) { return true; });
  ::close(fd);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos);
}

TEST_F(StateStoreTest, ConcurrentWritersLoseNoUpdate) {
  constexpr int kWriters = 100;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      auto s = store(std::chrono::seconds{30});
      if (!s.update([&](StateDoc& d) {
            d.allocations[numbered_alloc_id(i)].ifname = "eth0";
            return true;
          })) {
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  auto doc = store().load();
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->allocations.size(), static_cast<std::size_t>(kWriters));
}

}  // namespace
}  // namespace cn::state
