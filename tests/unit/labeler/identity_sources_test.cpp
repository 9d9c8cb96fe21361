// Where a worker takes an allocation's identity from (README "Label scheme"; the trust rule:
// labeler/labeling/identity_trust.h): the watch's cache and CNI_ARGS spare the notification path
// its Nomad call; Nomad's answer stays the authority.
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
using cn::testing::kWebLabels;
using cn::testing::make_alloc;
using cn::testing::NomadCall;

using cn::testing::kAllocId;
using cn::testing::kAllocIp;

class IdentitySources : public ::testing::Test {
 protected:
  IdentitySources() : state_({dir_.file("state.json")}, system_clock(), nullptr) {
    EXPECT_TRUE(cn::testing::record_plugin_add(state_, kAllocId));
  }

  AllocLabeler& labeler(LabelSettings settings = {}) {
    settings.cache = cache_;
    labeler_ = std::make_unique<AllocLabeler>(
        LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr},
        settings);
    return *labeler_;
  }

  // A notification as the plugin sends it on Nomad >= 1.9.4.
  static WorkItem notified(std::string job = "web", std::string group = "app",
                           std::string args_alloc = kAllocId) {
    WorkItem w;
    w.alloc_id = kAllocId;
    w.ips = {kAllocIp};
    w.hint = {"global", "default", std::move(job), std::move(group), std::move(args_alloc)};
    return w;
  }

  double counted(IdentitySource source) { return metrics_.identity_sources(source).Value(); }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
  state::StateStore state_;
  std::shared_ptr<AllocCache> cache_ = std::make_shared<AllocCache>(std::vector<std::string>{});
  std::unique_ptr<AllocLabeler> labeler_;
};

TEST_F(IdentitySources, AnAllocationTheWatchHasSeenIsLabeledWithoutAskingNomad) {
  cache_->observe(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, kAllocIp);
  WorkItem w = notified();
  w.hint = {};  // a Nomad older than 1.9.4: the cache alone suffices
  auto out = labeler().label(w);
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_EQ(cilium_.get(ep).identity_labels, kWebLabels);
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 0);
  EXPECT_FALSE(out.verify) << "the cache is Nomad's own answer";
  EXPECT_FALSE(out.will_retry());
  EXPECT_EQ(counted(IdentitySource::cache), 1);
}

TEST_F(IdentitySources, AMissWithoutMetaLabelsIsLabeledFromCniArgsAndCheckedLater) {
  auto ep = cilium_.add_init_endpoint(kAllocId, kAllocIp);
  auto out = labeler().label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_EQ(cilium_.get(ep).identity_labels, kWebLabels);
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 0);
  EXPECT_TRUE(out.verify);
  EXPECT_FALSE(out.degraded) << "Nomad was not asked, so it did not fail";
  EXPECT_EQ(out.retry, RetryRule::later);
  EXPECT_EQ(counted(IdentitySource::cni_args), 1);
}

TEST_F(IdentitySources, TheCheckThatAgreesWritesNothing) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, kAllocIp);
  cilium_.set_identity_labels(ep, kWebLabels);  // what the CNI_ARGS write produced
  WorkItem check = notified();
  check.verify_cni_args = true;
  auto out = labeler().label(check);
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_FALSE(out.wrote);
  EXPECT_FALSE(out.will_retry());
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 1) << "checked against Nomad, not CNI_ARGS";
  EXPECT_EQ(metrics_.cni_args_relabels().Value(), 0);
  EXPECT_TRUE(cache_->identity(kAllocId)) << "a GET fills the cache";
}

TEST_F(IdentitySources, TheCheckThatDisagreesRelabelsAndCountsIt) {
  nomad_.put(make_alloc(kAllocId, "web", "db"));
  auto ep = cilium_.add_init_endpoint(kAllocId, kAllocIp);
  cilium_.set_identity_labels(ep, kWebLabels);  // group "app", as CNI_ARGS claimed
  WorkItem check = notified();
  check.verify_cni_args = true;
  auto out = labeler().label(check);
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_TRUE(out.wrote);
  EXPECT_EQ(metrics_.cni_args_relabels().Value(), 1);
  auto labels = cilium_.get(ep).identity_labels;
  EXPECT_NE(std::find(labels.begin(), labels.end(), "nomad:nomad.group=db"), labels.end());
}

TEST_F(IdentitySources, TheCheckWaitsForNomadRatherThanTrustingCniArgsAgain) {
  cilium_.add_init_endpoint(kAllocId, kAllocIp);
  nomad_.fail_next(1, 500);
  WorkItem check = notified();
  check.verify_cni_args = true;
  auto out = labeler().label(check);
  EXPECT_EQ(out.status, notify::ReplyStatus::kPending);
  EXPECT_TRUE(out.will_retry());
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 0);
}

TEST_F(IdentitySources, WithMetaLabelsAMissWaitsForNomadSoTheIdentityChangesOnce) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, kAllocIp);
  LabelSettings settings;
  settings.policy.meta_keys = {"team"};
  auto out = labeler(settings).label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 1);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 1);
  EXPECT_FALSE(out.verify);
}

TEST_F(IdentitySources, AJobNamedLikeAChildWaitsForNomadsParentId) {
  // Not a child at all: a service someone named like web's periodic launches.
  auto alloc = make_alloc(kAllocId, "web/periodic-1700000000");
  nomad_.put(alloc);
  auto ep = cilium_.add_init_endpoint(kAllocId, kAllocIp);
  auto out = labeler().label(notified("web/periodic-1700000000"));
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 1);
  auto labels = cilium_.get(ep).identity_labels;
  EXPECT_EQ(std::find(labels.begin(), labels.end(), "nomad:nomad.job=web"), labels.end())
      << "never web's labels, not even until Nomad answers";
  EXPECT_EQ(labels.size(), kWebLabels.size());
}

TEST_F(IdentitySources, CniArgsOfAnotherAllocationAreNotTrusted) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, kAllocIp);
  auto out = labeler().label(notified("web", "app", "9e8d7c6b-5a49-3827-1605-f4e3d2c1b0a9"));
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 1);
  EXPECT_EQ(counted(IdentitySource::nomad), 1);
}

TEST_F(IdentitySources, CniArgsFirstOffAsksNomad) {
  nomad_.put(make_alloc(kAllocId));
  cilium_.add_init_endpoint(kAllocId, kAllocIp);
  LabelSettings settings;
  settings.cni_args_first = false;
  auto out = labeler(settings).label(notified());
  ASSERT_EQ(out.status, notify::ReplyStatus::kLabeled) << out.message;
  EXPECT_EQ(nomad_.calls(NomadCall::allocation), 1);
  EXPECT_FALSE(out.verify);
}

}  // namespace
}  // namespace cn::labeler
