// The leader election against the in-memory etcd, on simulated time: one leader at a time, a
// follower takes over when the leader resigns or its lease expires, and a leader stops believing
// it leads as soon as it cannot prove it does.
#include "labeler/cluster/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"
#include "tests/unit/cluster/in_memory_etcd.h"

namespace cn::labeler::cluster {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::InMemoryEtcd;

LeaderElectionSettings settings_for(const std::string& holder) {
  LeaderElectionSettings s;
  s.key = leader_key("default");
  s.holder = holder;
  s.lease_ttl = 15s;
  return s;
}

class Candidate {
 public:
  Candidate(InMemoryEtcd& etcd, ManualClock& clock, const std::string& holder)
      : election_(etcd, clock, settings_for(holder), nullptr) {}
  ~Candidate() { stop(); }
  void start() {
    thread_ = std::jthread([this](std::stop_token stop) { election_.run(stop); });
  }
  void stop() {
    if (!thread_.joinable()) return;
    thread_.request_stop();
    thread_.join();
  }
  LeaderElection& election() { return election_; }
  bool leading() const { return election_.view().leading; }

 private:
  LeaderElection election_;
  std::jthread thread_;
};

class LeaderElectionTest : public ::testing::Test {
 protected:
  // One round of every candidate: a third of the TTL, with the sleepers in place first.
  void round(int sleepers) {
    ASSERT_TRUE(clock.wait_for_sleepers(sleepers));
    clock.advance(5s);
  }
  std::string key_value() {
    auto kv = etcd.get(leader_key("default"));
    return kv ? kv->value : "";
  }

  ManualClock clock;
  InMemoryEtcd etcd{clock};
};

TEST_F(LeaderElectionTest, FirstCandidateLeadsWithItsNameOnTheKeyUnderItsLease) {
  Candidate a(etcd, clock, "node-a");
  a.start();
  ASSERT_TRUE(eventually([&] { return a.leading(); }));
  LeaderView view = a.election().view();
  ASSERT_TRUE(view.fence);
  EXPECT_EQ(view.holder, "node-a");
  EXPECT_EQ(view.terms, 1u);
  auto kv = etcd.get(leader_key("default"));
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->value, "node-a");
  EXPECT_EQ(kv->lease, view.fence->lease);
  EXPECT_EQ(kv->create_revision, view.fence->create_revision);
}

TEST_F(LeaderElectionTest, AFollowerSeesTheLeaderAndTakesOverWhenItResigns) {
  Candidate a(etcd, clock, "node-a");
  a.start();
  ASSERT_TRUE(eventually([&] { return a.leading(); }));
  Candidate b(etcd, clock, "node-b");
  b.start();
  ASSERT_TRUE(eventually([&] { return b.election().view().holder == "node-a"; }));
  round(2);
  round(2);
  EXPECT_FALSE(b.leading());
  EXPECT_EQ(key_value(), "node-a");

  a.stop();  // resigns: the key goes at once, not after the TTL
  EXPECT_NE(key_value(), "node-a");
  // b campaigns at its next round: a few rounds at most, whatever b was doing when a left.
  for (int i = 0; i < 5 && !b.leading(); ++i) {
    round(1);
    eventually([&] { return b.leading(); }, std::chrono::milliseconds{200});
  }
  ASSERT_TRUE(b.leading());
  EXPECT_EQ(key_value(), "node-b");
}

TEST_F(LeaderElectionTest, ALeaderThatCannotRenewForATtlStopsLeadingAndEndsItsTerm) {
  Candidate a(etcd, clock, "node-a");
  a.start();
  ASSERT_TRUE(eventually([&] { return a.leading(); }));
  std::stop_token term = a.election().term_token();
  etcd.fail_next(1000, ErrorKind::transport, InMemoryEtcd::Method::keep_alive);
  // Keep-alives fail from now on; within one TTL it still leads, after it it must not. Each step
  // waits until the candidate has made its keep-alive at the new time.
  auto step = [&](std::chrono::seconds d) {
    ASSERT_TRUE(clock.wait_for_sleepers(1));
    int before = etcd.calls(InMemoryEtcd::Method::keep_alive);
    clock.advance(d);
    ASSERT_TRUE(eventually([&] { return etcd.calls(InMemoryEtcd::Method::keep_alive) > before; }));
  };
  step(5s);
  step(5s);
  step(4s);  // 14 s after the last confirmed keep-alive
  EXPECT_TRUE(a.leading());
  // The retry after a failed keep-alive comes within the backoff's cap, shorter than a round.
  for (int i = 0; i < 6 && a.leading(); ++i) {
    ASSERT_TRUE(clock.wait_for_sleepers(1));
    clock.advance(1s);
    eventually([&] { return !a.leading(); }, std::chrono::milliseconds{200});
  }
  EXPECT_FALSE(a.leading());
  EXPECT_TRUE(term.stop_requested());
}

