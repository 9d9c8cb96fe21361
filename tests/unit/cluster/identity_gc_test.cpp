// Identity GC: a master key goes only after two complete passes without a user, unchanged, not
// reported in use, under the fence and the rate limit.
#include "labeler/cluster/identity_gc.h"

#include <sstream>
#include <stop_token>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "tests/support/eventually.h"
#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

using labeler::cluster::IdentityGc;
using labeler::cluster::IdentityGcOptions;
using labeler::cluster::IdentityGcReport;
using labeler::cluster::PassEnd;
using labeler::cluster::kvstore::master_key;

std::string job_labels(std::uint64_t id) {
  return "k8s:app=job-" + std::to_string(id) + ";";
}

class IdentityGcTest : public ClusterTest {
 protected:
  IdentityGcOptions options() {
    IdentityGcOptions o;
    o.deletions_per_minute = 0;
    o.range = labeler::cluster::identity_range(0, 255);
    return o;
  }
  IdentityGcReport pass(IdentityGc& gc) {
    clock.advance(std::chrono::minutes{1});  // passes are an interval apart; leases stay alive
    return gc.run_pass(fence, {});
  }
};

TEST_F(IdentityGcTest, UnusedIdentityGoesAfterTwoPassesAndUsedOnesNever) {
  seed_identity(256, kFooLabels);
  seed_user(kFooLabels, "10.0.0.5", 256);
  seed_identity(257, kBarLabels);  // nobody uses it
  IdentityGc gc(etcd, clock, options());

  auto first = pass(gc);
  EXPECT_EQ(first.end, PassEnd::complete) << first.detail;
  EXPECT_EQ(first.scanned, 2);
  EXPECT_EQ(first.referenced, 1);
  EXPECT_EQ(first.candidates, 1);
  EXPECT_EQ(first.deleted, 0);
  EXPECT_EQ(gc.remembered(), 1U);
  EXPECT_TRUE(identity_exists(257));
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);

  auto second = pass(gc);
  EXPECT_EQ(second.end, PassEnd::complete) << second.detail;
  EXPECT_EQ(second.confirmed, 1);
  EXPECT_EQ(second.deleted, 1);
  EXPECT_FALSE(identity_exists(257));
  EXPECT_EQ(etcd.deleted_by_txn(), std::vector<std::string>{master_key(257)});

  for (int i = 0; i < 3; ++i) EXPECT_EQ(pass(gc).deleted, 0);
  EXPECT_TRUE(identity_exists(256));
}

TEST_F(IdentityGcTest, IdentityThatGainsAUserBetweenPassesSurvives) {
  seed_identity(300, kFooLabels);
  IdentityGc gc(etcd, clock, options());
  EXPECT_EQ(pass(gc).candidates, 1);
  seed_user(kFooLabels, "10.0.0.7", 300);
  auto second = pass(gc);
  EXPECT_EQ(second.referenced, 1);
  EXPECT_EQ(second.deleted, 0);
  EXPECT_EQ(gc.remembered(), 0U);
  // The user's node dies; its lease expires: two fresh passes are needed again.
  ASSERT_TRUE(etcd.revoke_lease(agent_lease, far()));
  EXPECT_EQ(pass(gc).deleted, 0);
  EXPECT_EQ(pass(gc).deleted, 1);
}

TEST_F(IdentityGcTest, UserAppearingBetweenReadAndDeleteMakesEtcdRefuse) {
  seed_identity(300, kFooLabels);
  IdentityGc gc(etcd, clock, options());
  pass(gc);
  etcd.before_txn([&] { seed_user(kFooLabels, "10.0.0.9", 300); });
  auto second = pass(gc);
  EXPECT_EQ(second.end, PassEnd::complete);
  EXPECT_EQ(second.refused, 1);
  EXPECT_EQ(second.deleted, 0);
  EXPECT_TRUE(identity_exists(300));
  EXPECT_TRUE(etcd.deleted_by_txn().empty());
}

TEST_F(IdentityGcTest, ModRevisionChangeBetweenPassesRestartsTheCount) {
  seed_identity(400, kFooLabels);
  IdentityGc gc(etcd, clock, options());
  pass(gc);
  // An agent re-creates the master key it still uses (same value, new ModRevision).
  seed_identity(400, kFooLabels);
  auto second = pass(gc);
  EXPECT_EQ(second.candidates, 1);
  EXPECT_EQ(second.confirmed, 0);
  EXPECT_EQ(second.deleted, 0);
  EXPECT_EQ(pass(gc).deleted, 1);
}

