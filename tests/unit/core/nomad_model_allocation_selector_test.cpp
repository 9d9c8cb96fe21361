// parse_allocation_list(body, with_job): the node watch decodes the Job only of the allocations
// that changed; every other field must come out as the full decode gives it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/nomad/model/allocation.h"
#include "tests/unit/core/nomad_model_test_support.h"

namespace cn::nomad {
namespace {

const std::vector<std::string> kIds = {"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11",
                                       "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f12",
                                       "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f13"};

// Three copies of the reference allocation (Job embedded) with their own IDs and indexes.
std::string node_list() {
  auto alloc = nlohmann::json::parse(testdata::read_data("nomad/alloc_get.json"));
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < kIds.size(); ++i) {
    alloc["ID"] = kIds[i];
    alloc["ModifyIndex"] = 100 + i;
    list.push_back(alloc);
  }
  return list.dump();
}

TEST(NomadAllocationSelectorTest, DecodesTheJobOfSelectedElementsOnly) {
  const std::string body = node_list();
  auto full = parse_allocation_list(body);
  ASSERT_TRUE(full) << full.error().message;
  std::vector<std::pair<std::string, std::uint64_t>> asked;
  auto partial = parse_allocation_list(body, [&](std::string_view id, std::uint64_t index) {
    asked.emplace_back(id, index);
    return id == kIds[1];
  });
  ASSERT_TRUE(partial) << partial.error().message;
  EXPECT_EQ(asked, (std::vector<std::pair<std::string, std::uint64_t>>{
                       {kIds[0], 100}, {kIds[1], 101}, {kIds[2], 102}}));
  ASSERT_EQ(partial->allocations.size(), 3U);
  ASSERT_EQ(full->allocations.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    const Allocation& a = full->allocations[i];
    const Allocation& b = partial->allocations[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.nomad_namespace, b.nomad_namespace);
    EXPECT_EQ(a.job_id, b.job_id);
    EXPECT_EQ(a.task_group, b.task_group);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.node_id, b.node_id);
    EXPECT_EQ(a.client_status, b.client_status);
    EXPECT_EQ(a.desired_status, b.desired_status);
    EXPECT_EQ(a.create_index, b.create_index);
    EXPECT_EQ(a.modify_index, b.modify_index);
    EXPECT_EQ(a.alloc_modify_index, b.alloc_modify_index);
    EXPECT_EQ(a.create_time, b.create_time);
    EXPECT_EQ(a.modify_time, b.modify_time);
    ASSERT_TRUE(a.network_status && b.network_status);
    EXPECT_EQ(a.network_status->address, b.network_status->address);
    EXPECT_EQ(a.network_status->interface_name, b.network_status->interface_name);
    EXPECT_EQ(a.network_status->address_ipv6, b.network_status->address_ipv6);
    ASSERT_TRUE(a.job.has_value());
    if (i != 1) {
      EXPECT_FALSE(b.job.has_value());
      EXPECT_FALSE(b.job_modify_index.has_value());
      continue;
    }
    ASSERT_TRUE(b.job.has_value());
    EXPECT_EQ(a.job_modify_index, b.job_modify_index);
    EXPECT_EQ(a.job->id, b.job->id);
    EXPECT_EQ(a.job->parent_id, b.job->parent_id);
    EXPECT_EQ(a.job->meta, b.job->meta);
    ASSERT_EQ(a.job->task_groups.size(), b.job->task_groups.size());
    for (std::size_t g = 0; g < a.job->task_groups.size(); ++g) {
      EXPECT_EQ(a.job->task_groups[g].name, b.job->task_groups[g].name);
      EXPECT_EQ(a.job->task_groups[g].meta, b.job->task_groups[g].meta);
    }
  }
}

TEST(NomadAllocationSelectorTest, AcceptingAllEqualsTheFullDecode) {
  const std::string body = node_list();
  auto full = parse_allocation_list(body);
  auto all = parse_allocation_list(body, [](std::string_view, std::uint64_t) { return true; });
  ASSERT_TRUE(full && all);
  ASSERT_EQ(full->allocations.size(), all->allocations.size());
  for (std::size_t i = 0; i < full->allocations.size(); ++i) {
    ASSERT_TRUE(all->allocations[i].job.has_value());
    EXPECT_EQ(full->allocations[i].job->parent_id, all->allocations[i].job->parent_id);
    EXPECT_EQ(full->allocations[i].job->meta, all->allocations[i].job->meta);
    EXPECT_EQ(full->allocations[i].job_modify_index, all->allocations[i].job_modify_index);
  }
}

// A list decodes a Job once per version and hands copies to that version's allocations; another
// version (new meta, a re-registered job) is decoded on its own.
TEST(NomadAllocationSelectorTest, JobsOfDifferentVersionsAreDecodedApart) {
  auto alloc = nlohmann::json::parse(testdata::read_data("nomad/alloc_get.json"));
  nlohmann::json list = nlohmann::json::array();
  const std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string>> versions = {
      {0, 10, "a"}, {1, 20, "b"}, {0, 10, "a"}, {0, 30, "c"}};
  for (std::size_t i = 0; i < versions.size(); ++i) {
    const auto& [version, job_modify_index, meta] = versions[i];
    alloc["ID"] = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f2" + std::to_string(i);
    alloc["Job"]["Version"] = version;
    alloc["Job"]["JobModifyIndex"] = job_modify_index;
    alloc["Job"]["Meta"] = {{"m", meta}};
    list.push_back(alloc);
  }
  auto parsed = parse_allocation_list(list.dump());
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->allocations.size(), versions.size());
  for (std::size_t i = 0; i < versions.size(); ++i) {
    const auto& a = parsed->allocations[i];
    ASSERT_TRUE(a.job.has_value());
    EXPECT_EQ(a.job->version, std::get<0>(versions[i]));
    EXPECT_EQ(a.job_modify_index, std::get<1>(versions[i]));
    EXPECT_EQ(a.job->meta.at("m"), std::get<2>(versions[i])) << i;
  }
}

