#include "tests/integration/cluster/property_doubles.h"

namespace cn::testing::property {

void KillableEtcd::arm(long long nth, CrashPoint point) {
  std::lock_guard lock(mu_);
  crash_at_ = requests_ + nth;
  point_ = point;
}

void KillableEtcd::kill_now() {
  std::lock_guard lock(mu_);
  dead_ = true;
}

bool KillableEtcd::dead() const {
  std::lock_guard lock(mu_);
  return dead_;
}

int KillableEtcd::in_flight() const {
  std::lock_guard lock(mu_);
  return in_flight_;
}

std::vector<etcd::LeaseId> KillableEtcd::leases() const {
  std::lock_guard lock(mu_);
  return leases_;
}

void KillableEtcd::release() {
  {
    std::lock_guard lock(mu_);
    dead_ = true;
    released_ = true;
  }
  cv_.notify_all();
}

Error KillableEtcd::hang(std::unique_lock<std::mutex>& lock) {
  cv_.wait(lock, [this] { return released_; });
  return Error{ErrorKind::transport, "the labeler was killed"};
}

template <class R, class F>
R KillableEtcd::call(F&& send) {
  long long nth = 0;
  {
    std::unique_lock lock(mu_);
    if (dead_) return std::unexpected(hang(lock));
    nth = ++requests_;
    if (nth == crash_at_ && point_ == CrashPoint::before_send) {
      dead_ = true;
      return std::unexpected(hang(lock));
    }
    ++in_flight_;
  }
  R answer = send();
  std::unique_lock lock(mu_);
  --in_flight_;
  if (nth == crash_at_ && point_ == CrashPoint::after_answer) dead_ = true;
  // Killed while this request was on the wire: etcd may have done it, nobody hears the answer.
  if (dead_) return std::unexpected(hang(lock));
  return answer;
}

Result<etcd::RangePage> KillableEtcd::range(const etcd::RangeRequest& request, Deadline deadline) {
  return call<Result<etcd::RangePage>>([&] { return real_.range(request, deadline); });
}

Result<etcd::TxnResult> KillableEtcd::txn(const etcd::TxnRequest& request, Deadline deadline) {
  return call<Result<etcd::TxnResult>>([&] { return real_.txn(request, deadline); });
}

Result<etcd::Revision> KillableEtcd::put(std::string_view key, std::string_view value,
                                         etcd::LeaseId lease, Deadline deadline) {
  return call<Result<etcd::Revision>>([&] { return real_.put(key, value, lease, deadline); });
}

Result<etcd::Lease> KillableEtcd::grant_lease(std::chrono::seconds ttl, Deadline deadline) {
  return call<Result<etcd::Lease>>([&] {
    auto granted = real_.grant_lease(ttl, deadline);
    if (granted) {
      std::lock_guard lock(mu_);
      leases_.push_back(granted->id);
    }
    return granted;
  });
}

Result<std::chrono::seconds> KillableEtcd::keep_alive(etcd::LeaseId lease, Deadline deadline) {
  return call<Result<std::chrono::seconds>>([&] { return real_.keep_alive(lease, deadline); });
}

Status KillableEtcd::revoke_lease(etcd::LeaseId lease, Deadline deadline) {
  return call<Status>([&] { return real_.revoke_lease(lease, deadline); });
}

WorldCilium::WorldCilium(const std::vector<std::uint64_t>& identities) {
  std::int64_t id = 100;
  for (std::uint64_t identity : identities) {
    cilium::Endpoint ep;
    ep.id = id++;
    ep.state = "ready";
    ep.identity_id = static_cast<std::int64_t>(identity);
    list_.endpoints.push_back(std::move(ep));
  }
}

}  // namespace cn::testing::property
