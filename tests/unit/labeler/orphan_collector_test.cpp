#include <gtest/gtest.h>

#include "labeler/watch/orphan_collector.h"
#include "tests/support/manual_clock.h"
#include "tests/support/netns.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::CiliumCall;
using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::make_alloc;
using cn::testing::NomadCall;
using cn::testing::random_alloc_id;

class OrphanCollectorTest : public ::testing::Test {
 protected:
  OrphanCollector collector(bool enabled) {
    OrphanCollector::Options o;
    o.delete_orphans = enabled;
    o.grace = std::chrono::minutes{10};
    return OrphanCollector(nomad_, cilium_, clock_, metrics_, calls_, o, nullptr);
  }
  ReconcileReport report_with(const std::string& alloc, long long ep) {
    ReconcileReport r;
    r.orphans = 1;
    r.orphan_endpoints = {{alloc, ep}};
    return r;
  }

  ManualClock clock_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
};

TEST_F(OrphanCollectorTest, DeletesOnlyAfterTheGracePeriodAndOnlyWhenNomadConfirms) {
  std::string gone = random_alloc_id();
  auto ep = cilium_.add_init_endpoint(gone, "10.0.0.1");
  auto c = collector(true);
  EXPECT_TRUE(c.collect(report_with(gone, ep)).empty());
  clock_.advance(std::chrono::minutes{9});
  EXPECT_TRUE(c.collect(report_with(gone, ep)).empty());
  clock_.advance(std::chrono::minutes{1});
  EXPECT_EQ(c.collect(report_with(gone, ep)), std::vector<long long>{ep});
  EXPECT_EQ(cilium_.calls(CiliumCall::del), 1);
  EXPECT_EQ(metrics_.endpoints_deleted().Value(), 1);
  // Its two proving GETs (404s, a grace period apart) and its DELETE count like every other
  // outside call.
  EXPECT_EQ(metrics_.api_calls(Peer::nomad, ErrorKind::not_found).Value(), 2);
  EXPECT_EQ(metrics_.api_calls(Peer::cilium, std::nullopt).Value(), 1);
}

TEST_F(OrphanCollectorTest, LiveAllocationMissingFromTheNodeListIsNeverDeleted) {
  std::string hidden = random_alloc_id();
  nomad_.put(make_alloc(hidden));  // e.g. in a namespace the node list did not show
  auto ep = cilium_.add_init_endpoint(hidden, "10.0.0.2");
  auto c = collector(true);
  c.collect(report_with(hidden, ep));
  clock_.advance(std::chrono::hours{1});
  EXPECT_TRUE(c.collect(report_with(hidden, ep)).empty());
  EXPECT_EQ(cilium_.calls(CiliumCall::del), 0);
}

TEST_F(OrphanCollectorTest, NomadErrorsKeepTheEndpoint) {
  std::string gone = random_alloc_id();
  auto ep = cilium_.add_init_endpoint(gone, "10.0.0.3");
  auto c = collector(true);
  c.collect(report_with(gone, ep));
  clock_.advance(std::chrono::hours{1});
  nomad_.fail_next(1, 500);
  EXPECT_TRUE(c.collect(report_with(gone, ep)).empty());
  EXPECT_EQ(cilium_.calls(CiliumCall::del), 0);
}

TEST_F(OrphanCollectorTest, DisabledOnlyReports) {
  std::string gone = random_alloc_id();
  auto ep = cilium_.add_init_endpoint(gone, "10.0.0.4");
  auto c = collector(false);
  c.collect(report_with(gone, ep));
  clock_.advance(std::chrono::hours{1});
  EXPECT_TRUE(c.collect(report_with(gone, ep)).empty());
  EXPECT_EQ(cilium_.calls(CiliumCall::del), 0);
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 0);
}

TEST_F(OrphanCollectorTest, AnEndpointThatStopsBeingOrphanedRestartsItsGrace) {
  std::string a = random_alloc_id();
  auto ep = cilium_.add_init_endpoint(a, "10.0.0.5");
  auto c = collector(true);
  c.collect(report_with(a, ep));
  clock_.advance(std::chrono::minutes{9});
  c.collect(ReconcileReport{});  // seen healthy once
  clock_.advance(std::chrono::minutes{5});
  EXPECT_TRUE(c.collect(report_with(a, ep)).empty()) << "grace counts from the new sighting";
}

TEST_F(OrphanCollectorTest, A404ThatIsNotNomadsOwnIsNoProof) {
  std::string a = random_alloc_id();
  auto ep = cilium_.add_init_endpoint(a, "10.0.0.6");
  nomad_.put(make_alloc(a));
  auto c = collector(true);
  for (int i = 0; i < 4; ++i) {
    nomad_.fail_next_with(1, 404, "<html><body>404 Not Found</body></html>");  // a proxy
    EXPECT_TRUE(c.collect(report_with(a, ep)).empty());
    clock_.advance(std::chrono::minutes{10});
  }
  EXPECT_EQ(cilium_.calls(CiliumCall::del), 0);
}

TEST_F(OrphanCollectorTest, AProofThatNomadContradictsStartsAgain) {
  std::string a = random_alloc_id();
  auto ep = cilium_.add_init_endpoint(a, "10.0.0.7");
  auto c = collector(true);
  c.collect(report_with(a, ep));  // first proof: Nomad's 404
  clock_.advance(std::chrono::minutes{10});
  nomad_.put(make_alloc(a));  // Nomad knows it after all (restored from a snapshot, say)
  EXPECT_TRUE(c.collect(report_with(a, ep)).empty());
  nomad_.remove(a);
  clock_.advance(std::chrono::minutes{1});
  EXPECT_TRUE(c.collect(report_with(a, ep)).empty()) << "a new first proof, not a second";
  clock_.advance(std::chrono::minutes{9});
  EXPECT_TRUE(c.collect(report_with(a, ep)).empty());
  clock_.advance(std::chrono::minutes{1});
  EXPECT_EQ(c.collect(report_with(a, ep)), std::vector<long long>{ep});
}

}  // namespace
}  // namespace cn::labeler