// etcd unreachable for the leader, its lease kept alive meanwhile (as an etcd restart does: it
// renews every lease for a whole TTL): the leader stops leading after a TTL; once etcd answers,
// it finds its key still on its lease and leads again at once, instead of waiting with a new lease
// until the old key expires with no leader at all.
class CutOffEtcd final : public etcd::EtcdApi {
 public:
  explicit CutOffEtcd(etcd::EtcdApi& real) : real_(real) {}
  std::atomic<bool> cut{false};
  Result<etcd::RangePage> range(const etcd::RangeRequest& r, Deadline d) override {
    if (cut) return refuse();
    return real_.range(r, d);
  }
  Result<etcd::TxnResult> txn(const etcd::TxnRequest& r, Deadline d) override {
    if (cut) return refuse();
    return real_.txn(r, d);
  }
  Result<etcd::Revision> put(std::string_view k, std::string_view v, etcd::LeaseId l,
                             Deadline d) override {
    if (cut) return refuse();
    return real_.put(k, v, l, d);
  }
  Result<etcd::Lease> grant_lease(std::chrono::seconds ttl, Deadline d) override {
    if (cut) return refuse();
    return real_.grant_lease(ttl, d);
  }
  Result<std::chrono::seconds> keep_alive(etcd::LeaseId l, Deadline d) override {
    if (cut) return refuse();
    return real_.keep_alive(l, d);
  }
  Status revoke_lease(etcd::LeaseId l, Deadline d) override {
    if (cut) return refuse();
    return real_.revoke_lease(l, d);
  }
  std::string describe() const override { return "cut-off etcd"; }

 private:
  static std::unexpected<Error> refuse() {
    return std::unexpected(Error{ErrorKind::transport, "connection refused"});
  }
  etcd::EtcdApi& real_;
};

TEST_F(LeaderElectionTest, ALeaderCutOffPastItsTtlTakesItsKeyBackWhileItsLeaseLives) {
  CutOffEtcd cut_off(etcd);
  LeaderElection election(cut_off, clock, settings_for("node-a"), nullptr);
  std::jthread thread([&](std::stop_token stop) { election.run(stop); });
  ASSERT_TRUE(eventually([&] { return election.view().leading; }));
  const LeaderFence fence = *election.view().fence;
  cut_off.cut = true;
  const Deadline now_deadline{MonoTime::max()};
  for (int i = 0; i < 6 && election.view().leading; ++i) {
    ASSERT_TRUE(clock.wait_for_sleepers(1));
    clock.advance(4s);
    // etcd renews the lease as a restarted etcd does; the labeler cannot reach it.
    ASSERT_TRUE(etcd.keep_alive(fence.lease, now_deadline));
    eventually([&] { return !election.view().leading; }, std::chrono::milliseconds{200});
  }
  ASSERT_FALSE(election.view().leading);
  cut_off.cut = false;
  for (int i = 0; i < 10 && !election.view().leading; ++i) {
    ASSERT_TRUE(clock.wait_for_sleepers(1));
    clock.advance(1s);
    ASSERT_TRUE(etcd.keep_alive(fence.lease, now_deadline));
    eventually([&] { return election.view().leading; }, std::chrono::milliseconds{200});
  }
  ASSERT_TRUE(election.view().leading) << "the key on its live lease was not taken back";
  EXPECT_EQ(election.view().fence->lease, fence.lease);
  EXPECT_EQ(election.view().fence->create_revision, fence.create_revision);
  EXPECT_EQ(election.view().terms, 2U);
}

TEST_F(LeaderElectionTest, ALeaderKeyDeletedBehindItsBackEndsTheTerm) {
  Candidate a(etcd, clock, "node-a");
  a.start();
  ASSERT_TRUE(eventually([&] { return a.leading(); }));
  std::stop_token term = a.election().term_token();
  etcd.remove(leader_key("default"));
  round(1);
  ASSERT_TRUE(eventually([&] { return term.stop_requested(); }));
  // The lease is still alive, so the next round campaigns again and leads a new term.
  round(1);
  ASSERT_TRUE(eventually([&] { return a.election().view().terms == 2; }));
  EXPECT_TRUE(a.leading());
}

TEST_F(LeaderElectionTest, ARefusedFenceEndsOnlyTheTermItBelongsTo) {
  Candidate a(etcd, clock, "node-a");
  a.start();
  ASSERT_TRUE(eventually([&] { return a.leading(); }));
  LeaderFence current = *a.election().view().fence;
  LeaderFence older = current;
  older.create_revision -= 1;
  a.election().fence_refused(older);
  EXPECT_TRUE(a.leading());
  a.election().fence_refused(current);
  EXPECT_FALSE(a.leading());
}

TEST_F(LeaderElectionTest, CandidatesStartedTogetherNeverBothLead) {
  Candidate a(etcd, clock, "node-a");
  Candidate b(etcd, clock, "node-b");
  Candidate c(etcd, clock, "node-c");
  a.start();
  b.start();
  c.start();
  for (int i = 0; i < 6; ++i) {
    round(3);
    int leaders = int{a.leading()} + int{b.leading()} + int{c.leading()};
    EXPECT_LE(leaders, 1) << "round " << i;
  }
  // However the rounds fell, within a few more one leads, and only one.
  for (int i = 0; i < 10 && !(a.leading() || b.leading() || c.leading()); ++i) {
    round(1);
    eventually([&] { return a.leading() || b.leading() || c.leading(); },
               std::chrono::milliseconds{200});
  }
  EXPECT_EQ(int{a.leading()} + int{b.leading()} + int{c.leading()}, 1);
}

}  // namespace
}  // namespace cn::labeler::cluster
