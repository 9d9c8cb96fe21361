#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/labels/derive_labels.h"
#include "common/labels/label_policy.h"
#include "common/nomad/model/alloc_identity.h"
#include "common/nomad/model/allocation.h"
#include "common/nomad/model/job.h"
#include "tests/support/alloc_ids.h"
#include "tests/unit/core/nomad_model_test_support.h"

namespace cn::nomad {
namespace {

using cn::testing::kAllocId;

TEST(NomadAllocationTest, ParsesReferenceAllocationWithJob) {
  auto alloc = parse_allocation_text(testdata::read_data("nomad/alloc_get.json"));
  ASSERT_TRUE(alloc.has_value()) << alloc.error().message;
  EXPECT_EQ(alloc->id, kAllocId);
  EXPECT_EQ(alloc->nomad_namespace, "default");
  EXPECT_EQ(alloc->job_id, "web");
  EXPECT_EQ(alloc->task_group, "app");
  EXPECT_EQ(alloc->name, "web.app[0]");
  EXPECT_EQ(alloc->node_id, "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b");
  EXPECT_EQ(alloc->client_status, "running");
  EXPECT_EQ(alloc->desired_status, "run");
  EXPECT_EQ(alloc->create_index, 1201U);
  EXPECT_EQ(alloc->modify_index, 1240U);
  EXPECT_EQ(alloc->alloc_modify_index, 1201U);
  EXPECT_EQ(alloc->create_time, 1755781234567890123LL);  // exact: no trip through a double
  ASSERT_TRUE(alloc->network_status.has_value());
  EXPECT_EQ(alloc->network_status->interface_name, "eth0");
  EXPECT_EQ(alloc->address(), "10.200.3.17");
  EXPECT_FALSE(alloc->is_terminal());
  // What a service's port label stands for: the host port, and the port inside the namespace.
  EXPECT_EQ(alloc->ports, (std::vector<AllocPort>{{"http", 25431, 8080, "10.0.1.15"}}));

  ASSERT_TRUE(alloc->job.has_value());
  const Job& job = *alloc->job;
  EXPECT_EQ(job.id, "web");
  EXPECT_EQ(job.type, "service");
  EXPECT_EQ(job.parent_id, "");
  EXPECT_FALSE(job.periodic);
  EXPECT_FALSE(job.dispatched);
  EXPECT_EQ(job.meta, (Meta{{"team", "payments"}}));
  EXPECT_EQ(alloc->job_modify_index, job.job_modify_index);
  ASSERT_EQ(job.task_groups.size(), 1U);
  EXPECT_EQ(job.task_groups[0].name, "app");
  EXPECT_EQ(job.task_groups[0].meta, (Meta{{"tier", "frontend"}}));
  ASSERT_EQ(job.task_groups[0].tasks.size(), 1U);
  EXPECT_EQ(job.task_groups[0].tasks[0].name, "server");
  EXPECT_EQ(job.task_groups[0].tasks[0].meta, (Meta{{"role", "server"}}));
}

TEST(NomadAllocationTest, ReferenceAllocationDerivesExpectedLabels) {
  auto alloc = parse_allocation_text(testdata::read_data("nomad/alloc_get.json"));
  ASSERT_TRUE(alloc.has_value());
  auto identity = identity_of(*alloc);
  ASSERT_TRUE(identity.has_value()) << identity.error().message;
  auto policy = labels::parse_label_policy("team,tier,role");
  ASSERT_TRUE(policy.has_value());
  EXPECT_EQ(
      labels::derive_labels(*identity, *policy).to_strings(),
      (std::vector<std::string>{"k8s:io.cilium.k8s.policy.cluster=default",
                                "k8s:io.kubernetes.pod.namespace=default", "nomad:nomad.group=app",
                                "nomad:nomad.job=web", "nomad:nomad.namespace=default",
                                "nomad:team=payments", "nomad:tier=frontend"}));
}

TEST(NomadAllocationTest, SharedReferenceCopiesAreCurrent) {
  auto shared = testdata::source_dir().parent_path() / "shared" / "reference" / "nomad";
  if (!std::filesystem::exists(shared)) GTEST_SKIP() << "no shared/ next to the repo";
  for (const char* name : {"alloc_get.json", "allocations_list.json", "event_alloc_updated.ndjson",
                           "event_plan_result.ndjson"}) {
    EXPECT_EQ(testdata::read_file(shared / name), testdata::read_data(std::string("nomad/") + name))
        << name;
  }
}

TEST(NomadAllocationTest, ParsesStubListWithoutJobOrNetworkStatus) {
  auto list = parse_allocation_list(testdata::read_data("nomad/allocations_list.json"));
  ASSERT_TRUE(list.has_value()) << list.error().message;
  ASSERT_EQ(list->allocations.size(), 1U);
  EXPECT_TRUE(list->rejected.empty());
  const auto& a = list->allocations[0];
  EXPECT_EQ(a.id, kAllocId);
  EXPECT_FALSE(a.job.has_value());
  EXPECT_FALSE(a.job_modify_index.has_value());
  EXPECT_FALSE(a.network_status.has_value());
  EXPECT_EQ(a.address(), "");
  EXPECT_FALSE(identity_of(a).has_value());
}

TEST(NomadAllocationTest, ListSetsAsideBadElements) {
  auto list = parse_allocation_list(
      R"([{"ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11"},{"ID":"../../etc"},7,null,
          {"ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f12","ModifyIndex":"x"}])");
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->allocations.size(), 1U);
  ASSERT_EQ(list->rejected.size(), 4U);
  EXPECT_NE(list->rejected[0].message.find("allocation list at /1/ID"), std::string::npos);
  EXPECT_NE(list->rejected[3].message.find("allocation list at /4/ModifyIndex"), std::string::npos);
}

