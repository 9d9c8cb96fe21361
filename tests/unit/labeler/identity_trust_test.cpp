// Who may say which identity an allocation's endpoint gets (labeler/labeling/identity_trust.h):
// Nomad's answer about that allocation, or CNI_ARGS that Nomad built for it, never a job's own
// claim.
#include "labeler/labeling/identity_trust.h"

#include <gtest/gtest.h>

#include "labeler/labeling/alloc_labeler.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::CiliumCall;
using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::make_alloc;
using cn::testing::NomadCall;

using cn::testing::kAllocId;
constexpr const char* kOther = "9e8d7c6b-5a49-3827-1605-f4e3d2c1b0a9";
using cn::testing::kAllocIp;

cni::NomadWorkload args(std::string job, std::string alloc_id = kAllocId) {
  return {"global", "default", std::move(job), "app", std::move(alloc_id)};
}

TEST(TrustedIdentity, CniArgsBuiltForThisAllocationAreTrustedAsGiven) {
  auto a = args("web");
  auto id = trusted_identity(CniArgsClaim{a, CniArgsUse::before_nomad}, kAllocId, TrustRules{});
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->job_id, "web");
  EXPECT_EQ(id->task_group, "app");
  EXPECT_EQ(id->nomad_namespace, "default");
  EXPECT_TRUE(id->parent_id.empty());
}

TEST(TrustedIdentity, ChildFormIsNeverStrippedToItsParent) {
  for (auto use : {CniArgsUse::before_nomad, CniArgsUse::nomad_unavailable}) {
    for (const char* job : {"admin/periodic-1700000000", "admin/dispatch-1700000000-0a1b2c3d"}) {
      auto a = args(job);
      auto id = trusted_identity(CniArgsClaim{a, use}, kAllocId, TrustRules{});
      ASSERT_FALSE(id) << job;
      EXPECT_NE(id.error().message.find("ParentID"), std::string::npos) << id.error().message;
    }
  }
}

TEST(TrustedIdentity, CniArgsOfAnotherAllocationOrWithoutAllocIdAreRefused) {
  for (const std::string& other : {std::string(kOther), std::string()}) {
    auto a = args("web", other);
    auto id =
        trusted_identity(CniArgsClaim{a, CniArgsUse::nomad_unavailable}, kAllocId, TrustRules{});
    ASSERT_FALSE(id);
    EXPECT_NE(id.error().message.find("NOMAD_ALLOC_ID"), std::string::npos);
  }
}

TEST(TrustedIdentity, OperatorSwitchRefusesCniArgsForEveryUse) {
  auto a = args("web");
  for (auto use : {CniArgsUse::before_nomad, CniArgsUse::nomad_unavailable}) {
    auto id = trusted_identity(CniArgsClaim{a, use}, kAllocId, TrustRules{false, false});
    ASSERT_FALSE(id);
    EXPECT_NE(id.error().message.find("--cni-args-first=false"), std::string::npos);
  }
}

TEST(TrustedIdentity, MetaLabelsKeepCniArgsForWhenNomadIsAwayOnly) {
  auto a = args("web");
  const TrustRules meta{true, true};
  EXPECT_FALSE(trusted_identity(CniArgsClaim{a, CniArgsUse::before_nomad}, kAllocId, meta));
  EXPECT_TRUE(trusted_identity(CniArgsClaim{a, CniArgsUse::nomad_unavailable}, kAllocId, meta));
}

TEST(TrustedIdentity, NomadsAnswerAboutAnotherAllocationIsRefused) {
  auto alloc = make_alloc(kOther);
  auto id = trusted_identity(NomadClaim{alloc}, kAllocId, TrustRules{});
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().kind, ErrorKind::bad_answer);
  EXPECT_TRUE(trusted_identity(NomadClaim{alloc}, kOther, TrustRules{}));
}

// The spoof: a job named `admin/periodic-<n>` asks for job admin's identity while Nomad fails.
// Before, the labeler stripped the suffix from CNI_ARGS and labeled the endpoint as `admin`.
class SpoofWhileNomadFails : public ::testing::TestWithParam<int> {
 protected:
  SpoofWhileNomadFails() : state_({dir_.file("state.json")}, system_clock(), nullptr) {
    EXPECT_TRUE(cn::testing::record_plugin_add(state_, kAllocId));
  }

  LabelOutcome label(const cni::NomadWorkload& hint, LabelSettings settings = {}) {
    AllocLabeler labeler(
        LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr},
        std::move(settings));
    WorkItem w;
    w.alloc_id = kAllocId;
    w.ips = {kAllocIp};
    w.hint = hint;
    nomad_.fail_next(100, GetParam());
    return labeler.label(w);
  }

  void expect_unlabeled(const LabelOutcome& out, long long ep) {
    EXPECT_NE(out.status, notify::ReplyStatus::kLabeled) << out.message;
    EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint) + cilium_.calls(CiliumCall::patch_labels),
              0);
    for (const auto& label : cilium_.get(ep).identity_labels) {
      EXPECT_EQ(label.rfind("nomad:", 0), std::string::npos) << label;
    }
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
  state::StateStore state_;
};

TEST_P(SpoofWhileNomadFails, ChildNamedJobNeverWearsTheParentsLabels) {
  nomad_.put(make_alloc(kAllocId, "admin/periodic-1700000000"));
  auto ep = cilium_.add_init_endpoint(kAllocId, kAllocIp);
  auto out = label(args("admin/periodic-1700000000"));
  expect_unlabeled(out, ep);
  EXPECT_TRUE(out.will_retry() || out.retry == RetryRule::at_resync) << "retried, not dropped";
  EXPECT_NE(out.message.find("CNI_ARGS not trusted"), std::string::npos) << out.message;
  // What `explain` shows: the entry's last attempt names the reason.
  auto doc = state_.load();
  ASSERT_TRUE(doc);
  const auto& entry = doc->allocations.at(kAllocId);
  ASSERT_TRUE(entry.last_attempt);
  EXPECT_NE(entry.last_attempt->detail.find("CNI_ARGS not trusted"), std::string::npos)
      << entry.last_attempt->detail;
}

TEST_P(SpoofWhileNomadFails, MismatchedNomadAllocIdIsNeverTrusted) {
  auto ep = cilium_.add_init_endpoint(kAllocId, kAllocIp);
  expect_unlabeled(label(args("web", kOther)), ep);
}

TEST_P(SpoofWhileNomadFails, CniArgsFirstOffNeverReadsCniArgs) {
  auto ep = cilium_.add_init_endpoint(kAllocId, kAllocIp);
  LabelSettings settings;
  settings.cni_args_first = false;
  auto out = label(args("web"), settings);
  expect_unlabeled(out, ep);
  EXPECT_GE(nomad_.calls(NomadCall::allocation), 1);
}

INSTANTIATE_TEST_SUITE_P(NomadAnswers, SpoofWhileNomadFails,
                         ::testing::Values(500, 403, InMemoryNomad::kFailTimeout),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return param.param == InMemoryNomad::kFailTimeout
                                      ? std::string("Timeout")
                                      : "Status" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace cn::labeler
