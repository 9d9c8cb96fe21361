// A node's report of its own instances: health from the local checks, its encoding in a Nomad
// Variable, and what the other nodes make of it.
#include "labeler/services/node_report.h"

#include <gtest/gtest.h>

#include "tests/unit/services/lb_service_test_support.h"

namespace cn::labeler {
namespace {

constexpr const char* kAlloc = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";

nomad::CheckResult check(const char* name, const char* service, nomad::CheckStatus status) {
  nomad::CheckResult c;
  c.id = name;
  c.check = name;
  c.service = service;
  c.status = status;
  return c;
}

TEST(NodeReport, AServiceIsReadyWhenEveryCheckOfItPassed) {
  using enum nomad::CheckStatus;
  const std::vector<nomad::CheckResult> checks = {
      check("web-alive", "web", success), check("web-ready", "web", pending),
      check("db-alive", "db", failure), check("db-ready", "db", pending),
      check("api-alive", "api", success)};
  EXPECT_EQ(service_health(checks, "api").state, BackendState::ready);
  EXPECT_EQ(service_health(checks, "queue").state, BackendState::ready);  // no checks
  auto web = service_health(checks, "web");
  EXPECT_EQ(web.state, BackendState::not_ready);
  EXPECT_EQ(web.reason, "check web-ready: pending");
  EXPECT_EQ(service_health(checks, "db").reason, "check db-alive: failure");  // failure wins
}

TEST(NodeReport, EncodedItemsDecodeToTheSameReport) {
  nomad::Allocation alloc;
  alloc.id = kAlloc;
  alloc.network_status = nomad::NetworkStatus{"eth0", "10.200.3.17", ""};
  alloc.ports = {{"http", 25431, 8080, "10.0.1.15"}, {"admin", 26001, 0, "10.0.1.15"}};
  NodeReport report;
  report[kAlloc] =
      instance_report(alloc, {"web", "db"}, {check("db-alive", "db", nomad::CheckStatus::failure)});
  auto items = encode_node_report(report);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items.at(kAlloc),
            R"({"a":"10.200.3.17","h":"10.0.1.15","p":{"admin":26001,"http":8080},)"
            R"("s":{"db":"check db-alive: failure","web":""}})");
  EXPECT_EQ(decode_node_report(items), report);
}

TEST(NodeReport, ABadItemIsSkippedAndTheOthersStay) {
  std::map<std::string, std::string> items = {{"a1", R"({"s":{"web":""},"p":{"http":8080}})"},
                                              {"a2", "not json"},
                                              {"a3", R"({"s":{"web":1}})"},
                                              {"a4", R"({"s":{},"p":{"http":70000}})"},
                                              {"a5", R"([1,2])"}};
  auto report = decode_node_report(items);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report.at("a1").ports.at("http"), 8080);
}

TEST(NodeReport, TheCatalogServesWhatTheReportsSay) {
  NodeReport report;
  InstanceReport instance;
  instance.services["web"] = {BackendState::ready, ""};
  instance.ports["http"] = 8080;
  instance.alloc_address = "10.200.3.17";
  instance.host_address = "10.0.1.15";
  report[kAlloc] = instance;

  CatalogInput input;
  nomad::ServiceRegistration r;
  r.alloc_id = kAlloc;
  r.service_name = "web";
  r.nomad_namespace = "default";
  r.id = std::string("_nomad-task-") + kAlloc + "-group-app-web-http";
  r.address = "10.0.1.15";  // address_mode "auto": the host
  r.port = 25431;
  input.registrations = {r};
  input.vips["default/web"] = testing::ip("10.96.0.7");
  add_node_report(report, input);
  auto catalog = build_catalog(input);
  ASSERT_EQ(catalog.services.size(), 1u);
  EXPECT_EQ(catalog.services[0].ports[0].port, 8080u);  // the VIP listens on `to`
  EXPECT_EQ(catalog.services[0].backends[0].ports[0].port, 25431u);
  EXPECT_EQ(catalog.services[0].backends[0].state, BackendState::ready);
  EXPECT_EQ(catalog.described[0].modes.at(AddressMode::host), 1);
}

}  // namespace
}  // namespace cn::labeler
