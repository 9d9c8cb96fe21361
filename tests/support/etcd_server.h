#pragma once
// A real etcd (Debian's /usr/bin/etcd) for integration tests: one member on 127.0.0.1 with free
// client and peer ports and a data dir under a TempDir. Its output goes to a log file in that dir,
// printed to the test output only when the test has failed.
//
// stop(), kill() and restart() keep the data dir and ports, so a test sees what a real cluster
// member going down and coming back does; pause() and resume() freeze it (SIGSTOP/SIGCONT): the
// port still accepts connections but nothing answers, as behind a partition.
//
// The TLS variant makes a CA, a server certificate for 127.0.0.1 and a client certificate with
// the openssl CLI, and requires client certificates (--client-cert-auth).
#include <memory>
#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/temp_dir.h"

namespace cn::testing {

class EtcdServer {
 public:
  struct Options {
    bool tls = false;
  };
  struct TlsFiles {
    std::string ca;           // the CA that signed both certificates (PEM)
    std::string client_cert;  // a client certificate etcd accepts
    std::string client_key;
  };

  static constexpr const char* kBinary = "/usr/bin/etcd";
  static bool available();

  // Starts etcd and waits until it serves; started() says whether it did (the log says why not).
  explicit EtcdServer(Options options);
  EtcdServer() : EtcdServer(Options{}) {}
  ~EtcdServer();
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  bool started() const { return started_; }
  // "http://127.0.0.1:PORT" or "https://...".
  std::string endpoint() const;
  const TlsFiles& tls() const { return tls_files_; }
  const TempDir& dir() const { return dir_; }

  // SIGTERM, waited for (etcd syncs and exits).
  void stop();
  // SIGKILL: no goodbye, as a crash or a power cut.
  void kill();
  // Starts again on the same data dir and ports; true once it serves.
  bool restart();
  void pause();
  void resume();

  // Everything etcd wrote, over all its starts.
  std::string log() const;

 private:
  bool make_certificates();
  bool start();
  bool wait_serving();
  std::vector<std::string> argv() const;

  Options options_;
  TempDir dir_;
  TlsFiles tls_files_;
  int client_port_ = 0;
  int peer_port_ = 0;
  int starts_ = 0;
  bool started_ = false;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace cn::testing
