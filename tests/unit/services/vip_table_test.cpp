// The VIP table in Nomad Variables: two labelers (two clients of one fake Nomad) agree on every
// service's address, check-and-set settles races, releases wait out the grace period.
#include "labeler/services/vip_table.h"

#include <gtest/gtest.h>

#include "common/nomad/client/curl_nomad_client.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/manual_clock.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

class VipTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakes::FakeNomadConfig cfg;
    fake_ = std::make_unique<fakes::FakeNomad>(cfg);
    ASSERT_TRUE(fake_->start());
    node_a_ = client();
    node_b_ = client();
  }
  void TearDown() override { fake_->stop(); }

  std::unique_ptr<nomad::CurlNomadClient> client() {
    nomad::NomadClientConfig c;
    c.address = fake_->address();
    c.retry_seed = 1;
    auto made = nomad::CurlNomadClient::create(std::move(c));
    EXPECT_TRUE(made) << made.error().message;
    return std::move(*made);
  }
  VipTable table(nomad::CurlNomadClient& node, const VipRange& range) {
    return VipTable(node, node, range, clock_, options_);
  }
  static Deadline soon() { return Deadline{system_clock().now() + 10s}; }

  ManualClock clock_;
  VipTableOptions options_;
  std::unique_ptr<fakes::FakeNomad> fake_;
  std::unique_ptr<nomad::CurlNomadClient> node_a_;
  std::unique_ptr<nomad::CurlNomadClient> node_b_;
};

TEST_F(VipTableTest, TwoNodesGiveEveryServiceTheSameVip) {
  auto range = *VipRange::parse("10.96.0.0/24");
  auto a = table(*node_a_, range);
  auto b = table(*node_b_, range);
  std::map<std::string, IpPrefix> from_a;
  for (const char* name : {"api", "web", "db", "queue", "cache"}) {
    ASSERT_TRUE(a.refresh(soon()));
    auto vip = a.claim("prod", name, soon());
    ASSERT_TRUE(vip) << vip.error().message;
    from_a[name] = *vip;
  }
  // The other node, claiming in another order, finds each service's address already there.
  for (const char* name : {"cache", "db", "api", "queue", "web"}) {
    ASSERT_TRUE(b.refresh(soon()));
    auto vip = b.claim("prod", name, soon());
    ASSERT_TRUE(vip) << vip.error().message;
    EXPECT_EQ(*vip, from_a[name]) << name;
  }
  EXPECT_EQ(a.entries().size(), 5u);
  ASSERT_TRUE(a.refresh(soon()));
  EXPECT_EQ(a.assignments(), b.assignments());
}

TEST_F(VipTableTest, TwoNodesClaimingOneServiceAtOnceEndWithOneVip) {
  auto range = *VipRange::parse("10.96.0.0/24");
  auto a = table(*node_a_, range);
  auto b = table(*node_b_, range);
  // Both read the empty table, then both claim: b's check-and-set meets a's write, b re-reads
  // the bucket and finds the service's address there.
  ASSERT_TRUE(a.refresh(soon()));
  ASSERT_TRUE(b.refresh(soon()));
  auto from_a = a.claim("prod", "api", soon());
  auto from_b = b.claim("prod", "api", soon());
  ASSERT_TRUE(from_a && from_b);
  EXPECT_EQ(*from_a, *from_b);
  EXPECT_EQ(*from_a, range.choice("prod", "api", 0));
  auto vars = fake_->variables();
  ASSERT_EQ(vars.size(), 1u);
  EXPECT_EQ(vars[0].items.size(), 1u);
}

TEST_F(VipTableTest, ATakenFirstChoiceSendsTheServiceToItsSecond) {
  auto range = *VipRange::parse("10.96.0.0/24");
  const IpPrefix first = range.choice("prod", "api", 0);
  const std::uint64_t bucket = *offset_in(range.prefix(), first) % kVipBuckets;
  char path[64];
  std::snprintf(path, sizeof path, "cilium-nomad/services/vips/%02llu",
                static_cast<unsigned long long>(bucket));
  ASSERT_TRUE(fake_->put_variable("default", path, {{ip_text(first), "prod/squatter"}}));
  // b has not seen the squatter: its write fails on the index, it re-reads and moves on.
  auto b = table(*node_b_, range);
  auto second = b.claim("prod", "api", soon());
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*second, range.choice("prod", "api", 1));
  EXPECT_EQ(b.entries().at(ip_text(first)).service, "prod/squatter");
}

TEST_F(VipTableTest, AVipSurvivesARestart) {
  auto range = *VipRange::parse("fd00:96::/112");
  IpPrefix before;
  {
    auto a = table(*node_a_, range);
    ASSERT_TRUE(a.refresh(soon()));
    before = *a.claim("prod", "api", soon());
  }
  auto again = table(*node_a_, range);
  ASSERT_TRUE(again.refresh(soon()));
  EXPECT_EQ(again.assignments().at("prod/api"), before);
  EXPECT_EQ(*again.claim("prod", "api", soon()), before);
}

