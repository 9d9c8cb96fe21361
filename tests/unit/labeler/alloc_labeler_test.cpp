#include <gtest/gtest.h>

#include "labeler/alloc_labeler.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::make_alloc;

constexpr const char* kAlloc = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
const std::vector<std::string> kWebLabels = {"nomad:nomad.group=app", "nomad:nomad.job=web",
                                             "nomad:nomad.namespace=default"};

class AllocLabelerTest : public ::testing::Test {
 protected:
  AllocLabelerTest()
      : state_({dir_.file("state.json")}, system_clock(), nullptr),
        labeler_(nomad_, cilium_, state_, system_clock(), metrics_, LabelSettings{}, nullptr) {}

  WorkItem notified(const std::string& id = kAlloc) {
    WorkItem w;
    w.alloc_id = id;
    w.ips = {"10.200.3.17"};
    return w;
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  Metrics metrics_;
  state::StateStore state_;
  AllocLabeler labeler_;
};

TEST_F(AllocLabelerTest, InitEndpointGetsItsLabelsInOneWriteAndResolves) {
  nomad_.put(make_alloc(kAlloc));
  auto ep = cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  cilium_.gets_until_resolved = 2;  // identity resolution is asynchronous
  auto out = labeler_.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_TRUE(out.wrote);
  EXPECT_EQ(out.labels, kWebLabels);
  EXPECT_GE(out.identity, 256);
  EXPECT_EQ(out.endpoint_id, ep);
  EXPECT_EQ(cilium_.calls("patch_endpoint"), 1);
  EXPECT_EQ(cilium_.get(ep).identity_labels, kWebLabels);
  EXPECT_EQ(nomad_.calls("allocation"), 1);
  EXPECT_EQ(nomad_.calls("job"), 0) << "the allocation embeds its Job";
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  ASSERT_TRUE(doc->allocations.at(kAlloc).labeled);
  EXPECT_EQ(doc->allocations.at(kAlloc).labeled->identity, out.identity);
}

TEST_F(AllocLabelerTest, CorrectEndpointGetsNoWrite) {
  nomad_.put(make_alloc(kAlloc));
  auto ep = cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  auto out = labeler_.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled);
  EXPECT_FALSE(out.wrote);
  EXPECT_EQ(cilium_.calls("patch_endpoint") + cilium_.calls("patch_labels"), 0);
}

TEST_F(AllocLabelerTest, MetaAllowListAddsLabels) {
  LabelSettings settings;
  settings.policy.meta_keys = {"team", "tier"};
  AllocLabeler with_meta(nomad_, cilium_, state_, system_clock(), metrics_, settings, nullptr);
  nomad_.put(make_alloc(kAlloc));
  auto ep = cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  auto out = with_meta.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled);
  EXPECT_EQ(cilium_.get(ep).identity_labels,
            (std::vector<std::string>{"nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default",
                                      "nomad:team=payments", "nomad:tier=frontend"}));
}

TEST_F(AllocLabelerTest, NomadDownLabelsFromCniArgsAndAsksForARecheck) {
  auto ep = cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  nomad_.fail_next(100, 0);
  auto w = notified();
  w.hint = {"global", "default", "batch/periodic-1700000000", "app", kAlloc};
  auto out = labeler_.label(w);
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_TRUE(out.degraded);
  EXPECT_TRUE(out.retry);
  EXPECT_EQ(cilium_.get(ep).identity_labels,
            (std::vector<std::string>{"nomad:nomad.group=app", "nomad:nomad.job=batch",
                                      "nomad:nomad.namespace=default"}));
}

TEST_F(AllocLabelerTest, NomadDownWithoutHintIsPendingAndRetried) {
  cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  nomad_.fail_next(1, 500);
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_TRUE(out.retry);
  EXPECT_EQ(cilium_.calls("patch_endpoint"), 0);
}

TEST_F(AllocLabelerTest, RecheckAfterDegradedWritesOnlyWhenTheSetDiffers) {
  auto ep = cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  nomad_.put(make_alloc(kAlloc));
  cilium_.set_identity_labels(ep, kWebLabels);  // what the degraded write produced
  auto out = labeler_.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled);
  EXPECT_FALSE(out.wrote);
}

TEST_F(AllocLabelerTest, UnknownAllocationFailsWithoutWriting) {
  cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kFailed);
  EXPECT_FALSE(out.retry);
  EXPECT_EQ(cilium_.calls("patch_endpoint"), 0);
}

TEST_F(AllocLabelerTest, TerminalAllocationIsNotLabeled) {
  nomad_.put(make_alloc(kAlloc, "web", "app", "complete"));
  cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kFailed);
  EXPECT_EQ(cilium_.calls("patch_endpoint"), 0);
}

TEST_F(AllocLabelerTest, OldAgentWithoutAttachmentPrefixIsFoundByContainerIdAndRemembered) {
  cilium_.knows_attachment_prefix = false;
  nomad_.put(make_alloc(kAlloc));
  cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  ASSERT_EQ(labeler_.label(notified()).status, notify::ReplyStatus::kLabeled);
  int gets_first = cilium_.calls("get");

  const std::string second = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
  nomad_.put(make_alloc(second));
  cilium_.add_init_endpoint(second, "10.200.3.18");
  ASSERT_EQ(labeler_.label(notified(second)).status, notify::ReplyStatus::kLabeled);
  EXPECT_LT(cilium_.calls("get") - gets_first, gets_first) << "no failed attachment lookup the second time";
}

TEST_F(AllocLabelerTest, FallsBackToTheLabelsApiWhenEndpointPatchIsGone) {
  cilium_.endpoint_patch_supported = false;
  nomad_.put(make_alloc(kAlloc));
  auto ep = cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  auto out = labeler_.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_EQ(cilium_.calls("patch_labels"), 2) << "the second, identical PATCH drops reserved:init";
  EXPECT_EQ(cilium_.get(ep).identity_labels, kWebLabels);
}

TEST_F(AllocLabelerTest, RateLimitedWriteIsRetriedLater) {
  nomad_.put(make_alloc(kAlloc));
  cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  cilium_.fail_next("patch_endpoint", 1, 429);
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_TRUE(out.retry);
  auto again = labeler_.label(notified());
  EXPECT_EQ(again.status, notify::ReplyStatus::kLabeled);
}

TEST_F(AllocLabelerTest, LabelWriteMayWaitOutTheAgentsRateLimiter) {
  // The agent holds a PATCH in its limiter up to 15 s before serving it: a write bounded by one
  // call's 5 s would be abandoned (and sent again later) whenever a burst queues at 0.5/s.
  nomad_.put(make_alloc(kAlloc));
  cilium_.add_init_endpoint(kAlloc, "10.200.3.17");
  auto before = system_clock().now();
  ASSERT_EQ(labeler_.label(notified()).status, notify::ReplyStatus::kLabeled);
  EXPECT_GE(cilium_.last_write_deadline() - before, LabelSettings{}.item_budget - std::chrono::seconds{1});
}

TEST_F(AllocLabelerTest, IpOfAnotherAllocationIsNotMistakenForOurs) {
  nomad_.put(make_alloc(kAlloc));
  cilium_.add_init_endpoint("0a1b2c3d-4e5f-6789-abcd-ef0123456789", "10.200.3.17");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_EQ(cilium_.calls("patch_endpoint"), 0);
}

}  // namespace
}  // namespace cn::labeler
