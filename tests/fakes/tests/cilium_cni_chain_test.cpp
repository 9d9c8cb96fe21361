// fake-cilium-cni run the way Nomad runs the head of a conflist: real netns, real ptp +
// host-local, the fake agent embedded in this process. Root-only parts skip without root.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/support/child_process.h"

namespace cn::fakes {
namespace {

using namespace std::chrono_literals;
using cn::testing::current_environment;
using cn::testing::run_process;
using nlohmann::json;
using testing::TempDir;

std::string bin_dir() {
  const char* d = std::getenv("CN_BIN_DIR");
  return d ? d : "";
}

std::string plugin_path() {
  return bin_dir() + "/fake-cilium-cni";
}

std::string ip_tool() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

int unique_counter() {
  static std::atomic<int> n{0};
  return n++;
}

// A named netns that is always deleted, even when the test fails half-way.
class Netns {
 public:
  Netns() : name_("cnfk" + std::to_string(::getpid()) + "x" + std::to_string(unique_counter())) {
    auto r = run_process({ip_tool(), "netns", "add", name_}, current_environment(), "", 10s);
    ok_ = r.exit_code == 0;
  }
  ~Netns() {
    if (ok_) run_process({ip_tool(), "netns", "del", name_}, current_environment(), "", 10s);
  }
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;
  bool ok() const { return ok_; }
  std::string path() const { return "/var/run/netns/" + name_; }
  // "10.x.y.z" of `dev` inside the netns, or "" when the device or address is absent.
  std::string ipv4_of(const std::string& dev) const {
    auto r = run_process({ip_tool(), "-n", name_, "-4", "-o", "addr", "show", "dev", dev},
                         current_environment(), "", 10s);
    if (r.exit_code != 0) return "";
    const std::size_t inet = r.out.find("inet ");
    if (inet == std::string::npos) return "";
    const std::size_t start = inet + 5;
    return r.out.substr(start, r.out.find('/', start) - start);
  }

 private:
  std::string name_;
  bool ok_ = false;
};

struct Invocation {
  int exit_code = -1;
  json out;
  std::string raw_out;
  std::string err;
};

class CniChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(bin_dir().empty()) << "CN_BIN_DIR is not set (run through ctest)";
    ASSERT_EQ(::access(plugin_path().c_str(), X_OK), 0) << plugin_path();
    FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    agent_ = std::make_unique<FakeCiliumAgent>(cfg);
    agent_->start();
    // A subnet of its own per test process and test, so parallel runs never share host routes.
    const int pid = ::getpid();
    subnet_prefix_ = "10." + std::to_string(240 + pid % 15) + "." +
                     std::to_string((pid / 15 + unique_counter() * 37) % 256) + ".";
  }

  bool can_plumb() const {
    return ::geteuid() == 0 && ::access("/usr/lib/cni/ptp", X_OK) == 0 && !ip_tool().empty();
  }

  json netconf(const std::string& version = "1.0.0") const {
    return json{{"cniVersion", version},
                {"name", "cilium"},
                {"type", "fake-cilium-cni"},
                {"socket", agent_->socket_path()},
                {"agent-timeout-ms", 3000},
                {"ipam",
                 {{"type", "host-local"},
                  {"subnet", subnet_prefix_ + "0/24"},
                  {"dataDir", dir_.file("ipam")}}}};
  }

  Invocation invoke(const std::string& command, const std::string& netns_path, const json& conf,
                    const std::string& alloc = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11") {
    cn::testing::Environment env = {{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"},
                                    {"CNI_CONTAINERID", alloc},
                                    {"CNI_IFNAME", "eth0"},
                                    {"CNI_PATH", "/usr/lib/cni"}};
    if (!command.empty()) env["CNI_COMMAND"] = command;
    if (!netns_path.empty()) env["CNI_NETNS"] = netns_path;
    auto r = run_process({plugin_path()}, env, conf.dump(), 60s);
    Invocation inv;
    if (!r.started || r.timed_out) {
      ADD_FAILURE() << (r.timed_out ? "did not finish within 60 s" : r.err);
      return inv;
    }
    inv.exit_code = r.exit_code;
    inv.raw_out = r.out;
    inv.err = r.err;
    inv.out = json::parse(r.out, nullptr, false);
    return inv;
  }

  TempDir dir_;
  std::unique_ptr<FakeCiliumAgent> agent_;
  std::string subnet_prefix_;
};

TEST_F(CniChainTest, VersionAndFingerprintOutput) {
  auto v = invoke("VERSION", "", json{{"cniVersion", "0.4.0"}});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out["cniVersion"], "0.4.0");
  EXPECT_EQ(v.out["supportedVersions"], json({"0.3.0", "0.3.1", "0.4.0", "1.0.0"}));
  auto about = invoke("", "", json::object());
  EXPECT_EQ(about.exit_code, 0);
  EXPECT_NE(about.err.find("CNI fake-cilium-cni plugin v1.17.0"), std::string::npos) << about.err;
  EXPECT_NE(about.err.find("CNI protocol versions supported: 0.3.0, 0.3.1, 0.4.0, 1.0.0"),
            std::string::npos);
}

