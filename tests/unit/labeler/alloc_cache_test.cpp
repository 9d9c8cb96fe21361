#include "labeler/labeling/alloc_cache.h"

#include <gtest/gtest.h>

#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::make_alloc;

constexpr const char* kA = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
constexpr const char* kB = "9e8d7c6b-5a49-3827-1605-f4e3d2c1b0a9";

nomad::Allocation at(nomad::Allocation alloc, std::uint64_t modify_index) {
  alloc.modify_index = modify_index;
  return alloc;
}

TEST(AllocCache, KeepsTheIdentityWithOnlyThePolicysMeta) {
  AllocCache cache({"team"});
  cache.observe(make_alloc(kA));
  auto identity = cache.identity(kA);
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->nomad_namespace, "default");
  EXPECT_EQ(identity->job_id, "web");
  EXPECT_EQ(identity->task_group, "app");
  EXPECT_EQ(identity->job_meta, (std::map<std::string, std::string>{{"team", "payments"}}));
  EXPECT_TRUE(identity->group_meta.empty()) << "tier is not a label key";
  EXPECT_FALSE(cache.identity(kB));
}

TEST(AllocCache, AnOlderAnswerNeverReplacesANewerOne) {
  AllocCache cache({"team"});
  auto newer = at(make_alloc(kA), 20);
  newer.job->meta["team"] = "search";
  cache.observe(newer);
  cache.observe(at(make_alloc(kA), 10));  // a slow reader's answer
  EXPECT_EQ(cache.identity(kA)->job_meta.at("team"), "search");
  auto newest = at(make_alloc(kA), 30);
  newest.job->meta["team"] = "ads";
  cache.observe(newest);  // an in-place job update
  EXPECT_EQ(cache.identity(kA)->job_meta.at("team"), "ads");
}

TEST(AllocCache, TerminalAllocationsAndJoblessChangesAreForgotten) {
  AllocCache cache({});
  cache.observe(at(make_alloc(kA), 10));
  cache.observe(at(make_alloc(kB), 10));
  auto stopped = at(make_alloc(kA, "web", "app", "complete"), 11);
  cache.observe(stopped);
  EXPECT_FALSE(cache.identity(kA));
  auto event = at(make_alloc(kB), 12);
  event.job.reset();  // an event payload: changed, but the new job is not known
  cache.observe(event);
  EXPECT_FALSE(cache.identity(kB));
}

TEST(AllocCache, AJoblessAnswerAtTheSameIndexKeepsTheEntry) {
  AllocCache cache({});
  cache.observe(at(make_alloc(kA), 10));
  auto unchanged = at(make_alloc(kA), 10);
  unchanged.job.reset();  // a listing that skipped the Job of an unchanged allocation
  cache.observe(unchanged);
  EXPECT_TRUE(cache.identity(kA));
}

TEST(AllocCache, RebuildDropsWhatTheListingNoLongerHasUnlessStoredLater) {
  AllocCache cache({});
  cache.observe(at(make_alloc(kA), 10));
  cache.observe(at(make_alloc(kB), 40));  // stored from an answer newer than the listing
  cache.rebuild({}, 30);
  EXPECT_FALSE(cache.identity(kA));
  EXPECT_TRUE(cache.identity(kB));
  cache.rebuild({at(make_alloc(kA), 50)}, 50);
  EXPECT_TRUE(cache.identity(kA));
  EXPECT_FALSE(cache.identity(kB));
}

TEST(AllocCache, IsBoundedAndClearable) {
  AllocCache cache({}, 1);
  cache.observe(make_alloc(kA));
  cache.observe(make_alloc(kB));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_FALSE(cache.identity(kB)) << "beyond the bound a miss costs a GET, nothing worse";
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace cn::labeler