TEST_F(IdentityGcTest, ModRevisionChangeAtDeleteTimeMakesEtcdRefuse) {
  seed_identity(400, kFooLabels);
  IdentityGc gc(etcd, clock, options());
  pass(gc);
  etcd.before_txn([&] { seed_identity(400, kFooLabels); });
  auto second = pass(gc);
  EXPECT_EQ(second.refused, 1);
  EXPECT_TRUE(identity_exists(400));
}

TEST_F(IdentityGcTest, DryRunDeletesNothing) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kBarLabels);
  auto o = options();
  o.dry_run = true;
  IdentityGc gc(etcd, clock, o);
  pass(gc);
  for (int i = 0; i < 2; ++i) {
    auto report = pass(gc);
    EXPECT_EQ(report.would_delete, 2);
    EXPECT_EQ(report.deleted, 0);
  }
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
  EXPECT_TRUE(identity_exists(256));
  EXPECT_TRUE(identity_exists(257));
}

TEST_F(IdentityGcTest, ReadFailureMidPassDeletesNothingAndDoesNotCountAsAPass) {
  for (std::uint64_t id = 256; id < 266; ++id) seed_identity(id, job_labels(id));
  auto o = options();
  o.scan.page_size = 3;
  IdentityGc gc(etcd, clock, o);

  // The first pass is cut short in the master keys (in-use 1 page, value 1 page, masters 4):
  // nothing remembered.
  etcd.fail_ranges_after(3, ErrorKind::transport);
  auto cut = pass(gc);
  EXPECT_EQ(cut.end, PassEnd::read_failed);
  EXPECT_EQ(gc.remembered(), 0U);
  // So the next complete pass is the first one: it deletes nothing.
  auto first = pass(gc);
  EXPECT_EQ(first.end, PassEnd::complete);
  EXPECT_EQ(first.deleted, 0);
  EXPECT_EQ(gc.remembered(), 10U);
  // A failure in the pass that would delete: nothing deleted, the memory kept as it was.
  etcd.fail_ranges_after(4, ErrorKind::timeout);
  auto failed = pass(gc);
  EXPECT_EQ(failed.end, PassEnd::read_failed);
  EXPECT_EQ(failed.deleted, 0);
  EXPECT_EQ(gc.remembered(), 10U);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
  // The next complete pass is the second: now they go.
  EXPECT_EQ(pass(gc).deleted, 10);
}

TEST_F(IdentityGcTest, CompactionDuringThePassAbortsIt) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kBarLabels);
  auto o = options();
  o.scan.page_size = 1;
  IdentityGc gc(etcd, clock, o);
  pass(gc);
  int ranges = 0;
  etcd.before_range([&] {
    if (++ranges == 3) {
      // Someone writes and etcd compacts past the revision the pass is pinned at.
      seed_identity(999, kBarLabels);
      ASSERT_TRUE(etcd.compact(etcd.revision()));
    }
  });
  auto report = pass(gc);
  EXPECT_EQ(report.end, PassEnd::read_failed);
  EXPECT_NE(report.detail.find("compacted"), std::string::npos) << report.detail;
  EXPECT_EQ(report.deleted, 0);
  EXPECT_TRUE(identity_exists(256));
}

TEST_F(IdentityGcTest, EveryPageIsLimitedAndPinnedAtTheFirstRevision) {
  // 1,000 identities, 10 % unused: 900 with a user on one of three nodes.
  for (std::uint64_t id = 1000; id < 2000; ++id) {
    const std::string labels = job_labels(id);
    seed_identity(id, labels);
    if (id % 10 != 0) seed_user(labels, "10.0.0." + std::to_string(id % 3), id);
  }
  auto o = options();
  o.scan.page_size = 100;
  IdentityGc gc(etcd, clock, o);
  pass(gc);
  const auto before = etcd.range_log().size();
  auto report = pass(gc);
  EXPECT_EQ(report.end, PassEnd::complete) << report.detail;
  EXPECT_EQ(report.scanned, 1000);
  EXPECT_EQ(report.value_keys, 900);
  EXPECT_EQ(report.deleted, 100);
  // in-use: 1 page, value keys: 9, master keys: 10.
  EXPECT_EQ(report.pages, 20);
  // 100 deletions, 50 to a txn.
  EXPECT_EQ(report.etcd_requests, 20 + 2);
  const auto log = etcd.range_log();
  ASSERT_EQ(log.size(), before + 20);
  const auto pinned = report.revision;
  for (auto i = before; i < log.size(); ++i) {
    EXPECT_EQ(log[i].limit, 100);
    EXPECT_EQ(log[i].revision, i == before ? 0 : pinned);
  }
}