TEST(NomadAllocationTest, ListBodyShapes) {
  EXPECT_TRUE(parse_allocation_list("[]").has_value());
  auto null_body = parse_allocation_list("null");
  ASSERT_TRUE(null_body.has_value());
  EXPECT_TRUE(null_body->allocations.empty());
  EXPECT_FALSE(parse_allocation_list("{}").has_value());
  EXPECT_FALSE(parse_allocation_list("").has_value());
  EXPECT_FALSE(parse_allocation_list("[").has_value());
  EXPECT_FALSE(parse_allocation_list("Permission denied").has_value());
}

struct TerminalCase {
  const char* client;
  const char* desired;
  bool terminal;
  bool client_terminal;
};

class NomadTerminalTest : public ::testing::TestWithParam<TerminalCase> {};

TEST_P(NomadTerminalTest, MatchesNomadTerminalStatus) {
  Allocation a;
  a.client_status = GetParam().client;
  a.desired_status = GetParam().desired;
  EXPECT_EQ(a.is_terminal(), GetParam().terminal);
  EXPECT_EQ(a.is_client_terminal(), GetParam().client_terminal);
}

INSTANTIATE_TEST_SUITE_P(Table, NomadTerminalTest,
                         ::testing::Values(TerminalCase{"pending", "run", false, false},
                                           TerminalCase{"running", "run", false, false},
                                           TerminalCase{"unknown", "run", false, false},
                                           TerminalCase{"running", "stop", true, false},
                                           TerminalCase{"running", "evict", true, false},
                                           TerminalCase{"complete", "run", true, true},
                                           TerminalCase{"failed", "run", true, true},
                                           TerminalCase{"lost", "stop", true, true},
                                           TerminalCase{"", "", false, false}));

TEST(NomadAllocationTest, AddressFallsBackToIpv6) {
  Allocation a;
  a.network_status = NetworkStatus{"eth0", "", "fd00::17"};
  EXPECT_EQ(a.address(), "fd00::17");
  a.network_status = NetworkStatus{"", "", ""};  // host network
  EXPECT_EQ(a.address(), "");
}

TEST(NomadAllocationTest, MissingKeysAndNullsAreZeroValues) {
  auto a = parse_allocation(nlohmann::json::parse(
      R"({"ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11","Namespace":null,"NetworkStatus":null,
          "Job":null,"ModifyIndex":null})"));
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->nomad_namespace, "");
  EXPECT_EQ(a->modify_index, 0U);
  EXPECT_FALSE(a->network_status.has_value());
  EXPECT_FALSE(a->job.has_value());
}

TEST(NomadAllocationTest, JobWithNullCollectionsAndPeriodicChild) {
  auto job = parse_job_text(
      R"({"ID":"batch/periodic-1700000000","ParentID":"batch","Namespace":"ops","Meta":null,
          "TaskGroups":[{"Name":"g","Meta":null,"Tasks":null}],"Periodic":null,
          "Dispatched":false,"Version":3})");
  ASSERT_TRUE(job.has_value()) << job.error().message;
  EXPECT_EQ(job->parent_id, "batch");
  EXPECT_FALSE(job->periodic);
  EXPECT_TRUE(job->meta.empty());
  ASSERT_NE(job->find_group("g"), nullptr);
  EXPECT_EQ(job->find_group("nope"), nullptr);
  EXPECT_EQ(job->version, 3U);

  Allocation a;
  a.id = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
  a.nomad_namespace = "ops";
  a.job_id = "batch/periodic-1700000000";
  a.task_group = "g";
  auto identity = identity_of(a, *job);
  ASSERT_TRUE(identity.has_value());
  EXPECT_EQ(labels::derive_labels(*identity, {}).find(labels::kKeyJob)->value, "batch");

  auto parent = parse_job_text(R"({"ID":"batch","Periodic":{"Spec":"@daily"}})");
  ASSERT_TRUE(parent.has_value());
  EXPECT_TRUE(parent->periodic);
}

TEST(NomadAllocationTest, IdentityRefusesAnotherJobsMeta) {
  Allocation a;
  a.id = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
  a.nomad_namespace = "default";
  a.job_id = "web";
  Job other;
  other.id = "api";
  EXPECT_FALSE(identity_of(a, other).has_value());
  other.id = "web";
  other.nomad_namespace = "prod";
  EXPECT_FALSE(identity_of(a, other).has_value());
}

}  // namespace
}  // namespace cn::nomad
