// Building blocks of the fake agent: label parsing and filter, OpLabels semantics, endpoint IDs,
// Go durations, the token bucket on an injected clock.
#include <gtest/gtest.h>

#include <future>

#include "tests/fakes/cilium/api_rate_limiter.h"
#include "tests/fakes/cilium/cilium_labels.h"
#include "tests/fakes/cilium/endpoint_id.h"
#include "tests/fakes/cilium/fake_endpoint.h"
#include "tests/fakes/cilium/identity_allocator.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes::cilium {
namespace {

using namespace std::chrono_literals;

TEST(CiliumLabel, ParsesSourceKeyValue) {
  const Label l = parse_label("nomad:job=web");
  EXPECT_EQ(l.source, "nomad");
  EXPECT_EQ(l.key, "job");
  EXPECT_EQ(l.value, "web");
  EXPECT_EQ(l.str(), "nomad:job=web");
  EXPECT_EQ(parse_label("k8s:url=http://x:80/a=b").value, "http://x:80/a=b");
  EXPECT_EQ(parse_label("app=web").source, "unspec");
  EXPECT_EQ(parse_label("app=web:1").key, "app");  // a colon in the value is not a source
  EXPECT_EQ(parse_label("$init").str(), "reserved:init");
  EXPECT_EQ(parse_label("reserved:init").str(), "reserved:init");
  EXPECT_EQ(parse_label("reserved.host").str(), "reserved:host");
  EXPECT_EQ(parse_label("nomad:flag").str(), "nomad:flag");
}

TEST(CiliumLabel, SetsAreKeyedByKeyOnly) {
  const LabelMap m = labels_from_model({"nomad:job=a", "other:job=b", "nomad:group=g"});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.at("job").str(), "other:job=b");
  EXPECT_EQ(labels_to_model(m), (std::vector<std::string>{"nomad:group=g", "other:job=b"}));
}

TEST(LabelFilterTest, DefaultModeKeepsCustomSourcesAndDropsKubernetesNoise) {
  auto f = LabelFilter::make({});
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->allow_list());
  EXPECT_TRUE(f->identity_relevant(parse_label("nomad:job=web")));
  EXPECT_TRUE(f->identity_relevant(parse_label("reserved:init")));
  EXPECT_FALSE(f->identity_relevant(parse_label("k8s:pod-template-hash=abc")));
  EXPECT_FALSE(f->identity_relevant(parse_label("k8s:io.kubernetes.pod.name=x")));
  EXPECT_TRUE(f->identity_relevant(parse_label("k8s:io.kubernetes.pod.namespace=default")))
      << "a longer include beats a shorter ignore";
}

TEST(LabelFilterTest, AllowListModeKeepsOnlyMatches) {
  auto f = LabelFilter::make(LabelFilter::split_patterns("nomad:job, k8s:app"));
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->allow_list());
  EXPECT_TRUE(f->identity_relevant(parse_label("nomad:job=web")));
  EXPECT_FALSE(f->identity_relevant(parse_label("nomad:group=app")));
  EXPECT_FALSE(f->identity_relevant(parse_label("other:job=web"))) << "source must match";
  EXPECT_TRUE(f->identity_relevant(parse_label("k8s:app=x")));
  EXPECT_TRUE(f->identity_relevant(parse_label("reserved:init")));
  auto bang = LabelFilter::make({"nomad:.*", "!nomad:alloc"});
  ASSERT_TRUE(bang);
  EXPECT_TRUE(bang->identity_relevant(parse_label("nomad:job=x")));
  EXPECT_FALSE(bang->identity_relevant(parse_label("nomad:alloc=1")))
      << "ignore 'alloc' (5) beats include '.*' only when longer; here equal length, so ignored";
  EXPECT_FALSE(LabelFilter::make({"nomad:("}));
}

TEST(OpLabelsTest, DiffIsByKeyOnly) {
  OpLabels ops;
  ops.custom = labels_from_model({"nomad:job=a", "nomad:group=g"});
  auto [add, del] = ops.split_user_label_changes(labels_from_model({"nomad:job=b", "nomad:ns=n"}));
  EXPECT_EQ(labels_to_model(add), std::vector<std::string>{"nomad:ns=n"});
  EXPECT_EQ(labels_to_model(del), std::vector<std::string>{"nomad:group=g"});
}

TEST(OpLabelsTest, ModifyMovesOrchestrationLabelsToDisabledAndBack) {
  OpLabels ops;
  ops.orchestration_identity = labels_from_model({"nomad:job=a"});
  ops.custom = labels_from_model({"nomad:team=x"});
  auto r = ops.modify_identity_labels({}, labels_from_model({"nomad:job=a", "nomad:team=x"}));
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);
  EXPECT_TRUE(ops.orchestration_identity.empty());
  EXPECT_TRUE(ops.custom.empty());
  EXPECT_EQ(labels_to_model(ops.disabled), std::vector<std::string>{"nomad:job=a"});
  r = ops.modify_identity_labels(labels_from_model({"nomad:job=z", "nomad:new=1"}), {});
  ASSERT_TRUE(r);
  EXPECT_EQ(labels_to_model(ops.orchestration_identity), std::vector<std::string>{"nomad:job=z"});
  EXPECT_EQ(labels_to_model(ops.custom), std::vector<std::string>{"nomad:new=1"});
  const auto missing = ops.modify_identity_labels({}, labels_from_model({"nomad:nope=1"}));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "label nope not found");
}

