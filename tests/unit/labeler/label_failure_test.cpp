// Every way labeling can fail leaves its reason from the one fixed set
// (labeler/labeling/label_failure.h) in two places: the allocation's state entry (last_attempt,
// what `state` and `explain` show) and cilium_nomad_label_failures_total{reason} (what an alert
// counts). A labeling that succeeds clears the entry's reason.
#include <gtest/gtest.h>

#include <functional>

#include "labeler/labeling/alloc_labeler.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::CiliumCall;
using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::kWebLabels;
using cn::testing::make_alloc;

using cn::testing::kAllocId;

class LabelFailureTest : public ::testing::Test {
 protected:
  LabelFailureTest() : state_({dir_.file("state.json")}, clock_, nullptr) {}

  AllocLabeler labeler(LabelSettings settings = {}) {
    return AllocLabeler(LabelPathDeps{nomad_, cilium_, state_, clock_, metrics_, calls_, nullptr},
                        std::move(settings));
  }

  // What the plugin's ADD writes: workers only update entries, never create them.
  void plugin_added() { ASSERT_TRUE(cn::testing::record_plugin_add(state_, kAllocId)); }

  static WorkItem notified() {
    WorkItem w;
    w.alloc_id = kAllocId;
    w.ips = {"10.200.3.17"};
    return w;
  }

  state::StateEntry entry() {
    auto doc = state_.load();
    EXPECT_TRUE(doc) << doc.error().message;
    return doc ? doc->allocations.at(kAllocId) : state::StateEntry{};
  }

  double failures(LabelFailure reason) { return metrics_.label_failures(reason).Value(); }

  // Only the failures a test expects have moved.
  void expect_only(LabelFailure reason, double count) {
    for (LabelFailure other : kAllLabelFailures) {
      EXPECT_EQ(failures(other), other == reason ? count : 0.0) << to_string(other);
    }
  }

  cn::testing::TempDir dir_;
  ManualClock clock_;  // nothing below sleeps except where a test says so
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
  state::StateStore state_;
};

TEST_F(LabelFailureTest, LabelsFilterTrapIsRecordedCountedKeptAndClearedByTheFix) {
  nomad_.put(make_alloc(kAllocId));
  const long long ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.set_filtered_labels(ep, kWebLabels);  // the agent's --labels filter drops ours
  plugin_added();
  auto worker = labeler();

  auto out = worker.label(notified());
  EXPECT_EQ(out.failure, LabelFailure::labels_filtered);
  auto first = entry().last_attempt;
  ASSERT_TRUE(first);
  EXPECT_EQ(first->reason, "labels_filtered");
  EXPECT_NE(first->detail.find("--labels"), std::string::npos) << first->detail;
  EXPECT_EQ(first->at, rfc3339(clock_.wall_now()));
  EXPECT_FALSE(entry().labeled);
  expect_only(LabelFailure::labels_filtered, 1);

  // The same failure later: counted again, the entry keeps when it began.
  clock_.advance(std::chrono::minutes{5});
  EXPECT_EQ(worker.label(notified()).failure, LabelFailure::labels_filtered);
  EXPECT_EQ(entry().last_attempt, first);
  expect_only(LabelFailure::labels_filtered, 2);

  // The operator fixes the agent: the next attempt labels and the reason is gone.
  cilium_.set_filtered_labels(ep, {});
  out = worker.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_FALSE(out.failure);
  auto fixed = entry();
  EXPECT_FALSE(fixed.last_attempt);
  ASSERT_TRUE(fixed.labeled);
  EXPECT_NE(fixed.labeled->identity, 0);
  expect_only(LabelFailure::labels_filtered, 2);
}

TEST_F(LabelFailureTest, AlreadyLabeledEndpointStillClearsAnOldReason) {
  nomad_.put(make_alloc(kAllocId));
  const long long ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  plugin_added();
  auto worker = labeler();
  ASSERT_EQ(worker.label(notified()).status, notify::ReplyStatus::kLabeled);
  // A failure recorded afterwards (a re-check while Nomad was away), then a re-check that finds
  // everything in place and writes nothing: the reason must still go.
  nomad_.fail_next(1, 500);
  EXPECT_EQ(worker.label(notified()).failure, LabelFailure::nomad_unreachable);
  ASSERT_TRUE(entry().last_attempt);
  auto out = worker.label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_FALSE(out.wrote);
  EXPECT_FALSE(entry().last_attempt);
  EXPECT_EQ(cilium_.get(ep).identity_labels, kWebLabels);
}

