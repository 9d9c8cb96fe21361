// CurlNomadClient: configuration from the environment, then every call against the fake Nomad
// over real sockets (TCP, and unix:// through the same fake), blocking queries, retries in
// simulated time, the event stream in both transports, and the token's secrecy.
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <vector>

#include "common/nomad/client/curl_nomad_client.h"
#include "tests/fakes/http/http_server.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/manual_clock.h"
#include "tests/unit/clients/client_test_util.h"

namespace cn::nomad {
namespace {

using namespace std::chrono_literals;
using client_testing::ClockPump;
using client_testing::env_of;
using client_testing::eventually;
using client_testing::LogCapture;
using client_testing::TempDir;

constexpr const char* kSecret = "5f1c9a3e-token-never-logged-7d2b";

// ---- configuration ---------------------------------------------------------------------------

TEST(NomadClientConfig, FromEnvReadsEveryVariable) {
  std::map<std::string, std::string> env = {{"NOMAD_ADDR", "https://10.0.0.5:4646"},
                                            {"NOMAD_TOKEN", kSecret},
                                            {"NOMAD_REGION", "eu-west"},
                                            {"NOMAD_CACERT", "/etc/nomad/ca.pem"},
                                            {"NOMAD_CAPATH", "/etc/nomad/cas"},
                                            {"NOMAD_CLIENT_CERT", "/etc/nomad/cli.pem"},
                                            {"NOMAD_CLIENT_KEY", "/etc/nomad/cli-key.pem"},
                                            {"NOMAD_TLS_SERVER_NAME", "client.eu-west.nomad"},
                                            {"NOMAD_SKIP_VERIFY", "true"}};
  auto c = NomadClientConfig::from_env(env_of(env));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->address, "https://10.0.0.5:4646");
  EXPECT_EQ(c->token, kSecret);
  EXPECT_EQ(c->region, "eu-west");
  EXPECT_EQ(c->ca_cert, "/etc/nomad/ca.pem");
  EXPECT_EQ(c->ca_path, "/etc/nomad/cas");
  EXPECT_EQ(c->client_cert, "/etc/nomad/cli.pem");
  EXPECT_EQ(c->client_key, "/etc/nomad/cli-key.pem");
  EXPECT_EQ(c->tls_server_name, "client.eu-west.nomad");
  EXPECT_TRUE(c->skip_verify);
}

TEST(NomadClientConfig, TaskApiSocketFromNomadUnixAddrUnlessNomadAddrIsSet) {
  auto only_unix =
      NomadClientConfig::from_env(env_of({{"NOMAD_UNIX_ADDR", "unix:///secrets/api.sock"}}));
  ASSERT_TRUE(only_unix);
  EXPECT_EQ(only_unix->address, "unix:///secrets/api.sock");
  auto both = NomadClientConfig::from_env(env_of(
      {{"NOMAD_UNIX_ADDR", "unix:///secrets/api.sock"}, {"NOMAD_ADDR", "https://10.0.0.5:4646"}}));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->address, "https://10.0.0.5:4646");
}

TEST(NomadClientConfig, DefaultsWhenUnsetOrEmpty) {
  std::map<std::string, std::string> env = {{"NOMAD_ADDR", ""}, {"NOMAD_SKIP_VERIFY", ""}};
  auto c = NomadClientConfig::from_env(env_of(env));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->address, "http://127.0.0.1:4646");
  EXPECT_TRUE(c->token.empty());
  EXPECT_FALSE(c->skip_verify);  // verification is on unless explicitly switched off
  EXPECT_FALSE(NomadClientConfig{}.skip_verify);
}