TEST_F(CniChainTest, ConfigAndEnvironmentErrors) {
  auto missing = invoke("ADD", "", netconf());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out["code"], 4);
  EXPECT_NE(missing.out["msg"].get<std::string>().find("CNI_NETNS"), std::string::npos);
  auto old = invoke("ADD", "/var/run/netns/none", netconf("0.2.0"));
  EXPECT_EQ(old.out["code"], 1);
  auto garbage = run_process({plugin_path()}, {{"CNI_COMMAND", "ADD"}}, "{not json", 10s);
  ASSERT_TRUE(garbage.started && !garbage.timed_out) << garbage.err;
  EXPECT_EQ(json::parse(garbage.out)["code"], 6);
}

TEST_F(CniChainTest, AgentDownFailsAddWithTryAgainLater) {
  agent_->stop();
  // The agent is checked before any plumbing, so a bogus netns is never touched.
  auto r = invoke("ADD", "/var/run/netns/does-not-exist", netconf());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out["code"], 11);
  EXPECT_EQ(r.out["cniVersion"], "1.0.0");
}

TEST_F(CniChainTest, AddCreatesInitEndpointMatchingTheNetnsAddress) {
  if (!can_plumb()) GTEST_SKIP() << "needs root, ip(8) and /usr/lib/cni/ptp";
  Netns ns;
  ASSERT_TRUE(ns.ok());
  auto add = invoke("ADD", ns.path(), netconf());
  ASSERT_EQ(add.exit_code, 0) << add.raw_out << add.err;

  // cilium-cni result shape: host veth first, container iface last with sandbox, /32, routes.
  const json& res = add.out;
  EXPECT_EQ(res["cniVersion"], "1.0.0");
  ASSERT_EQ(res["interfaces"].size(), 2u);
  EXPECT_FALSE(res["interfaces"][0].contains("sandbox"));
  EXPECT_EQ(res["interfaces"][1]["name"], "eth0");
  EXPECT_EQ(res["interfaces"][1]["sandbox"], ns.path());
  ASSERT_EQ(res["ips"].size(), 1u);
  EXPECT_EQ(res["ips"][0]["interface"], 1);
  EXPECT_FALSE(res["ips"][0].contains("version")) << "1.0.0 results have no ips[].version";
  const std::string cidr = res["ips"][0]["address"];
  ASSERT_TRUE(cidr.ends_with("/32")) << cidr;
  const std::string ip = cidr.substr(0, cidr.size() - 3);
  const std::string gw = res["ips"][0]["gateway"];
  EXPECT_EQ(res["routes"], json::parse("[{\"dst\":\"" + gw +
                                       "/32\"},{\"dst\":\"0.0.0.0/0\",\"gw\":\"" + gw + "\"}]"));
  EXPECT_FALSE(res.contains("dns"));

  EXPECT_EQ(ns.ipv4_of("eth0"), ip) << "result IP is the address configured in the netns";
  const auto ep = agent_->endpoint("cni-attachment-id:4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11:eth0");
  ASSERT_TRUE(ep);
  EXPECT_EQ((*ep)["status"]["identity"]["id"], 5);
  EXPECT_EQ((*ep)["status"]["labels"]["security-relevant"], json::array({"reserved:init"}));
  EXPECT_EQ((*ep)["status"]["state"], "ready");
  EXPECT_EQ((*ep)["status"]["networking"]["addressing"][0]["ipv4"], ip);
  EXPECT_EQ((*ep)["status"]["networking"]["interface-name"], res["interfaces"][0]["name"]);
  EXPECT_EQ((*ep)["status"]["networking"]["container-interface-name"], "eth0");
  EXPECT_EQ(agent_->count("PUT", "/endpoint/{id}"), 1);
  EXPECT_EQ(agent_->requests().back().path, "/v1/endpoint/cilium-local:0");

  EXPECT_EQ(invoke("CHECK", ns.path(), netconf()).exit_code, 0);
  ASSERT_TRUE(agent_->set_endpoint_health(
      "cni-attachment-id:4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11:eth0", "Failure"));
  EXPECT_EQ(invoke("CHECK", ns.path(), netconf()).out["code"], 101);

  auto del = invoke("DEL", ns.path(), netconf());
  EXPECT_EQ(del.exit_code, 0) << del.raw_out << del.err;
  EXPECT_TRUE(del.raw_out.empty());
  EXPECT_FALSE(agent_->endpoint("cni-attachment-id:4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11:eth0"));
  EXPECT_EQ(ns.ipv4_of("eth0"), "");
  EXPECT_EQ(invoke("CHECK", ns.path(), netconf()).out["code"], 100);
  EXPECT_EQ(invoke("DEL", ns.path(), netconf()).exit_code, 0) << "DEL is idempotent";
}

