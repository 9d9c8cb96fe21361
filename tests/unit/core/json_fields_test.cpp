#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/cilium/model/endpoint.h"
#include "common/nomad/model/allocation.h"
#include "common/util/json_read.h"
#include "tests/unit/core/nomad_model_test_support.h"

namespace cn::json {
namespace {

const Fields kKeep = {
    {"id", {}}, {"meta", {}}, {"groups", {{"name", {}}, {"tasks", {{"name", {}}}}}}};

TEST(JsonFieldsTest, BuildsOnlyListedMembersAndKeepsLeavesWhole) {
  auto doc =
      parse_json_text(R"({"id":"a","skip":{"deep":[1,2,{"x":1}]},"meta":{"k":"v","n":{"m":1}},
      "groups":[{"name":"g","count":3,"tasks":[{"name":"t","config":{"image":"i"}}]}],"tail":true})",
                      "doc", kKeep);
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(*doc, nlohmann::json::parse(R"({"id":"a","meta":{"k":"v","n":{"m":1}},
      "groups":[{"name":"g","tasks":[{"name":"t"}]}]})"));
}

TEST(JsonFieldsTest, FiltersEveryElementOfATopLevelList) {
  auto doc =
      parse_json_text(R"([{"id":"a","x":1},{"x":2,"id":"b","groups":[]},{}])", "list", kKeep);
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(*doc, nlohmann::json::parse(R"([{"id":"a"},{"id":"b","groups":[]},{}])"));
}

TEST(JsonFieldsTest, DroppedMembersMustStillBeValidJsonAndWithinTheDepthLimit) {
  EXPECT_FALSE(parse_json_text(R"({"id":"a","skip":[1,}])", "doc", kKeep));
  std::string deep = std::string(200, '[') + std::string(200, ']');
  auto doc = parse_json_text(R"({"skip":)" + deep + "}", "doc", kKeep);
  ASSERT_FALSE(doc);
  EXPECT_NE(doc.error().message.find("deeper"), std::string::npos);
}

// The allocation models read through their field lists: what they decode must be exactly what
// the whole document gives, or a field was read without being listed.
TEST(JsonFieldsTest, AllocationFieldsCoverEverythingTheModelReads) {
  for (const char* file : {"nomad/alloc_get.json", "nomad/allocations_list.json"}) {
    std::string text = testdata::read_data(file);
    auto whole = nlohmann::json::parse(text);
    auto filtered = parse_json_text(text, file, nomad::allocation_fields());
    ASSERT_TRUE(filtered) << filtered.error().message;
    std::vector<nlohmann::json> wholes = whole.is_array() ? whole.get<std::vector<nlohmann::json>>()
                                                          : std::vector<nlohmann::json>{whole};
    std::vector<nlohmann::json> parts = filtered->is_array()
                                            ? filtered->get<std::vector<nlohmann::json>>()
                                            : std::vector<nlohmann::json>{*filtered};
    ASSERT_EQ(wholes.size(), parts.size());
    for (std::size_t i = 0; i < wholes.size(); ++i) {
      auto a = nomad::parse_allocation(wholes[i]);
      auto b = nomad::parse_allocation(parts[i]);
      ASSERT_TRUE(a && b) << file;
      EXPECT_EQ(a->id, b->id);
      EXPECT_EQ(a->nomad_namespace, b->nomad_namespace);
      EXPECT_EQ(a->job_id, b->job_id);
      EXPECT_EQ(a->task_group, b->task_group);
      EXPECT_EQ(a->name, b->name);
      EXPECT_EQ(a->node_id, b->node_id);
      EXPECT_EQ(a->client_status, b->client_status);
      EXPECT_EQ(a->desired_status, b->desired_status);
      EXPECT_EQ(a->create_index, b->create_index);
      EXPECT_EQ(a->modify_index, b->modify_index);
      EXPECT_EQ(a->alloc_modify_index, b->alloc_modify_index);
      EXPECT_EQ(a->create_time, b->create_time);
      EXPECT_EQ(a->modify_time, b->modify_time);
      EXPECT_EQ(a->job_modify_index, b->job_modify_index);
      EXPECT_EQ(a->network_status.has_value(), b->network_status.has_value());
      if (a->network_status && b->network_status) {
        EXPECT_EQ(a->network_status->interface_name, b->network_status->interface_name);
        EXPECT_EQ(a->network_status->address, b->network_status->address);
        EXPECT_EQ(a->network_status->address_ipv6, b->network_status->address_ipv6);
      }
      ASSERT_EQ(a->job.has_value(), b->job.has_value());
      if (!a->job) continue;
      EXPECT_EQ(a->job->id, b->job->id);
      EXPECT_EQ(a->job->nomad_namespace, b->job->nomad_namespace);
      EXPECT_EQ(a->job->parent_id, b->job->parent_id);
      EXPECT_EQ(a->job->type, b->job->type);
      EXPECT_EQ(a->job->periodic, b->job->periodic);
      EXPECT_EQ(a->job->dispatched, b->job->dispatched);
      EXPECT_EQ(a->job->meta, b->job->meta);
      EXPECT_EQ(a->job->job_modify_index, b->job->job_modify_index);
      EXPECT_EQ(a->job->modify_index, b->job->modify_index);
      EXPECT_EQ(a->job->version, b->job->version);
      ASSERT_EQ(a->job->task_groups.size(), b->job->task_groups.size());
      for (std::size_t g = 0; g < a->job->task_groups.size(); ++g) {
        const auto& ga = a->job->task_groups[g];
        const auto& gb = b->job->task_groups[g];
        EXPECT_EQ(ga.name, gb.name);
        EXPECT_EQ(ga.meta, gb.meta);
        ASSERT_EQ(ga.tasks.size(), gb.tasks.size());
        for (std::size_t t = 0; t < ga.tasks.size(); ++t) {
          EXPECT_EQ(ga.tasks[t].name, gb.tasks[t].name);
          EXPECT_EQ(ga.tasks[t].meta, gb.tasks[t].meta);
        }
      }
    }
  }
}

