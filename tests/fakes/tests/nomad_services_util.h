#pragma once
// The fixture of the native-service tests: a job "api" whose group holds one service per
// address case and a task service, placed on a cni/cilium network.
#include <string>

#include <gtest/gtest.h>

#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes::nomad_testing {

inline JobSpec services_job(const std::string& ns) {
  JobSpec job;
  job.id = "api";
  job.namespace_ = ns;
  GroupSpec g;
  g.name = "app";
  g.ports = {PortSpec{"http", 8080, std::nullopt}, PortSpec{"admin", 0, std::nullopt}};
  auto service = [](std::string name, std::string port, std::string mode) {
    ServiceSpec s;
    s.name = std::move(name);
    s.port_label = std::move(port);
    s.address_mode = std::move(mode);
    return s;
  };
  ServiceSpec api = service("api", "http", "auto");
  api.tags = {"v1", "http"};
  api.canary_tags = {"canary"};
  api.checks = {CheckSpec{"api-alive", "http", false}, CheckSpec{"api-ready", "http", true}};
  ServiceSpec task = service("api-task", "http", "auto");
  task.task = "server";
  task.checks = {CheckSpec{"task-alive", "tcp", false}};
  g.services = {api, service("api-alloc", "http", "alloc"),
                service("api-alloc-noto", "admin", "alloc"), service("api-bare", "", "auto"), task};
  job.groups = {g};
  return job;
}

class ServicesFixture : public ::testing::Test {
 protected:
  explicit ServicesFixture(const std::string& version = "1.9.7") : fake(config(version)) {
    EXPECT_TRUE(fake.register_job(services_job("default")));
    EXPECT_TRUE(fake.register_job(services_job("prod")));
    JobSpec web;
    web.id = "web";
    EXPECT_TRUE(fake.register_job(web));
  }
  FakeNomadConfig config(const std::string& version) {
    auto cfg = reference_config(&clock);
    cfg.version = version;
    return cfg;
  }
  // A running alloc of "api" with host ports 25431 (http) and 25432 (admin) and the CNI address
  // 10.200.3.17 reported.
  std::string place_api(const std::string& ns = "default") {
    PlaceRequest p;
    p.job_id = "api";
    p.namespace_ = ns;
    p.port_values = {{"http", 25431}, {"admin", 25432}};
    auto id = fake.place_alloc(p);
    EXPECT_TRUE(id) << id.error().message;
    EXPECT_TRUE(
        fake.set_network_status(id.value_or(""), NetworkStatusSpec{"10.200.3.17", "", "eth0"}));
    return id.value_or("");
  }

  ManualClock clock{wall_at(kRefStart)};
  FakeNomad fake;
};

}  // namespace cn::fakes::nomad_testing