TEST_F(IdentityGcTest, FenceRefusingAWriteStopsThePass) {
  for (std::uint64_t id = 256; id < 259; ++id) seed_identity(id, job_labels(id));
  IdentityGc gc(etcd, clock, options());
  pass(gc);
  // Another labeler took the leader key while this one was not looking.
  become_leader();
  auto report = pass(gc);
  EXPECT_EQ(report.end, PassEnd::fence_lost);
  EXPECT_EQ(report.refused, 1);
  EXPECT_EQ(report.deleted, 0);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 1);
  EXPECT_TRUE(etcd.deleted_by_txn().empty());
}

TEST_F(IdentityGcTest, LeaderLeaseExpiringMidPassStopsItAfterTheWritesBefore) {
  for (std::uint64_t id = 256; id < 260; ++id) seed_identity(id, job_labels(id));
  auto o = options();
  o.deletions_per_txn = 1;
  IdentityGc gc(etcd, clock, o);
  pass(gc);
  int txns = 0;
  etcd.before_txn([&] {
    if (++txns == 3) {
      ASSERT_TRUE(etcd.revoke_lease(fence.lease, far()));
    }
  });
  auto report = pass(gc);
  EXPECT_EQ(report.end, PassEnd::fence_lost);
  EXPECT_EQ(report.deleted, 2);
  EXPECT_EQ(txns, 3);
}

TEST_F(IdentityGcTest, ABatchWithOneChangedIdentityIsRetriedOneByOne) {
  for (std::uint64_t id = 256; id < 261; ++id) seed_identity(id, job_labels(id));
  IdentityGc gc(etcd, clock, options());
  pass(gc);
  // Between the read and the delete, 258 gains a user: etcd refuses the batch of five, and the
  // retry one by one deletes the four others and keeps 258.
  int txns = 0;
  etcd.before_txn([&] {
    if (++txns == 1) seed_user(job_labels(258), "10.0.0.9", 258);
  });
  auto report = pass(gc);
  EXPECT_EQ(report.end, PassEnd::complete) << report.detail;
  EXPECT_EQ(report.deleted, 4);
  EXPECT_EQ(report.refused, 1);
  EXPECT_TRUE(etcd.get(master_key(258)));
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 1 + 5);
}

TEST_F(IdentityGcTest, RateLimitWaitsOnTheClock) {
  for (std::uint64_t id = 256; id < 261; ++id) seed_identity(id, job_labels(id));
  auto o = options();
  o.deletions_per_minute = 2;
  IdentityGc gc(etcd, clock, o);
  pass(gc);
  IdentityGcReport report;
  // On a failed assertion the jthread's destructor requests stop, which ends the wait.
  std::jthread worker([&](std::stop_token stop) { report = gc.run_pass(fence, std::move(stop)); });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  EXPECT_EQ(etcd.deleted_by_txn().size(), 2U);
  clock.advance(std::chrono::seconds{59});
  EXPECT_EQ(etcd.deleted_by_txn().size(), 2U);
  clock.advance(std::chrono::seconds{1});
  ASSERT_TRUE(eventually([&] { return etcd.deleted_by_txn().size() == 4U; }));
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  clock.advance(std::chrono::minutes{1});
  worker.join();
  EXPECT_EQ(report.deleted, 5);
  EXPECT_EQ(report.end, PassEnd::complete);
}

TEST_F(IdentityGcTest, StopWhileRateLimitedEndsThePass) {
  for (std::uint64_t id = 256; id < 260; ++id) seed_identity(id, job_labels(id));
  auto o = options();
  o.deletions_per_minute = 1;
  IdentityGc gc(etcd, clock, o);
  pass(gc);
  IdentityGcReport report;
  std::stop_source stop;
  std::jthread worker([&] { report = gc.run_pass(fence, stop.get_token()); });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  stop.request_stop();
  worker.join();
  EXPECT_EQ(report.end, PassEnd::stopped);
  EXPECT_EQ(report.deleted, 1);
}

