#pragma once
// An EtcdApi double that keeps etcd's rules, so the cluster duties are tested against the same
// semantics the real etcd applies (etcd's mvcc and apply code, server/etcdserver/apply.go):
//   - one store revision, bumped once per txn (or put) that changes something; every key keeps
//     create_revision, mod_revision, version and lease; a re-created key starts at version 1;
//   - history: a range at an older revision reads the store as it was, until compact(rev) makes
//     any revision below rev refused ("required revision has been compacted");
//   - range with range_end ("\0": every key from `key` on), limit/more/count, keys_only,
//     count_only; the header revision is always the newest, as etcd's;
//   - txn compares over [key, range_end): a range with no key compares as one absent key
//     (revisions 0, version 0, lease 0), but a VALUE compare on no key fails; ops see the
//     writes of the ops before them; one entry per op in TxnResult::ranges and ::deleted;
//   - leases with TTLs on the injected clock: an expired lease takes its keys with it (one
//     revision per lease, as etcd's revoke); put under an unknown lease is refused (not_found).
// Faults: fail the next N calls (of one method or any); fail ranges after K successful pages.
// The log counts calls per method and every key a txn deleted.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "common/util/mutex.h"

namespace cn::testing {

class InMemoryEtcd final : public etcd::EtcdApi {
 public:
  enum class Method { range, txn, put, grant_lease, keep_alive, revoke_lease };

  explicit InMemoryEtcd(Clock& clock);

  Result<etcd::RangePage> range(const etcd::RangeRequest& request, Deadline deadline) override;
  Result<etcd::TxnResult> txn(const etcd::TxnRequest& request, Deadline deadline) override;
  Result<etcd::Revision> put(std::string_view key, std::string_view value, etcd::LeaseId lease,
                             Deadline deadline) override;
  Result<etcd::Lease> grant_lease(std::chrono::seconds ttl, Deadline deadline) override;
  Result<std::chrono::seconds> keep_alive(etcd::LeaseId lease, Deadline deadline) override;
  Status revoke_lease(etcd::LeaseId lease, Deadline deadline) override;
  std::string describe() const override { return "in-memory etcd"; }

  // etcd's compaction: history below `revision` is dropped and reads there are refused.
  Status compact(etcd::Revision revision);

  // Faults. The next `calls` calls (of `only`, or of any method) fail with `kind`.
  void fail_next(int calls, ErrorKind kind, std::optional<Method> only = std::nullopt);
  // After `successful_pages` more successful ranges, the next `failures` ranges fail.
  void fail_ranges_after(int successful_pages, ErrorKind kind, int failures = 1);
  // Runs before each txn is applied (outside the store's lock, so it may write): a test's way to
  // change the store between a duty's read and its write.
  void before_txn(std::function<void()> hook);
  // The same before each range.
  void before_range(std::function<void()> hook);

  // The log.
  int calls(Method method) const;
  int total_calls() const;
  std::vector<std::string> deleted_by_txn() const;    // every key a txn's delete removed, in order
  std::vector<etcd::RangeRequest> range_log() const;  // every range request, in order

  // Inspection and seeding without going through the log.
  // (Each first expires the leases whose time has come, as etcd would have by now.)
  std::optional<etcd::KeyValue> get(std::string_view key);
  std::size_t live_keys(std::string_view prefix);
  etcd::Revision revision();
  // Deletes keys as another etcd client would (a txn of its own; not in deleted_by_txn()).
  std::int64_t remove(std::string_view key, std::string_view range_end = {});

 private:
  struct Version {
    etcd::Revision revision = 0;
    bool tombstone = false;
    etcd::KeyValue kv;
  };
  struct LeaseState {
    std::chrono::seconds ttl{0};
    MonoTime expires{};
  };
  struct Fault {
    int calls = 0;
    ErrorKind kind = ErrorKind::transport;
    std::optional<Method> only;
  };

  std::optional<Error> take_fault(Method method) REQUIRES(mu_);
  void expire_leases() REQUIRES(mu_);
  void revoke(etcd::LeaseId lease) REQUIRES(mu_);
  // The error a call gets before it touches the store: a stop requested, an injected fault.
  std::optional<Error> refuse(Method method, const Deadline& deadline) REQUIRES(mu_);
  // The live version of `key` at `revision` (0: the newest), or nullptr.
  const etcd::KeyValue* at(const std::vector<Version>& history, etcd::Revision revision) const;
  // Live keys in [key, range_end) at `revision`, in key order.
  std::vector<const etcd::KeyValue*> live_range(std::string_view key, std::string_view range_end,
                                                etcd::Revision revision) const REQUIRES(mu_);
  bool compare_holds(const etcd::Compare& compare) const REQUIRES(mu_);
  // Writes at revision_ + 1; `changed` set when anything was written.
  void write_put(const etcd::TxnOp& op, bool& changed) REQUIRES(mu_);
  std::int64_t write_delete(std::string_view key, std::string_view range_end, bool& changed)
      REQUIRES(mu_);
  etcd::RangePage page_of(const etcd::RangeRequest& request, etcd::Revision at_revision) const
      REQUIRES(mu_);

  Clock& clock_;
  mutable Mutex mu_;
  std::map<std::string, std::vector<Version>, std::less<>> keys_ GUARDED_BY(mu_);
  std::map<etcd::LeaseId, LeaseState> leases_ GUARDED_BY(mu_);
  etcd::Revision revision_ GUARDED_BY(mu_) = 1;  // etcd starts at 1
  etcd::Revision compacted_ GUARDED_BY(mu_) = 0;
  etcd::LeaseId next_lease_ GUARDED_BY(mu_) = 0x694d7a1b00000001;
  std::vector<Fault> faults_ GUARDED_BY(mu_);
  int ranges_before_failure_ GUARDED_BY(mu_) = -1;  // -1: no range fault armed
  int range_failures_ GUARDED_BY(mu_) = 0;
  ErrorKind range_failure_kind_ GUARDED_BY(mu_) = ErrorKind::transport;
  std::function<void()> before_txn_ GUARDED_BY(mu_);
  std::function<void()> before_range_ GUARDED_BY(mu_);
  std::vector<etcd::RangeRequest> range_log_ GUARDED_BY(mu_);
  std::map<Method, int> calls_ GUARDED_BY(mu_);
  std::vector<std::string> deleted_by_txn_ GUARDED_BY(mu_);
};

}  // namespace cn::testing
