// `services` as a terminal shows it: a row per service within 100 columns, the backends that
// take no connections below with their reason; --wide every backend whole; --json the file.
#include "labeler/commands/services_command.h"

#include <gtest/gtest.h>

#include <sstream>

#include "labeler/services/services_status.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

class ServicesCommandTest : public ::testing::Test {
 protected:
  ServicesCommandTest() {
    status_.updated_unix_ms = 1'796'000'000'000;
    status_.lb_target = "/var/run/cilium/lb-state.json";
    status_.vip_ranges = {"10.96.0.0/16"};
    for (int i = 0; i < 3; ++i) {
      ServiceStatus s;
      s.nomad_namespace = "payments-production";
      s.name = "checkout-frontend-gateway-" + std::to_string(i);
      s.vip = "10.96.0." + std::to_string(10 + i);
      s.ports = {{"http", 8080, LbProtocol::tcp}, {"grpc", 9090, LbProtocol::tcp}};
      s.address_modes = {{"alloc", 2}};
      s.state = ServiceState::served;
      ServiceBackendStatus ready{"4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f1" + std::to_string(i),
                                 "client-1",
                                 "10.200.3.17",
                                 s.ports,
                                 ServiceBackendState::ready,
                                 "",
                                 ""};
      auto failing = ready;
      failing.alloc_id = "9c2e1d3f-0000-4000-8000-00000000000" + std::to_string(i);
      failing.state = ServiceBackendState::not_ready;
      failing.reason = "check checkout-frontend-gateway-alive: failure";
      s.backends = {ready, failing};
      status_.services.push_back(s);
    }
    ServiceStatus bad;
    bad.nomad_namespace = "default";
    bad.name = "Bad_Name";
    bad.vip = "10.96.0.99";
    bad.address_modes = {{"alloc", 1}, {"host", 2}};
    bad.state = ServiceState::left_out;
    bad.reason = std::string(kLongReason);
    status_.services.insert(status_.services.begin(), bad);
    cn::testing::write_file(file_, services_status_json(status_));
  }

  static constexpr std::string_view kLongReason =
      "name \"Bad_Name\" is not a Nomad service name: an RFC 1123 label of letters, digits and "
      "inner hyphens, 1 to 63 characters";

  ServicesStatus status_;
  cn::testing::TempDir dir_;
  std::string file_ = dir_.file("services-status.json");
};

TEST_F(ServicesCommandTest, DefaultTableFitsOneHundredColumns) {
  auto text = render_services(file_, ServicesView::table, system_clock());
  ASSERT_TRUE(text) << text.error().message;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);)
    EXPECT_LE(line.size(), kServicesTableWidth) << line;
  EXPECT_NE(text->find("SERVICE"), std::string::npos) << *text;
  EXPECT_NE(text->find("10.96.0.11"), std::string::npos) << *text;
  EXPECT_NE(text->find("1/2"), std::string::npos) << "ready/total backends\n" << *text;
  EXPECT_NE(text->find("left out: name"), std::string::npos) << *text;
  EXPECT_NE(text->find("..."), std::string::npos) << "the long reason is cut\n" << *text;
  EXPECT_NE(text->find("alloc 1, host 2"), std::string::npos) << "a mix of modes\n" << *text;
  // The failing backends are listed with why; the ready ones only with --wide.
  EXPECT_NE(text->find("9c2e1d3f  10.200.3.17  not-ready: check"), std::string::npos) << *text;
  EXPECT_EQ(text->find("4b1f6c2e"), std::string::npos) << *text;
  EXPECT_NE(text->find("4 services: 3 served, 1 left out; backends: 3 ready, 3 not ready"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("VIP range: 10.96.0.0/16"), std::string::npos) << *text;
  EXPECT_NE(text->find("state file /var/run/cilium/lb-state.json"), std::string::npos) << *text;
  EXPECT_NE(text->find("--wide"), std::string::npos) << *text;
}

TEST_F(ServicesCommandTest, WideShowsEveryBackendAndWholeCells) {
  auto text = render_services(file_, ServicesView::wide, system_clock());
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find(kLongReason), std::string::npos) << *text;
  EXPECT_NE(text->find("4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11"), std::string::npos) << *text;
  EXPECT_NE(text->find("http:8080/TCP grpc:9090/TCP"), std::string::npos) << *text;
  EXPECT_NE(text->find("not-ready: check checkout-frontend-gateway-alive: failure"),
            std::string::npos)
      << *text;
}

TEST_F(ServicesCommandTest, JsonIsTheFile) {
  auto text = render_services(file_, ServicesView::json, system_clock());
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, cn::testing::read_file(file_));
}

TEST_F(ServicesCommandTest, AFailedPassAndTheRestApiAreSaid) {
  status_.last_pass_ok = false;
  status_.last_pass_error = "Nomad: connection refused";
  status_.lb_api = LbApi::rest;
  status_.lb_target = "rest";
  cn::testing::write_file(file_, services_status_json(status_));
  auto text = render_services(file_, ServicesView::table, system_clock());
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find("last pass failed: Nomad: connection refused"), std::string::npos) << *text;
  EXPECT_NE(text->find("agent fed through its REST API\n"), std::string::npos) << *text;
}

TEST_F(ServicesCommandTest, AMissingFileSaysTheFeatureIsOffOrNoPassEnded) {
  auto text = render_services(dir_.file("none.json"), ServicesView::table, system_clock());
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find(dir_.file("none.json")), std::string::npos)
      << text.error().message;
  EXPECT_NE(text.error().message.find("the services feature is off"), std::string::npos)
      << text.error().message;
}

TEST_F(ServicesCommandTest, ABadFileNamesItselfAndWhy) {
  cn::testing::write_file(file_, "{\"version\": 9}");
  auto text = render_services(file_, ServicesView::table, system_clock());
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find(file_), std::string::npos) << text.error().message;
  EXPECT_NE(text.error().message.find("version 9"), std::string::npos) << text.error().message;
}

}  // namespace
}  // namespace cn::labeler
