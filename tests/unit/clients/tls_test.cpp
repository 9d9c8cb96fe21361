// TLS for the Nomad side: a CA, a server certificate for client.global.nomad and a client
// certificate are made with the openssl CLI in a temp dir; `openssl s_server -www` plays the
// HTTPS agent (the fake Nomad speaks plain HTTP only).
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "common/http/http_client.h"
#include "common/nomad/client/curl_nomad_client.h"
#include "tests/support/child_process.h"
#include "tests/unit/clients/client_test_util.h"

namespace cn::http {
namespace {

using namespace std::chrono_literals;
using client_testing::eventually;
using client_testing::TempDir;

constexpr const char* kServerName = "client.global.nomad";

bool run(const std::string& cmd) {
  return cn::testing::run_process({"/bin/sh", "-c", cmd}, cn::testing::current_environment(), "")
             .exit_code == 0;
}

// Certificates shared by every test in this file.
class Pki {
 public:
  static Pki* make() {
    if (!run("command -v openssl")) return nullptr;
    auto* p = new Pki;
    const std::string d = p->dir.path();
    const std::string newkey =
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    std::ofstream(d + "/server.ext")
        << "subjectAltName=DNS:" << kServerName << "\nextendedKeyUsage=serverAuth\n";
    std::ofstream(d + "/client.ext") << "extendedKeyUsage=clientAuth\n";
    const bool ok =
        run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
            "-subj /CN=cn-test-ca"
            " -keyout " +
            d + "/ca.key -out " + d + "/ca.pem") &&
        run(newkey + "-subj /CN=" + kServerName + " -keyout " + d + "/server.key -out " + d +
            "/server.csr") &&
        run("openssl x509 -req -days 2 -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d +
            "/ca.key -CAcreateserial -extfile " + d + "/server.ext -out " + d + "/server.pem") &&
        run(newkey + "-subj /CN=labeler -keyout " + d + "/client.key -out " + d + "/client.csr") &&
        run("openssl x509 -req -days 2 -in " + d + "/client.csr -CA " + d + "/ca.pem -CAkey " + d +
            "/ca.key -CAcreateserial -extfile " + d + "/client.ext -out " + d + "/client.pem") &&
        run("mkdir " + d + "/cas && cp " + d + "/ca.pem " + d + "/cas/ && openssl rehash " + d +
            "/cas");
    if (!ok) {
      delete p;
      return nullptr;
    }
    return p;
  }
  std::string file(const std::string& name) const { return dir.file(name); }
  TempDir dir;
};

// `openssl s_server -www` on 127.0.0.1:<free port>, killed by the destructor.
class TlsServer {
 public:
  TlsServer(const Pki& pki, bool require_client_cert)
      : log_path_(pki.file("s_server-" + std::to_string(next_id()) + ".log")),
        process_(args(pki, require_client_cert), cn::testing::current_environment(),
                 {log_path_, cn::testing::ChildProcess::LogMode::kTruncate, {}}) {
    // "ACCEPT 127.0.0.1:<port>" once it listens; bounded wait.
    const std::regex accept_re("ACCEPT 127\\.0\\.0\\.1:([0-9]+)");
    eventually(
        [&] {
          std::smatch m;
          const std::string seen = process_.log();
          if (!std::regex_search(seen, m, accept_re)) return !process_.running();
          port_ = std::stoi(m[1]);
          return true;
        },
        10s);
  }
  ~TlsServer() { process_.stop(SIGTERM, 10s); }
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }

 private:
  static std::vector<std::string> args(const Pki& pki, bool require_client_cert) {
    std::vector<std::string> a = {"openssl", "s_server",
                                  "-accept", "127.0.0.1:0",
                                  "-cert",   pki.file("server.pem"),
                                  "-key",    pki.file("server.key"),
                                  "-www"};
    if (require_client_cert) {
      for (const char* x : {"-Verify", "1", "-CAfile"}) a.emplace_back(x);
      a.push_back(pki.file("ca.pem"));
    }
    return a;
  }
  static int next_id() {
    static std::atomic<int> n{0};
    return n++;
  }

