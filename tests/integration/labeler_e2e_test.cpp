// The labeler end to end over real sockets: the fake Cilium agent (unix socket), the fake Nomad
// (loopback TCP), the curl clients, the daemon, and the real plugin binary sending notifications.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "common/cilium/client/curl_cilium_client.h"
#include "common/nomad/client/curl_nomad_client.h"
#include "labeler/daemon/labeler_daemon.h"
#include "labeler/daemon/logging.h"
#include "labeler/serve/status_server.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/netns.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

using nlohmann::json;

const std::vector<std::string> kWebLabels = {
    "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
    "nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"};

class LabelerE2E : public ::testing::Test {
 protected:
  fakes::FakeCiliumAgentConfig agent_config() {
    fakes::FakeCiliumAgentConfig ac;
    ac.socket_path = dir_.file("cilium.sock");
    ac.identity_delay =
        std::chrono::milliseconds{30};  // resolution is asynchronous, as in the agent
    return ac;
  }

  void SetUp() override {
    auto ac = agent_config();
    agent_ = std::make_unique<fakes::FakeCiliumAgent>(ac);
    agent_->start();
    nomad_ = std::make_unique<fakes::FakeNomad>();
    ASSERT_TRUE(nomad_->start());
    fakes::JobSpec web;
    web.id = "web";
    web.meta = {{"team", "payments"}};
    fakes::GroupSpec app;
    app.meta = {{"tier", "frontend"}};
    web.groups.push_back(app);
    ASSERT_TRUE(nomad_->register_job(web));

    nomad::NomadClientConfig nc;
    nc.address = "http://127.0.0.1:" + std::to_string(nomad_->port());
    auto client = nomad::CurlNomadClient::create(nc);
    ASSERT_TRUE(client);
    nomad_client_ = std::move(*client);
    cilium::CiliumClientConfig cc;
    cc.socket_path = ac.socket_path;
    cilium_client_ = std::make_unique<cilium::CurlCiliumClient>(cc);
  }

  void TearDown() override {
    if (daemon_) daemon_->stop();
    if (agent_) agent_->stop();
    if (nomad_) nomad_->stop();
  }

  void start_daemon(std::string meta_labels = "", std::string cluster_name = "default",
                    std::shared_ptr<spdlog::logger> log = nullptr) {
    DaemonConfig config;
    config.socket_path = dir_.file("run/labeler.sock");
    config.state_file = dir_.file("run/state.json");
    config.resync_interval = std::chrono::seconds{0};
    config.watch = WatchMode::kNone;
    config.metrics_addr = "";
    if (!meta_labels.empty()) config.policy = *labels::parse_label_policy(meta_labels);
    config.policy.cluster_name = cluster_name;
    daemon_ = std::make_unique<LabelerDaemon>(config, *nomad_client_, *cilium_client_,
                                              system_clock(), std::move(log));
    std::stop_source never;
    ASSERT_TRUE(daemon_->start(never.get_token()));
  }

  // An allocation of job web placed on this node, its network reported, and the endpoint
  // cilium-cni would have created for it (no labels: reserved:init).
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
    EXPECT_TRUE(ep) << (ep ? "" : ep.error().message);
    return *id;
  }

  testing::ProcessResult plugin_add(const std::string& alloc, const std::string& ip, int wait_ms,
                                    const std::string& cni_args = "") {
    json conf = {
        {"cniVersion", "1.0.0"},
        {"name", "cilium"},
        {"type", "cilium-nomad-cni"},
        {"state-file", dir_.file("run/state.json")},
        {"labeler-socket", dir_.file("run/labeler.sock")},
        {"wait-for-labels-ms", wait_ms},
        {"prevResult",
         {{"cniVersion", "1.0.0"},
          {"interfaces",
           json::array({{{"name", "lxc1"}}, {{"name", "eth0"}, {"sandbox", "/var/run/netns/x"}}})},
          {"ips", json::array(
                      {{{"interface", 1}, {"address", ip + "/32"}, {"gateway", "10.200.0.1"}}})}}}};
    return testing::run_process({testing::bin_dir() + "/cilium-nomad-cni"},
                                {{"CNI_COMMAND", "ADD"},
                                 {"CNI_CONTAINERID", alloc},
                                 {"CNI_IFNAME", "eth0"},
                                 {"CNI_NETNS", "/var/run/netns/x"},
                                 {"CNI_PATH", "/opt/cni/bin"},
                                 {"CNI_ARGS", cni_args}},
                                conf.dump());
  }

  json endpoint_of(const std::string& alloc) {
    return agent_->endpoint("cni-attachment-id:" + alloc + ":eth0").value_or(json());
  }

  static std::vector<std::string> identity_labels(const json& ep) {
    std::vector<std::string> out =
        ep["status"]["identity"]["labels"].get<std::vector<std::string>>();
    std::sort(out.begin(), out.end());
    return out;
  }

  bool wait_labeled(const std::string& alloc, const std::vector<std::string>& labels) {
    return agent_->wait_endpoint(
        "cni-attachment-id:" + alloc + ":eth0",
        [&](const std::optional<json>& ep) {
          return ep && identity_labels(*ep) == labels &&
                 (*ep)["status"]["identity"]["id"].get<long long>() >= 256;
        },
        std::chrono::seconds{20});
  }

  testing::TempDir dir_;
  std::unique_ptr<fakes::FakeCiliumAgent> agent_;
  std::unique_ptr<fakes::FakeNomad> nomad_;
  std::unique_ptr<nomad::CurlNomadClient> nomad_client_;
  std::unique_ptr<cilium::CurlCiliumClient> cilium_client_;
  std::unique_ptr<LabelerDaemon> daemon_;
};

