// CurlEtcdClient against a real etcd (Debian's 3.4 on loopback, tests/support/etcd_server.h):
// the gateway paths, paging, compares, leases, TLS, auth, failover and a compacted read.
#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>

#include "common/etcd/curl_etcd_client.h"
#include "common/etcd/etcd_json.h"
#include "tests/support/etcd_server.h"
#include "tests/support/eventually.h"

namespace cn::etcd {
namespace {

using namespace std::chrono_literals;
using cn::testing::EtcdServer;
using cn::testing::eventually;

Deadline soon(std::chrono::milliseconds d = 10s) {
  return Deadline{std::chrono::steady_clock::now() + d};
}

RangeRequest one_key(std::string key) {
  RangeRequest r;
  r.key = std::move(key);
  return r;
}

std::unique_ptr<CurlEtcdClient> client_for(EtcdConfig config) {
  auto c = CurlEtcdClient::create(std::move(config));
  EXPECT_TRUE(c) << c.error().message;
  return c ? std::move(*c) : nullptr;
}

std::unique_ptr<CurlEtcdClient> client_for(const EtcdServer& server) {
  EtcdConfig config;
  config.source = "test";
  config.endpoints = {server.endpoint()};
  return client_for(config);
}

class EtcdClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdServer::available()) GTEST_SKIP() << EtcdServer::kBinary << " is not installed";
    server_ = std::make_unique<EtcdServer>();
    ASSERT_TRUE(server_->started()) << server_->log();
    client_ = client_for(*server_);
    ASSERT_TRUE(client_);
  }

  std::vector<std::string> keys_under(std::string_view prefix) {
    RangeRequest r{std::string(prefix), prefix_end(prefix)};
    r.keys_only = true;
    auto page = client_->range(r, soon());
    EXPECT_TRUE(page) << page.error().message;
    std::vector<std::string> keys;
    if (page) {
      for (const auto& kv : page->kvs) keys.push_back(kv.key);
    }
    return keys;
  }

  std::unique_ptr<EtcdServer> server_;
  std::unique_ptr<CurlEtcdClient> client_;
};

TEST_F(EtcdClientTest, PagedScanPinnedToOneRevisionMissesLaterWrites) {
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(client_->put("p/" + std::to_string(i), "v" + std::to_string(i), 0, soon()));
  }
  RangeRequest r{"p/", prefix_end("p/")};
  r.limit = 2;
  auto first = client_->range(r, soon());
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->more);
  EXPECT_EQ(first->count, 5);
  ASSERT_EQ(first->kvs.size(), 2u);
  EXPECT_EQ(first->kvs[0].key, "p/1");
  EXPECT_EQ(first->kvs[0].value, "v1");
  EXPECT_GT(first->kvs[0].mod_revision, 0);

  // A write between pages must not show up in a scan pinned to the first page's revision.
  ASSERT_TRUE(client_->put("p/45", "late", 0, soon()));
  std::vector<std::string> seen{first->kvs[0].key, first->kvs[1].key};
  r.revision = first->revision;
  RangePage page = std::move(*first);
  while (page.more) {
    r.key = page.kvs.back().key + std::string(1, '\0');
    auto next = client_->range(r, soon());
    ASSERT_TRUE(next) << next.error().message;
    for (const auto& kv : next->kvs) seen.push_back(kv.key);
    page = std::move(*next);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"p/1", "p/2", "p/3", "p/4", "p/5"}));
  EXPECT_EQ(keys_under("p/").size(), 6u);

  RangeRequest count{"p/", prefix_end("p/")};
  count.count_only = true;
  auto counted = client_->range(count, soon());
  ASSERT_TRUE(counted);
  EXPECT_EQ(counted->count, 6);
  EXPECT_TRUE(counted->kvs.empty());
}