TEST_F(CniChainTest, LegacyResultVersionCarriesIpVersion) {
  if (!can_plumb()) GTEST_SKIP() << "needs root, ip(8) and /usr/lib/cni/ptp";
  Netns ns;
  ASSERT_TRUE(ns.ok());
  auto add = invoke("ADD", ns.path(), netconf("0.4.0"), "0d9e2c41-7b5a-4f3e-8c1d-2a6b9e0f4c55");
  ASSERT_EQ(add.exit_code, 0) << add.raw_out << add.err;
  EXPECT_EQ(add.out["cniVersion"], "0.4.0");
  EXPECT_EQ(add.out["ips"][0]["version"], "4");
  EXPECT_EQ(
      invoke("DEL", ns.path(), netconf("0.4.0"), "0d9e2c41-7b5a-4f3e-8c1d-2a6b9e0f4c55").exit_code,
      0);
}

TEST_F(CniChainTest, RejectedPutUndoesThePlumbing) {
  if (!can_plumb()) GTEST_SKIP() << "needs root, ip(8) and /usr/lib/cni/ptp";
  Netns ns;
  ASSERT_TRUE(ns.ok());
  agent_->inject_fault(
      FaultRule::fail("PUT", "/endpoint/{id}", 500, 1, "\"endpoint creation failed\""));
  auto add = invoke("ADD", ns.path(), netconf());
  EXPECT_EQ(add.exit_code, 1);
  EXPECT_EQ(add.out["code"], 999);
  EXPECT_NE(add.out["details"].get<std::string>().find("endpoint creation failed"),
            std::string::npos);
  EXPECT_EQ(ns.ipv4_of("eth0"), "") << "ptp DEL ran: no interface left in the netns";
  // host-local keeps one file per leased IP; only its bookkeeping files may remain.
  for (const auto& f : std::filesystem::directory_iterator(dir_.file("ipam") + "/cilium")) {
    const std::string name = f.path().filename().string();
    EXPECT_TRUE(name == "lock" || name.starts_with("last_reserved_ip")) << "leaked lease " << name;
  }
  EXPECT_EQ(agent_->endpoints().size(), 2u);
}

TEST_F(CniChainTest, DelSucceedsWhenTheAgentIsGone) {
  if (!can_plumb()) GTEST_SKIP() << "needs root, ip(8) and /usr/lib/cni/ptp";
  Netns ns;
  ASSERT_TRUE(ns.ok());
  ASSERT_EQ(invoke("ADD", ns.path(), netconf()).exit_code, 0);
  agent_->stop();
  auto del = invoke("DEL", ns.path(), netconf());
  EXPECT_EQ(del.exit_code, 0) << del.raw_out << del.err;
  EXPECT_EQ(ns.ipv4_of("eth0"), "");
}

}  // namespace
}  // namespace cn::fakes
