#include "tests/support/etcd_server.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tests/support/eventually.h"

namespace cn::testing {
namespace {

using namespace std::chrono_literals;

// A port the kernel just handed out for 127.0.0.1. Another process could take it before etcd
// binds; start() notices (etcd exits) and the caller sees started() false in the log.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

bool accepts_connections(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

bool openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto res = run_process(argv, current_environment(), "", 30s);
  if (res.exit_code != 0) std::fprintf(stderr, "openssl failed: %s\n", res.err.c_str());
  return res.exit_code == 0;
}

}  // namespace

bool EtcdServer::available() {
  return ::access(kBinary, X_OK) == 0;
}

EtcdServer::EtcdServer(Options options) : options_(options) {
  if (!available()) return;
  if (options_.tls && !make_certificates()) return;
  client_port_ = free_port();
  peer_port_ = free_port();
  started_ = start();
}

EtcdServer::~EtcdServer() {
  if (process_) {
    process_->signal(SIGCONT);
    process_->stop(SIGKILL, 10s);
  }
  if (::testing::Test::HasFailure()) {
    std::fprintf(stderr, "---- etcd log (%s) ----\n%s---- end of etcd log ----\n",
                 dir_.path().c_str(), log().c_str());
  }
}

std::string EtcdServer::endpoint() const {
  return std::string(options_.tls ? "https" : "http") +
         "://127.0.0.1:" + std::to_string(client_port_);
}

bool EtcdServer::make_certificates() {
  const std::string d = dir_.path();
  write_file(d + "/server.ext",
             "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
  write_file(d + "/client.ext", "extendedKeyUsage=clientAuth\n");
  const std::vector<std::string> ec_key{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                        "-nodes"};
  auto req = [&](const std::string& name, const std::string& subject) {
    std::vector<std::string> a{"req"};
    a.insert(a.end(), ec_key.begin(), ec_key.end());
    a.insert(a.end(), {"-subj", subject, "-keyout", d + "/" + name + ".key", "-out",
                       d + "/" + name + ".csr"});
    return openssl(a);
  };
  auto sign = [&](const std::string& name) {
    return openssl({"x509", "-req", "-days", "2", "-in", d + "/" + name + ".csr", "-CA",
                    d + "/ca.pem", "-CAkey", d + "/ca.key", "-CAcreateserial", "-extfile",
                    d + "/" + name + ".ext", "-out", d + "/" + name + ".pem"});
  };
  std::vector<std::string> ca{"req", "-x509"};
  ca.insert(ca.end(), ec_key.begin(), ec_key.end());
  ca.insert(ca.end(), {"-days", "2", "-subj", "/CN=cn-test-etcd-ca", "-keyout", d + "/ca.key",
                       "-out", d + "/ca.pem"});
  if (!openssl(ca) || !req("server", "/CN=etcd") || !sign("server") ||
      !req("client", "/CN=labeler") || !sign("client")) {
    return false;
  }
  tls_files_ = {d + "/ca.pem", d + "/client.pem", d + "/client.key"};
  return true;
}

std::vector<std::string> EtcdServer::argv() const {
  const std::string client_url = endpoint();
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> a{
      kBinary, "--name=cn-test", "--data-dir=" + dir_.file("data"),
      "--listen-client-urls=" + client_url, "--advertise-client-urls=" + client_url,
      "--listen-peer-urls=" + peer_url, "--initial-advertise-peer-urls=" + peer_url,
      "--initial-cluster=cn-test=" + peer_url, "--initial-cluster-state=new",
      "--snapshot-count=1000",
      // Faster election of the single member: ready in well under a second.
      "--heartbeat-interval=50", "--election-timeout=500"};
  if (options_.tls) {
    a.insert(a.end(),
             {"--client-cert-auth", "--trusted-ca-file=" + tls_files_.ca,
              "--cert-file=" + dir_.file("server.pem"), "--key-file=" + dir_.file("server.key")});
  }
  return a;
}

bool EtcdServer::start() {
  if (client_port_ == 0 || peer_port_ == 0) return false;
  ++starts_;
  ChildProcess::Options po;
  po.log_path = dir_.file("etcd-" + std::to_string(starts_) + ".log");
  // No ETCD_* variable of the shell running the tests may reach etcd: it reads its flags from them.
  process_ = std::make_unique<ChildProcess>(argv(), Environment{}, po);
  if (!process_->started()) return false;
  return wait_serving();
}

bool EtcdServer::wait_serving() {
  // etcd logs "serving ... client requests on" once its client listener is up and the member
  // has joined; the connect check guards against reading an earlier start's line.
  return eventually(
             [&] {
               if (!process_->running()) return true;
               const std::string text = process_->log();
               return text.find("client requests on") != std::string::npos &&
                      accepts_connections(client_port_);
             },
             30s) &&
         process_->running();
}

void EtcdServer::stop() {
  if (process_) process_->stop(SIGTERM, 20s);
}

void EtcdServer::kill() {
  if (process_) process_->stop(SIGKILL, 10s);
}

bool EtcdServer::restart() {
  if (process_) {
    process_->signal(SIGCONT);
    process_->stop(SIGTERM, 20s);
  }
  started_ = start();
  return started_;
}

namespace {

// SIGSTOP only asks: a thread running on another core may still answer one more request. The
// pause counts once every thread of etcd shows state T (stopped) in /proc.
bool all_threads_stopped(pid_t pid) {
  std::error_code ec;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    const std::string stat = read_file(task.path().string() + "/stat");
    // "pid (comm) S ...": the state follows the last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return false;
    if (stat[close + 2] != 'T' && stat[close + 2] != 't') return false;
    any = true;
  }
  return any && !ec;
}

}  // namespace

void EtcdServer::pause() {
  if (!process_ || !process_->signal(SIGSTOP)) return;
  const pid_t pid = process_->pid();
  if (!eventually([&] { return all_threads_stopped(pid); }, 10s)) {
    ADD_FAILURE() << "etcd (pid " << pid << ") did not stop after SIGSTOP";
  }
}

void EtcdServer::resume() {
  if (process_) process_->signal(SIGCONT);
}

std::string EtcdServer::log() const {
  std::string all;
  for (int i = 1; i <= starts_; ++i) {
    all += read_file(dir_.file("etcd-" + std::to_string(i) + ".log"));
  }
  return all;
}

}  // namespace cn::testing