TEST_F(EtcdClientTest, NoKeyUnderPrefixCompareHoldsOnlyWhileThePrefixIsEmpty) {
  TxnRequest claim;
  claim.compare.push_back({"claims/", prefix_end("claims/"), CompareTarget::create_revision,
                           CompareResult::equal, 0, ""});
  claim.success.push_back({TxnOp::Kind::put, "claims/a", "", "mine", 0});
  claim.failure.push_back({TxnOp::Kind::range, "claims/", prefix_end("claims/"), "", 0});

  auto first = client_->txn(claim, soon());
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->succeeded);
  ASSERT_EQ(first->ranges.size(), 1u);

  claim.success[0].key = "claims/b";
  auto second = client_->txn(claim, soon());
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_FALSE(second->succeeded);
  ASSERT_EQ(second->ranges.size(), 1u);
  ASSERT_EQ(second->ranges[0].kvs.size(), 1u);
  EXPECT_EQ(second->ranges[0].kvs[0].key, "claims/a");
  EXPECT_EQ(keys_under("claims/"), std::vector<std::string>{"claims/a"});
}

TEST_F(EtcdClientTest, ModRevisionCompareFailsAfterAnotherWrite) {
  auto rev = client_->put("fenced", "1", 0, soon());
  ASSERT_TRUE(rev) << rev.error().message;
  auto read = client_->range(one_key("fenced"), soon());
  ASSERT_TRUE(read);
  ASSERT_EQ(read->kvs.size(), 1u);
  const Revision seen = read->kvs[0].mod_revision;
  EXPECT_EQ(seen, *rev);

  TxnRequest update;
  update.compare.push_back(
      {"fenced", "", CompareTarget::mod_revision, CompareResult::equal, seen, ""});
  update.success.push_back({TxnOp::Kind::put, "fenced", "", "2", 0});
  update.success.push_back({TxnOp::Kind::delete_range, "gone/", prefix_end("gone/"), "", 0});
  ASSERT_TRUE(client_->put("gone/1", "x", 0, soon()));
  auto ok = client_->txn(update, soon());
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(ok->succeeded);
  ASSERT_EQ(ok->deleted.size(), 2u);
  EXPECT_EQ(ok->deleted[1], 1);

  // Our own write moved mod_revision: the same compare now fails.
  auto stale = client_->txn(update, soon());
  ASSERT_TRUE(stale) << stale.error().message;
  EXPECT_FALSE(stale->succeeded);

  TxnRequest by_value;
  by_value.compare.push_back({"fenced", "", CompareTarget::value, CompareResult::equal, 0, "2"});
  auto value_ok = client_->txn(by_value, soon());
  ASSERT_TRUE(value_ok);
  EXPECT_TRUE(value_ok->succeeded);
}

TEST_F(EtcdClientTest, LeaseKeepsKeyAliveUntilRevokedOrExpired) {
  auto lease = client_->grant_lease(30s, soon());
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_EQ(lease->ttl, 30s);
  ASSERT_TRUE(client_->put("leased/revoked", "x", lease->id, soon()));
  auto range = client_->range(one_key("leased/revoked"), soon());
  ASSERT_TRUE(range);
  ASSERT_EQ(range->kvs.size(), 1u);
  EXPECT_EQ(range->kvs[0].lease, lease->id);
  auto kept = client_->keep_alive(lease->id, soon());
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_EQ(*kept, 30s);

  ASSERT_TRUE(client_->revoke_lease(lease->id, soon()));
  EXPECT_TRUE(keys_under("leased/revoked").empty());
  auto after = client_->keep_alive(lease->id, soon());
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().kind, ErrorKind::not_found);
  auto revoke_again = client_->revoke_lease(lease->id, soon());
  ASSERT_FALSE(revoke_again);
  EXPECT_EQ(revoke_again.error().kind, ErrorKind::not_found);

  auto short_lease = client_->grant_lease(1s, soon());
  ASSERT_TRUE(short_lease) << short_lease.error().message;
  ASSERT_TRUE(client_->put("leased/expiring", "x", short_lease->id, soon()));
  EXPECT_TRUE(eventually([&] { return keys_under("leased/expiring").empty(); }, 15s, 50ms));
  auto expired = client_->keep_alive(short_lease->id, soon());
  ASSERT_FALSE(expired);
  EXPECT_EQ(expired.error().kind, ErrorKind::not_found);
}

