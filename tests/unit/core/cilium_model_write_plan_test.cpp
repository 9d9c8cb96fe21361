#include <gtest/gtest.h>

#include "common/cilium/model/endpoint.h"
#include "common/cilium/model/label_write_plan.h"
#include "tests/unit/core/nomad_model_test_support.h"

namespace cn::cilium {
namespace {

using Strings = std::vector<std::string>;

labels::LabelSet desired() {
  Strings texts{"nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"};
  return labels::LabelSet::from_strings(texts);
}

Endpoint labeled_with(Strings identity) {
  auto ep = parse_endpoint_text(testdata::read_data("cilium/endpoint_labeled.json"));
  EXPECT_TRUE(ep.has_value());
  Endpoint out = ep.value_or(Endpoint{});
  out.identity_labels = std::move(identity);
  return out;
}

TEST(LabelWritePlanTest, FreshInitEndpointNeedsWrite) {
  auto ep = parse_endpoint_text(testdata::read_data("cilium/endpoint_init.json"));
  ASSERT_TRUE(ep.has_value());
  auto plan = plan_label_write(*ep, desired());
  EXPECT_EQ(plan.action, LabelWriteAction::write);
  EXPECT_EQ(plan.missing, desired().to_strings());
  EXPECT_TRUE(plan.stale.empty());
  EXPECT_NE(plan.reason.find("reserved:init"), std::string::npos);
}

TEST(LabelWritePlanTest, ExactMatchNeedsNoWrite) {
  auto plan = plan_label_write(labeled_with(desired().to_strings()), desired());
  EXPECT_EQ(plan.action, LabelWriteAction::none);
}

TEST(LabelWritePlanTest, OrderOfAgentLabelsDoesNotMatter) {
  auto plan = plan_label_write(labeled_with({"nomad:nomad.namespace=default",
                                             "nomad:nomad.group=app", "nomad:nomad.job=web"}),
                               desired());
  EXPECT_EQ(plan.action, LabelWriteAction::none);
}

TEST(LabelWritePlanTest, OurLabelsWithInitStillNeedWrite) {
  Strings ids = desired().to_strings();
  ids.push_back("reserved:init");
  auto plan = plan_label_write(labeled_with(ids), desired());
  EXPECT_EQ(plan.action, LabelWriteAction::write);
  EXPECT_TRUE(plan.missing.empty());
}

TEST(LabelWritePlanTest, ReferenceEndpointWithOtherKeysIsStale) {
  // The section-7 example uses nomad:job etc.; under our contract those are stale.
  auto plan = plan_label_write(
      labeled_with({"nomad:group=app", "nomad:job=web", "nomad:namespace=default"}), desired());
  EXPECT_EQ(plan.action, LabelWriteAction::write);
  EXPECT_EQ(plan.missing.size(), 3U);
  EXPECT_EQ(plan.stale, (Strings{"nomad:group=app", "nomad:job=web", "nomad:namespace=default"}));
}

TEST(LabelWritePlanTest, ForeignSourcesAreIgnoredButKeyCollisionsAreNot) {
  Strings ids = desired().to_strings();
  ids.push_back("container:owner=ops");
  EXPECT_EQ(plan_label_write(labeled_with(ids), desired()).action, LabelWriteAction::none);

  Strings collided{"nomad:nomad.group=app", "other:nomad.job=web", "nomad:nomad.namespace=default"};
  auto plan = plan_label_write(labeled_with(collided), desired());
  EXPECT_EQ(plan.action, LabelWriteAction::write);
  EXPECT_EQ(plan.missing, (Strings{"nomad:nomad.job=web"}));
}

TEST(LabelWritePlanTest, ChangedValueIsMissingAndStale) {
  auto plan = plan_label_write(labeled_with({"nomad:nomad.group=app", "nomad:nomad.job=api",
                                             "nomad:nomad.namespace=default", "nomad:team=x"}),
                               desired());
  EXPECT_EQ(plan.action, LabelWriteAction::write);
  EXPECT_EQ(plan.missing, (Strings{"nomad:nomad.job=web"}));
  EXPECT_EQ(plan.stale, (Strings{"nomad:nomad.job=api", "nomad:team=x"}));
}

TEST(LabelWritePlanTest, HostAndHealthAreNeverWritten) {
  Endpoint host;
  host.identity_id = kIdentityHost;
  host.identity_labels = {"reserved:host"};
  EXPECT_EQ(plan_label_write(host, desired()).action, LabelWriteAction::skip_reserved);
  Endpoint health;
  health.identity_id = kIdentityHealth;
  EXPECT_EQ(plan_label_write(health, desired()).action, LabelWriteAction::skip_reserved);
}

TEST(LabelWritePlanTest, FilteredByAgentIsReportedNotRetried) {
  Endpoint ep = labeled_with({"reserved:init"});
  ep.identity_id = kIdentityInit;
  ep.derived_labels = desired().to_strings();
  auto plan = plan_label_write(ep, desired());
  EXPECT_EQ(plan.action, LabelWriteAction::filtered);
  ep.derived_labels = {"nomad:nomad.job=web"};
  EXPECT_EQ(plan_label_write(ep, desired()).action, LabelWriteAction::write);
}

TEST(LabelWritePlanTest, EndpointWithoutIdentityNeedsWrite) {
  auto plan = plan_label_write(Endpoint{}, desired());
  EXPECT_EQ(plan.action, LabelWriteAction::write);
  EXPECT_EQ(plan.missing.size(), 3U);
}

}  // namespace
}  // namespace cn::cilium
