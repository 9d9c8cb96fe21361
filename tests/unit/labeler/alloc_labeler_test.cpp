#include <gtest/gtest.h>

#include <future>

#include "labeler/labeling/alloc_labeler.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::CiliumCall;
using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::kWebLabels;
using cn::testing::make_alloc;
using cn::testing::NomadCall;

using cn::testing::kAllocId;

class AllocLabelerTest : public ::testing::Test {
 protected:
  AllocLabelerTest()
      : state_({dir_.file("state.json")}, system_clock(), nullptr),
        labeler_(LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr},
                 LabelSettings{}) {}

  // What the plugin's ADD writes: workers only update entries, never create them.
  void plugin_added(const std::string& id = kAllocId) {
    ASSERT_TRUE(cn::testing::record_plugin_add(state_, id));
  }

  WorkItem notified(const std::string& id = kAllocId) {
    WorkItem w;
    w.alloc_id = id;
    w.ips = {"10.200.3.17"};
    return w;
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
  state::StateStore state_;
  AllocLabeler labeler_;
};

TEST_F(AllocLabelerTest, InitEndpointGetsItsLabelsInOneWriteAndResolves) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.gets_until_resolved = 2;  // identity resolution is asynchronous
  plugin_added();
  auto out = labeler_.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_TRUE(out.wrote);
  EXPECT_EQ(out.labels, kWebLabels);
  EXPECT_GE(out.identity, 256);
  EXPECT_EQ(out.endpoint_id, ep);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 1);
  EXPECT_EQ(cilium_.get(ep).identity_labels, kWebLabels);
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 1);
  EXPECT_EQ(nomad_.calls(NomadCall::job), 0) << "the allocation embeds its Job";
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  ASSERT_TRUE(doc->allocations.at(kAllocId).labeled);
  EXPECT_EQ(doc->allocations.at(kAllocId).labeled->identity, out.identity);
}

TEST_F(AllocLabelerTest, CorrectEndpointGetsNoWrite) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_identity_labels(ep, kWebLabels);
  auto out = labeler_.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled);
  EXPECT_FALSE(out.wrote);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint) + cilium_.calls(CiliumCall::patch_labels), 0);
}

TEST_F(AllocLabelerTest, MetaAllowListAddsLabels) {
  LabelSettings settings;
  settings.policy.meta_keys = {"team", "tier"};
  AllocLabeler with_meta(
      LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr}, settings);
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto out = with_meta.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled);
  EXPECT_EQ(
      cilium_.get(ep).identity_labels,
      (std::vector<std::string>{"k8s:io.cilium.k8s.policy.cluster=default",
                                "k8s:io.kubernetes.pod.namespace=default", "nomad:nomad.group=app",
                                "nomad:nomad.job=web", "nomad:nomad.namespace=default",
                                "nomad:team=payments", "nomad:tier=frontend"}));
}

TEST_F(AllocLabelerTest, NomadDownLabelsFromTrustedCniArgsAndAsksForARecheck) {
  // With meta labels CNI_ARGS are not used before Nomad: only because Nomad failed.
  LabelSettings settings;
  settings.policy.meta_keys = {"team"};
  AllocLabeler with_meta(
      LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr}, settings);
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  nomad_.fail_next(100, 0);
  auto w = notified();
  w.hint = {"global", "default", "web", "app", kAllocId};
  auto out = with_meta.label(w);
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_TRUE(out.degraded);
  EXPECT_TRUE(out.will_retry());
  EXPECT_EQ(cilium_.get(ep).identity_labels, kWebLabels);
}

TEST_F(AllocLabelerTest, NomadDownWithoutHintIsPendingAndRetried) {
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  nomad_.fail_next(1, 500);
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_EQ(out.retry, RetryRule::now);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 0);
}

TEST_F(AllocLabelerTest, RecheckAfterDegradedWritesOnlyWhenTheSetDiffers) {
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  nomad_.put(make_alloc(kAllocId));
  cilium_.set_identity_labels(ep, kWebLabels);  // what the degraded write produced
  auto out = labeler_.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled);
  EXPECT_FALSE(out.wrote);
}

TEST_F(AllocLabelerTest, UnknownAllocationFailsWithoutWriting) {
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kFailed);
  EXPECT_EQ(out.retry, RetryRule::never);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 0);
}

