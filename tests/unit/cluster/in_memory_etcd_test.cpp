// The double keeps etcd's rules: the duties' tests are only as good as these.
#include "tests/unit/cluster/in_memory_etcd.h"
#include "tests/support/manual_clock.h"

#include <gtest/gtest.h>

namespace cn::testing {
namespace {

using etcd::Compare;
using etcd::CompareResult;
using etcd::CompareTarget;
using etcd::TxnOp;

Deadline far() {
  return Deadline(MonoTime::max());
}

class InMemoryEtcdTest : public ::testing::Test {
 protected:
  ManualClock clock;
  InMemoryEtcd etcd{clock};
};

TEST_F(InMemoryEtcdTest, RevisionsAndVersionsFollowEtcd) {
  const auto start = etcd.revision();
  ASSERT_EQ(*etcd.put("a", "1", 0, far()), start + 1);
  ASSERT_EQ(*etcd.put("a", "2", 0, far()), start + 2);
  auto kv = etcd.get("a");
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->create_revision, start + 1);
  EXPECT_EQ(kv->mod_revision, start + 2);
  EXPECT_EQ(kv->version, 2);
  etcd.remove("a");
  ASSERT_EQ(*etcd.put("a", "3", 0, far()), start + 4);
  kv = etcd.get("a");
  EXPECT_EQ(kv->create_revision, start + 4);
  EXPECT_EQ(kv->version, 1);
  // A txn whose ops change nothing does not bump the revision.
  auto none = etcd.txn(
      etcd::TxnRequest{{}, {TxnOp{TxnOp::Kind::delete_range, "zz", {}, {}, 0}}, {}}, far());
  ASSERT_TRUE(none);
  EXPECT_EQ(none->revision, start + 4);
  EXPECT_EQ(none->deleted, std::vector<std::int64_t>{0});
}

TEST_F(InMemoryEtcdTest, RangePagesCountAndReadsAnOlderRevision) {
  for (const char* key : {"p/a", "p/b", "p/c", "q"}) ASSERT_TRUE(etcd.put(key, "v", 0, far()));
  const auto pinned = etcd.revision();
  auto page =
      etcd.range(etcd::RangeRequest{"p/", etcd::prefix_end("p/"), 2, 0, false, false}, far());
  ASSERT_TRUE(page);
  ASSERT_EQ(page->kvs.size(), 2U);
  EXPECT_TRUE(page->more);
  EXPECT_EQ(page->count, 3);
  EXPECT_EQ(page->revision, pinned);
  ASSERT_TRUE(etcd.put("p/d", "v", 0, far()));
  etcd.remove("p/a");
  auto old =
      etcd.range(etcd::RangeRequest{"p/", etcd::prefix_end("p/"), 0, pinned, true, false}, far());
  ASSERT_TRUE(old);
  EXPECT_EQ(old->count, 3);
  EXPECT_EQ(old->kvs.front().key, "p/a");
  EXPECT_TRUE(old->kvs.front().value.empty());  // keys_only
  EXPECT_FALSE(old->more);
  EXPECT_GT(old->revision, pinned);  // the header is always the newest revision
  auto all = etcd.range(etcd::RangeRequest{"p/", std::string(1, '\0'), 0, 0, false, true}, far());
  EXPECT_EQ(all->count, 4);  // p/b p/c p/d q
  EXPECT_TRUE(all->kvs.empty());
}

TEST_F(InMemoryEtcdTest, CompactionRefusesOlderRevisions) {
  ASSERT_TRUE(etcd.put("k", "1", 0, far()));
  const auto first = etcd.revision();
  ASSERT_TRUE(etcd.put("k", "2", 0, far()));
  ASSERT_TRUE(etcd.compact(etcd.revision()));
  auto refused = etcd.range(etcd::RangeRequest{"k", {}, 0, first, false, false}, far());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("compacted"), std::string::npos);
  auto now = etcd.range(etcd::RangeRequest{"k", {}, 0, etcd.revision(), false, false}, far());
  ASSERT_TRUE(now);
  EXPECT_EQ(now->kvs.at(0).value, "2");
  EXPECT_FALSE(
      etcd.range(etcd::RangeRequest{"k", {}, 0, etcd.revision() + 5, false, false}, far()));
}