TEST_F(LabelerE2E, WaitingPluginHearsLabeledOnlyAfterTheIdentityResolvedWithOneWrite) {
  start_daemon();
  std::string alloc = running_alloc("10.200.3.17");
  agent_->clear_requests();
  nomad_->clear_requests();
  auto add = plugin_add(alloc, "10.200.3.17", 3000);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_NE(add.err.find("labeler=labeled"), std::string::npos) << add.err;

  // By the time the plugin exits, the agent already reports the final identity.
  json ep = endpoint_of(alloc);
  EXPECT_EQ(identity_labels(ep), kWebLabels);
  EXPECT_GE(ep["status"]["identity"]["id"].get<long long>(), 256);
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}"), 1);
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}/labels"), 0);
  EXPECT_EQ(nomad_->request_count("allocation"), 1);
  EXPECT_EQ(nomad_->request_count("job"), 0);

  std::smatch m;
  if (std::regex_search(add.err, m, std::regex("elapsed_ms=([0-9]+)"))) {
    RecordProperty("add_to_labeled_ms", m[1].str());
    std::printf("ADD -> labeled (plugin elapsed, fakes, identity delay 30 ms): %s ms\n",
                m[1].str().c_str());
  }
}

// --log-format json on the daemon's real lines: each is one JSON object, each field in its own
// key with its documented type, and none fell back to a whole-line msg.
TEST_F(LabelerE2E, JsonLogLinesCarryEachFieldInItsOwnKey) {
  std::ostringstream text;
  auto log = std::make_shared<spdlog::logger>(
      "json", std::make_shared<spdlog::sinks::ostream_sink_mt>(text));
  auto formatter = make_log_formatter("json");
  ASSERT_TRUE(formatter);
  log->set_formatter(std::move(*formatter));
  log->set_level(spdlog::level::debug);
  start_daemon("", "default", log);
  std::string alloc = running_alloc("10.200.3.40");
  ASSERT_EQ(plugin_add(alloc, "10.200.3.40", 3000).exit_code, 0);
  daemon_->stop();  // its last lines are written; the stream is read by this thread only now

  std::istringstream lines(text.str());
  std::string line;
  int labeled = 0;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    json j;
    ASSERT_NO_THROW(j = json::parse(line)) << line;
    const std::string msg = j["msg"];
    EXPECT_EQ(msg.find('='), std::string::npos) << "a line kept whole: " << line;
    if (msg == "labeled" && j["alloc"] == alloc) {
      ++labeled;
      EXPECT_TRUE(j["endpoint"].is_number_integer()) << line;
      EXPECT_GE(j["identity"].get<long long>(), 256) << line;
      EXPECT_TRUE(j["ms"].is_number()) << line;
      EXPECT_TRUE(j["wrote"].is_boolean()) << line;
      EXPECT_TRUE(j["source"].is_string()) << line;
    }
  }
  EXPECT_GT(count, 3) << text.str();
  EXPECT_GE(labeled, 1) << text.str();
}

