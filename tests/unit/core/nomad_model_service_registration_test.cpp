// Nomad's service registrations and check results as the API writes them
// (nomad/structs/service_registration.go, client/structs AllocChecksResponse in hashicorp/nomad).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/nomad/model/alloc_checks.h"
#include "common/nomad/model/service_registration.h"
#include "common/util/json_where.h"

namespace cn::nomad {
namespace {

constexpr const char* kRegistration = R"({
  "Address": "10.200.3.17",
  "AllocID": "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11",
  "CreateIndex": 1238,
  "Datacenter": "dc1",
  "ID": "_nomad-task-4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11-group-app-web-http",
  "JobID": "web",
  "ModifyIndex": 1240,
  "Namespace": "default",
  "NodeID": "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b",
  "Port": 8080,
  "ServiceName": "web",
  "Tags": ["http"]
})";

TEST(NomadServiceRegistration, ReadsEveryFieldOfTheTwelve) {
  auto list = parse_service_registrations_text(std::string("[") + kRegistration + "]");
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_EQ(list->size(), 1u);
  const auto& s = list->front();
  EXPECT_EQ(s.id, "_nomad-task-4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11-group-app-web-http");
  EXPECT_EQ(s.service_name, "web");
  EXPECT_EQ(s.nomad_namespace, "default");
  EXPECT_EQ(s.node_id, "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b");
  EXPECT_EQ(s.datacenter, "dc1");
  EXPECT_EQ(s.job_id, "web");
  EXPECT_EQ(s.alloc_id, "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11");
  EXPECT_EQ(s.address, "10.200.3.17");
  EXPECT_EQ(s.port, 8080);
  EXPECT_EQ(s.tags, (std::vector<std::string>{"http"}));
  EXPECT_EQ(s.create_index, 1238u);
  EXPECT_EQ(s.modify_index, 1240u);
}

TEST(NomadServiceRegistration, EmptyAnswersAreNoRegistrations) {
  EXPECT_TRUE(parse_service_registrations_text("[]")->empty());
  EXPECT_TRUE(parse_service_registrations_text("null")->empty());
}

TEST(NomadServiceRegistration, AnAddressOrPortNoBackendCanHaveIsKeptForItsServiceToReport) {
  auto doc = nlohmann::json::parse(kRegistration);
  doc["Address"] = "";
  doc["Port"] = 70000;
  auto s = read_service_registration(doc, "event");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->address, "");
  EXPECT_EQ(s->port, 70000);
}

TEST(NomadServiceRegistration, ABrokenShapeFailsWithTheJsonPointer) {
  auto doc = nlohmann::json::parse(kRegistration);
  doc["Port"] = "8080";
  auto list = parse_service_registrations_text("[" + doc.dump() + "]");
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().message,
            "service registrations at /0/Port: expected an integer from -9223372036854775808 to "
            "9223372036854775807, got string");

  auto no_alloc = nlohmann::json::parse(kRegistration);
  no_alloc.erase("AllocID");
  auto missing =
      read_service_registration(no_alloc, json::JsonWhere("event").key("Payload").key("Service"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "event at /Payload/Service/AllocID: missing");
  EXPECT_FALSE(parse_service_registrations_text("{}"));
}

TEST(NomadServiceList, OneEntryPerServiceOfEachNamespace) {
  auto list = parse_service_list_text(
      R"([{"Namespace":"prod","Services":[{"ServiceName":"api","Tags":["a"]},{"ServiceName":"db","Tags":null}]},
          {"Namespace":"dev","Services":[{"ServiceName":"api","Tags":[]}]}])");
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].nomad_namespace, "prod");
  EXPECT_EQ((*list)[1].service_name, "db");
  EXPECT_EQ((*list)[2].nomad_namespace, "dev");
  EXPECT_TRUE(parse_service_list_text("[]")->empty());
  EXPECT_FALSE(parse_service_list_text(R"([{"Services":[]}])"));
}

TEST(NomadAllocChecks, ReadsStatusAndModeAndDropsTheOutput) {
  auto checks = parse_alloc_checks_text(
      R"({"4f0c":{"Check":"web-alive","Group":"web.app[0]","ID":"4f0c","Mode":"healthiness",
                  "Output":"nomad: http ok","Service":"web","Status":"success","StatusCode":200,
                  "Timestamp":1786012345},
          "9a1b":{"Check":"web-ready","Group":"web.app[0]","ID":"9a1b","Mode":"readiness",
                  "Output":"connection refused","Service":"web","Status":"failure",
                  "Task":"server","Timestamp":1786012346}})");
  ASSERT_TRUE(checks) << checks.error().message;
  ASSERT_EQ(checks->size(), 2u);
  EXPECT_EQ((*checks)[0].check, "web-alive");
  EXPECT_EQ((*checks)[0].status, CheckStatus::success);
  EXPECT_FALSE((*checks)[0].readiness);
  EXPECT_EQ((*checks)[0].timestamp, 1786012345);
  EXPECT_EQ((*checks)[1].status, CheckStatus::failure);
  EXPECT_TRUE((*checks)[1].readiness);
  EXPECT_EQ((*checks)[1].task, "server");
  EXPECT_TRUE(parse_alloc_checks_text("{}")->empty());
}

TEST(NomadAllocChecks, AStatusThisReaderDoesNotKnowIsNotPassing) {
  auto checks = parse_alloc_checks_text(R"({"x":{"ID":"x","Status":"warning"}})");
  ASSERT_TRUE(checks);
  EXPECT_EQ(checks->front().status, CheckStatus::failure);
  EXPECT_FALSE(parse_alloc_checks_text(R"({"x":{"ID":"x"}})"));  // no status at all
  EXPECT_FALSE(parse_alloc_checks_text("[]"));
}

}  // namespace
}  // namespace cn::nomad