TEST_F(EtcdClientTest, CompactedRevisionIsAClearHttpError) {
  auto old_rev = client_->put("c", "1", 0, soon());
  ASSERT_TRUE(old_rev);
  auto new_rev = client_->put("c", "2", 0, soon());
  ASSERT_TRUE(new_rev);
  ASSERT_TRUE(client_->post("/v3/kv/compaction", encode_compaction(*new_rev), soon()));
  RangeRequest r = one_key("c");
  r.revision = *old_rev;
  auto read = client_->range(r, soon());
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().kind, ErrorKind::http);
  EXPECT_NE(read.error().message.find("compacted"), std::string::npos) << read.error().message;

  r.revision = *new_rev + 100;
  auto future = client_->range(r, soon());
  ASSERT_FALSE(future);
  EXPECT_EQ(future.error().kind, ErrorKind::http);
  EXPECT_NE(future.error().message.find("future revision"), std::string::npos);
}

TEST_F(EtcdClientTest, FailsOverFromADeadEndpointAndRemembersTheLiveOne) {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  EtcdConfig config;
  config.source = "test";
  config.endpoints = {"http://127.0.0.1:1", server_->endpoint()};
  auto client = client_for(config);
  ASSERT_TRUE(client);
  EXPECT_EQ(client->describe(), "http://127.0.0.1:1");
  ASSERT_TRUE(client->put("f", "1", 0, soon()));
  EXPECT_EQ(client->describe(), server_->endpoint());
  ASSERT_TRUE(client->range(one_key("f"), soon()));

  // Every endpoint down: the last transport error, no hang.
  server_->kill();
  auto down = client->range(one_key("f"), soon(5s));
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().kind, ErrorKind::transport) << down.error().message;

  // Same data dir and port: the data survived.
  ASSERT_TRUE(server_->restart()) << server_->log();
  auto back = client->range(one_key("f"), soon());
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->kvs.size(), 1u);
  EXPECT_EQ(back->kvs[0].value, "1");
}

TEST_F(EtcdClientTest, PausedEndpointTimesOutAtTheDeadlineAndAStopCancels) {
  server_->pause();
  const auto start = std::chrono::steady_clock::now();
  auto paused = client_->range(one_key("x"), soon(700ms));
  const auto took = std::chrono::steady_clock::now() - start;
  server_->resume();
  ASSERT_FALSE(paused);
  EXPECT_EQ(paused.error().kind, ErrorKind::timeout) << paused.error().message;
  EXPECT_LT(took, 5s);

  std::stop_source stop;
  stop.request_stop();
  auto cancelled = client_->range(
      one_key("x"), Deadline{std::chrono::steady_clock::now() + 10s, stop.get_token()});
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().kind, ErrorKind::cancelled);
  EXPECT_TRUE(client_->range(one_key("x"), soon()));
}

// A frozen member accepts connections but never answers: the call times out at its deadline,
// and the next call starts with the next endpoint instead of waiting on the frozen one again.
// (The second server is a cluster of its own; only the rotation is under test.)
TEST_F(EtcdClientTest, AfterATimeoutTheNextCallStartsWithTheNextEndpoint) {
  EtcdServer other;
  ASSERT_TRUE(other.started()) << other.log();
  EtcdConfig config;
  config.source = "test";
  config.endpoints = {server_->endpoint(), other.endpoint()};
  auto client = client_for(config);
  ASSERT_TRUE(client);
  server_->pause();
  auto frozen = client->range(one_key("x"), soon(700ms));
  ASSERT_FALSE(frozen);
  EXPECT_EQ(frozen.error().kind, ErrorKind::timeout) << frozen.error().message;
  EXPECT_EQ(client->describe(), other.endpoint());
  // Generous: only that the call goes to the live member is under test, not how fast it answers
  // on a loaded machine.
  auto next = client->range(one_key("x"), soon(30s));
  server_->resume();
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(client->describe(), other.endpoint());
}