TEST_F(InMemoryEtcdTest, CompareOverAnEmptyRangeIsOneAbsentKey) {
  const std::string prefix = "users/";
  const auto no_user = Compare{
      prefix, etcd::prefix_end(prefix), CompareTarget::create_revision, CompareResult::equal, 0,
      {}};
  auto txn =
      etcd.txn(etcd::TxnRequest{{no_user}, {TxnOp{TxnOp::Kind::put, "x", {}, "1", 0}}, {}}, far());
  ASSERT_TRUE(txn);
  EXPECT_TRUE(txn->succeeded);
  ASSERT_TRUE(etcd.put("users/n1", "1", 0, far()));
  txn =
      etcd.txn(etcd::TxnRequest{{no_user}, {TxnOp{TxnOp::Kind::put, "x", {}, "2", 0}}, {}}, far());
  EXPECT_FALSE(txn->succeeded);
  // A value compare on no key fails, even "not equal".
  const auto value = Compare{"nothing", {}, CompareTarget::value, CompareResult::not_equal, 0, "a"};
  txn = etcd.txn(etcd::TxnRequest{{value}, {}, {TxnOp{TxnOp::Kind::range, "x", {}, {}, 0}}}, far());
  EXPECT_FALSE(txn->succeeded);
  ASSERT_EQ(txn->ranges.size(), 1U);
  EXPECT_EQ(txn->ranges[0].kvs.at(0).value, "1");
}

TEST_F(InMemoryEtcdTest, LeasesExpireOnTheManualClockWithTheirKeys) {
  auto lease = etcd.grant_lease(std::chrono::seconds{10}, far());
  ASSERT_TRUE(lease);
  ASSERT_TRUE(etcd.put("leased", "v", lease->id, far()));
  clock.advance(std::chrono::seconds{9});
  ASSERT_TRUE(etcd.keep_alive(lease->id, far()));
  clock.advance(std::chrono::seconds{9});
  EXPECT_TRUE(etcd.get("leased"));
  clock.advance(std::chrono::seconds{1});
  EXPECT_FALSE(etcd.get("leased"));
  EXPECT_EQ(etcd.keep_alive(lease->id, far()).error().kind, ErrorKind::not_found);
  EXPECT_EQ(etcd.put("again", "v", lease->id, far()).error().kind, ErrorKind::not_found);
}

TEST_F(InMemoryEtcdTest, FaultsAndTheLog) {
  ASSERT_TRUE(etcd.put("a", "1", 0, far()));
  etcd.fail_next(2, ErrorKind::transport, InMemoryEtcd::Method::range);
  EXPECT_EQ(etcd.range(etcd::RangeRequest{"a", {}, 0, 0, false, false}, far()).error().kind,
            ErrorKind::transport);
  EXPECT_TRUE(etcd.txn(etcd::TxnRequest{}, far()));
  EXPECT_FALSE(etcd.range(etcd::RangeRequest{"a", {}, 0, 0, false, false}, far()));
  EXPECT_TRUE(etcd.range(etcd::RangeRequest{"a", {}, 0, 0, false, false}, far()));
  etcd.fail_ranges_after(1, ErrorKind::timeout);
  EXPECT_TRUE(etcd.range(etcd::RangeRequest{"a", {}, 0, 0, false, false}, far()));
  EXPECT_EQ(etcd.range(etcd::RangeRequest{"a", {}, 0, 0, false, false}, far()).error().kind,
            ErrorKind::timeout);
  EXPECT_TRUE(etcd.range(etcd::RangeRequest{"a", {}, 0, 0, false, false}, far()));
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::range), 6);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 1);
  EXPECT_TRUE(etcd.deleted_by_txn().empty());
}

}  // namespace
}  // namespace cn::testing
