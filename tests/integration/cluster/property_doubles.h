#pragma once
// The doubles around the labelers of the cluster property test (cluster_property_test.cpp):
// - KillableEtcd: a labeler's etcd client that dies like a process under kill -9 at a chosen
//   request, before it is sent or after etcd answered it (the answer lost): from then on every
//   call of every thread of that labeler hangs, and nothing more of it reaches etcd. The test
//   releases the hung calls when the run ends; they return an error without calling etcd, so a
//   dead labeler cleans nothing up (no resign, no lease revoke).
// - WorldNomad: GET /v1/nodes of the generated world, before and after its purge.
// - WorldCilium: the endpoints' identities of the labeler's node, for its in-use report.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "common/cilium/client/cilium_api.h"
#include "common/etcd/etcd_api.h"
#include "common/nomad/client/nomad_api.h"
#include "tests/support/refusing_nomad.h"

namespace cn::testing::property {

class KillableEtcd final : public etcd::EtcdApi {
 public:
  enum class CrashPoint { before_send, after_answer };

  explicit KillableEtcd(etcd::EtcdApi& real) : real_(real) {}
  ~KillableEtcd() override { release(); }

  // Dies at the `nth` request (1-based) from now on counted.
  void arm(long long nth, CrashPoint point);
  // Dies before its next request, whatever was armed.
  void kill_now();
  bool dead() const;
  // Requests sent to etcd whose answer has not come back yet.
  int in_flight() const;
  // Every lease etcd granted it, the answer lost or not: what expires after a kill -9.
  std::vector<etcd::LeaseId> leases() const;
  // The run is over: hung calls return, later ones fail at once.
  void release();

  Result<etcd::RangePage> range(const etcd::RangeRequest& request, Deadline deadline) override;
  Result<etcd::TxnResult> txn(const etcd::TxnRequest& request, Deadline deadline) override;
  Result<etcd::Revision> put(std::string_view key, std::string_view value, etcd::LeaseId lease,
                             Deadline deadline) override;
  Result<etcd::Lease> grant_lease(std::chrono::seconds ttl, Deadline deadline) override;
  Result<std::chrono::seconds> keep_alive(etcd::LeaseId lease, Deadline deadline) override;
  Status revoke_lease(etcd::LeaseId lease, Deadline deadline) override;
  std::string describe() const override { return real_.describe(); }

 private:
  template <class R, class F>
  R call(F&& send);
  Error hang(std::unique_lock<std::mutex>& lock);

  etcd::EtcdApi& real_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  long long requests_ = 0;
  long long crash_at_ = 0;  // 0: not armed
  CrashPoint point_ = CrashPoint::before_send;
  bool dead_ = false;
  bool released_ = false;
  int in_flight_ = 0;
  std::vector<etcd::LeaseId> leases_;
};

class WorldNomad final : public RefusingNomad {
 public:
  WorldNomad(std::vector<nomad::NodeStub> before, std::vector<nomad::NodeStub> after)
      : before_(std::move(before)), after_(std::move(after)) {}
  void purge() { purged_ = true; }

  Result<std::vector<nomad::NodeStub>> nodes(Deadline) override {
    return purged_ ? after_ : before_;
  }

 private:
  std::vector<nomad::NodeStub> before_;
  std::vector<nomad::NodeStub> after_;
  std::atomic<bool> purged_{false};
};

class WorldCilium final : public cilium::CiliumApi {
 public:
  explicit WorldCilium(const std::vector<std::uint64_t>& identities);

  Status ready(Deadline) override { return {}; }
  Result<std::string> cluster_name(Deadline) override { return std::string("default"); }
  Result<cilium::Endpoint> endpoint(const cilium::EndpointRef&, Deadline) override {
    return std::unexpected(Error{ErrorKind::not_found, "no such endpoint"});
  }
  Result<cilium::EndpointList> endpoints(Deadline) override { return list_; }
  Status replace_identity_labels(const cilium::EndpointRef&, const std::vector<std::string>&,
                                 Deadline) override {
    return refuse();
  }
  Status set_user_labels(const cilium::EndpointRef&, const std::vector<std::string>&,
                         Deadline) override {
    return refuse();
  }
  Status delete_endpoint(const cilium::EndpointRef&, Deadline) override { return refuse(); }

 private:
  static std::unexpected<Error> refuse() {
    return std::unexpected(Error{ErrorKind::invalid, "not modelled by the property test"});
  }
  cilium::EndpointList list_;
};

}  // namespace cn::testing::property