TEST_F(AllocLabelerTest, TerminalAllocationIsNotLabeled) {
  nomad_.put(make_alloc(kAllocId, "web", "app", "complete"));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kFailed);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 0);
}

TEST_F(AllocLabelerTest, OldAgentWithoutAttachmentPrefixIsFoundByContainerIdAndRemembered) {
  cilium_.knows_attachment_prefix = false;
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  ASSERT_EQ(labeler_.label(notified()).status, notify::ReplyStatus::kLabeled);
  int gets_first = cilium_.calls(CiliumCall::get);

  const std::string second = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
  nomad_.put(make_alloc(second));
  cilium_.add_init_endpoint(second, "10.200.3.18");
  ASSERT_EQ(labeler_.label(notified(second)).status, notify::ReplyStatus::kLabeled);
  EXPECT_LT(cilium_.calls(CiliumCall::get) - gets_first, gets_first)
      << "no failed attachment lookup the second time";
}

TEST_F(AllocLabelerTest, FallsBackToTheLabelsApiWhenEndpointPatchIsGone) {
  cilium_.endpoint_patch_supported = false;
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto out = labeler_.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_labels), 2)
      << "the second, identical PATCH drops reserved:init";
  EXPECT_EQ(cilium_.get(ep).identity_labels, kWebLabels);
}

TEST_F(AllocLabelerTest, RateLimitedWriteIsRetriedLater) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.fail_next(CiliumCall::patch_endpoint, 1, 429);
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_EQ(out.retry, RetryRule::now);
  auto again = labeler_.label(notified());
  EXPECT_EQ(again.status, notify::ReplyStatus::kLabeled);
}

TEST_F(AllocLabelerTest, LabelWriteHasItsOwnBudgetAboveTheAgentsQueue) {
  // The agent holds a PATCH in its limiter up to 15 s before serving it: a write bounded by one
  // call's 5 s, or by what is left of the item's 15 s, would be abandoned and sent again later.
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto before = system_clock().now();
  ASSERT_EQ(labeler_.label(notified()).status, notify::ReplyStatus::kLabeled);
  EXPECT_GE(cilium_.last_write_deadline() - before, std::chrono::seconds{29});
  EXPECT_GT(LabelSettings{}.write_budget, std::chrono::seconds{15} + LabelSettings{}.call_timeout);
}

TEST_F(AllocLabelerTest, IpOfAnotherAllocationIsNotMistakenForOurs) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint("0a1b2c3d-4e5f-6789-abcd-ef0123456789", "10.200.3.17");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 0);
}

TEST_F(AllocLabelerTest, DeletedEntryIsNeverRecreatedByAWorker) {
  // The plugin's DEL ran while this worker labeled: recording must not bring the entry back.
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  plugin_added();
  bool removed = false;
  ASSERT_TRUE(state_.remove_entry(kAllocId, removed));
  ASSERT_TRUE(removed);
  ASSERT_EQ(labeler_.label(notified()).status, notify::ReplyStatus::kLabeled);
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  EXPECT_FALSE(doc->allocations.contains(kAllocId));
  EXPECT_TRUE(doc->deleted.contains(kAllocId));
}

TEST_F(AllocLabelerTest, NeverRecordedAllocationIsNotCreatedByAWorker) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  ASSERT_EQ(labeler_.label(notified()).status, notify::ReplyStatus::kLabeled);
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  EXPECT_TRUE(doc->allocations.empty());
}

TEST_F(AllocLabelerTest, StopDesiredAllocationIsTerminalAndNeitherLabeledNorRecorded) {
  auto alloc = make_alloc(kAllocId);
  alloc.desired_status = "stop";  // still running out its kill timeout: terminal all the same
  nomad_.put(alloc);
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  plugin_added();
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kFailed);
  EXPECT_EQ(out.retry, RetryRule::never);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 0);
  EXPECT_FALSE(state_.load()->allocations.at(kAllocId).labeled);
}

TEST_F(AllocLabelerTest, OutOfRangeEndpointIdIsRefusedAndCountedNeverNarrowed) {
  // 65537 narrowed to 16 bits is endpoint 1: the write would land on someone else.
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.renumber(ep, 65537);
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 0);
  EXPECT_EQ(metrics_.errors(ErrorKindLabel::endpoint_id).Value(), 1);
}

