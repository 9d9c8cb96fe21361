// Finding this node's Nomad ID with no more privilege than labeling needs: the real HTTP client
// against the fake Nomad enforcing conf-examples/acl-policy.hcl, with an injected file reader
// standing in for the Nomad client's data directory. Every source must stay inside the policy
// (the fake's denial list), and the last resort, agent/self, is refused as Nomad refuses it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/nomad/client/curl_nomad_client.h"
#include "labeler/daemon/node_identity.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

constexpr const char* kLocal = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";  // the fake's own node
constexpr const char* kOther = "0a0a0a0a-0000-4000-8000-000000000002";
constexpr const char* kDataDir = "/var/lib/nomad-test";

std::string example_policy() {
  return cn::testing::read_file(cn::testing::source_dir() + "/conf-examples/acl-policy.hcl");
}

class NodeIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakes::FakeNomadConfig cfg;
    cfg.node_id = kLocal;
    cfg.node_name = "worker-1";
    cfg.acl_enabled = true;
    auto labeler = fakes::token_with_policy("labeler", example_policy());
    ASSERT_TRUE(labeler) << labeler.error().message;
    cfg.tokens = {*labeler, fakes::TokenSpec{"management", true, {}, true, true}};
    nomad_ = std::make_unique<fakes::FakeNomad>(cfg);
    ASSERT_TRUE(nomad_->start());
  }
  void TearDown() override { nomad_->stop(); }

  std::unique_ptr<nomad::NomadApi> client(const std::string& token = "labeler") {
    nomad::NomadClientConfig nc;
    nc.address = nomad_->address();
    nc.token = token;
    auto c = nomad::CurlNomadClient::create(nc);
    EXPECT_TRUE(c);
    return c ? std::move(*c) : nullptr;
  }
  // A data directory with these files, as the injected reader sees it.
  NodeIdentitySources sources(std::map<std::string, std::string> files = {}) {
    NodeIdentitySources s;
    s.nomad_data_dir = kDataDir;
    s.node_name = "worker-1";
    s.read_file = [files = std::move(files)](const std::string& path) -> Result<std::string> {
      auto it = files.find(path);
      if (it == files.end()) return fail(ErrorKind::not_found, "No such file or directory");
      return it->second;
    };
    return s;
  }
  static Deadline soon() {
    return Deadline{std::chrono::steady_clock::now() + std::chrono::seconds{5}};
  }
  void add_node(const std::string& id, const std::string& name, const std::string& status) {
    fakes::NodeRecord n;
    n.id = id;
    n.name = name;
    n.status = status;
    nomad_->add_node(n);
  }
  std::string denials() const {
    std::string out;
    for (const auto& d : nomad_->acl_denials()) out += d.route + ": " + d.reason + "\n";
    return out;
  }

  std::unique_ptr<fakes::FakeNomad> nomad_;
};

TEST_F(NodeIdentityTest, TheFlagWinsAndAsksNothing) {
  auto s = sources({{std::string(kDataDir) + "/client/client-id", kOther}});
  s.node_id = "11111111-2222-4333-8444-555555555555";
  auto found = find_node_id(s, *client(), soon());
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->id, s.node_id);
  EXPECT_EQ(found->source, "--node-id");
  EXPECT_FALSE(found->asked_nomad);
  EXPECT_TRUE(nomad_->requests().empty());
}

TEST_F(NodeIdentityTest, TheClientIdFileIsReadAsNomadWritesIt) {
  // Nomad writes the bare UUID and lowercases what it reads back; an operator's newline is
  // harmless.
  auto found = find_node_id(sources({{std::string(kDataDir) + "/client/client-id",
                                      "F2C1E0B9-3A4D-5E6F-7A8B-9C0D1E2F3A4B\n"}}),
                            *client(), soon());
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->id, kLocal);
  EXPECT_EQ(found->source, std::string("client-id file ") + kDataDir + "/client/client-id");
  EXPECT_TRUE(nomad_->requests().empty());
}

TEST_F(NodeIdentityTest, WithoutTheFileTheNodeListByNameNeedsOnlyNodeRead) {
  add_node(kOther, "worker-2", "ready");
  add_node("0a0a0a0a-0000-4000-8000-000000000003", "worker-1", "down");  // an old registration
  auto found = find_node_id(sources(), *client(), soon());
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->id, kLocal);
  EXPECT_EQ(found->source, "node list, name worker-1");
  EXPECT_TRUE(found->asked_nomad);
  EXPECT_EQ(denials(), "");
  EXPECT_EQ(nomad_->request_count("agent_self"), 0);
}

TEST_F(NodeIdentityTest, AFileWithoutAnIdIsPassedOverAndNamed) {
  auto s = sources({{std::string(kDataDir) + "/client/client-id", "garbage"}});
  s.node_name = "";  // no name to look for either
  auto found = find_node_id(s, *client(), soon());
  ASSERT_FALSE(found);
  EXPECT_NE(found.error().message.find("client-id holds no node ID"), std::string::npos)
      << found.error().message;
}

TEST_F(NodeIdentityTest, TwoLiveNodesOfThisNameAreAnErrorNamingBoth) {
  add_node(kOther, "worker-1", "initializing");
  auto found = find_node_id(sources(), *client(), soon());
  ASSERT_FALSE(found);
  const std::string& m = found.error().message;
  EXPECT_NE(m.find(std::string(kLocal) + " (ready)"), std::string::npos) << m;
  EXPECT_NE(m.find(std::string(kOther) + " (initializing)"), std::string::npos) << m;
  EXPECT_NE(m.find("client-id: missing"), std::string::npos) << m;
  // The last resort is outside the example policy: Nomad says 403, nothing to retry.
  EXPECT_NE(m.find("GET /v1/agent/self: Permission denied (needs agent read)"), std::string::npos)
      << m;
  EXPECT_EQ(found.error().kind, ErrorKind::permission);
  EXPECT_EQ(denials(), "agent_self: agent read\n");
}

TEST_F(NodeIdentityTest, AgentSelfIsUsedWhenTheTokenMayReadTheAgent) {
  auto s = sources();
  s.node_name = "not-registered";
  auto found = find_node_id(s, *client("management"), soon());
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->id, kLocal);
  EXPECT_EQ(found->source, "GET /v1/agent/self");
}

TEST_F(NodeIdentityTest, AnUnreachableNomadIsWorthRetrying) {
  const std::string address = nomad_->address();
  nomad_->stop();
  nomad::NomadClientConfig nc;
  nc.address = address;
  auto c = nomad::CurlNomadClient::create(nc);
  ASSERT_TRUE(c);
  auto found = find_node_id(sources(), **c, soon());
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().kind, ErrorKind::transport) << found.error().message;
}

TEST(NodeIdentityFiles, ClientIdPathAndTheRealReader) {
  EXPECT_EQ(client_id_path("/opt/nomad/data/"), "/opt/nomad/data/client/client-id");
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("client"));
  std::ofstream(dir.file("client/client-id")) << kLocal;
  auto text = read_small_file(client_id_path(dir.path()));
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, kLocal);
  auto missing = read_small_file(dir.file("nope"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
}

}  // namespace
}  // namespace cn::labeler
