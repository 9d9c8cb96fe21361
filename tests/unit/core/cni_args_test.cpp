#include <gtest/gtest.h>

#include "common/cni/cni_args.h"

namespace cn::cni {
namespace {

TEST(CniArgs, NomadFieldsInAnyOrderNextToIgnoreUnknownAndUserArgs) {
  auto args = parse_cni_args(
      "example=value;NOMAD_JOB_ID=web;IgnoreUnknown=true;NOMAD_NAMESPACE=default;"
      "NOMAD_GROUP_NAME=app;NOMAD_ALLOC_ID=4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11;NOMAD_REGION="
      "global");
  auto w = nomad_workload_from_args(args);
  EXPECT_EQ(w.region, "global");
  EXPECT_EQ(w.namespace_, "default");
  EXPECT_EQ(w.job_id, "web");
  EXPECT_EQ(w.group, "app");
  EXPECT_EQ(w.alloc_id, "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11");
  EXPECT_TRUE(w.has_identity());
  EXPECT_EQ(args.at("example"), "value");
}

TEST(CniArgs, ValueMaySplitOnlyAtTheFirstEquals) {
  auto args = parse_cni_args("CONSUL_IPTABLES_CONFIG={\"a\":\"b=c\"};K=v=w");
  EXPECT_EQ(args.at("CONSUL_IPTABLES_CONFIG"), "{\"a\":\"b=c\"}");
  EXPECT_EQ(args.at("K"), "v=w");
}

TEST(CniArgs, TolerantOfEmptyAndKeylessPairs) {
  auto args = parse_cni_args(";;=x;novalue;A=;B=1;");
  EXPECT_EQ(args.size(), 2u);
  EXPECT_EQ(args.at("A"), "");
  EXPECT_EQ(args.at("B"), "1");
}

TEST(CniArgs, MissingNomadFieldsMeanNoIdentity) {
  auto w = nomad_workload_from_args(parse_cni_args("IgnoreUnknown=true"));
  EXPECT_FALSE(w.has_identity());
  EXPECT_EQ(w, NomadWorkload{});
}

TEST(CniArgs, ANomadKeyTwiceMeansNoWorkloadFields) {
  // A job's `cni { args = { x = "1;NOMAD_JOB_ID=admin" } }` next to Nomad's own NOMAD_JOB_ID.
  auto w = nomad_workload_from_cni_args(
      "IgnoreUnknown=true;x=1;NOMAD_JOB_ID=admin;NOMAD_NAMESPACE=default;NOMAD_JOB_ID=web;"
      "NOMAD_GROUP_NAME=app;NOMAD_ALLOC_ID=4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11");
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("NOMAD_JOB_ID"), std::string::npos);
}

TEST(CniArgs, EachNomadKeyOnceGivesTheFields) {
  auto w = nomad_workload_from_cni_args(
      "NOMAD_JOB_ID=web;K=NOMAD_JOB_ID;NOMAD_NAMESPACE=default;NOMAD_GROUP_NAME=app");
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->job_id, "web");
  EXPECT_TRUE(w->has_identity());
}

}  // namespace
}  // namespace cn::cni