// etcd's simple auth tokens live in the member's memory: a restart makes the client's token
// invalid, and the client must authenticate again by itself.
TEST_F(EtcdClientTest, UsernamePasswordAuthAndReauthenticationAfterRestart) {
  for (const auto& [path, body] : std::vector<std::pair<std::string, std::string>>{
           {"/v3/auth/user/add", R"({"name":"root","password":"rootpw"})"},
           {"/v3/auth/role/add", R"({"name":"root"})"},
           {"/v3/auth/user/grant", R"({"user":"root","role":"root"})"},
           {"/v3/auth/user/add", R"({"name":"labeler","password":"s3cret"})"},
           {"/v3/auth/role/add", R"({"name":"rw"})"},
           {"/v3/auth/role/grant",
            R"({"name":"rw","perm":{"permType":"READWRITE","key":"bA==","range_end":"bQ=="}})"},
           {"/v3/auth/user/grant", R"({"user":"labeler","role":"rw"})"},
           {"/v3/auth/enable", "{}"}}) {
    auto res = client_->post(path, body, soon());
    ASSERT_TRUE(res) << path << ": " << res.error().message;
  }
  auto anonymous = client_->range(one_key("l/a"), soon());
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().kind, ErrorKind::permission);

  EtcdConfig config;
  config.source = "test";
  config.endpoints = {server_->endpoint()};
  config.username = "labeler";
  config.password = "s3cret";
  auto client = client_for(config);
  ASSERT_TRUE(client->put("l/a", "1", 0, soon()));
  auto outside = client->put("z", "1", 0, soon());
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().kind, ErrorKind::permission);

  ASSERT_TRUE(server_->restart()) << server_->log();
  auto after = client->range(one_key("l/a"), soon());
  ASSERT_TRUE(after) << after.error().message;
  ASSERT_EQ(after->kvs.size(), 1u);

  config.password = "wrong-pw";
  auto wrong = client_for(config);
  auto refused = wrong->range(one_key("l/a"), soon());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::permission);
  EXPECT_EQ(refused.error().message.find("wrong-pw"), std::string::npos);
}

TEST(EtcdTlsTest, ClientCertificateRequired) {
  if (!EtcdServer::available()) GTEST_SKIP() << EtcdServer::kBinary << " is not installed";
  EtcdServer server(EtcdServer::Options{.tls = true});
  ASSERT_TRUE(server.started()) << server.log();

  auto parsed = parse_etcd_config("endpoints: [" + server.endpoint() + "]\ntrusted-ca-file: " +
                                      server.tls().ca + "\ncert-file: " + server.tls().client_cert +
                                      "\nkey-file: " + server.tls().client_key + "\n",
                                  "tls.yaml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto client = client_for(*parsed);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->put("t", "1", 0, soon()));
  auto read = client->range(one_key("t"), soon());
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->kvs.size(), 1u);

  // The same CA but no client certificate: etcd refuses with a TLS alert, which curl reports as a
  // receive error under TLS 1.3; the client calls it tls all the same.
  EtcdConfig anonymous = *parsed;
  anonymous.cert_file.clear();
  anonymous.key_file.clear();
  auto no_cert = client_for(anonymous)->range(one_key("t"), soon());
  ASSERT_FALSE(no_cert);
  EXPECT_EQ(no_cert.error().kind, ErrorKind::tls)
      << to_string(no_cert.error().kind) << ": " << no_cert.error().message;

  // Without the CA the server's certificate is not trusted.
  EtcdConfig untrusted = *parsed;
  untrusted.trusted_ca_file.clear();
  auto unknown_ca = client_for(untrusted)->range(one_key("t"), soon());
  ASSERT_FALSE(unknown_ca);
  EXPECT_EQ(unknown_ca.error().kind, ErrorKind::tls) << unknown_ca.error().message;
}

}  // namespace
}  // namespace cn::etcd
