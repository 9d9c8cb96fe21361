// The gateway's bodies: requests as etcd 3.4's gateway reads them, answers as it writes them
// (the samples below are its answers, captured from /usr/bin/etcd 3.4.23), and error bodies.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/etcd/base64.h"
#include "common/etcd/etcd_error.h"
#include "common/etcd/etcd_json.h"

namespace cn::etcd {
namespace {

using nlohmann::json;

TEST(EtcdBase64Test, RoundTripsAndRefusesNonCanonicalText) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    EXPECT_EQ(base64_decode(base64_encode(s)), s);
  }
  EXPECT_EQ(base64_encode("a/"), "YS8=");
  EXPECT_FALSE(base64_decode("YS8"));
  EXPECT_FALSE(base64_decode("YS9="));  // stray low bits
  EXPECT_FALSE(base64_decode("Y=8="));
  EXPECT_FALSE(base64_decode("YS8=YS8="));
  EXPECT_FALSE(base64_decode("YS\n8"));
}

TEST(EtcdJsonTest, EncodesRangeWithStringInt64sAndNoZeroFields) {
  RangeRequest r;
  r.key = "a/";
  r.range_end = prefix_end("a/");
  EXPECT_EQ(json::parse(encode_range(r)), json::parse(R"({"key":"YS8=","range_end":"YTA="})"));
  r.limit = 2;
  r.revision = 7;
  r.keys_only = true;
  EXPECT_EQ(json::parse(encode_range(r)),
            json::parse(R"({"key":"YS8=","range_end":"YTA=","limit":"2","revision":"7",
                            "keys_only":true})"));
}

TEST(EtcdJsonTest, EncodesTxnWithEveryCompareOperandPresent) {
  TxnRequest t;
  t.compare.push_back(
      {"a/", prefix_end("a/"), CompareTarget::create_revision, CompareResult::equal, 0, ""});
  t.compare.push_back({"k", "", CompareTarget::value, CompareResult::not_equal, 0, ""});
  t.compare.push_back({"k", "", CompareTarget::mod_revision, CompareResult::less, 9, ""});
  t.success.push_back({TxnOp::Kind::put, "k", "", "v", 5});
  t.failure.push_back({TxnOp::Kind::range, "k", "", "", 0});
  t.failure.push_back({TxnOp::Kind::delete_range, "a/", "a0", "", 0});
  EXPECT_EQ(json::parse(encode_txn(t)), json::parse(R"({
    "compare":[
      {"key":"YS8=","range_end":"YTA=","target":"CREATE","result":"EQUAL","create_revision":"0"},
      {"key":"aw==","target":"VALUE","result":"NOT_EQUAL","value":""},
      {"key":"aw==","target":"MOD","result":"LESS","mod_revision":"9"}],
    "success":[{"request_put":{"key":"aw==","value":"dg==","lease":"5"}}],
    "failure":[{"request_range":{"key":"aw=="}},
               {"request_delete_range":{"key":"YS8=","range_end":"YTA="}}]})"));
}

TEST(EtcdJsonTest, EncodesLeaseAndAuthBodies) {
  EXPECT_EQ(json::parse(encode_lease_grant(std::chrono::seconds{15})),
            json::parse(R"({"TTL":"15"})"));
  EXPECT_EQ(json::parse(encode_lease_id(42)), json::parse(R"({"ID":"42"})"));
  EXPECT_EQ(json::parse(encode_authenticate("u", "p")),
            json::parse(R"({"name":"u","password":"p"})"));
}

TEST(EtcdJsonTest, DecodesAPagedRange) {
  auto page = decode_range(
      R"({"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709",
      "revision":"3","raft_term":"2"},"kvs":[{"key":"YQ==","create_revision":"2",
      "mod_revision":"2","version":"1","value":"MQ=="}],"more":true,"count":"2"})");
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(page->revision, 3);
  EXPECT_TRUE(page->more);
  EXPECT_EQ(page->count, 2);
  ASSERT_EQ(page->kvs.size(), 1u);
  EXPECT_EQ(page->kvs[0].key, "a");
  EXPECT_EQ(page->kvs[0].value, "1");
  EXPECT_EQ(page->kvs[0].create_revision, 2);
  EXPECT_EQ(page->kvs[0].mod_revision, 2);
  EXPECT_EQ(page->kvs[0].version, 1);
  EXPECT_EQ(page->kvs[0].lease, 0);

  auto empty = decode_range(R"({"header":{"revision":"3"}})");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->kvs.empty());
  EXPECT_FALSE(empty->more);
  EXPECT_EQ(empty->count, 0);
}