TEST(NomadClientConfig, SkipVerifyTakesGoBoolsOnly) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    std::map<std::string, std::string> env = {{"NOMAD_SKIP_VERIFY", t}};
    auto c = NomadClientConfig::from_env(env_of(env));
    ASSERT_TRUE(c) << t;
    EXPECT_TRUE(c->skip_verify) << t;
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    std::map<std::string, std::string> env = {{"NOMAD_SKIP_VERIFY", f}};
    auto c = NomadClientConfig::from_env(env_of(env));
    ASSERT_TRUE(c) << f;
    EXPECT_FALSE(c->skip_verify) << f;
  }
  for (const char* bad : {"yes", "on", "tRUE", "2", " true"}) {
    std::map<std::string, std::string> env = {{"NOMAD_SKIP_VERIFY", bad}};
    auto c = NomadClientConfig::from_env(env_of(env));
    ASSERT_FALSE(c) << bad;
    EXPECT_NE(c.error().message.find("NOMAD_SKIP_VERIFY"), std::string::npos);
  }
}

TEST(NomadClientConfig, RedactedNeverShowsTheToken) {
  NomadClientConfig c;
  c.token = kSecret;
  c.address = "unix:///secrets/api.sock";
  const std::string text = c.redacted();
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  EXPECT_NE(text.find("token=set"), std::string::npos) << text;
  EXPECT_NE(text.find("unix:///secrets/api.sock"), std::string::npos) << text;
  EXPECT_NE(NomadClientConfig{}.redacted().find("token=unset"), std::string::npos);
}

TEST(NomadClientConfig, AddressForms) {
  auto u = nomad_target("unix:///secrets/api.sock");
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->is_unix());
  EXPECT_EQ(u->socket_path(), "/secrets/api.sock");
  EXPECT_EQ(u->host(), "127.0.0.1");  // what Nomad's Go client puts in the URL
  auto h = nomad_target("https://nomad.service:4646");
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->is_https());
  for (const char* bad :
       {"unix://relative.sock", "unix://", "127.0.0.1:4646", "tcp://x:1", "http://x:port"}) {
    auto refused = nomad_target(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("unix://"), std::string::npos)
        << refused.error().message;
    EXPECT_EQ(refused.error().message.find("NOMAD_ADDR"), std::string::npos)
        << "the address may come from --nomad-addr: " << refused.error().message;
    NomadClientConfig c;
    c.address = bad;
    EXPECT_FALSE(CurlNomadClient::create(c)) << bad;
  }
}

// ---- against the fake Nomad -----------------------------------------------------------------

class NomadClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeNomadConfig cfg;
    cfg.clock = &fake_clock_;
    cfg.blocking_jitter = false;
    cfg.stream_transport = fakes::StreamTransport::kRaw;
    fake_ = std::make_unique<fakes::FakeNomad>(cfg);
    fakes::JobSpec job;
    job.id = "web";
    job.meta = {{"team", "payments"}};
    ASSERT_TRUE(fake_->register_job(job));
    ASSERT_TRUE(fake_->start());
  }
  void TearDown() override { fake_->stop(); }

  std::string place(const std::string& job = "web") {
    fakes::PlaceRequest p;
    p.job_id = job;
    auto id = fake_->place_alloc(p);
    EXPECT_TRUE(id) << id.error().message;
    return id.value_or("");
  }
  NomadClientConfig config() {
    NomadClientConfig c;
    c.address = fake_->address();
    c.retry_seed = 1;
    return c;
  }
  std::unique_ptr<CurlNomadClient> client(NomadClientConfig c, Clock& clock = system_clock(),
                                          std::shared_ptr<spdlog::logger> log = nullptr) {
    auto made = CurlNomadClient::create(std::move(c), clock, std::move(log));
    EXPECT_TRUE(made) << made.error().message;
    return made ? std::move(*made) : nullptr;
  }
  static MonoTime soon() { return system_clock().now() + 10s; }
  std::vector<std::string> targets(const std::string& route) const {
    std::vector<std::string> out;
    for (const auto& r : fake_->requests()) {
      if (r.route == route) out.push_back(r.target);
    }
    return out;
  }

  using FakeNomadConfig = fakes::FakeNomadConfig;
  ManualClock fake_clock_;
  std::unique_ptr<fakes::FakeNomad> fake_;
};

TEST_F(NomadClientTest, LocalNodeIdFromAgentSelf) {
  auto c = client(config());
  auto id = c->local_node_id(soon());
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, FakeNomadConfig{}.node_id);
}

