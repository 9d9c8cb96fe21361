#pragma once
// The cluster the services tests run against: one fake Nomad with two client nodes and a job
// "api" whose group service (address_mode "alloc", one check) has an instance on each node.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "common/nomad/client/curl_nomad_client.h"
#include "labeler/services/lb_state_file_writer.h"
#include "labeler/services/services_sync.h"
#include "labeler/services/vip_table.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace cn::labeler::testing {

inline constexpr const char* kNode1 = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";
inline constexpr const char* kNode2 = "0a9b8c7d-0000-4000-8000-000000000002";

struct TwoNodeCluster {
  std::unique_ptr<fakes::FakeNomad> nomad;
  std::string alloc1;  // on node 1, Cilium IP 10.200.1.5
  std::string alloc2;  // on node 2, Cilium IP 10.200.2.5
};

inline std::string place_api_instance(fakes::FakeNomad& nomad, const char* node,
                                      const char* cilium_ip) {
  fakes::PlaceRequest p;
  p.job_id = "api";
  p.node_id = node;
  auto id = nomad.place_alloc(p);
  EXPECT_TRUE(id) << id.error().message;
  if (!id) return "";
  EXPECT_TRUE(nomad.set_network_status(*id, fakes::NetworkStatusSpec{cilium_ip, "", "eth0"}));
  EXPECT_TRUE(nomad.register_services(*id));
  return *id;
}

// Started; both instances registered, their checks not yet run.
inline TwoNodeCluster start_two_node_cluster() {
  fakes::FakeNomadConfig cfg;
  cfg.node_id = kNode1;
  cfg.node_name = "worker-1";
  cfg.node_ip = "10.0.1.15";
  cfg.blocking_jitter = false;
  TwoNodeCluster c;
  c.nomad = std::make_unique<fakes::FakeNomad>(cfg);
  fakes::NodeRecord second;
  second.id = kNode2;
  second.name = "worker-2";
  second.ip = "10.0.1.16";
  c.nomad->add_node(second);
  fakes::JobSpec job;
  job.id = "api";
  fakes::GroupSpec g;
  g.name = "app";
  g.ports = {fakes::PortSpec{"http", 8080, std::nullopt}};
  fakes::ServiceSpec svc;
  svc.name = "api";
  svc.port_label = "http";
  svc.address_mode = "alloc";
  svc.checks = {fakes::CheckSpec{"api-alive", "http", false}};
  g.services = {svc};
  job.groups = {g};
  EXPECT_TRUE(c.nomad->register_job(job));
  EXPECT_TRUE(c.nomad->start());
  c.alloc1 = place_api_instance(*c.nomad, kNode1, "10.200.1.5");
  c.alloc2 = place_api_instance(*c.nomad, kNode2, "10.200.2.5");
  return c;
}

// One labeler's services pass: its own Nomad client, VIP table and pass, writing its own state
// file. The loop tests run a ServicesLoop over it.
struct SyncNode {
  SyncNode(const std::string& address, const VipRange& range, Clock& clock, std::string node_id,
           std::string state_file) {
    nomad::NomadClientConfig c;
    c.address = address;
    c.retry_seed = 1;
    client = std::move(*nomad::CurlNomadClient::create(std::move(c)));
    vips = std::make_unique<VipTable>(*client, *client, range, clock);
    writer = std::make_unique<LbStateFileWriter>(std::move(state_file));
    ServicesSyncOptions options;
    options.node_id = std::move(node_id);
    options.check.vip_ranges = {range.prefix()};
    sync = std::make_unique<ServicesSync>(*client, *client, *vips, *writer, options);
  }
  Result<ServicesPass> pass() {
    return sync->run_once(Deadline{system_clock().now() + std::chrono::seconds{10}});
  }

  std::unique_ptr<nomad::CurlNomadClient> client;
  std::unique_ptr<VipTable> vips;
  std::unique_ptr<LbStateFileWriter> writer;
  std::unique_ptr<ServicesSync> sync;
};

}  // namespace cn::labeler::testing