TEST(JsonFieldsTest, EndpointFieldsCoverEverythingTheModelReads) {
  for (const char* file :
       {"cilium/endpoint_init.json", "cilium/endpoint_labeled.json", "cilium/endpoint_list.json"}) {
    std::string text = testdata::read_data(file);
    auto whole = nlohmann::json::parse(text);
    auto filtered = parse_json_text(text, file, cilium::endpoint_fields());
    ASSERT_TRUE(filtered) << filtered.error().message;
    std::vector<nlohmann::json> wholes = whole.is_array() ? whole.get<std::vector<nlohmann::json>>()
                                                          : std::vector<nlohmann::json>{whole};
    std::vector<nlohmann::json> parts = filtered->is_array()
                                            ? filtered->get<std::vector<nlohmann::json>>()
                                            : std::vector<nlohmann::json>{*filtered};
    ASSERT_EQ(wholes.size(), parts.size());
    for (std::size_t i = 0; i < wholes.size(); ++i) {
      auto a = cilium::parse_endpoint(wholes[i]);
      auto b = cilium::parse_endpoint(parts[i]);
      ASSERT_TRUE(a && b) << file;
      EXPECT_EQ(a->id, b->id);
      EXPECT_EQ(a->state, b->state);
      EXPECT_EQ(a->identity_id, b->identity_id);
      EXPECT_EQ(a->identity_labels, b->identity_labels);
      EXPECT_EQ(a->realized_user_labels, b->realized_user_labels);
      EXPECT_EQ(a->security_relevant_labels, b->security_relevant_labels);
      EXPECT_EQ(a->derived_labels, b->derived_labels);
      EXPECT_EQ(a->disabled_labels, b->disabled_labels);
      EXPECT_EQ(a->spec_user_labels, b->spec_user_labels);
      EXPECT_EQ(a->cni_attachment_id, b->cni_attachment_id);
      EXPECT_EQ(a->container_id, b->container_id);
      EXPECT_EQ(a->health, b->health);
      ASSERT_EQ(a->addressing.size(), b->addressing.size());
      for (std::size_t j = 0; j < a->addressing.size(); ++j) {
        EXPECT_EQ(a->addressing[j].ipv4, b->addressing[j].ipv4);
        EXPECT_EQ(a->addressing[j].ipv6, b->addressing[j].ipv6);
      }
    }
  }
}

TEST(JsonFieldsTest, AWrongTypeInAListedMemberIsStillReported) {
  auto alloc = nomad::parse_allocation_text(
      R"({"ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11","ModifyIndex":"seven","TaskStates":{"x":1}})");
  ASSERT_FALSE(alloc);
  EXPECT_NE(alloc.error().message.find("ModifyIndex"), std::string::npos) << alloc.error().message;
}

}  // namespace
}  // namespace cn::json
