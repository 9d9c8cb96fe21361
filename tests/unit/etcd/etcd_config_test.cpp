// The agent's etcd configuration file: the keys the Cilium agent reads, the TLS decision per
// endpoint, and refusals that name file and key without quoting the password.
#include <gtest/gtest.h>

#include "common/etcd/etcd_config.h"
#include "tests/support/temp_dir.h"

namespace cn::etcd {
namespace {

Result<EtcdConfig> parse(std::string_view text) {
  return parse_etcd_config(text, "/etc/e.yaml");
}

TEST(EtcdConfigTest, ReadsEveryKeyTheAgentReads) {
  auto c = parse(R"(---
endpoints:
- https://10.0.0.5:2379
- https://10.0.0.6:2379
trusted-ca-file: /ca.pem
cert-file: /c.pem
key-file: /c.key
insecure-skip-tls-verify: true
username: cilium
password: s3cret
dial-timeout: 5s
)");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->endpoints,
            (std::vector<std::string>{"https://10.0.0.5:2379", "https://10.0.0.6:2379"}));
  EXPECT_EQ(c->trusted_ca_file, "/ca.pem");
  EXPECT_EQ(c->cert_file, "/c.pem");
  EXPECT_EQ(c->key_file, "/c.key");
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_FALSE(c->insecure_transport);
  EXPECT_EQ(c->username, "cilium");
  EXPECT_EQ(c->password, "s3cret");
  EXPECT_EQ(c->source, "/etc/e.yaml");
}

TEST(EtcdConfigTest, LegacyCaFileOnlyWhenNoTrustedCa) {
  auto legacy = parse("endpoints: [https://e:2379]\nca-file: /old.pem\n");
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->trusted_ca_file, "/old.pem");
  EXPECT_TRUE(legacy->legacy_ca_file);
  auto both = parse("endpoints: [https://e:2379]\nca-file: /old.pem\ntrusted-ca-file: /new.pem\n");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->trusted_ca_file, "/new.pem");
  EXPECT_FALSE(both->legacy_ca_file);
  auto insecure = parse("endpoints: [e:2379]\nca-file: /old.pem\ninsecure-transport: true\n");
  ASSERT_TRUE(insecure);
  EXPECT_EQ(insecure->trusted_ca_file, "");
}

TEST(EtcdConfigTest, SchemeDecidesTls) {
  auto c = parse(
      "endpoints: [https://b:2379, c:2379]\ntrusted-ca-file: /ca.pem\n"
      "cert-file: /c.pem\nkey-file: /c.key\n");
  ASSERT_TRUE(c) << c.error().message;
  auto plain = resolve_endpoint(*c, "http://a:2379");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->url, "http://a:2379");
  EXPECT_EQ(plain->tls.ca_file, "");
  auto tls = resolve_endpoint(*c, "https://b:2379/");
  ASSERT_TRUE(tls);
  EXPECT_EQ(tls->url, "https://b:2379");
  EXPECT_EQ(tls->tls.ca_file, "/ca.pem");
  EXPECT_EQ(tls->tls.client_cert, "/c.pem");
  EXPECT_EQ(tls->tls.client_key, "/c.key");
  auto bare = resolve_endpoint(*c, "c:2379");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->url, "https://c:2379");

  auto insecure = parse(
      "endpoints: [c:2379, http://d:2379]\ninsecure-transport: true\n"
      "trusted-ca-file: /ca.pem\n");
  ASSERT_TRUE(insecure) << insecure.error().message;
  EXPECT_EQ(resolve_endpoint(*insecure, "c:2379")->url, "http://c:2379");
  // https:// still means TLS, but without the file's TLS settings (the system CAs).
  auto https = resolve_endpoint(*insecure, "https://e:2379");
  ASSERT_TRUE(https);
  EXPECT_EQ(https->tls.ca_file, "");
}

void expect_refused(std::string_view text, std::string_view fragment) {
  auto c = parse(text);
  ASSERT_FALSE(c) << text;
  EXPECT_EQ(c.error().kind, ErrorKind::invalid);
  EXPECT_NE(c.error().message.find("/etc/e.yaml"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find(fragment), std::string::npos) << c.error().message;
  EXPECT_EQ(c.error().message.find("s3cret"), std::string::npos) << c.error().message;
}

TEST(EtcdConfigTest, RefusesBrokenFilesNamingTheKey) {
  expect_refused("password: s3cret\n", "endpoints");
  expect_refused("endpoints: []\npassword: s3cret\nusername: u\n", "endpoints");
  expect_refused("endpoints: http://a:2379\n", "endpoints");
  expect_refused("endpoints: [https://a:2379]\ncert-file: /c.pem\n", "cert-file");
  expect_refused("endpoints: [https://a:2379]\nkey-file: /c.key\n", "key-file");
  expect_refused("endpoints: [https://a:2379]\ninsecure-transport: maybe\n", "insecure-transport");
  expect_refused("endpoints: [https://a:2379]\npassword: s3cret\n", "password");
  expect_refused("endpoints: [unix:///run/etcd.sock]\n", "endpoints");
  expect_refused("endpoints: [http://a:2379, https://b:2379]\n", "mixes");
  expect_refused("endpoints: [http://a:2379, b:2379]\n", "mixes");
  expect_refused("endpoints: [https://a:2379/prefix]\n", "endpoints");
  expect_refused("endpoints: [https://a:2379]\nusername: [a]\n", "username");
  expect_refused("endpoints: [\"https://a:2379\"\npassword: s3cret\n", "YAML");
  expect_refused("- just\n- a list\n", "mapping");
  expect_refused("endpoints: [https://a:2379]\npassword: {s3cret: 1}\nusername: u\n", "password");
}

// sigs.k8s.io/yaml reads JSON too, and so does yaml-cpp.
TEST(EtcdConfigTest, ReadsTheJsonForm) {
  auto c = parse(R"({"endpoints":["https://a:2379"],"trusted-ca-file":"/ca.pem",
                     "insecure-skip-tls-verify":false})");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->endpoints, std::vector<std::string>{"https://a:2379"});
  EXPECT_EQ(c->trusted_ca_file, "/ca.pem");
}

TEST(EtcdConfigTest, LoadsAFileAndNamesAMissingOne) {
  cn::testing::TempDir dir;
  cn::testing::write_file(dir.file("etcd.yaml"), "endpoints:\n- http://127.0.0.1:2379\n");
  auto c = load_etcd_config(dir.file("etcd.yaml"));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->source, dir.file("etcd.yaml"));
  auto missing = load_etcd_config(dir.file("nope.yaml"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::io);
  EXPECT_NE(missing.error().message.find("nope.yaml"), std::string::npos);
}

}  // namespace
}  // namespace cn::etcd
