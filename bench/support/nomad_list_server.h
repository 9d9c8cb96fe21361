#pragma once
// A stand-in Nomad for the reconcile benchmark: the fake Nomad's own answers, rendered once and
// then served as they are, for GET /v1/node/:id/allocations and GET /v1/allocation/:id, after a
// fixed added latency. Both reconcile algorithms meet the same server, whose encoding cost (the
// fake takes ~0.3 ms per allocation, more than a Nomad server) stays out of the comparison.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "tests/fakes/http/http_server.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace cn::bench {

class NomadListServer {
 public:
  NomadListServer(fakes::FakeNomad& source, const std::string& node_id,
                  std::chrono::milliseconds latency);
  ~NomadListServer();

  std::string address() const;
  int requests() const { return requests_; }
  void clear_requests() { requests_ = 0; }
  std::size_t list_bytes() const { return list_body_.size(); }

 private:
  std::string node_path_;
  std::string list_body_;
  std::string index_;
  std::map<std::string, std::string, std::less<>> alloc_bodies_;  // by ID
  std::chrono::milliseconds latency_;
  std::atomic<int> requests_{0};
  std::unique_ptr<fakes::HttpServer> server_;
};

}  // namespace cn::bench