TEST_F(IdentityGcTest, IdentitiesReportedInUseAreNeverCollected) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kBarLabels);
  seed_in_use("node-a", {256});
  seed_in_use("node-b", {});
  IdentityGc gc(etcd, clock, options());
  pass(gc);
  auto second = pass(gc);
  EXPECT_EQ(second.in_use_reports, 2);
  EXPECT_EQ(second.reported_in_use, 1);
  EXPECT_EQ(second.deleted, 1);
  EXPECT_TRUE(identity_exists(256));
  EXPECT_FALSE(identity_exists(257));
}

// Expected: one node's unreadable report neither stops the GC nor frees that node's
// identities: what it uses is kept by its agent's user keys (the operator's evidence), what
// nobody uses goes after two complete passes, and every pass counts the bad report.
TEST_F(IdentityGcTest, UnreadableInUseReportFallsBackToThatNodesUserKeys) {
  for (const char* bad :
       {R"({"node":"node-b","at":"x"})", R"({"node":"node-b","identities":[-1],"at":"x"})",
        R"({"node":"node-b","identities":["256"],"at":"x"})", "[256]", "{"}) {
    SCOPED_TRACE(bad);
    etcd.remove(master_key(256));
    etcd.remove(master_key(257));
    etcd.remove(master_key(258));
    seed_identity(256, kFooLabels);
    seed_user(kFooLabels, "10.0.0.2", 256);  // node B's agent: the only user of 256
    seed_identity(257, kBarLabels);          // nobody's
    seed_identity(258, job_labels(258));     // node A's report only
    seed_in_use("node-a", {258});
    ASSERT_TRUE(
        etcd.put(labeler::cluster::in_use_key("default", "node-b"), bad, agent_lease, far()));
    IdentityGc gc(etcd, clock, options());

    auto first = pass(gc);
    EXPECT_EQ(first.end, PassEnd::complete) << first.detail;
    EXPECT_TRUE(first.in_use_reports_read);
    EXPECT_EQ(first.in_use_reports, 2);
    EXPECT_EQ(first.unreadable_in_use_reports, 1);
    EXPECT_EQ(first.candidates, 1);
    auto second = pass(gc);
    EXPECT_EQ(second.end, PassEnd::complete) << second.detail;
    EXPECT_EQ(second.unreadable_in_use_reports, 1);
    EXPECT_EQ(second.referenced, 1);
    EXPECT_EQ(second.reported_in_use, 1);
    EXPECT_EQ(second.deleted, 1);
    EXPECT_TRUE(identity_exists(256)) << "used through node B's user key";
    EXPECT_FALSE(identity_exists(257)) << "unused by anyone: two complete passes";
    EXPECT_TRUE(identity_exists(258)) << "node A's valid report still counts";
  }
}

// Expected: a read of the reports that fails is still doubt: no report is known, nothing goes,
// and the pass does not count as one of the two.
TEST_F(IdentityGcTest, FailedReadOfTheReportsStillMeansNoDeletion) {
  seed_identity(257, kBarLabels);
  IdentityGc gc(etcd, clock, options());
  ASSERT_EQ(pass(gc).end, PassEnd::complete);
  etcd.fail_next(1, ErrorKind::transport, InMemoryEtcd::Method::range);
  auto failed = pass(gc);
  EXPECT_NE(failed.end, PassEnd::complete);
  EXPECT_FALSE(failed.in_use_reports_read);
  EXPECT_EQ(failed.deleted, 0);
  EXPECT_TRUE(identity_exists(257));
  EXPECT_EQ(gc.remembered(), 1U);
}