TEST(OpLabelsTest, ReplaceKeepsDisabledKeysDisabled) {
  OpLabels ops;
  ops.orchestration_identity = labels_from_model({"reserved:init"});
  ops.disabled = labels_from_model({"nomad:job=old"});
  EXPECT_TRUE(ops.replace_identity_labels(labels_from_model({"nomad:job=new", "nomad:group=g"})));
  EXPECT_EQ(labels_to_model(ops.orchestration_identity), std::vector<std::string>{"nomad:group=g"});
  EXPECT_EQ(labels_to_model(ops.disabled), std::vector<std::string>{"nomad:job=old"});
  EXPECT_FALSE(ops.replace_identity_labels(labels_from_model({"nomad:job=new", "nomad:group=g"})));
  EXPECT_TRUE(ops.replace_identity_labels({}));
  EXPECT_TRUE(ops.disabled.empty());
}

TEST(IdentityAllocatorTest, ReservedNumbersAndStableGlobalIdentities) {
  IdentityAllocator ids(7);
  EXPECT_EQ(ids.resolve(labels_from_model({"reserved:init"})).id, 5u);
  EXPECT_EQ(ids.resolve(labels_from_model({"reserved:host"})).id, 1u);
  EXPECT_EQ(ids.resolve(labels_from_model({"reserved:health"})).id, 4u);
  const auto mixed = ids.resolve(labels_from_model({"reserved:init", "nomad:job=web"}));
  EXPECT_GE(mixed.id, 256u) << "a mixed set is not a reserved identity";
  const auto a = ids.resolve(labels_from_model({"nomad:job=web", "nomad:group=app"}));
  const auto b = ids.resolve(labels_from_model({"nomad:group=app", "nomad:job=web"}));
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.labels_sha256.size(), 64u);
  EXPECT_NE(a.id, mixed.id);
  EXPECT_GE(ids.resolve({}).id, 256u) << "the empty set is a global identity too";
}

TEST(EndpointRefTest, PrefixesAndGoNumberSyntax) {
  auto r = parse_endpoint_ref("cni-attachment-id:4b1f:eth0");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->prefix, IdPrefix::cni_attachment_id);
  EXPECT_EQ(r->value, "4b1f:eth0");
  EXPECT_EQ(parse_endpoint_ref("ipv6:fd00::1")->value, "fd00::1");
  EXPECT_EQ(parse_endpoint_ref("0x1f")->local_id, 31);
  EXPECT_EQ(parse_endpoint_ref("017")->local_id, 15);
  EXPECT_EQ(parse_endpoint_ref("cilium-local:1734")->local_id, 1734);
  EXPECT_FALSE(parse_endpoint_ref("70000"));
  EXPECT_FALSE(parse_endpoint_ref("abc"));
  EXPECT_FALSE(parse_endpoint_ref("cilium-global:c:n:1"));
  const auto unknown = parse_endpoint_ref("foo:1");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "unknown endpoint ID prefix \"foo\"");
  EXPECT_EQ(parse_go_uint("0b101", 16), 5u);
  EXPECT_EQ(parse_go_uint("1_000", 16), std::nullopt);
  EXPECT_EQ(parse_go_uint("0x_1F", 16), 31u);
}

TEST(GoDurationTest, FormatsLikeGo) {
  EXPECT_EQ(go_duration(0s), "0s");
  EXPECT_EQ(go_duration(16s), "16s");
  EXPECT_EQ(go_duration(1500ms), "1.5s");
  EXPECT_EQ(go_duration(250ms), "250ms");
  EXPECT_EQ(go_duration(60s), "1m0s");
  EXPECT_EQ(go_duration(3723500ms), "1h2m3.5s");
  EXPECT_EQ(go_duration(1500us), "1.5ms");
  EXPECT_EQ(*parse_go_duration("1m30s"), 90s);
  EXPECT_EQ(*parse_go_duration("250ms"), 250ms);
  EXPECT_FALSE(parse_go_duration("5 parsecs"));
}

TEST(ApiRateLimiterTest, BurstThenWaitOnClockThenRefuse) {
  ManualClock clock;
  ApiRateLimiter limiter(clock, RateLimitParams{0.5, 2, 3s});
  EXPECT_EQ(limiter.acquire(), std::nullopt);
  EXPECT_EQ(limiter.acquire(), std::nullopt);
  // Third: 2 s wait, within the 3 s maximum -> blocks until the clock moves.
  auto waiting = std::async(std::launch::async, [&] { return limiter.acquire(); });
  ASSERT_TRUE(clock.wait_for_sleepers(1, 5s));
  EXPECT_EQ(waiting.wait_for(20ms), std::future_status::timeout);
  // Fourth would wait 4 s > 3 s: refused at once with Cilium's text.
  EXPECT_EQ(limiter.acquire(),
            "request would have to wait 4s to be served (maximum wait duration: 3s)");
  clock.advance(2s);
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(waiting.get(), std::nullopt);
}

TEST(ApiRateLimiterTest, ParsesAgentFlagSyntax) {
  auto p = parse_api_rate_limit("endpoint-patch=rate-limit:2/s,rate-burst:8,max-wait-duration:1m",
                                {{"endpoint-patch", {0.5, 4, 15s}}});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->first, "endpoint-patch");
  EXPECT_DOUBLE_EQ(p->second.rate_per_sec, 2);
  EXPECT_EQ(p->second.burst, 8);
  EXPECT_EQ(p->second.max_wait, 60s);
  EXPECT_FALSE(parse_api_rate_limit("endpoint-patch=bogus:1", {}));
}

}  // namespace
}  // namespace cn::fakes::cilium