TEST_F(LabelerE2E, StartupReconcileLabelsEndpointsThatExistedBeforeWithOneNomadCall) {
  std::vector<std::string> allocs;
  for (int i = 0; i < 20; ++i)
    allocs.push_back(running_alloc("10.200.4." + std::to_string(i + 10)));
  agent_->clear_requests();
  nomad_->clear_requests();
  start_daemon();
  for (const auto& a : allocs) ASSERT_TRUE(wait_labeled(a, kWebLabels)) << a;
  ASSERT_TRUE(daemon_->queue().wait_idle(std::chrono::seconds{20}));
  EXPECT_EQ(agent_->count("GET", "/endpoint"), 1);
  EXPECT_EQ(nomad_->request_count("node_allocations"), 1);
  EXPECT_EQ(nomad_->request_count("allocation"), 0);
  EXPECT_EQ(nomad_->request_count("job"), 0);
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}"), 20);

  // The next reconcile finds every endpoint right: no write at all.
  ASSERT_TRUE(agent_->wait_settled());
  auto report = daemon_->reconcile_now();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->correct, 20u);
  EXPECT_EQ(report->enqueued, 0u);
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}"), 20);
}

TEST_F(LabelerE2E, LabelsCarryTheAgentsClusterNameOverAWrongFlag) {
  agent_->stop();
  auto ac = agent_config();
  ac.cluster_name = "eu-west";  // the agent's --cluster-name; its healthz says eu-west/fake-node
  agent_ = std::make_unique<fakes::FakeCiliumAgent>(ac);
  agent_->start();
  const std::string before = running_alloc("10.200.5.10");
  start_daemon("", "default");
  EXPECT_EQ(daemon_->cluster_name(), "eu-west");
  EXPECT_EQ(agent_->count("GET", "/healthz"), 1);

  std::vector<std::string> eu_labels = kWebLabels;
  std::replace(eu_labels.begin(), eu_labels.end(),
               std::string("k8s:io.cilium.k8s.policy.cluster=default"),
               std::string("k8s:io.cilium.k8s.policy.cluster=eu-west"));
  std::sort(eu_labels.begin(), eu_labels.end());
  // The startup reconcile's work and a notified allocation both carry the agent's name.
  EXPECT_TRUE(wait_labeled(before, eu_labels)) << identity_labels(endpoint_of(before)).size();
  const std::string notified = running_alloc("10.200.5.11");
  auto add = plugin_add(notified, "10.200.5.11", 3000);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_EQ(identity_labels(endpoint_of(notified)), eu_labels);
}

TEST_F(LabelerE2E, NomadDownLabelsFromCniArgsThenAddsMetaLabelsOnceNomadAnswers) {
  start_daemon("team");
  std::string alloc = running_alloc("10.200.5.1");
  nomad_->fail_next(4, 500, "/v1/allocation");  // the client retries 4 times: all of them fail
  agent_->clear_requests();
  auto add = plugin_add(
      alloc, "10.200.5.1", 3000,
      "IgnoreUnknown=true;NOMAD_NAMESPACE=default;NOMAD_JOB_ID=web;NOMAD_GROUP_NAME=app");
  ASSERT_EQ(add.exit_code, 0);
  EXPECT_NE(add.err.find("labeler=labeled"), std::string::npos) << add.err;
  EXPECT_EQ(identity_labels(endpoint_of(alloc)), kWebLabels) << "from CNI_ARGS: no meta yet";

  auto full = kWebLabels;
  full.push_back("nomad:team=payments");
  std::sort(full.begin(), full.end());
  ASSERT_TRUE(wait_labeled(alloc, full)) << "the re-check adds the meta label once Nomad answers";
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}"), 2);
}

TEST_F(LabelerE2E, RateLimitedAgentIsRetriedUntilTheWriteLands) {
  start_daemon();
  std::string alloc = running_alloc("10.200.6.1");
  agent_->clear_requests();
  agent_->inject_fault(fakes::FaultRule::fail(
      "PATCH", "/endpoint/{id}", 429, 2,
      std::string("\"request would have to wait 1s to be served (maximum wait duration: 15s)\"")));
  auto add = plugin_add(alloc, "10.200.6.1", 10000);
  ASSERT_EQ(add.exit_code, 0);
  EXPECT_NE(add.err.find("labeler=labeled"), std::string::npos) << add.err;
  EXPECT_EQ(agent_->count("PATCH", "/endpoint/{id}"), 3);
  EXPECT_EQ(identity_labels(endpoint_of(alloc)), kWebLabels);
}