// The node ID sits three objects deep; an agent answering another shape (a server-only agent has
// no "client" stats) must give a clear error, whatever level is missing or of the wrong type.
TEST_F(NomadClientTest, AgentSelfWithoutAClientNodeIdIsABadAnswer) {
  auto c = client(config());
  for (const char* body :
       {R"({})", R"({"stats":"x"})", R"({"stats":{"client":[1]}})", R"({"stats":{"client":{}}})",
        R"({"stats":{"client":{"node_id":7}}})", R"({"stats":{"client":{"node_id":""}}})"}) {
    fake_->fail_next(1, 200, "/v1/agent/self", body);
    auto id = c->local_node_id(soon());
    ASSERT_FALSE(id) << body;
    EXPECT_EQ(id.error().kind, ErrorKind::bad_answer) << body;
    EXPECT_NE(id.error().message.find("stats.client.node_id"), std::string::npos) << body;
  }
}

TEST_F(NomadClientTest, AllocationAndJob) {
  const std::string alloc = place();
  auto c = client(config());
  auto a = c->allocation(alloc, soon());
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->id, alloc);
  EXPECT_EQ(a->job_id, "web");
  ASSERT_TRUE(a->job.has_value());
  EXPECT_EQ(a->job->meta.at("team"), "payments");
  auto j = c->job("default", "web", soon());
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ(j->id, "web");
  EXPECT_EQ(targets("job").back(), "/v1/job/web?namespace=default");
}

TEST_F(NomadClientTest, JobIdWithSlashStaysOneSegment) {
  fakes::JobSpec parent;
  parent.id = "batch";
  parent.type = "batch";
  parent.periodic_spec = "*/5 * * * *";
  ASSERT_TRUE(fake_->register_job(parent));
  auto child = fake_->launch_periodic("default", "batch", 1700000000);
  ASSERT_TRUE(child) << child.error().message;
  auto c = client(config());
  auto j = c->job("default", *child, soon());
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ(j->id, *child);
  EXPECT_EQ(j->parent_id, "batch");
  EXPECT_EQ(targets("job").back(), "/v1/job/batch%2Fperiodic-1700000000?namespace=default");
}

TEST_F(NomadClientTest, ErrorsCarryNomadsPlainTextAndStatus) {
  auto c = client(config());
  auto a = c->allocation("00000000-0000-0000-0000-000000000000", soon());
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().status, 404);
  EXPECT_EQ(a.error().message, "alloc not found");
  auto j = c->job("other-ns", "web", soon());
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().status, 404);
  EXPECT_EQ(j.error().message, "job not found");
}

TEST_F(NomadClientTest, RegionIsSentWhenSet) {
  auto cfg = config();
  cfg.region = "global";
  auto c = client(cfg);
  ASSERT_TRUE(c->local_node_id(soon()));
  EXPECT_EQ(targets("agent_self").back(), "/v1/agent/self?region=global");
}

TEST_F(NomadClientTest, NodeAllocationsBlockingQuery) {
  const std::string node = FakeNomadConfig{}.node_id;
  const std::string first = place();
  auto c = client(config());
  auto snap = c->node_allocations(node, 0, 30s, soon());
  ASSERT_TRUE(snap) << snap.error().message;
  ASSERT_EQ(snap->value.allocations.size(), 1U);
  EXPECT_EQ(snap->index, fake_->current_index());
  EXPECT_EQ(targets("node_allocations").back(),
            "/v1/node/" + node + "/allocations");  // index 0: no blocking

  auto blocked = std::async(std::launch::async,
                            [&] { return c->node_allocations(node, snap->index, 30s, soon()); });
  ASSERT_TRUE(fake_->wait_for_blocked(1));
  const std::string second = place();
  auto next = blocked.get();
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_GT(next->index, snap->index);
  EXPECT_EQ(next->value.allocations.size(), 2U);
  EXPECT_EQ(targets("node_allocations").back(),
            "/v1/node/" + node + "/allocations?index=" + std::to_string(snap->index) + "&wait=30s");
}

