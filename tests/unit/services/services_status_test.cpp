// The services status file: what the last pass decided, built from the pass alone, written by
// the daemon and read back by `services` in another process.
#include "labeler/services/services_status.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.h"
#include "tests/unit/services/lb_service_test_support.h"

namespace cn::labeler {
namespace {

using testing::backend;
using testing::ip;
using testing::service;

constexpr const char* kReady = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
constexpr const char* kFailing = "9c2e1d3f-0000-4000-8000-00000000000b";
constexpr const char* kInRange = "a0000000-0000-4000-8000-00000000000c";
constexpr const char* kNoAddress = "d0000000-0000-4000-8000-00000000000d";

ServicesStatusSource source() {
  return {LbApi::state_file, "/var/run/cilium/lb-state.json", {*parse_ip_prefix("10.96.0.0/16")}};
}

// prod/api is served with one ready and one failing backend, and two backends left out (one by
// the catalog, one by the gate); prod/Bad_Name is left out whole by the gate; prod/full got no
// VIP.
ServicesPass sample_pass() {
  ServicesPass pass;
  pass.catalog.described = {{"prod", "api", {{AddressMode::alloc, 3}, {AddressMode::host, 1}}},
                            {"prod", "Bad_Name", {{AddressMode::alloc, 1}}},
                            {"prod", "full", {{AddressMode::alloc, 2}}}};
  auto failing = backend(kFailing, "10.200.4.9", 8080, BackendState::not_ready);
  failing.state_reason = "check web-alive: failure";
  failing.node_name = "client-2";
  auto api = service(
      "prod", "api", "10.96.0.7", 8080,
      {backend(kReady, "10.200.3.17", 8080), failing, backend(kInRange, "10.96.0.99", 8080)});
  auto bad = service("prod", "Bad_Name", "10.96.0.8", 9090, {backend(kReady, "10.200.3.17", 9090)});
  pass.catalog.services = {api, bad};
  pass.catalog.problems = {
      {"prod", "api", kNoAddress, "address \"\" is not an IP address"},
      {"prod", "full", "", "no virtual IP assigned yet"},
  };
  pass.claim_problems = {{"prod", "full", "", "no free address in 10.96.0.0/16"}};
  auto served = api;
  served.backends.pop_back();
  pass.checked.services = {served};
  pass.checked.problems = {
      {"prod", "Bad_Name", "", "name \"Bad_Name\" is not a Nomad service name"},
      {"prod", "api", kInRange, "address 10.96.0.99 is inside the VIP range"},
  };
  return pass;
}

const ServiceStatus& find_service(const ServicesStatus& status, const std::string& name) {
  auto it = std::ranges::find(status.services, name, &ServiceStatus::name);
  EXPECT_NE(it, status.services.end()) << name;
  return *it;
}

const ServiceBackendStatus& find_backend(const ServiceStatus& s, const std::string& alloc_id) {
  auto it = std::ranges::find(s.backends, alloc_id, &ServiceBackendStatus::alloc_id);
  EXPECT_NE(it, s.backends.end()) << alloc_id;
  return *it;
}

TEST(ServicesStatus, EveryServiceIsServedOrLeftOutWithItsReason) {
  const auto status = build_services_status(sample_pass(), source());
  EXPECT_EQ(status.lb_api, LbApi::state_file);
  EXPECT_EQ(status.lb_target, "/var/run/cilium/lb-state.json");
  EXPECT_EQ(status.vip_ranges, std::vector<std::string>{"10.96.0.0/16"});
  EXPECT_TRUE(status.last_pass_ok);
  EXPECT_EQ(status.updated_unix_ms, 0) << "the pure builder sets no time";
  ASSERT_EQ(status.services.size(), 3u);

  const auto& api = find_service(status, "api");
  EXPECT_EQ(api.state, ServiceState::served);
  EXPECT_EQ(api.reason, "");
  EXPECT_EQ(api.vip, "10.96.0.7");
  ASSERT_EQ(api.ports.size(), 1u);
  EXPECT_EQ(api.ports[0], (ServicePortStatus{"http", 8080, LbProtocol::tcp}));
  EXPECT_EQ(api.address_modes, (std::map<std::string, int>{{"alloc", 3}, {"host", 1}}));
  ASSERT_EQ(api.backends.size(), 4u);
  EXPECT_EQ(find_backend(api, kReady).state, ServiceBackendState::ready);
  EXPECT_EQ(find_backend(api, kReady).address, "10.200.3.17");
  EXPECT_EQ(find_backend(api, kFailing).state, ServiceBackendState::not_ready);
  EXPECT_EQ(find_backend(api, kFailing).reason, "check web-alive: failure");
  EXPECT_EQ(find_backend(api, kFailing).node, "client-2");
  EXPECT_EQ(find_backend(api, kInRange).state, ServiceBackendState::left_out);
  EXPECT_EQ(find_backend(api, kInRange).reason, "address 10.96.0.99 is inside the VIP range");
  EXPECT_EQ(find_backend(api, kNoAddress).state, ServiceBackendState::left_out);
  EXPECT_EQ(find_backend(api, kNoAddress).address, "");
  EXPECT_EQ(find_backend(api, kNoAddress).reason, "address \"\" is not an IP address");

  const auto& bad = find_service(status, "Bad_Name");
  EXPECT_EQ(bad.state, ServiceState::left_out);
  EXPECT_EQ(bad.reason, "name \"Bad_Name\" is not a Nomad service name");
  EXPECT_EQ(bad.vip, "10.96.0.8") << "the VIP it holds, though nothing serves it";

  const auto& full = find_service(status, "full");
  EXPECT_EQ(full.state, ServiceState::left_out);
  EXPECT_EQ(full.vip, "");
  EXPECT_EQ(full.vip_reason, "no free address in 10.96.0.0/16");
  EXPECT_EQ(full.reason, "no virtual IP: no free address in 10.96.0.0/16")
      << "the claim's error, not the catalog's vaguer repeat of it";
  EXPECT_EQ(full.address_modes, (std::map<std::string, int>{{"alloc", 2}}));
}

TEST(ServicesStatus, SortedWhateverTheOrderOfThePass) {
  auto pass = sample_pass();
  const auto first = build_services_status(pass, source());
  std::ranges::reverse(pass.catalog.described);
  std::ranges::reverse(pass.catalog.services);
  for (auto& s : pass.catalog.services) std::ranges::reverse(s.backends);
  std::ranges::reverse(pass.catalog.problems);
  std::ranges::reverse(pass.checked.problems);
  EXPECT_EQ(build_services_status(pass, source()), first);
  for (std::size_t i = 1; i < first.services.size(); ++i) {
    EXPECT_LT(std::tie(first.services[i - 1].nomad_namespace, first.services[i - 1].name),
              std::tie(first.services[i].nomad_namespace, first.services[i].name));
  }
  const auto& backends = find_service(first, "api").backends;
  EXPECT_TRUE(std::ranges::is_sorted(backends, {}, &ServiceBackendStatus::alloc_id));
}

TEST(ServicesStatus, ABackendWithASecondAddressIsServedWithANote) {
  auto pass = sample_pass();
  pass.catalog.problems.push_back(
      {"prod", "api", kReady,
       "registers two addresses, 10.200.3.17 and 10.0.1.15: only the first is served"});
  const auto status = build_services_status(pass, source());
  const auto& b = find_backend(find_service(status, "api"), kReady);
  EXPECT_EQ(b.state, ServiceBackendState::ready);
  EXPECT_EQ(b.reason, "");
  EXPECT_NE(b.note.find("registers two addresses"), std::string::npos);
}

TEST(ServicesStatus, EncodedAndParsedBackWhole) {
  auto status = build_services_status(sample_pass(), source());
  status.updated_unix_ms = 1'796'000'000'000;
  status.lb_api = LbApi::rest;
  status.lb_target = "rest";
  auto parsed = parse_services_status(services_status_json(status));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(*parsed, status);

  const auto doc = nlohmann::json::parse(services_status_json(status));
  EXPECT_EQ(doc["version"], kServicesStatusVersion);
  EXPECT_EQ(doc["lb_api"], "rest");
  EXPECT_EQ(doc["services"][0]["namespace"], "prod");
  EXPECT_EQ(doc["services"][0]["state"], "left-out");
  EXPECT_EQ(doc["services"][1]["address_modes"]["host"], 1);
  EXPECT_EQ(doc["services"][1]["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(doc["services"][1]["backends"][0]["state"], "ready");
}

TEST(ServicesStatus, NoServicesIsAnEmptyListNotAnError) {
  const auto status = build_services_status(ServicesPass{}, source());
  auto parsed = parse_services_status(services_status_json(status));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed->services.empty());
}

// A file cut short, of another shape or of another version is an error naming what is wrong,
// never a crash and never half a status.
TEST(ServicesStatus, ABadFileIsAnErrorWithTheReason) {
  auto good =
      nlohmann::json::parse(services_status_json(build_services_status(sample_pass(), source())));
  auto with = [&good](const std::string& pointer, nlohmann::json value) {
    auto doc = good;
    doc[nlohmann::json::json_pointer(pointer)] = std::move(value);
    return doc.dump();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "services status"},
      {services_status_json(build_services_status(sample_pass(), source())).substr(0, 200),
       "services status"},
      {"[]", "expected an object"},
      {"{}", "no version"},
      {with("/version", 2), "version 2"},
      {with("/version", "1"), "/version"},
      {with("/lb_api", "grpc"), "unknown load-balancer API \"grpc\""},
      {with("/lb_api", nullptr), "/lb_api: missing"},
      {with("/services", "api"), "/services"},
      {with("/services/0", 7), "/services/0"},
      {with("/services/1/state", "maybe"), "unknown service state \"maybe\""},
      {with("/services/1/ports/0/port", 70000), "/services/1/ports/0/port"},
      {with("/services/1/ports/0/protocol", "tcp"), "unknown protocol \"tcp\""},
      {with("/services/1/address_modes/alloc", -1), "/services/1/address_modes/alloc"},
      {with("/services/1/backends/2/state", "gone"), "/services/1/backends/2/state"},
      {with("/services/1/backends/0/alloc_id", 12), "/services/1/backends/0/alloc_id"},
  };
  for (const auto& [text, expected] : cases) {
    auto parsed = parse_services_status(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().kind, ErrorKind::invalid) << parsed.error().message;
    EXPECT_NE(parsed.error().message.find(expected), std::string::npos)
        << parsed.error().message << "\nwanted: " << expected;
  }
}

TEST(ServicesStatus, AMissingFileIsNotFoundByErrno) {
  cn::testing::TempDir dir;
  auto read = read_services_status(dir.file("services-status.json"));
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().sys_errno, ENOENT);