TEST_F(VipTableTest, AReleasedVipWaitsOutTheGraceAndItsServiceTakesItBack) {
  options_.release_grace = 3600s;
  auto range = *VipRange::parse("10.96.0.0/24");
  auto a = table(*node_a_, range);
  ASSERT_TRUE(a.refresh(soon()));
  const IpPrefix api = *a.claim("prod", "api", soon());
  const IpPrefix web = *a.claim("prod", "web", soon());

  // api leaves: its address is marked, not freed.
  ASSERT_TRUE(a.release_absent({"prod/web"}, soon()));
  auto entries = a.entries();
  ASSERT_TRUE(entries.at(ip_text(api)).released_at);
  EXPECT_FALSE(entries.at(ip_text(web)).released_at);
  EXPECT_FALSE(a.assignments().contains("prod/api"));

  // Within the grace period it comes back and gets the same address.
  clock_.advance(600s);
  ASSERT_TRUE(a.refresh(soon()));
  EXPECT_EQ(*a.claim("prod", "api", soon()), api);
  EXPECT_FALSE(a.entries().at(ip_text(api)).released_at);

  // Gone for longer than the grace: the entry goes, and the bucket with it if it empties.
  ASSERT_TRUE(a.release_absent({"prod/web"}, soon()));
  clock_.advance(3599s);
  ASSERT_TRUE(a.release_absent({"prod/web"}, soon()));
  EXPECT_TRUE(a.entries().contains(ip_text(api)));
  clock_.advance(1s);
  ASSERT_TRUE(a.release_absent({"prod/web"}, soon()));
  EXPECT_FALSE(a.entries().contains(ip_text(api)));
  auto reread = table(*node_b_, range);
  ASSERT_TRUE(reread.refresh(soon()));
  EXPECT_EQ(reread.entries().size(), 1u);
}

TEST_F(VipTableTest, OnlyRemovalsThatLandedAreHandedOutOnce) {
  options_.release_grace = 3600s;
  auto range = *VipRange::parse("10.96.0.0/24");
  auto a = table(*node_a_, range);
  ASSERT_TRUE(a.refresh(soon()));
  const IpPrefix api = *a.claim("prod", "api", soon());
  ASSERT_TRUE(a.claim("prod", "web", soon()));
  // Released is not removed: the address still belongs to api.
  ASSERT_TRUE(a.release_absent({"prod/web"}, soon()));
  EXPECT_TRUE(a.take_removed().empty());

  // Someone writes api's bucket first: the removal does not land and is not handed out.
  clock_.advance(3600s);
  const std::uint64_t bucket = *offset_in(range.prefix(), api) % kVipBuckets;
  char path[64];
  std::snprintf(path, sizeof path, "cilium-nomad/services/vips/%02llu",
                static_cast<unsigned long long>(bucket));
  auto there = fake_->variable("default", path);
  ASSERT_TRUE(there);
  ASSERT_TRUE(fake_->put_variable("default", path, there->items));
  ASSERT_TRUE(a.release_absent({"prod/web"}, soon()));
  EXPECT_TRUE(a.take_removed().empty());
  EXPECT_TRUE(a.entries().contains(ip_text(api)));

  ASSERT_TRUE(a.release_absent({"prod/web"}, soon()));
  auto removed = a.take_removed();
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].service, "prod/api");
  EXPECT_EQ(removed[0].vip, api);
  EXPECT_TRUE(a.take_removed().empty());
}

TEST_F(VipTableTest, AFullRangeIsReportedForTheServiceThatFindsNoAddress) {
  auto range = *VipRange::parse("10.96.0.0/30");  // two usable addresses
  auto a = table(*node_a_, range);
  ASSERT_TRUE(a.refresh(soon()));
  ASSERT_TRUE(a.claim("prod", "one", soon()));
  ASSERT_TRUE(a.claim("prod", "two", soon()));
  auto third = a.claim("prod", "three", soon());
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().kind, ErrorKind::invalid);
  EXPECT_EQ(third.error().message,
            "service VIP range 10.96.0.0/30 has no free address for prod/three");
}

TEST_F(VipTableTest, EntriesItCannotReadAreLeftAlone) {
  ASSERT_TRUE(fake_->put_variable("default", "cilium-nomad/services/vips/01",
                                  {{"10.96.0.1", "not an entry"}, {"10.96.0.65", "prod/x"}}));
  auto range = *VipRange::parse("10.96.0.0/24");
  auto a = table(*node_a_, range);
  ASSERT_TRUE(a.refresh(soon()));
  ASSERT_TRUE(a.release_absent({}, soon()));
  auto kept = fake_->variable("default", "cilium-nomad/services/vips/01");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->items.at("10.96.0.1"), "not an entry");
  EXPECT_EQ(kept->items.at("10.96.0.65"), "prod/x released 1800000000");
}

TEST_F(VipTableTest, AVipOutsideANewRangeIsReplacedByOneInside) {
  {
    auto old_range = *VipRange::parse("10.96.0.0/24");
    auto a = table(*node_a_, old_range);
    ASSERT_TRUE(a.refresh(soon()));
    ASSERT_TRUE(a.claim("prod", "api", soon()));
  }
  auto new_range = *VipRange::parse("10.97.0.0/24");
  auto b = table(*node_b_, new_range);
  ASSERT_TRUE(b.refresh(soon()));
  EXPECT_FALSE(b.assignments().contains("prod/api"));
  auto vip = b.claim("prod", "api", soon());
  ASSERT_TRUE(vip) << vip.error().message;
  EXPECT_TRUE(new_range.contains(*vip));
  EXPECT_EQ(b.assignments().at("prod/api"), *vip);
}

TEST(VipEntry, TextRoundTripsAndRefusesWhatIsNotAnEntry) {
  auto held = parse_vip_entry("prod/api");
  ASSERT_TRUE(held);
  EXPECT_EQ(held->service, "prod/api");
  EXPECT_FALSE(held->released_at);
  auto released = parse_vip_entry("prod/api released 1800000000");
  ASSERT_TRUE(released);
  EXPECT_EQ(released->released_at, 1800000000);
  EXPECT_EQ(format_vip_entry(*released), "prod/api released 1800000000");
  for (const char* bad : {"", "api", "/api", "prod/", "prod/api released", "prod/api released x",
                          "prod/api released -1", "prod/a b"}) {
    EXPECT_FALSE(parse_vip_entry(bad)) << bad;
  }
}

}  // namespace
}  // namespace cn::labeler