TEST_F(NomadClientTest, BlockingQueryTimesOutAfterWaitPlusJitterAndMargin) {
  const std::string node = FakeNomadConfig{}.node_id;
  place();
  auto cfg = config();
  cfg.blocking_margin = 100ms;
  auto c = client(cfg);
  // The fake's clock never moves, so the query never returns: only our own timeout
  // (1 s + 1/16 s + 100 ms) ends it, well before the caller's deadline.
  const auto start = std::chrono::steady_clock::now();
  auto r = c->node_allocations(node, fake_->current_index(), 1s, system_clock().now() + 60s);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, 0);
  EXPECT_GE(took, 1100ms);
  EXPECT_LT(took, 10s);
}

TEST_F(NomadClientTest, MissingIndexHeaderIsAnError) {
  TempDir dir;
  auto server =
      fakes::HttpServer::unix_socket(dir.file("nomad.sock"), [](const fakes::HttpRequest&) {
        fakes::HttpResponse r;
        r.body = "[]";
        return r;
      });
  server->start();
  auto cfg = config();
  cfg.address = "unix://" + dir.file("nomad.sock");
  auto c = client(cfg);
  auto r = c->node_allocations("n1", 0, 1s, soon());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("X-Nomad-Index"), std::string::npos);
  server->stop();
}

TEST_F(NomadClientTest, UnixSocketAddressTalksHttpTo127001) {
  TempDir dir;
  std::mutex mu;
  std::vector<std::string> hosts;
  auto server =
      fakes::HttpServer::unix_socket(dir.file("api.sock"), [&](const fakes::HttpRequest& r) {
        {
          std::lock_guard lock(mu);
          hosts.push_back(r.header("Host").value_or(""));
        }
        return fake_->handle(r);
      });
  server->start();
  auto cfg = config();
  cfg.address = "unix://" + dir.file("api.sock");
  auto c = client(cfg);
  auto id = c->local_node_id(soon());
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, FakeNomadConfig{}.node_id);
  server->stop();
  ASSERT_EQ(hosts.size(), 1U);
  EXPECT_EQ(hosts[0], "127.0.0.1");
}

TEST_F(NomadClientTest, ServerErrorsAreRetriedOnTheInjectedClock) {
  const std::string alloc = place();
  ManualClock clock;
  ClockPump pump(clock, 10s, ClockPump::Mode::on_sleep);
  auto c = client(config(), clock);
  fake_->fail_next(2, 500, "/v1/allocation");
  auto a = c->allocation(alloc, clock.now() + 1min);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(fake_->request_count("allocation"), 3);
}

TEST_F(NomadClientTest, ConnectionLimiter429IsRetried) {
  ManualClock clock;
  ClockPump pump(clock, 10s, ClockPump::Mode::on_sleep);
  auto c = client(config(), clock);
  fake_->fail_next(1, 429, "/v1/agent/self");
  ASSERT_TRUE(c->local_node_id(clock.now() + 1min));
  EXPECT_EQ(fake_->request_count("agent_self"), 2);
}

TEST_F(NomadClientTest, RetriesStopAtTheDeadlineWithTheLastError) {
  ManualClock clock;
  ClockPump pump(clock, 1s, ClockPump::Mode::on_sleep);
  auto cfg = config();
  cfg.retry.max_attempts = 1000;
  auto c = client(cfg, clock);
  fake_->fail_next(1000, 500, "/v1/agent/self");
  const MonoTime deadline = clock.now() + 20s;
  auto r = c->local_node_id(deadline);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, 500);
  EXPECT_EQ(r.error().message, "No cluster leader");
  const int n = fake_->request_count("agent_self");
  EXPECT_GT(n, 2);
  EXPECT_LT(n, 1000);
}

TEST_F(NomadClientTest, NotFoundIsNotRetried) {
  ManualClock clock;
  auto c = client(config(), clock);
  ASSERT_FALSE(c->allocation("00000000-0000-0000-0000-000000000000", clock.now() + 1min));
  EXPECT_EQ(fake_->request_count("allocation"), 1);
}

// ---- the token ---------------------------------------------------------------------------------