// The version only finds a decoded Job to reuse; a Job that shares it but not its bytes (other
// meta here) is decoded on its own, or the allocation would carry the other one's labels.
TEST(NomadAllocationSelectorTest, JobsOfOneVersionWithOtherBytesAreDecodedApart) {
  auto alloc = nlohmann::json::parse(testdata::read_data("nomad/alloc_get.json"));
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < kIds.size(); ++i) {
    alloc["ID"] = kIds[i];
    alloc["Job"]["Meta"] = {{"team", "team-" + std::to_string(i % 2)}};
    list.push_back(alloc);
  }
  auto parsed = parse_allocation_list(list.dump());
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->allocations.size(), kIds.size());
  for (std::size_t i = 0; i < kIds.size(); ++i) {
    ASSERT_TRUE(parsed->allocations[i].job.has_value());
    EXPECT_EQ(parsed->allocations[i].job->meta.at("team"), "team-" + std::to_string(i % 2)) << i;
  }
}

// A Job that shares an earlier one's version but is not valid JSON past it (a Meta key that is
// not UTF-8, which the scanner does not check) is refused, as when it is decoded alone; only its
// allocation is set aside.
TEST(NomadAllocationSelectorTest, AJobOfAKnownVersionIsStillDecoded) {
  auto element = [](const std::string& id, std::string_view meta_key) {
    return R"({"ID":")" + id + R"(","JobID":"web","Namespace":"default","TaskGroup":"g",)" +
           R"("Job":{"ID":"web","Namespace":"default","Version":1,"JobModifyIndex":10,)" +
           R"("Meta":{")" + std::string(meta_key) + R"(":"a"}}})";
  };
  const std::string body = "[" + element(kIds[0], "team") + "," + element(kIds[1], "\xe5") + "," +
                           element(kIds[2], "team") + "]";
  auto all = [](std::string_view, std::uint64_t) { return true; };
  for (const auto& parsed : {parse_allocation_list(body), parse_allocation_list(body, all)}) {
    ASSERT_TRUE(parsed) << parsed.error().message;
    ASSERT_EQ(parsed->allocations.size(), 2U);
    EXPECT_EQ(parsed->allocations[0].id, kIds[0]);
    EXPECT_EQ(parsed->allocations[1].id, kIds[2]);
    ASSERT_EQ(parsed->rejected.size(), 1U);
    EXPECT_NE(parsed->rejected[0].message.find("allocation list at /1/Job"), std::string::npos)
        << parsed->rejected[0].message;
  }
}

TEST(NomadAllocationSelectorTest, SkippedJobsMustStillBeJsonAndSelectedOnesObjects) {
  auto none = [](std::string_view, std::uint64_t) { return false; };
  auto all = [](std::string_view, std::uint64_t) { return true; };
  const std::string id = R"("ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11")";
  // A broken Job breaks the body, selected or not.
  EXPECT_FALSE(parse_allocation_list("[{" + id + R"(,"Job":{"Meta":[}}])", none));
  EXPECT_FALSE(parse_allocation_list("[{" + id + R"(,"Job":{"Meta":"x)", none));
  // A Job of the wrong type is the element's fault, found only when it is decoded.
  const std::string wrong = "[{" + id + R"(,"Job":7,"ModifyIndex":3}])";
  auto skipped = parse_allocation_list(wrong, none);
  ASSERT_TRUE(skipped);
  EXPECT_EQ(skipped->allocations.size(), 1U);
  auto decoded = parse_allocation_list(wrong, all);
  ASSERT_TRUE(decoded);
  EXPECT_TRUE(decoded->allocations.empty());
  ASSERT_EQ(decoded->rejected.size(), 1U);
  EXPECT_NE(decoded->rejected[0].message.find("allocation list at /0/Job: expected an object"),
            std::string::npos)
      << decoded->rejected[0].message;
  // A null Job is no Job, and the selector is not asked about it.
  auto null_job =
      parse_allocation_list("[{" + id + R"(,"Job":null}])", [](std::string_view, std::uint64_t) {
        ADD_FAILURE() << "asked about an allocation without a Job";
        return true;
      });
  ASSERT_TRUE(null_job);
  ASSERT_EQ(null_job->allocations.size(), 1U);
  EXPECT_FALSE(null_job->allocations[0].job.has_value());
}

TEST(NomadAllocationSelectorTest, BodyShapesAndBadElementsAsWithoutASelector) {
  auto none = [](std::string_view, std::uint64_t) { return false; };
  EXPECT_TRUE(parse_allocation_list("[]", none));
  auto null_body = parse_allocation_list("null", none);
  ASSERT_TRUE(null_body);
  EXPECT_TRUE(null_body->allocations.empty());
  for (const char* bad : {"{}", "", "[", "Permission denied", "[] x"}) {
    EXPECT_FALSE(parse_allocation_list(bad, none)) << bad;
  }
  auto list = parse_allocation_list(
      R"([{"ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11"},{"ID":"../../etc"},7,null,
          {"ID":"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f12","ModifyIndex":"x"}])",
      none);
  ASSERT_TRUE(list);
  EXPECT_EQ(list->allocations.size(), 1U);
  ASSERT_EQ(list->rejected.size(), 4U);
  EXPECT_NE(list->rejected[0].message.find("allocation list at /1/ID"), std::string::npos);
  EXPECT_NE(list->rejected[3].message.find("allocation list at /4/ModifyIndex"), std::string::npos);
}

}  // namespace
}  // namespace cn::nomad