TEST(EtcdJsonTest, DecodesTxnResponsesOnePerOp) {
  auto t = decode_txn(R"({"header":{"revision":"4"},"responses":[
      {"response_range":{"header":{"revision":"3"},"kvs":[{"key":"YQ==","create_revision":"2",
        "mod_revision":"2","version":"1","value":"MQ=="}],"count":"1"}},
      {"response_delete_range":{"header":{"revision":"4"},"deleted":"1"}},
      {"response_put":{"header":{"revision":"4"}}}]})");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_FALSE(t->succeeded);
  EXPECT_EQ(t->revision, 4);
  ASSERT_EQ(t->ranges.size(), 3u);
  ASSERT_EQ(t->deleted.size(), 3u);
  ASSERT_EQ(t->ranges[0].kvs.size(), 1u);
  EXPECT_EQ(t->ranges[0].kvs[0].key, "a");
  EXPECT_EQ(t->deleted[0], 0);
  EXPECT_EQ(t->deleted[1], 1);
  EXPECT_TRUE(t->ranges[2].kvs.empty());

  auto ok = decode_txn(R"({"header":{"revision":"5"},"succeeded":true,
      "responses":[{"response_put":{"header":{"revision":"5"}}}]})");
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->succeeded);
}

TEST(EtcdJsonTest, DecodesLeases) {
  auto lease =
      decode_lease_grant(R"({"header":{"revision":"4"},"ID":"4111120382097963531","TTL":"5"})");
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_EQ(lease->id, 4111120382097963531);
  EXPECT_EQ(lease->ttl, std::chrono::seconds{5});
  EXPECT_EQ(decode_lease_grant(R"({"error":"too many leases"})").error().kind, ErrorKind::http);

  auto kept = decode_keep_alive(R"({"result":{"header":{"revision":"4"},"ID":"7","TTL":"5"}})");
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, std::chrono::seconds{5});
  // An expired lease: etcd answers without a TTL.
  auto gone = decode_keep_alive(R"({"result":{"header":{"revision":"4"},"ID":"1"}})");
  ASSERT_TRUE(gone);
  EXPECT_EQ(*gone, std::chrono::seconds{0});
}

TEST(EtcdJsonTest, RefusesBrokenAnswersNamingTheField) {
  struct Case {
    const char* body;
    const char* field;
  };
  for (const auto& c : std::initializer_list<Case>{
           {R"({"header":{"revision":3}})", "range at /header/revision:"},
           {R"({"header":{"revision":"3x"}})", "range at /header/revision:"},
           {R"({"kvs":[{"key":"!!"}]})", "range at /kvs/0/key:"},
           {R"({"kvs":{}})", "range at /kvs:"},
           {R"({"kvs":[1]})", "range at /kvs/0:"},
           {R"({"more":"yes"})", "range at /more:"},
           {R"([1,2])", ""},
           {"not json", ""}}) {
    auto page = decode_range(c.body);
    ASSERT_FALSE(page) << c.body;
    EXPECT_EQ(page.error().kind, ErrorKind::bad_answer) << c.body;
    EXPECT_NE(page.error().message.find(c.field), std::string::npos) << page.error().message;
  }
  EXPECT_FALSE(decode_txn(R"({"responses":[{}]})"));
  EXPECT_FALSE(decode_txn(R"({"responses":[{"response_put":{},"response_range":{}}]})"));
  EXPECT_FALSE(decode_lease_grant(R"({"ID":"1"})"));
  EXPECT_FALSE(decode_keep_alive(R"({"header":{}})"));
  EXPECT_FALSE(decode_authenticate(R"({"header":{}})"));
}

TEST(EtcdErrorTest, MapsGrpcCodesToKinds) {
  struct Case {
    int status;
    const char* body;
    ErrorKind kind;
  };
  for (
      const auto& c : std::initializer_list<Case>{
          {403,
           R"({"error":"etcdserver: permission denied","message":"etcdserver: permission denied","code":7})",
           ErrorKind::permission},
          {401,
           R"({"error":"etcdserver: invalid auth token","message":"etcdserver: invalid auth token","code":16})",
           ErrorKind::permission},
          {400,
           R"({"message":"etcdserver: authentication failed, invalid user ID or password","code":3})",
           ErrorKind::permission},
          {400, R"({"message":"etcdserver: user name is empty","code":3})", ErrorKind::permission},
          {400, R"({"message":"etcdserver: too many operations in txn request","code":3})",
           ErrorKind::invalid},
          {404,
           R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})",
           ErrorKind::not_found},
          {400, R"({"message":"etcdserver: mvcc: required revision has been compacted","code":11})",
           ErrorKind::http},
          {503, R"({"message":"etcdserver: no leader","code":14})", ErrorKind::transport},
          {504, R"({"message":"context deadline exceeded","code":4})", ErrorKind::timeout},
          {500, R"({"message":"etcdserver: corrupt cluster","code":13})", ErrorKind::http},
          {503, "<html>bad gateway</html>", ErrorKind::http},
      }) {
    const Error e = etcd_error(c.status, c.body);
    EXPECT_EQ(e.kind, c.kind) << c.body;
    EXPECT_EQ(e.status, c.status);
  }
  const Error compacted = etcd_error(
      400, R"({"message":"etcdserver: mvcc: required revision has been compacted","code":11})");
  EXPECT_NE(compacted.message.find("compacted"), std::string::npos);
  EXPECT_TRUE(is_invalid_token(
      etcd_error(401, R"({"message":"etcdserver: invalid auth token","code":16})")));
  EXPECT_FALSE(
      is_invalid_token(etcd_error(403, R"({"message":"etcdserver: permission denied","code":7})")));
}

}  // namespace
}  // namespace cn::etcd