TEST_F(NomadClientTest, TokenIsSentAsHeaderAndNeverLoggedOrInErrors) {
  LogCapture logs;
  fake_->set_acl_enabled(true);
  fakes::TokenSpec token;
  token.secret = kSecret;
  fake_->add_token(token);
  const std::string alloc = place();
  std::vector<std::string> errors;

  auto cfg = config();
  cfg.token = kSecret;
  auto good = client(cfg, system_clock(), logs.logger());
  auto a = good->allocation(alloc, soon());
  ASSERT_TRUE(a) << a.error().message;  // ACLs on: works only because the header was sent

  // Without the token the same call is refused, which proves the header made the difference.
  auto anon = client(config(), system_clock(), logs.logger());
  auto denied = anon->allocation(alloc, soon());
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().status, 403);
  EXPECT_EQ(denied.error().message, "Permission denied");

  // Error paths with the token configured: HTTP errors, transport errors, stream errors.
  fake_->fail_next(1, 403, "/v1/job");
  auto e1 = good->job("default", "web", soon());
  ASSERT_FALSE(e1);
  errors.push_back(e1.error().message);
  auto cfg_dead = cfg;
  cfg_dead.address = "http://127.0.0.1:1";
  auto dead = client(cfg_dead, system_clock(), logs.logger());
  auto e2 = dead->local_node_id(soon());
  ASSERT_FALSE(e2);
  errors.push_back(e2.error().message);
  fake_->revoke_token(kSecret);
  auto e3 = good->event_stream(EventStreamQuery{}, [](std::string_view) { return true; }, 5s, {});
  ASSERT_FALSE(e3);
  errors.push_back(e3.error().message);

  // A server that echoes the token back: the message is scrubbed.
  TempDir dir;
  auto echo =
      fakes::HttpServer::unix_socket(dir.file("echo.sock"), [](const fakes::HttpRequest& r) {
        fakes::HttpResponse resp;
        resp.status = 400;
        resp.body = "bad token " + r.header("X-Nomad-Token").value_or("?");
        return resp;
      });
  echo->start();
  auto cfg_echo = cfg;
  cfg_echo.address = "unix://" + dir.file("echo.sock");
  auto echoed = client(cfg_echo, system_clock(), logs.logger());
  auto e4 = echoed->local_node_id(soon());
  ASSERT_FALSE(e4);
  EXPECT_EQ(e4.error().message, "bad token <redacted>");
  errors.push_back(e4.error().message);
  echo->stop();

  const std::string logged = logs.text();
  EXPECT_FALSE(logged.empty());  // the capture works: the client did log these calls
  EXPECT_EQ(logged.find(kSecret), std::string::npos) << logged;
  for (const auto& e : errors) EXPECT_EQ(e.find(kSecret), std::string::npos) << e;
  EXPECT_EQ(good->config().redacted().find(kSecret), std::string::npos);
}

// ---- nodes -------------------------------------------------------------------------------------

TEST_F(NomadClientTest, NodesListsTheFakesNodeTableWithStatuses) {
  fakes::NodeRecord other;
  other.id = "0a0a0a0a-0000-4000-8000-000000000002";
  other.name = "worker-2";
  fake_->add_node(other);
  ASSERT_TRUE(fake_->set_node_status(other.id, "down"));
  auto c = client(config());
  auto nodes = c->nodes(soon());
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2U);
  EXPECT_EQ((*nodes)[0].id, other.id);
  EXPECT_EQ((*nodes)[0].name, "worker-2");
  EXPECT_EQ((*nodes)[0].status, "down");
  EXPECT_EQ((*nodes)[1].id, FakeNomadConfig{}.node_id);
  EXPECT_EQ((*nodes)[1].name, FakeNomadConfig{}.node_name);
  EXPECT_EQ((*nodes)[1].status, "ready");
  EXPECT_EQ(targets("nodes").back(), "/v1/nodes");

  ASSERT_TRUE(fake_->remove_node(other.id));
  nodes = c->nodes(soon());
  ASSERT_TRUE(nodes) << nodes.error().message;
  EXPECT_EQ(nodes->size(), 1U);
}