TEST_F(IdentityGcTest, UnknownShapesAndOtherClustersRangesAreSkippedNeverDeleted) {
  for (const char* key :
       {"cilium/state/identities/v1/id/abc", "cilium/state/identities/v1/id/0300",
        "cilium/state/identities/v1/id/300/x", "cilium/state/identities/v1/id/+301"}) {
    ASSERT_TRUE(etcd.put(key, kFooLabels, 0, far()));
  }
  ASSERT_TRUE(etcd.put(master_key(302), "", 0, far()));         // no label string
  ASSERT_TRUE(etcd.put(master_key(303), "k8s:a=b", 0, far()));  // not one the agent writes
  seed_identity(65536 + 5, kFooLabels);                         // cluster ID 1's range
  IdentityGc gc(etcd, clock, options());
  for (int i = 0; i < 3; ++i) {
    auto report = pass(gc);
    EXPECT_EQ(report.skipped_unknown_shape, 6);
    EXPECT_EQ(report.skipped_out_of_range, 1);
    EXPECT_EQ(report.candidates, 0);
  }
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
}

TEST_F(IdentityGcTest, UsersAreFoundByTheLastSlashAndByTheirId) {
  // Labels with a '/' of their own: the user key's label string ends at its LAST '/'.
  const std::string slashed =
      "k8s:app.kubernetes.io/name=web;k8s:io.kubernetes.pod.namespace=default;";
  seed_identity(256, slashed);
  seed_user(slashed, "10.0.0.5", 256);
  // A label string that extends another one is not a user of the shorter one.
  seed_identity(257, "k8s:app=foo;");
  seed_identity(258, "k8s:app=foo;k8s:b=c;");
  seed_user("k8s:app=foo;k8s:b=c;", "10.0.0.5", 258);
  // A value key under another label string whose value is the ID still counts as a user.
  seed_identity(259, kBarLabels);
  seed_user("k8s:app=stale;", "10.0.0.6", 259);
  IdentityGc gc(etcd, clock, options());
  pass(gc);
  auto report = pass(gc);
  EXPECT_EQ(report.referenced, 3);
  EXPECT_EQ(report.deleted, 1);
  EXPECT_FALSE(identity_exists(257));
}

TEST_F(IdentityGcTest, WriteWithoutAnswerStopsThePass) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kBarLabels);
  IdentityGc gc(etcd, clock, options());
  pass(gc);
  etcd.fail_next(1, ErrorKind::transport, InMemoryEtcd::Method::txn);
  auto report = pass(gc);
  EXPECT_EQ(report.end, PassEnd::write_failed);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 1);
  EXPECT_EQ(pass(gc).deleted, 2);
}

}  // namespace
}  // namespace cn::testing