struct FailureCase {
  const char* name;
  LabelFailure expected;
  std::function<void(InMemoryNomad&, InMemoryCilium&)> arrange;
};

class EachFailure : public LabelFailureTest, public ::testing::WithParamInterface<FailureCase> {};

TEST_P(EachFailure, IsRecordedAndCountedUnderItsReason) {
  GetParam().arrange(nomad_, cilium_);
  plugin_added();
  LabelSettings settings;
  settings.item_budget = std::chrono::milliseconds{0};  // identity_pending: give up at once
  auto worker = labeler(settings);
  auto out = worker.label(notified());
  EXPECT_NE(out.status, notify::ReplyStatus::kLabeled);
  EXPECT_EQ(out.failure, GetParam().expected) << out.message;
  auto last = entry().last_attempt;
  ASSERT_TRUE(last) << out.message;
  EXPECT_EQ(last->reason, to_string(GetParam().expected));
  EXPECT_NE(last->detail.find(out.message), std::string::npos) << last->detail;
  expect_only(GetParam().expected, 1);
}

INSTANTIATE_TEST_SUITE_P(
    LabelFailure, EachFailure,
    ::testing::Values(FailureCase{"unknown_to_nomad", LabelFailure::nomad_alloc_unknown,
                                  [](InMemoryNomad&, InMemoryCilium& c) {
                                    c.add_init_endpoint(kAllocId, "10.200.3.17");
                                  }},
                      FailureCase{"stopped", LabelFailure::alloc_terminal,
                                  [](InMemoryNomad& n, InMemoryCilium& c) {
                                    n.put(make_alloc(kAllocId, "web", "app", "complete"));
                                    c.add_init_endpoint(kAllocId, "10.200.3.17");
                                  }},
                      FailureCase{"nomad_down", LabelFailure::nomad_unreachable,
                                  [](InMemoryNomad& n, InMemoryCilium&) { n.fail_next(1, 0); }},
                      FailureCase{"nomad_forbidden", LabelFailure::nomad_access_denied,
                                  [](InMemoryNomad& n, InMemoryCilium&) { n.fail_next(1, 403); }},
                      FailureCase{"acl_hidden", LabelFailure::nomad_access_denied,
                                  [](InMemoryNomad& n, InMemoryCilium&) {
                                    n.fail_next_with(1, 500, "rpc error: Unknown allocation");
                                  }},
                      FailureCase{
                          "no_endpoint", LabelFailure::endpoint_not_found,
                          [](InMemoryNomad& n, InMemoryCilium&) { n.put(make_alloc(kAllocId)); }},
                      FailureCase{"agent_down", LabelFailure::agent_unreachable,
                                  [](InMemoryNomad& n, InMemoryCilium& c) {
                                    n.put(make_alloc(kAllocId));
                                    c.add_init_endpoint(kAllocId, "10.200.3.17");
                                    c.fail_next(CiliumCall::get, 1, 503);
                                  }},
                      FailureCase{"write_refused", LabelFailure::label_write_refused,
                                  [](InMemoryNomad& n, InMemoryCilium& c) {
                                    n.put(make_alloc(kAllocId));
                                    c.add_init_endpoint(kAllocId, "10.200.3.17");
                                    c.fail_next(CiliumCall::patch_endpoint, 1, 403);
                                  }},
                      FailureCase{"identity_pending", LabelFailure::identity_pending,
                                  [](InMemoryNomad& n, InMemoryCilium& c) {
                                    n.put(make_alloc(kAllocId));
                                    c.add_init_endpoint(kAllocId, "10.200.3.17");
                                    c.gets_until_resolved = 1000;
                                  }}),
    [](const auto& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace cn::labeler