TEST_F(NomadClientTest, NodesWithoutNodeReadIsAPermissionError) {
  LogCapture logs;
  fakes::TokenSpec token;
  token.secret = kSecret;
  token.management = false;
  token.namespaces = {"*"};
  token.node_read = false;
  fake_->add_token(token);
  fake_->set_acl_enabled(true);
  auto cfg = config();
  cfg.token = kSecret;
  auto c = client(cfg, system_clock(), logs.logger());
  auto nodes = c->nodes(soon());
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().kind, ErrorKind::permission);
  EXPECT_EQ(nodes.error().status, 403);
  EXPECT_EQ(nodes.error().message, "Permission denied");
  EXPECT_EQ(fake_->request_count("nodes"), 1);  // a refusal is not retried
  EXPECT_EQ(logs.text().find(kSecret), std::string::npos);
}

TEST_F(NomadClientTest, NodesBodyTheModelRefusesIsABadAnswer) {
  auto c = client(config());
  for (const char* body : {R"([{"ID":"n1","Name":"a"},{"Name":"b","Status":"down"}])",
                           R"({"ID":"n1"})", R"([{"ID":"n1","Name":)"}) {
    fake_->fail_next(1, 200, "/v1/nodes", body);
    auto nodes = c->nodes(soon());
    ASSERT_FALSE(nodes) << body;
    EXPECT_EQ(nodes.error().kind, ErrorKind::bad_answer) << body;
  }
  auto named = c->nodes(soon());
  ASSERT_TRUE(named);  // the faults are spent: the real list again
  fake_->fail_next(1, 200, "/v1/nodes", R"([{"ID":"n1","Name":"a"},{"Name":"b"}])");
  auto missing_id = c->nodes(soon());
  ASSERT_FALSE(missing_id);
  EXPECT_NE(missing_id.error().message.find("node list at /1/ID: missing"), std::string::npos)
      << missing_id.error().message;
}

TEST_F(NomadClientTest, NodesFollowsEveryPage) {
  TempDir dir;
  std::mutex mu;
  std::vector<std::string> asked;
  auto server =
      fakes::HttpServer::unix_socket(dir.file("nomad.sock"), [&](const fakes::HttpRequest& r) {
        {
          std::lock_guard lock(mu);
          asked.push_back(r.target);
        }
        fakes::HttpResponse resp;
        const std::string token = r.query_value("next_token").value_or("");
        if (token.empty()) {
          resp.body = R"([{"ID":"a1","Name":"one","Status":"ready"}])";
          resp.headers.emplace_back("X-Nomad-NextToken", "b2");
        } else {
          resp.body = R"([{"ID":"b2","Name":"two","Status":"down"}])";
        }
        return resp;
      });
  server->start();
  auto cfg = config();
  cfg.address = "unix://" + dir.file("nomad.sock");
  auto nodes = client(cfg)->nodes(soon());
  server->stop();
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2U);
  EXPECT_EQ((*nodes)[0].name, "one");
  EXPECT_EQ((*nodes)[1].name, "two");
  EXPECT_EQ(asked, (std::vector<std::string>{"/v1/nodes", "/v1/nodes?next_token=b2"}));
}

// ---- variable writes (check-and-set) ------------------------------------------------------

TEST_F(NomadClientTest, PutVariableWithCasZeroCreatesOnlyWhatIsAbsent) {
  auto c = client(config());
  auto created = c->put_variable("default", "cilium-nomad/services/vips/07", {{"117", "prod/api"}},
                                 0, Deadline{soon()});
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_TRUE(created->written);
  EXPECT_EQ(created->current.items.at("117"), "prod/api");
  EXPECT_GT(created->current.meta.modify_index, 0u);

  // A second create of the same path is the check-and-set's "no", with Nomad's copy.
  auto again = c->put_variable("default", "cilium-nomad/services/vips/07", {{"117", "dev/api"}}, 0,
                               Deadline{soon()});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(again->written);
  EXPECT_EQ(again->current.items.at("117"), "prod/api");
  EXPECT_EQ(again->current.meta.modify_index, created->current.meta.modify_index);
}