  cn::testing::write_file(dir.file("services-status.json"), "{\"version\": 1, \"services\": 3}");
  read = read_services_status(dir.file("services-status.json"));
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().kind, ErrorKind::invalid);
  EXPECT_NE(read.error().message.find(dir.file("services-status.json")), std::string::npos)
      << "the path is named: " << read.error().message;
}

TEST(ServicesStatus, PathIsBesideTheStateFile) {
  EXPECT_EQ(services_status_path("/run/cilium-nomad/state.json"),
            "/run/cilium-nomad/services-status.json");
  EXPECT_EQ(services_status_path("state.json"), "./services-status.json");
}

TEST(ServicesStatus, AFailedPassKeepsWhatTheAgentStillServes) {
  const auto last = build_services_status(sample_pass(), source());
  const auto failed = failed_services_status(last, source(), "Nomad: connection refused");
  EXPECT_FALSE(failed.last_pass_ok);
  EXPECT_EQ(failed.last_pass_error, "Nomad: connection refused");
  EXPECT_EQ(failed.services, last.services);

  const auto first = failed_services_status(std::nullopt, source(), "Nomad: timeout");
  EXPECT_TRUE(first.services.empty());
  EXPECT_EQ(first.vip_ranges, last.vip_ranges);
}

TEST(ServicesStatus, TheFileIsRewrittenOnlyWhenTheStatusChanges) {
  cn::testing::TempDir dir;
  ServicesStatusFile file(dir.file("services-status.json"));
  const auto status = build_services_status(sample_pass(), source());
  const auto t0 = WallTime{std::chrono::milliseconds{1'796'000'000'000}};

  auto wrote = file.publish(status, t0);
  ASSERT_TRUE(wrote) << wrote.error().message;
  EXPECT_TRUE(*wrote);
  auto read = read_services_status(file.path());
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->updated_unix_ms, 1'796'000'000'000);
  EXPECT_TRUE(same_services_status(*read, status));

  wrote = file.publish(status, t0 + std::chrono::seconds(30));
  ASSERT_TRUE(wrote);
  EXPECT_FALSE(*wrote) << "the same status again is not rewritten";
  EXPECT_EQ(read_services_status(file.path())->updated_unix_ms, 1'796'000'000'000);

  auto changed = status;
  changed.services.pop_back();
  EXPECT_FALSE(same_services_status(changed, status));
  wrote = file.publish(changed, t0 + std::chrono::seconds(60));
  ASSERT_TRUE(wrote);
  EXPECT_TRUE(*wrote);
  EXPECT_EQ(read_services_status(file.path())->services.size(), 2u);
}

}  // namespace
}  // namespace cn::labeler
