// The fake agent's --lb-state-file job against cilium/cilium
// pkg/loadbalancer/reflectors/file.go: initial read, inotify on the parent directory, only the
// exact base name, removals ignored, a settle timer of --lb-state-file-interval on the agent
// clock, full replace per read, errors only logged with the previous state kept; and GET
// /v1/service (pkg/loadbalancer/cell/restapi.go) from the resulting table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/support/child_process.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::eventually;
using testing::TempDir;

json one_service(const std::string& name, const std::string& vip) {
  return {{"services",
           {{{"metadata", {{"name", name}, {"namespace", "default"}}},
             {"spec",
              {{"type", "NodePort"},
               {"clusterIP", vip},
               {"ports",
                {{{"name", "http"}, {"protocol", "TCP"}, {"port", 80}, {"nodePort", 30080}}}}}}}}},
          {"endpoints",
           {{{"metadata",
              {{"name", name + "-a"},
               {"namespace", "default"},
               {"labels", {{"kubernetes.io/service-name", name}}}}},
             {"addressType", "IPv4"},
             {"endpoints",
              {{{"addresses", {"10.0.1.23"}},
                {"conditions", {{"ready", true}, {"serving", true}, {"terminating", false}}}}}},
             {"ports", {{{"name", "http"}, {"protocol", "TCP"}, {"port", 8080}}}}}}}};
}

class CiliumLbStateSync : public ::testing::Test {
 protected:
  std::string state() const { return dir_.file("lb/state.json"); }
  void SetUp() override { std::filesystem::create_directories(dir_.file("lb")); }

  void start(CiliumVersion v = CiliumVersion::v1_19, int patch = 5) {
    FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    cfg.clock = &clock_;
    cfg.version = v;
    cfg.version_patch = patch;
    cfg.lb_state_file = state();
    cfg.kube_proxy_replacement = true;
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
  }
  // What a production writer must do: a temp file in the same directory, then rename(2).
  void publish(const std::string& text, const std::string& name = "state.json") {
    const std::string tmp = dir_.file("lb/.state.tmp");
    std::ofstream(tmp, std::ios::binary | std::ios::trunc) << text;
    ASSERT_EQ(std::rename(tmp.c_str(), dir_.file("lb/" + name).c_str()), 0);
  }
  void wait_events(std::uint64_t n) {
    ASSERT_TRUE(eventually([&] { return agent_->lb_events() >= n; }, 10s))
        << agent_->lb_events() << " events";
  }
  std::vector<std::string> services() const {
    std::vector<std::string> out;
    for (const auto& s : agent_->lb_snapshot().services) out.push_back(s.name);
    return out;
  }
  bool logged(const std::string& needle) const {
    for (const auto& line : agent_->agent_log()) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  TempDir dir_;
  ManualClock clock_;
  std::unique_ptr<FakeCiliumAgent> agent_;
};

// file.go: the first read happens at start; a missing file is tolerated.
TEST_F(CiliumLbStateSync, ReadsAtStartAndToleratesAMissingFile) {
  publish(one_service("web", "10.96.0.10").dump());
  start();
  EXPECT_EQ(services(), std::vector<std::string>{"default/web"});
  EXPECT_TRUE(
      logged("msg=\"Synchronized from local state\" "
             "module=agent.controlplane.loadbalancer-reflectors.file-reflector file=" +
             state() + " serviceCount=1 frontendCount=2 backendCount=1"));
  TempDir other;
  FakeCiliumAgentConfig cfg;
  cfg.socket_path = other.file("cilium.sock");
  cfg.version = CiliumVersion::v1_18;
  cfg.lb_state_file = other.file("absent.yaml");
  FakeCiliumAgent missing(cfg);
  EXPECT_NO_THROW(missing.start());
  EXPECT_TRUE(missing.lb_snapshot().services.empty());
  EXPECT_EQ(missing.lb_reads(), 1u);
}

// file.go: the cell's Invoke refuses other suffixes, so the agent does not start.
TEST_F(CiliumLbStateSync, RefusesToStartWithAnUnknownSuffix) {
  FakeCiliumAgentConfig cfg;
  cfg.socket_path = dir_.file("cilium.sock");
  cfg.version = CiliumVersion::v1_19;
  cfg.lb_state_file = dir_.file("lb/state.txt");
  FakeCiliumAgent agent(cfg);
  try {
    agent.start();
    ADD_FAILURE() << "started";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "could not deduce file format from \"" +
                                         dir_.file("lb/state.txt") +
                                         "\", expected .json or .yaml suffix");
  }
}