TEST_F(LabelerE2E, UnknownAllocationIsReportedFailedAndNothingIsWritten) {
  start_daemon();
  std::string alloc = testing::random_alloc_id();
  agent_->create_endpoint({{"container-id", alloc},
                           {"container-interface-name", "eth0"},
                           {"addressing", {{"ipv4", "10.200.7.1"}}},
                           {"state", "waiting-for-identity"}});
  agent_->clear_requests();
  auto add = plugin_add(alloc, "10.200.7.1", 3000);
  ASSERT_EQ(add.exit_code, 0) << "fails open";
  EXPECT_NE(add.err.find("labeler=failed"), std::string::npos) << add.err;
  EXPECT_EQ(agent_->count("PATCH", ""), 0);
}

}  // namespace
}  // namespace cn::labeler

namespace cn::labeler {
namespace {

TEST_F(LabelerE2E, AgentRestartWithRenumberedEndpointsIsHealedByOneResync) {
  start_daemon();
  std::vector<std::string> allocs;
  for (int i = 0; i < 3; ++i) {
    allocs.push_back(running_alloc("10.200.8." + std::to_string(i + 1)));
    ASSERT_EQ(plugin_add(allocs.back(), "10.200.8." + std::to_string(i + 1), 3000).exit_code, 0);
  }
  for (const auto& a : allocs) ASSERT_TRUE(wait_labeled(a, kWebLabels));
  std::map<std::string, long long> before;
  for (const auto& a : allocs) before[a] = endpoint_of(a)["id"].get<long long>();

  agent_->restart(fakes::RestartOptions::renumbered());
  agent_->clear_requests();
  auto report = daemon_->reconcile_now();
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->correct, 3u) << "labels survive an agent restart: no write needed";
  EXPECT_EQ(agent_->count("PATCH", ""), 0);

