// Identity GC and duplicates (two master keys holding one label string): a value key under the
// string is a user of the ID it names only (cilium PR #43287), so the copy nobody names goes by
// the two passes, and the one a node names stays.
#include <gtest/gtest.h>

#include "labeler/cluster/identity_gc.h"
#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

using labeler::cluster::IdentityGc;
using labeler::cluster::IdentityGcOptions;
using labeler::cluster::IdentityGcReport;
using labeler::cluster::PassEnd;
using labeler::cluster::kvstore::master_key;

class IdentityGcDuplicateTest : public ClusterTest {
 protected:
  IdentityGc gc() {
    IdentityGcOptions o;
    o.deletions_per_minute = 0;
    o.range = labeler::cluster::identity_range(0, 255);  // 256 to 65535
    return IdentityGc(etcd, clock, o);
  }
  IdentityGcReport pass(IdentityGc& g) {
    clock.advance(std::chrono::minutes{1});
    return g.run_pass(fence, {});
  }
};

TEST_F(IdentityGcDuplicateTest, TheCopyNoValueKeyNamesGoesAfterTwoPassesTheUsedOneStays) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kFooLabels);  // the duplicate: every node uses 256
  seed_user(kFooLabels, "10.0.0.5", 256);
  seed_user(kFooLabels, "10.0.0.6", 256);
  auto g = gc();
  auto first = pass(g);
  EXPECT_EQ(first.end, PassEnd::complete) << first.detail;
  EXPECT_EQ(first.referenced, 1);
  EXPECT_EQ(first.candidates, 1);
  EXPECT_EQ(first.duplicate_candidates, 1);
  EXPECT_EQ(first.deleted, 0);

  auto second = pass(g);
  EXPECT_EQ(second.deleted, 1);
  EXPECT_EQ(second.deleted_duplicates, 1);
  EXPECT_EQ(etcd.deleted_by_txn(), std::vector<std::string>{master_key(257)});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(pass(g).deleted, 0);
  EXPECT_TRUE(identity_exists(256));
}

TEST_F(IdentityGcDuplicateTest, DuplicatesEachNamedBySomeNodeAreBothKept) {
  // Two nodes allocated the same labels apart: each still uses its own ID.
  seed_identity(256, kFooLabels);
  seed_identity(257, kFooLabels);
  seed_user(kFooLabels, "10.0.0.5", 256);
  seed_user(kFooLabels, "10.0.0.6", 257);
  auto g = gc();
  for (int i = 0; i < 3; ++i) {
    auto report = pass(g);
    EXPECT_EQ(report.referenced, 2);
    EXPECT_EQ(report.candidates, 0);
    EXPECT_EQ(report.deleted, 0);
  }
}

TEST_F(IdentityGcDuplicateTest, ADuplicateReportedInUseOrNamedUnderAnotherStringIsKept) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kFooLabels);
  seed_identity(258, kFooLabels);
  seed_user(kFooLabels, "10.0.0.5", 256);
  seed_in_use("node-2", {257});
  seed_user(kBarLabels, "10.0.0.5", 258);  // a value key naming 258 by ID keeps it
  auto g = gc();
  for (int i = 0; i < 3; ++i) {
    auto report = pass(g);
    EXPECT_EQ(report.reported_in_use, 1);
    EXPECT_EQ(report.candidates, 0);
    EXPECT_EQ(report.deleted, 0);
  }
}

TEST_F(IdentityGcDuplicateTest, AnotherClustersDuplicateIsNeverTouched) {
  seed_identity(256, kFooLabels);
  seed_user(kFooLabels, "10.0.0.5", 256);
  seed_identity(70000, kFooLabels);  // cluster 1's range with 255 connected clusters
  auto g = gc();
  for (int i = 0; i < 3; ++i) {
    auto report = pass(g);
    EXPECT_EQ(report.skipped_out_of_range, 1);
    EXPECT_EQ(report.candidates, 0);
  }
  EXPECT_TRUE(identity_exists(70000));
}

TEST_F(IdentityGcDuplicateTest, AValueKeyHoldingNoIdKeepsEveryCopyOfItsString) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kFooLabels);
  seed_user(kFooLabels, "10.0.0.5", 256);
  must(etcd.put(user_key(kFooLabels, "10.0.0.6"), "not-an-id", agent_lease, far()), "value key");
  auto g = gc();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(pass(g).candidates, 0);
  EXPECT_TRUE(identity_exists(257));
}

TEST_F(IdentityGcDuplicateTest, ANodeNamingTheDuplicateAtDeleteTimeMakesEtcdRefuse) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kFooLabels);
  seed_user(kFooLabels, "10.0.0.5", 256);
  auto g = gc();
  pass(g);
  etcd.before_txn([&] { seed_user(kFooLabels, "10.0.0.9", 257); });
  auto second = pass(g);
  EXPECT_EQ(second.refused, 1);
  EXPECT_EQ(second.deleted, 0);
  EXPECT_TRUE(identity_exists(257));
}

TEST_F(IdentityGcDuplicateTest, AStringThatLosesEveryUserAtDeleteTimeIsKeptThenJudgedPlainly) {
  seed_identity(256, kFooLabels);
  seed_identity(257, kFooLabels);
  seed_user(kFooLabels, "10.0.0.5", 256);
  auto g = gc();
  pass(g);
  // The only user's node dies between the read and the delete: the duplicate compare has no
  // key to hold and fails, as etcd's does. Both copies are then unused, by the plain rule.
  etcd.before_txn([&] { ASSERT_TRUE(etcd.revoke_lease(agent_lease, far())); });
  auto second = pass(g);
  EXPECT_EQ(second.refused, 1);
  EXPECT_TRUE(identity_exists(257));
  etcd.before_txn({});
  auto third = pass(g);
  EXPECT_EQ(third.candidates, 2);
  EXPECT_EQ(third.duplicate_candidates, 0);
  EXPECT_EQ(pass(g).deleted, 2);
}

}  // namespace
}  // namespace cn::testing