// file.go: every event restarts the timer; the read comes one interval after the last event.
TEST_F(CiliumLbStateSync, ReadsOneIntervalAfterTheLastEventOnTheAgentClock) {
  start();
  EXPECT_EQ(agent_->lb_reads(), 1u);
  publish(one_service("web", "10.96.0.10").dump());
  wait_events(1);
  clock_.advance(600ms);
  publish(one_service("api", "10.96.0.11").dump());
  wait_events(2);
  clock_.advance(600ms);  // 1.2 s after the first event, 0.6 s after the second
  ASSERT_TRUE(agent_->lb_settled());
  EXPECT_EQ(agent_->lb_reads(), 1u);
  EXPECT_TRUE(services().empty());
  clock_.advance(399ms);
  ASSERT_TRUE(agent_->lb_settled());
  EXPECT_EQ(agent_->lb_reads(), 1u);
  clock_.advance(1ms);
  ASSERT_TRUE(eventually([&] { return agent_->lb_reads() == 2u; }, 10s));
  EXPECT_EQ(services(), std::vector<std::string>{"default/api"});
}

// file.go: only events naming the file's base name count; removals are ignored.
TEST_F(CiliumLbStateSync, OnlyTheExactNameCountsAndRemovalIsIgnored) {
  publish(one_service("web", "10.96.0.10").dump());
  start();
  publish("{}", "other.json");
  publish("{}", "state.json.bak");
  ASSERT_EQ(std::remove(state().c_str()), 0);
  publish(one_service("api", "10.96.0.11").dump());  // the sentinel: one rename onto the name
  wait_events(1);
  clock_.advance(5s);
  ASSERT_TRUE(eventually([&] { return agent_->lb_reads() == 2u; }, 10s));
  EXPECT_EQ(agent_->lb_events(), 1u);
  EXPECT_EQ(services(), std::vector<std::string>{"default/api"});
}

// file.go watches "." for a relative --lb-state-file, not the directory the path names: the
// first read works, later changes there are never seen.
TEST_F(CiliumLbStateSync, ARelativePathIsWatchedInTheWorkingDirectory) {
  publish(one_service("web", "10.96.0.10").dump());
  start();  // absolute path: the witness that an event was delivered
  FakeCiliumAgentConfig cfg;
  cfg.socket_path = dir_.file("relative.sock");
  cfg.clock = &clock_;
  cfg.version = CiliumVersion::v1_19;
  cfg.lb_state_file = std::filesystem::relative(state(), std::filesystem::current_path()).string();
  ASSERT_FALSE(cfg.lb_state_file.starts_with("/"));
  FakeCiliumAgent relative(cfg);
  relative.start();
  ASSERT_EQ(relative.lb_snapshot().services.size(), 1u);
  publish(one_service("api", "10.96.0.11").dump());
  wait_events(1);
  clock_.advance(1s);
  ASSERT_TRUE(eventually([&] { return agent_->lb_reads() == 2u; }, 10s));
  EXPECT_EQ(services(), std::vector<std::string>{"default/api"});
  EXPECT_EQ(relative.lb_events(), 0u);
  EXPECT_EQ(relative.lb_reads(), 1u);
  EXPECT_EQ(relative.lb_snapshot().services[0].name, "default/web");
}

// file.go: a read that fails keeps the previous state and only logs; the next good read
// replaces everything.
TEST_F(CiliumLbStateSync, AFailedReadKeepsThePreviousStateAndOnlyLogs) {
  publish(one_service("web", "10.96.0.10").dump());
  start();
  publish("");  // an empty .json file is a decode error, not "clear everything"
  wait_events(1);
  clock_.advance(1s);
  ASSERT_TRUE(eventually([&] { return agent_->lb_reads() == 2u; }, 10s));
  EXPECT_EQ(services(), std::vector<std::string>{"default/web"});
  EXPECT_TRUE(logged("msg=\"Failed to synchronize\""));
  EXPECT_TRUE(logged("error=\"unexpected end of JSON input\""));
  publish("{}");
  wait_events(2);
  clock_.advance(1s);
  ASSERT_TRUE(eventually([&] { return agent_->lb_reads() == 3u; }, 10s));
  EXPECT_TRUE(services().empty());
}

// Two services sharing one backend address, b listing it only while `b_has_it`.
json shared_backend(bool b_has_it) {
  json doc = {{"services", json::array()}, {"endpoints", json::array()}};
  for (const std::string name : {"a", "b"}) {
    doc["services"].push_back({{"metadata", {{"name", name}, {"namespace", "default"}}},
                               {"spec",
                                {{"clusterIP", name == "a" ? "10.96.0.1" : "10.96.0.2"},
                                 {"ports", {{{"protocol", "TCP"}, {"port", 80}}}}}}});
    json ips = {"10.0.0.9"};
    if (name == "b" && !b_has_it) ips = {"10.0.0.8"};
    doc["endpoints"].push_back(
        {{"metadata",
          {{"name", name},
           {"namespace", "default"},
           {"labels", {{"kubernetes.io/service-name", name}}}}},
         {"addressType", "IPv4"},
         {"endpoints", {{{"addresses", ips}, {"conditions", {{"ready", true}}}}}},
         {"ports", {{{"protocol", "TCP"}, {"port", 8080}}}}});
  }
  return doc;
}