TEST_F(NomadClientTest, PutVariableLandsOnlyOnTheIndexItRead) {
  auto c = client(config());
  auto first = c->put_variable("default", "t/v", {{"a", "1"}}, 0, Deadline{soon()});
  ASSERT_TRUE(first && first->written);
  const std::uint64_t read_at = first->current.meta.modify_index;
  auto second = c->put_variable("default", "t/v", {{"a", "2"}}, read_at, Deadline{soon()});
  ASSERT_TRUE(second && second->written);
  // A writer still holding the old index loses and learns what is there now.
  auto stale = c->put_variable("default", "t/v", {{"a", "3"}}, read_at, Deadline{soon()});
  ASSERT_TRUE(stale) << stale.error().message;
  EXPECT_FALSE(stale->written);
  EXPECT_EQ(stale->current.items.at("a"), "2");
  EXPECT_EQ(fake_->variable("default", "t/v")->items.at("a"), "2");
  // Expecting a variable that does not exist is a conflict too, with nothing in it.
  auto gone = c->put_variable("default", "t/none", {{"a", "1"}}, 5, Deadline{soon()});
  ASSERT_TRUE(gone) << gone.error().message;
  EXPECT_FALSE(gone->written);
  EXPECT_EQ(gone->current.meta.modify_index, 0u);
  EXPECT_TRUE(gone->current.items.empty());
}

TEST_F(NomadClientTest, DeleteVariableLandsOnlyOnTheIndexItRead) {
  auto c = client(config());
  auto made = c->put_variable("default", "t/v", {{"a", "1"}}, 0, Deadline{soon()});
  ASSERT_TRUE(made && made->written);
  auto stale =
      c->delete_variable("default", "t/v", made->current.meta.modify_index + 1, Deadline{soon()});
  ASSERT_TRUE(stale) << stale.error().message;
  EXPECT_FALSE(stale->written);
  EXPECT_TRUE(fake_->variable("default", "t/v"));
  auto gone =
      c->delete_variable("default", "t/v", made->current.meta.modify_index, Deadline{soon()});
  ASSERT_TRUE(gone) << gone.error().message;
  EXPECT_TRUE(gone->written);
  EXPECT_FALSE(fake_->variable("default", "t/v"));
}

TEST_F(NomadClientTest, PutVariableRefusedByNomadIsAnErrorOfItsKind) {
  auto c = client(config());
  // Nomad keeps nomad/ for its own paths: a 400, not a conflict.
  auto bad = c->put_variable("default", "nomad/other", {{"a", "1"}}, 0, Deadline{soon()});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().status, 400);
}

// ---- event stream --------------------------------------------------------------------------

class NomadStreamTest : public NomadClientTest,
                        public ::testing::WithParamInterface<fakes::StreamTransport> {
 protected:
  void SetUp() override {
    NomadClientTest::SetUp();
    fake_->set_stream_transport(GetParam());
  }
};

struct Lines {
  std::mutex mu;
  std::vector<std::string> lines;
  void add(std::string_view l) {
    std::lock_guard lock(mu);
    lines.emplace_back(l);
  }
  std::vector<std::string> get() {
    std::lock_guard lock(mu);
    return lines;
  }
  std::size_t size() {
    std::lock_guard lock(mu);
    return lines.size();
  }
};

TEST_P(NomadStreamTest, DeliversHeartbeatsAndEventFramesAsLines) {
  auto c = client(config());
  const std::uint64_t from = fake_->current_index() + 1;
  Lines got;
  std::string alloc;
  auto run = std::async(std::launch::async, [&] {
    return c->event_stream(EventStreamQuery{"Allocation", "*", from},
                           [&](std::string_view line) {
                             got.add(line);
                             return got.size() < 3;  // heartbeat, event, heartbeat
                           },
                           5s, {});
  });
  ASSERT_TRUE(fake_->wait_for_streams(1));
  ASSERT_TRUE(eventually([&] { return got.size() == 1; }));
  alloc = place();
  ASSERT_TRUE(eventually([&] { return got.size() == 2; }));
  fake_clock_.advance(30s);  // the fake's next heartbeat
  auto status = run.get();
  ASSERT_TRUE(status) << status.error().message;
  auto lines = got.get();
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0], "{}");
  EXPECT_NE(lines[1].find("\"Events\""), std::string::npos);
  EXPECT_NE(lines[1].find(alloc), std::string::npos);
  EXPECT_EQ(lines[2], "{}");
  auto t = targets("event_stream");
  ASSERT_EQ(t.size(), 1U);
  EXPECT_EQ(t[0], "/v1/event/stream?topic=Allocation&namespace=%2A&index=" + std::to_string(from));
}