namespace cn::testing {
namespace {

using labeler::cluster::identity_range;

// Seeds an unused identity of its own label string in every block a ClusterMesh of `max` may
// have: this cluster's and its neighbours' (and cluster 0's).
class IdentityGcRangeTest : public IdentityGcTest,
                            public ::testing::WithParamInterface<std::pair<int, int>> {};

TEST_P(IdentityGcRangeTest, OnlyThisClustersUnusedIdentitiesGo) {
  const auto [cluster_id, max] = GetParam();
  auto range = identity_range(cluster_id, max);
  ASSERT_TRUE(range.has_value()) << range.error().message;
  const std::uint64_t shift = max == 255 ? 16 : 15;
  std::vector<std::uint64_t> ours = {range->min, range->min + 1, range->max};
  std::vector<std::uint64_t> theirs = {range->min - 1, range->max + 1,
                                       ((static_cast<std::uint64_t>(cluster_id) + 2) << shift) + 7,
                                       256, 1000};
  if (cluster_id == 0) theirs = {255, range->max + 1, (std::uint64_t{2} << shift) + 7};
  for (auto id : ours) seed_identity(id, job_labels(id));
  for (auto id : theirs) seed_identity(id, job_labels(id));
  // A used one of ours stays.
  const std::uint64_t used = range->min + 2;
  seed_identity(used, kFooLabels);
  seed_user(kFooLabels, "10.0.0.5", used);
  seed_user(kFooLabels, "10.0.0.6", used);

  auto o = options();
  o.range = range;
  IdentityGc gc(etcd, clock, o);
  auto first = pass(gc);
  ASSERT_EQ(first.end, PassEnd::complete) << first.detail;
  EXPECT_EQ(first.in_range, static_cast<std::int64_t>(ours.size() + 1));
  EXPECT_EQ(first.skipped_out_of_range, static_cast<std::int64_t>(theirs.size()));
  EXPECT_EQ(first.range_size, range->size());
  auto second = pass(gc);
  ASSERT_EQ(second.end, PassEnd::complete) << second.detail;
  EXPECT_EQ(second.deleted, static_cast<std::int64_t>(ours.size()));
  for (auto id : ours) EXPECT_FALSE(identity_exists(id)) << id;
  for (auto id : theirs) EXPECT_TRUE(identity_exists(id)) << "another cluster's: " << id;
  EXPECT_TRUE(identity_exists(used));
}

INSTANTIATE_TEST_SUITE_P(ClusterIdAndMax, IdentityGcRangeTest,
                         ::testing::Values(std::pair{0, 255}, std::pair{0, 511}, std::pair{7, 255},
                                           std::pair{300, 511}, std::pair{255, 255},
                                           std::pair{511, 511}));

TEST_F(IdentityGcTest, UnknownRangeReadsAndDeletesNothingAndLogsOnce) {
  seed_identity(257, kBarLabels);
  auto o = options();
  o.range = labeler::cluster::resolve_identity_range({});
  ASSERT_FALSE(o.range.has_value());
  std::ostringstream lines;
  auto log = std::make_shared<spdlog::logger>(
      "gc", std::make_shared<spdlog::sinks::ostream_sink_st>(lines));
  IdentityGc gc(etcd, clock, o, log);
  for (int i = 0; i < 3; ++i) {
    auto r = pass(gc);
    EXPECT_EQ(r.end, PassEnd::doubt);
    EXPECT_NE(r.detail.find("cluster-id unknown"), std::string::npos) << r.detail;
    EXPECT_EQ(r.range_size, 0U);
    EXPECT_FALSE(r.counted);
  }
  EXPECT_EQ(etcd.range_log().size(), 0U);
  EXPECT_TRUE(identity_exists(257));
  const std::string text = lines.str();
  const auto at = text.find("refuses to run");
  EXPECT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.find("refuses to run", at + 1), std::string::npos) << "logged once: " << text;
  // Known later (the agent answered): GC starts, two passes as always.
  gc.set_range(identity_range(0, 255));
  EXPECT_EQ(pass(gc).candidates, 1);
  EXPECT_EQ(pass(gc).deleted, 1);
}

TEST_F(IdentityGcTest, ARangeChangeStartsTheTwoPassesOver) {
  seed_identity(257, kBarLabels);
  IdentityGc gc(etcd, clock, options());
  EXPECT_EQ(pass(gc).candidates, 1);
  gc.set_range(identity_range(0, 511));  // same ID still in range, but the memory goes
  EXPECT_EQ(gc.remembered(), 0U);
  EXPECT_EQ(pass(gc).deleted, 0);
  EXPECT_EQ(pass(gc).deleted, 1);
}

TEST_F(IdentityGcTest, HeadroomCountsThisRangeUsersAndIdentitiesFirstSeen) {
  seed_identity(256, kFooLabels);
  seed_user(kFooLabels, "10.0.0.1", 256);
  seed_user(kFooLabels, "10.0.0.2", 256);
  seed_user(kFooLabels, "10.0.0.3", 256);
  seed_identity(257, kBarLabels);
  seed_user(kBarLabels, "10.0.0.1", 257);
  seed_identity(70000, job_labels(70000));  // cluster 1's: not counted
  IdentityGc gc(etcd, clock, options());
  auto first = pass(gc);
  ASSERT_TRUE(first.counted);
  EXPECT_EQ(first.in_range, 2);
  EXPECT_EQ(first.range_size, 65535U - 256U + 1U);
  EXPECT_EQ(first.users_min, 1);
  EXPECT_EQ(first.users_max, 3);
  EXPECT_EQ(first.users_total, 4);
  EXPECT_EQ(first.first_seen, 0) << "the first pass only records what exists";

  seed_identity(258, job_labels(258));
  seed_identity(70001, job_labels(70001));
  auto second = pass(gc);
  EXPECT_EQ(second.in_range, 3);
  EXPECT_EQ(second.first_seen, 1);
  EXPECT_EQ(second.users_min, 0);
  // 258 is deleted on the third pass and re-created with other labels: new again.
  EXPECT_EQ(pass(gc).deleted, 1);
  seed_identity(258, job_labels(9258));
  EXPECT_EQ(pass(gc).first_seen, 1);
  EXPECT_EQ(pass(gc).first_seen, 0);
}

}  // namespace
}  // namespace cn::testing