// writer.go DeleteBackendsBySource up to v1.19.4 (cilium/cilium#46493): a backend address two
// file services share loses only its first holder on a reload, so the one dropped from the
// file keeps it; v1.19.5 deletes every row.
TEST_F(CiliumLbStateSync, StaleSharedBackendUpTo1194) {
  for (int patch : {4, 5}) {
    agent_.reset();
    publish(shared_backend(true).dump());
    start(CiliumVersion::v1_19, patch);
    const auto before = agent_->lb_events();
    publish(shared_backend(false).dump());
    wait_events(before + 1);
    clock_.advance(1s);
    ASSERT_TRUE(eventually([&] { return agent_->lb_reads() == 2u; }, 10s));
    std::vector<std::string> b;
    const cilium::LbTable table = agent_->lb_snapshot();
    ASSERT_NE(table.service("default/b"), nullptr);
    for (const auto& be : table.service("default/b")->backends) {
      b.push_back(be.address);
    }
    if (patch == 4) {
      EXPECT_EQ(b, (std::vector<std::string>{"10.0.0.8", "10.0.0.9"}));
    } else {
      EXPECT_EQ(b, std::vector<std::string>{"10.0.0.8"});
    }
  }
}

// file.go + restapi.go: GET /v1/service answers from the table on the emulated 1.19.
TEST_F(CiliumLbStateSync, GetServiceAnswersFromTheTable) {
  publish(one_service("web", "10.96.0.10").dump());
  start();
  auto resp = http_request(HttpTarget::unix_socket(dir_.file("cilium.sock")), "GET", "/v1/service");
  ASSERT_TRUE(resp);
  ASSERT_EQ(resp->status, 200);
  const json body = json::parse(resp->body);
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]["spec"]["frontend-address"]["ip"], "10.96.0.10");
  EXPECT_EQ(body[1]["spec"]["flags"]["type"], "NodePort");
  EXPECT_EQ(body[1]["spec"]["backend-addresses"][0]["ip"], "10.0.1.23");
  // Frontend IDs survive a reload that keeps the frontend.
  const auto id = body[0]["spec"]["id"];
  publish(one_service("web", "10.96.0.10").dump());
  wait_events(1);
  clock_.advance(1s);
  ASSERT_TRUE(eventually([&] { return agent_->lb_reads() == 2u; }, 10s));
  auto again =
      http_request(HttpTarget::unix_socket(dir_.file("cilium.sock")), "GET", "/v1/service");
  ASSERT_TRUE(again);
  EXPECT_EQ(json::parse(again->body)[0]["spec"]["id"], id);
}

using cn::fakes::testing::fake_agent_binary;

// The binary's flags: --version with a patch level, --kube-proxy-replacement,
// --lb-state-file-interval; and the start-up refusal of file.go.
TEST(CiliumLbStateFileBinary, FlagsReachTheReader) {
  ASSERT_EQ(::access(fake_agent_binary().c_str(), X_OK), 0) << "CN_BIN_DIR not set";
  TempDir dir;
  {
    cn::testing::ChildProcess::Options opts;
    opts.log_path = dir.file("bad.log");
    cn::testing::ChildProcess bad({fake_agent_binary(), "--socket", dir.file("bad.sock"),
                                   "--version", "1.19", "--lb-state-file", dir.file("lb.txt")},
                                  cn::testing::current_environment(), opts);
    auto status = bad.wait_for(20s);
    ASSERT_TRUE(status) << "still running";
    EXPECT_EQ(status->exit_code, 1);
    EXPECT_NE(bad.log().find("could not deduce file format"), std::string::npos) << bad.log();
  }
  std::ofstream(dir.file("lb.json")) << one_service("web", "10.96.0.10").dump();
  cn::testing::ChildProcess::Options opts;
  opts.log_path = dir.file("agent.log");
  cn::testing::ChildProcess agent(
      {fake_agent_binary(), "--socket", dir.file("cilium.sock"), "--version", "1.18.4",
       "--kube-proxy-replacement", "true", "--lb-state-file", dir.file("lb.json"),
       "--lb-state-file-interval", "10ms", "--ready-file", dir.file("ready")},
      cn::testing::current_environment(), opts);
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(dir.file("ready")); }, 20s))
      << agent.log();
  auto types = [&] {
    std::vector<std::string> out;
    auto resp =
        http_request(HttpTarget::unix_socket(dir.file("cilium.sock")), "GET", "/v1/service");
    if (!resp || resp->status != 200) return out;
    for (const auto& s : json::parse(resp->body)) out.push_back(s["spec"]["flags"]["type"]);
    return out;
  };
  EXPECT_EQ(types(), (std::vector<std::string>{"ClusterIP", "NodePort"}));
  std::ofstream(dir.file("lb.tmp")) << one_service("api", "10.96.0.11").dump();
  std::filesystem::rename(dir.file("lb.tmp"), dir.file("lb.json"));
  ASSERT_TRUE(eventually(
      [&] {
        auto resp =
            http_request(HttpTarget::unix_socket(dir.file("cilium.sock")), "GET", "/v1/service");
        return resp && resp->body.find("\"name\":\"api\"") != std::string::npos;
      },
      10s))
      << agent.log();
  EXPECT_NE(agent.log().find("Synchronized from local state"), std::string::npos);
}

}  // namespace
}  // namespace cn::fakes
