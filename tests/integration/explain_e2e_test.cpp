// `cilium-nomad-labeler explain` as an operator runs it: the built binary, over the curl clients,
// against the fake agent and the fake Nomad, with the daemon run in-process to label first.
#include <gtest/gtest.h>

#include "common/cilium/client/curl_cilium_client.h"
#include "common/nomad/client/curl_nomad_client.h"
#include "labeler/labeler_daemon.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

using nlohmann::json;

class ExplainE2E : public ::testing::Test {
 protected:
  void start(std::vector<std::string> agent_label_patterns) {
    fakes::FakeCiliumAgentConfig ac;
    ac.socket_path = dir_.file("cilium.sock");
    ac.label_patterns = std::move(agent_label_patterns);
    agent_ = std::make_unique<fakes::FakeCiliumAgent>(ac);
    agent_->start();
    nomad_ = std::make_unique<fakes::FakeNomad>();
    ASSERT_TRUE(nomad_->start());
    fakes::JobSpec web;
    web.id = "web";
    web.groups.emplace_back();
    ASSERT_TRUE(nomad_->register_job(web));
    nomad::NomadClientConfig nc;
    nc.address = nomad_addr();
    nomad_client_ = std::move(*nomad::CurlNomadClient::create(nc));
    cilium::CiliumClientConfig cc;
    cc.socket_path = ac.socket_path;
    cilium_client_ = std::make_unique<cilium::CurlCiliumClient>(cc);
  }

  void TearDown() override {
    if (daemon_) daemon_->stop();
    if (agent_) agent_->stop();
    if (nomad_) nomad_->stop();
  }

  std::string nomad_addr() const { return "http://127.0.0.1:" + std::to_string(nomad_->port()); }

  std::string running_alloc(const std::string& ip) {
    fakes::PlaceRequest req;
    req.job_id = "web";
    auto id = nomad_->place_alloc(req);
    EXPECT_TRUE(id);
    EXPECT_TRUE(nomad_->set_network_status(*id, {ip, "", "eth0"}));
    auto ep = agent_->create_endpoint({{"container-id", *id},
                                       {"container-interface-name", "eth0"},
                                       {"interface-name", "lxc" + id->substr(0, 8)},
                                       {"addressing", {{"ipv4", ip}}},
                                       {"state", "waiting-for-identity"},
                                       {"sync-build-endpoint", true}});
    EXPECT_TRUE(ep);
    return *id;
  }

  // The daemon's startup reconcile, then its stop: explain must work with no daemon.
  void reconcile_once() {
    DaemonConfig config;
    config.socket_path = dir_.file("run/labeler.sock");
    config.state_file = dir_.file("run/state.json");
    config.resync_interval = std::chrono::seconds{0};
    config.watch = WatchMode::kNone;
    config.metrics_addr = "";
    daemon_ = std::make_unique<LabelerDaemon>(config, *nomad_client_, *cilium_client_,
                                              system_clock(), nullptr);
    std::stop_source never;
    ASSERT_TRUE(daemon_->start(never.get_token()));
  }

  json explain(const std::string& alloc, int& exit_code) {
    auto result = testing::run_process(
        {testing::bin_dir() + "/cilium-nomad-labeler", "explain", alloc, "--json",
         "--cilium-socket", dir_.file("cilium.sock"), "--state-file", dir_.file("run/state.json")},
        testing::with_sanitizer_options({{"NOMAD_ADDR", nomad_addr()}}), "");
    exit_code = result.exit_code;
    EXPECT_TRUE(json::accept(result.out)) << result.out << result.err;
    return json::accept(result.out) ? json::parse(result.out) : json();
  }

  testing::TempDir dir_;
  std::unique_ptr<fakes::FakeCiliumAgent> agent_;
  std::unique_ptr<fakes::FakeNomad> nomad_;
  std::unique_ptr<nomad::CurlNomadClient> nomad_client_;
  std::unique_ptr<cilium::CurlCiliumClient> cilium_client_;
  std::unique_ptr<LabelerDaemon> daemon_;
};

TEST_F(ExplainE2E, LabeledAllocationThroughTheBinaryWithTheDaemonStopped) {
  start({});
  auto alloc = running_alloc("10.200.1.10");
  reconcile_once();
  ASSERT_TRUE(testing::eventually([&] {
    auto ep = agent_->endpoint("cni-attachment-id:" + alloc + ":eth0");
    return ep && (*ep)["status"]["identity"]["id"].get<long long>() >= 256;
  }));
  daemon_->stop();
  daemon_.reset();
  int code = -1;
  json out = explain(alloc.substr(0, 8), code);
  EXPECT_EQ(code, 0) << out.dump(2);
  EXPECT_EQ(out["allocation"], alloc);
  EXPECT_EQ(out["verdict"]["kind"], "labeled");
  EXPECT_EQ(out["nomad"]["job"], "web");
  EXPECT_EQ(agent_->count("PATCH", ""), 1) << "explain itself never writes";
}

TEST_F(ExplainE2E, AgentLabelsFilterTrapIsDiagnosed) {
  // An agent that keeps only k8s: labels in identities: nomad: labels become derived.
  start({"k8s:.*"});
  auto alloc = running_alloc("10.200.1.11");
  reconcile_once();
  ASSERT_TRUE(testing::eventually([&] {
    auto ep = agent_->endpoint("cni-attachment-id:" + alloc + ":eth0");
    return ep && (*ep)["status"]["labels"].contains("derived") &&
           !(*ep)["status"]["labels"]["derived"].empty();
  }));
  int code = -1;
  json out = explain(alloc, code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(out["verdict"]["kind"], "labels_filtered") << out.dump(2);
}

}  // namespace
}  // namespace cn::labeler