  // The state file now names the new endpoint numbers.
  state::StateStore store({dir_.file("run/state.json")}, system_clock(), nullptr);
  auto doc = store.load();
  ASSERT_TRUE(doc);
  for (const auto& a : allocs) {
    long long now_id = endpoint_of(a)["id"].get<long long>();
    EXPECT_NE(now_id, before[a]);
    ASSERT_TRUE(doc->allocations.at(a).labeled);
    EXPECT_EQ(doc->allocations.at(a).labeled->endpoint_id, now_id);
  }
}

TEST_F(LabelerE2E, MetricsAndHealthzServeTheirContent) {
  Metrics metrics;
  std::atomic<bool> ready{false};
  StatusServer server(metrics, [&] {
    return std::pair<bool, std::string>{ready.load(), "Cilium agent not answering"};
  });
  ASSERT_TRUE(server.start("127.0.0.1:0"));
  auto target = fakes::HttpTarget::tcp("127.0.0.1", server.port());

  auto health = fakes::http_request(target, "GET", "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  EXPECT_NE(health->body.find("Cilium agent not answering"), std::string::npos);
  ready = true;
  health = fakes::http_request(target, "GET", "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);

  metrics.endpoints_labeled(WorkSource::kNotify).Increment();
  metrics.add_to_labeled_seconds().Observe(0.012);
  auto m = fakes::http_request(target, "GET", "/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  for (const char* family :
       {"cilium_nomad_endpoints_labeled_total{source=\"notify\"} 1", "cilium_nomad_api_calls_total",
        "cilium_nomad_queue_depth", "cilium_nomad_add_to_labeled_seconds_bucket{le=\"0.025\"} 1",
        "cilium_nomad_reconcile_duration_seconds", "cilium_nomad_orphan_endpoints",
        "cilium_nomad_state_entries", "cilium_nomad_watch_reconnects_total",
        "cilium_nomad_errors_total"}) {
    EXPECT_NE(m->body.find(family), std::string::npos) << family;
  }
  server.stop();
}

}  // namespace
}  // namespace cn::labeler

namespace cn::labeler {
namespace {

// What Prometheus itself accepts: a running daemon that has labeled an allocation, scraped on
// /metrics and checked with promtool (format and naming lint). Also checks that the series an
// alert would use exist from the start with the values the scrape should carry.
TEST_F(LabelerE2E, ScrapeOfARunningLabelerPassesPromtoolCheckMetrics) {
  const std::string promtool = "/usr/bin/promtool";
  if (!std::filesystem::exists(promtool)) {
    GTEST_SKIP() << promtool
                 << " is absent: install Debian's `prometheus` package (scripts/install-deps.sh)";
  }
  start_daemon();
  StatusServer status(daemon_->metrics(), [this] {
    return std::pair<bool, std::string>{daemon_->ready(), daemon_->not_ready_reason()};
  });
  ASSERT_TRUE(status.start("127.0.0.1:0"));
  std::string alloc = running_alloc("10.200.9.4");
  auto add = plugin_add(alloc, "10.200.9.4", 3000);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  ASSERT_TRUE(daemon_->queue().wait_idle(std::chrono::seconds{20}));

  auto scrape =
      fakes::http_request(fakes::HttpTarget::tcp("127.0.0.1", status.port()), "GET", "/metrics");
  ASSERT_TRUE(scrape);
  ASSERT_EQ(scrape->status, 200);
  const std::string& body = scrape->body;
  for (const char* line :
       {"cilium_nomad_ready 1\n", "cilium_nomad_endpoints_labeled_total{source=\"notify\"} 1\n",
        "cilium_nomad_label_writes_total{api=\"endpoint\"} 1\n",
        "cilium_nomad_errors_total{kind=\"state_write\"} 0\n",
        "cilium_nomad_errors_total{kind=\"nomad_stream_open\"} 0\n",
        "cilium_nomad_notifications_total{op=\"add\",outcome=\"accepted\"} 1\n",
        "cilium_nomad_add_to_labeled_seconds_count 1\n",
        "cilium_nomad_reconcile_duration_seconds_count 1\n"}) {
    EXPECT_NE(body.find(line), std::string::npos) << line << "not in:\n" << body;
  }
  EXPECT_NE(body.find("cilium_nomad_api_calls_total{status=\"ok\",target=\"nomad\"} "),
            std::string::npos)
      << body;
  EXPECT_EQ(body.find("cilium_nomad_api_calls_total{status=\"ok\",target=\"nomad\"} 0\n"),
            std::string::npos)
      << "the startup reconcile called Nomad";

  auto check = testing::run_process({promtool, "check", "metrics"}, {}, body);
  RecordProperty("promtool_output", check.out + check.err);
  std::printf("promtool check metrics: exit %d, output: \"%s%s\"\n", check.exit_code,
              check.out.c_str(), check.err.c_str());
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err << "\nscrape:\n" << body;
  EXPECT_EQ(check.out + check.err, "") << "promtool names no problem";

  // The alerting rules watch only metrics this scrape has (all of them exist from the start),
  // but for the cluster duties' series, which a labeler exports only with --cluster-duties; the
  // dashboard test (conf_examples_test.cpp) checks those against the registry with the duties on.
  const std::string rules =
      testing::read_file(testing::source_dir() + "/conf-examples/cilium-nomad-labeler.rules.yml");
  const std::regex metric_name("cilium_nomad_[a-z_]+");
  const std::regex duty_only(
      "cilium_nomad_(cluster_[a-z_]+|identities[a-z_]*|identity_range_size|"
      "identity_users|in_use_reports_unreadable)");
  int used = 0;
  for (auto it = std::sregex_iterator(rules.begin(), rules.end(), metric_name);
       it != std::sregex_iterator(); ++it) {
    if (std::regex_match(it->str(), duty_only)) continue;
    ++used;
    EXPECT_NE(body.find("\n" + it->str()), std::string::npos)
        << it->str() << " is used by an alerting rule but not exposed";
  }
  EXPECT_GE(used, 8);
  status.stop();
}

// The alerting rules of conf-examples, as Prometheus would load them, and their cases: an alert
// that fires when it should and stays quiet when it should not.
TEST(PrometheusRules, ExampleRulesPassPromtoolCheckAndTheirTests) {
  const std::string promtool = "/usr/bin/promtool";
  if (!std::filesystem::exists(promtool)) {
    GTEST_SKIP() << promtool
                 << " is absent: install Debian's `prometheus` package (scripts/install-deps.sh)";
  }
  const std::string rules = testing::source_dir() + "/conf-examples/cilium-nomad-labeler.rules.yml";
  auto check = testing::run_process({promtool, "check", "rules", rules}, {}, "");
  std::printf("promtool check rules: exit %d, output: \"%s%s\"\n", check.exit_code,
              check.out.c_str(), check.err.c_str());
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("SUCCESS"), std::string::npos) << check.out;

  // The case file names the rules by a path relative to itself, as promtool resolves them.
  const std::string cases =
      testing::source_dir() + "/tests/data/prometheus/cilium-nomad-labeler.rules.test.yml";
  auto test = testing::run_process({promtool, "test", "rules", cases}, {}, "");
  std::printf("promtool test rules: exit %d, output: \"%s%s\"\n", test.exit_code, test.out.c_str(),
              test.err.c_str());
  EXPECT_EQ(test.exit_code, 0) << test.out << test.err;
}

}  // namespace
}  // namespace cn::labeler