TEST_F(AllocLabelerTest, JobMissingFromNomadsAnswerIsRetriedOnABackoffNotLeftToTheResync) {
  auto alloc = make_alloc(kAllocId);
  alloc.job.reset();  // "Job": null
  nomad_.put(alloc);
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.retry, RetryRule::later);
}

TEST_F(AllocLabelerTest, ClientErrorFromTheAgentIsRetriedLater) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.fail_next(CiliumCall::patch_endpoint, 1, 422);
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.retry, RetryRule::later);
}

TEST_F(AllocLabelerTest, ForbiddenByNomadWaitsForTheResyncAndNamesTheAclPolicy) {
  nomad_.fail_next(1, 403);
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.retry, RetryRule::at_resync);
  EXPECT_NE(out.remedy.find("conf-examples/acl-policy.hcl"), std::string::npos) << out.remedy;
  EXPECT_NE(out.remedy.find("NOMAD_TOKEN"), std::string::npos) << out.remedy;
}

TEST_F(AllocLabelerTest, ForbiddenByTheAgentNamesItsApiAccessFlag) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.fail_next(CiliumCall::patch_endpoint, 1, 403);
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.retry, RetryRule::at_resync);
  EXPECT_NE(out.remedy.find("--enable-cilium-api-server-access"), std::string::npos) << out.remedy;
}

TEST_F(AllocLabelerTest, UnknownAllocationAnswerNamesTheAclPolicy) {
  nomad_.fail_next(1, 500);  // the in-memory Nomad's 500 text is "No cluster leader"
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  EXPECT_TRUE(labeler_.label(notified()).remedy.empty());
  nomad_.fail_next_with(1, 500, "rpc error: Unknown allocation \"" + std::string(kAllocId) + "\"");
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.retry, RetryRule::now);
  EXPECT_NE(out.remedy.find("conf-examples/acl-policy.hcl"), std::string::npos) << out.remedy;
}

TEST_F(AllocLabelerTest, ErrorMessagesCarryOnePrefix) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.fail_next(CiliumCall::get, 1, 500);
  auto out = labeler_.label(notified());
  EXPECT_EQ(out.message.find("Cilium: "), 0U) << out.message;
  EXPECT_EQ(out.message.find("ilium: ", 2), std::string::npos) << out.message;
}

TEST_F(AllocLabelerTest, WritesBeyondTheSlotsHandTheItemBackInsteadOfHoldingTheWorker) {
  LabelSettings settings;
  settings.max_concurrent_writes = 1;
  AllocLabeler one_slot(
      LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr}, settings);
  const std::string second = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
  nomad_.put(make_alloc(kAllocId));
  nomad_.put(make_alloc(second));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.add_init_endpoint(second, "10.200.3.18");
  cilium_.hold_writes(true);  // the agent's limiter holds the first PATCH
  auto first = std::async(std::launch::async, [&] { return one_slot.label(notified()); });
  ASSERT_TRUE(cilium_.wait_for_held_writes(1));
  auto w = notified(second);
  w.ips = {"10.200.3.18"};
  auto out = one_slot.label(w);
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_EQ(out.retry, RetryRule::later);
  EXPECT_NE(out.message.find("write slot"), std::string::npos) << out.message;
  cilium_.hold_writes(false);
  EXPECT_EQ(first.get().status, notify::ReplyStatus::kLabeled);
}

TEST_F(AllocLabelerTest, StopAbandonsAWriteHeldInTheAgentsLimiter) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.hold_writes(true);
  std::stop_source stop;
  auto pending =
      std::async(std::launch::async, [&] { return labeler_.label(notified(), stop.get_token()); });
  ASSERT_TRUE(cilium_.wait_for_held_writes(1));
  stop.request_stop();
  auto out = pending.get();  // returns at once: the held write sees the stop
  EXPECT_NE(out.status, notify::ReplyStatus::kLabeled);
  EXPECT_EQ(out.retry, RetryRule::never);
  cilium_.hold_writes(false);
}

}  // namespace
}  // namespace cn::labeler