TEST_P(NomadStreamTest, EndOfStreamIsAnError) {
  auto c = client(config());
  Lines got;
  auto run = std::async(std::launch::async, [&] {
    return c->event_stream(EventStreamQuery{},
                           [&](std::string_view l) {
                             got.add(l);
                             return true;
                           },
                           5s, {});
  });
  ASSERT_TRUE(eventually([&] { return got.size() == 1; }));
  fake_->drop_streams();
  auto status = run.get();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().status, 0);
  EXPECT_NE(status.error().message.find("event stream ended"), std::string::npos)
      << status.error().message;
  if (GetParam() == fakes::StreamTransport::kChunked) {
    // Nomad <= 1.11.1 appends its reason without a newline.
    EXPECT_NE(status.error().message.find("subscription closed by server"), std::string::npos)
        << status.error().message;
  }
}

TEST_P(NomadStreamTest, SilenceBeyondTheIdleTimeoutIsAnError) {
  auto c = client(config());
  fake_->set_stream_stall(true);  // not even the first heartbeat
  const auto start = std::chrono::steady_clock::now();
  auto status =
      c->event_stream(EventStreamQuery{}, [](std::string_view) { return true; }, 300ms, {});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("idle"), std::string::npos) << status.error().message;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 10s);
  fake_->set_stream_stall(false);
}

TEST_P(NomadStreamTest, StopTokenEndsTheStreamWithoutError) {
  auto c = client(config());
  std::stop_source stop;
  Lines got;
  auto run = std::async(std::launch::async, [&] {
    return c->event_stream(
        EventStreamQuery{},
        [&](std::string_view l) {
          got.add(l);
          return true;
        },
        60s, stop.get_token());
  });
  ASSERT_TRUE(eventually([&] { return got.size() == 1; }));
  stop.request_stop();
  auto status = run.get();
  ASSERT_TRUE(status) << status.error().message;
  // The fake (like Nomad) notices a gone subscriber at its next write: the heartbeat.
  EXPECT_TRUE(eventually([&] {
    fake_clock_.advance(30s);
    return fake_->active_streams() == 0;
  }));
}

INSTANTIATE_TEST_SUITE_P(Transports, NomadStreamTest,
                         ::testing::Values(fakes::StreamTransport::kRaw,
                                           fakes::StreamTransport::kChunked),
                         [](const ::testing::TestParamInfo<fakes::StreamTransport>& p) {
                           return p.param == fakes::StreamTransport::kRaw ? "raw" : "chunked";
                         });

TEST_F(NomadClientTest, StreamRefusedSubscriptionCarriesStatusAndText) {
  fake_->set_acl_enabled(true);
  auto cfg = config();
  cfg.token = "not-a-known-token";
  auto c = client(cfg);
  bool called = false;
  auto status =
      c->event_stream(EventStreamQuery{}, [&](std::string_view) { return called = true; }, 5s, {});
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().status, 403);
  EXPECT_EQ(status.error().message, "Permission denied");
  EXPECT_FALSE(called);
}

TEST_F(NomadClientTest, StreamWithoutTopicIsRefusedLocally) {
  auto c = client(config());
  EventStreamQuery q;
  q.topic.clear();
  auto status = c->event_stream(q, [](std::string_view) { return true; }, 5s, {});
  ASSERT_FALSE(status);
  EXPECT_EQ(targets("event_stream").size(), 0U);
}

}  // namespace
}  // namespace cn::nomad