  std::string log_path_;
  cn::testing::ChildProcess process_;
  int port_ = 0;
};

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = Pki::make(); }
  static void TearDownTestSuite() {
    delete pki_;
    pki_ = nullptr;
  }
  void SetUp() override {
    if (pki_ == nullptr) GTEST_SKIP() << "openssl CLI unavailable: TLS not tested";
  }
  HttpResult<Response> get(const TlsServer& server, TlsOptions tls) {
    HttpClientConfig cfg;
    cfg.target = *HttpTarget::url(server.url());
    cfg.tls = std::move(tls);
    cfg.default_timeout = 10s;
    HttpClient client(cfg);
    return client.send(Request{Method::get, "/v1/agent/self", {}, std::nullopt, 0ms});
  }

  static Pki* pki_;
};
Pki* TlsTest::pki_ = nullptr;

TEST_F(TlsTest, VerifiesTheServerAgainstTheCaUnderTheServerName) {
  TlsServer server(*pki_, false);
  ASSERT_GT(server.port(), 0);
  TlsOptions tls;
  tls.ca_file = pki_->file("ca.pem");
  tls.server_name = kServerName;
  auto res = get(server, tls);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 200);
}

TEST_F(TlsTest, CaDirectoryWorksToo) {
  TlsServer server(*pki_, false);
  ASSERT_GT(server.port(), 0);
  TlsOptions tls;
  tls.ca_path = pki_->file("cas");
  tls.server_name = kServerName;
  auto res = get(server, tls);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 200);
}

TEST_F(TlsTest, UnknownCaIsATlsFailure) {
  TlsServer server(*pki_, false);
  ASSERT_GT(server.port(), 0);
  TlsOptions tls;  // system store only: our test CA is not in it
  tls.server_name = kServerName;
  auto res = get(server, tls);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::tls) << res.error().message;
}

TEST_F(TlsTest, NameMismatchIsATlsFailure) {
  TlsServer server(*pki_, false);
  ASSERT_GT(server.port(), 0);
  TlsOptions tls;
  tls.ca_file = pki_->file("ca.pem");  // trusted, but issued for client.global.nomad, not 127.0.0.1
  auto res = get(server, tls);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::tls) << res.error().message;
}

TEST_F(TlsTest, SkipVerifyIsOffByDefaultAndAcceptsAnythingWhenSet) {
  EXPECT_FALSE(TlsOptions{}.skip_verify);
  TlsServer server(*pki_, false);
  ASSERT_GT(server.port(), 0);
  TlsOptions tls;
  tls.skip_verify = true;
  auto res = get(server, tls);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 200);
}

TEST_F(TlsTest, ClientCertificateForMutualTls) {
  TlsServer server(*pki_, true);
  ASSERT_GT(server.port(), 0);
  TlsOptions tls;
  tls.ca_file = pki_->file("ca.pem");
  tls.server_name = kServerName;
  EXPECT_FALSE(get(server, tls));  // refused without a client certificate
  tls.client_cert = pki_->file("client.pem");
  tls.client_key = pki_->file("client.key");
  auto res = get(server, tls);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 200);
}

// The Nomad client wires NOMAD_CACERT / NOMAD_TLS_SERVER_NAME into the HTTP layer.
TEST_F(TlsTest, NomadClientUsesTheEnvironmentsTlsSettings) {
  TlsServer server(*pki_, false);
  ASSERT_GT(server.port(), 0);
  std::map<std::string, std::string> env = {{"NOMAD_ADDR", server.url()},
                                            {"NOMAD_CACERT", pki_->file("ca.pem")},
                                            {"NOMAD_TLS_SERVER_NAME", kServerName}};
  auto cfg = nomad::NomadClientConfig::from_env(client_testing::env_of(env));
  ASSERT_TRUE(cfg);
  auto client = nomad::CurlNomadClient::create(*cfg);
  ASSERT_TRUE(client);
  auto id = (*client)->local_node_id(system_clock().now() + 10s);
  // s_server answers an HTML status page: TLS passed, the body is not Nomad's JSON.
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().message.find("not a JSON object"), std::string::npos) << id.error().message;

  env.erase("NOMAD_CACERT");
  auto untrusted = nomad::CurlNomadClient::create(
      *nomad::NomadClientConfig::from_env(client_testing::env_of(env)));
  ASSERT_TRUE(untrusted);
  auto refused = (*untrusted)->local_node_id(system_clock().now() + 10s);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, 0);
  EXPECT_EQ(refused.error().message.find("not a JSON object"), std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace cn::http
