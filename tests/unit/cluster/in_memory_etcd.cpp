#include "tests/unit/cluster/in_memory_etcd.h"

#include <algorithm>

namespace cn::testing {
namespace {

// etcd's own texts, as the gateway returns them in an error body.
constexpr std::string_view kCompacted = "etcdserver: mvcc: required revision has been compacted";
constexpr std::string_view kFuture = "etcdserver: mvcc: required revision is a future revision";
constexpr std::string_view kLeaseNotFound = "etcdserver: requested lease not found";

std::int64_t number_of(const etcd::KeyValue& kv, etcd::CompareTarget target) {
  switch (target) {
    case etcd::CompareTarget::version:
      return kv.version;
    case etcd::CompareTarget::create_revision:
      return kv.create_revision;
    case etcd::CompareTarget::mod_revision:
      return kv.mod_revision;
    case etcd::CompareTarget::lease:
      return kv.lease;
    case etcd::CompareTarget::value:
      return 0;
  }
  return 0;
}

bool compare_kv(const etcd::KeyValue& kv, const etcd::Compare& compare) {
  int order = 0;  // kv's side against the compare's, as etcd's compareKV
  if (compare.target == etcd::CompareTarget::value) {
    const int c = kv.value.compare(compare.value);
    order = c < 0 ? -1 : (c > 0 ? 1 : 0);
  } else {
    const std::int64_t lhs = number_of(kv, compare.target);
    order = lhs < compare.number ? -1 : (lhs > compare.number ? 1 : 0);
  }
  switch (compare.result) {
    case etcd::CompareResult::equal:
      return order == 0;
    case etcd::CompareResult::not_equal:
      return order != 0;
    case etcd::CompareResult::greater:
      return order > 0;
    case etcd::CompareResult::less:
      return order < 0;
  }
  return false;
}

}  // namespace

InMemoryEtcd::InMemoryEtcd(Clock& clock) : clock_(clock) {}

std::optional<Error> InMemoryEtcd::refuse(Method method, const Deadline& deadline) {
  ++calls_[method];
  if (deadline.stop.stop_requested()) return Error{ErrorKind::cancelled, "stopped", 0, 0};
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->only && *it->only != method) continue;
    const ErrorKind kind = it->kind;
    if (--it->calls <= 0) faults_.erase(it);
    return Error{kind, "injected fault", 0, 0};
  }
  return std::nullopt;
}

const etcd::KeyValue* InMemoryEtcd::at(const std::vector<Version>& history,
                                       etcd::Revision revision) const {
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (revision != 0 && it->revision > revision) continue;
    return it->tombstone ? nullptr : &it->kv;
  }
  return nullptr;
}

std::vector<const etcd::KeyValue*> InMemoryEtcd::live_range(std::string_view key,
                                                            std::string_view range_end,
                                                            etcd::Revision revision) const {
  std::vector<const etcd::KeyValue*> out;
  if (range_end.empty()) {
    auto it = keys_.find(key);
    if (it != keys_.end()) {
      if (const auto* kv = at(it->second, revision)) out.push_back(kv);
    }
    return out;
  }
  const bool to_the_end = range_end == std::string_view("\0", 1);
  for (auto it = keys_.lower_bound(key); it != keys_.end(); ++it) {
    if (!to_the_end && it->first >= range_end) break;
    if (const auto* kv = at(it->second, revision)) out.push_back(kv);
  }
  return out;
}

etcd::RangePage InMemoryEtcd::page_of(const etcd::RangeRequest& request,
                                      etcd::Revision at_revision) const {
  etcd::RangePage page;
  const auto live = live_range(request.key, request.range_end, at_revision);
  page.count = static_cast<std::int64_t>(live.size());
  page.revision = revision_;
  if (request.count_only) return page;
  const std::size_t n = request.limit > 0
                            ? std::min(live.size(), static_cast<std::size_t>(request.limit))
                            : live.size();
  for (std::size_t i = 0; i < n; ++i) {
    page.kvs.push_back(*live[i]);
    if (request.keys_only) page.kvs.back().value.clear();
  }
  page.more = n < live.size();
  return page;
}

Result<etcd::RangePage> InMemoryEtcd::range(const etcd::RangeRequest& request, Deadline deadline) {
  std::function<void()> hook;
  {
    MutexLock lock(mu_);
    hook = before_range_;
  }
  if (hook) hook();
  MutexLock lock(mu_);
  range_log_.push_back(request);
  if (auto error = refuse(Method::range, deadline)) return std::unexpected(*error);
  if (ranges_before_failure_ == 0) {
    if (--range_failures_ <= 0) ranges_before_failure_ = -1;
    return std::unexpected(Error{range_failure_kind_, "injected fault after pages", 0, 0});
  }
  expire_leases();
  if (request.revision > revision_)
    return std::unexpected(Error{ErrorKind::http, std::string(kFuture), 400, 0});
  if (request.revision != 0 && request.revision < compacted_) {
    return std::unexpected(Error{ErrorKind::http, std::string(kCompacted), 400, 0});
  }
  if (ranges_before_failure_ > 0) --ranges_before_failure_;
  return page_of(request, request.revision);
}

bool InMemoryEtcd::compare_holds(const etcd::Compare& compare) const {
  const auto live = live_range(compare.key, compare.range_end, 0);
  if (live.empty()) {
    // etcd's applyCompare: no key compares as one absent key, except that a value cannot be
    // compared on a key that does not exist.
    if (compare.target == etcd::CompareTarget::value) return false;
    return compare_kv(etcd::KeyValue{}, compare);
  }
  return std::all_of(live.begin(), live.end(),
                     [&](const etcd::KeyValue* kv) { return compare_kv(*kv, compare); });
}

void InMemoryEtcd::write_put(const etcd::TxnOp& op, bool& changed) {
  const etcd::Revision pending = revision_ + 1;
  auto& history = keys_[op.key];
  const etcd::KeyValue* current = at(history, 0);
  etcd::KeyValue kv{op.key,
                    op.value,
                    current ? current->create_revision : pending,
                    pending,
                    current ? current->version + 1 : 1,
                    op.lease};
  if (!history.empty() && history.back().revision == pending) history.pop_back();
  history.push_back(Version{pending, false, std::move(kv)});
  changed = true;
}

std::int64_t InMemoryEtcd::write_delete(std::string_view key, std::string_view range_end,
                                        bool& changed) {
  std::vector<std::string> doomed;
  for (const auto* kv : live_range(key, range_end, 0)) doomed.push_back(kv->key);
  const etcd::Revision pending = revision_ + 1;
  for (const auto& name : doomed) {
    auto& history = keys_[name];
    if (!history.empty() && history.back().revision == pending) history.pop_back();
    history.push_back(Version{pending, true, etcd::KeyValue{name, {}, 0, 0, 0, 0}});
  }
  if (!doomed.empty()) changed = true;
  return static_cast<std::int64_t>(doomed.size());
}

Result<etcd::TxnResult> InMemoryEtcd::txn(const etcd::TxnRequest& request, Deadline deadline) {
  std::function<void()> hook;
  {
    MutexLock lock(mu_);
    if (auto error = refuse(Method::txn, deadline)) return std::unexpected(*error);
    hook = before_txn_;
  }
  if (hook) hook();
  MutexLock lock(mu_);
  expire_leases();
  etcd::TxnResult result;
  result.succeeded =
      std::all_of(request.compare.begin(), request.compare.end(),
                  [&](const etcd::Compare& c) REQUIRES(mu_) { return compare_holds(c); });
  const auto& ops = result.succeeded ? request.success : request.failure;
  for (const auto& op : ops) {
    if (op.kind == etcd::TxnOp::Kind::put && op.lease != 0 && !leases_.contains(op.lease)) {
      return std::unexpected(Error{ErrorKind::not_found, std::string(kLeaseNotFound), 404, 0});
    }
  }
  bool changed = false;
  result.ranges.resize(ops.size());
  result.deleted.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    switch (op.kind) {
      case etcd::TxnOp::Kind::put:
        write_put(op, changed);
        break;
      case etcd::TxnOp::Kind::delete_range: {
        for (const auto* kv : live_range(op.key, op.range_end, 0))
          deleted_by_txn_.push_back(kv->key);
        result.deleted[i] = write_delete(op.key, op.range_end, changed);
        break;
      }
      case etcd::TxnOp::Kind::range:
        result.ranges[i] = page_of(etcd::RangeRequest{op.key, op.range_end, 0, 0, false, false}, 0);
        break;
    }
  }
  if (changed) ++revision_;
  result.revision = revision_;
  for (auto& page : result.ranges) page.revision = revision_;
  return result;
}

Result<etcd::Revision> InMemoryEtcd::put(std::string_view key, std::string_view value,
                                         etcd::LeaseId lease, Deadline deadline) {
  MutexLock lock(mu_);
  if (auto error = refuse(Method::put, deadline)) return std::unexpected(*error);
  expire_leases();
  if (lease != 0 && !leases_.contains(lease)) {
    return std::unexpected(Error{ErrorKind::not_found, std::string(kLeaseNotFound), 404, 0});
  }
  bool changed = false;
  write_put(etcd::TxnOp{etcd::TxnOp::Kind::put, std::string(key), {}, std::string(value), lease},
            changed);
  return ++revision_;
}

Result<etcd::Lease> InMemoryEtcd::grant_lease(std::chrono::seconds ttl, Deadline deadline) {
  MutexLock lock(mu_);
  if (auto error = refuse(Method::grant_lease, deadline)) return std::unexpected(*error);
  expire_leases();
  const etcd::LeaseId id = next_lease_++;
  leases_[id] = LeaseState{ttl, clock_.now() + ttl};
  return etcd::Lease{id, ttl};
}

Result<std::chrono::seconds> InMemoryEtcd::keep_alive(etcd::LeaseId lease, Deadline deadline) {
  MutexLock lock(mu_);
  if (auto error = refuse(Method::keep_alive, deadline)) return std::unexpected(*error);
  expire_leases();
  auto it = leases_.find(lease);
  if (it == leases_.end()) {
    return std::unexpected(Error{ErrorKind::not_found, std::string(kLeaseNotFound), 404, 0});
  }
  it->second.expires = clock_.now() + it->second.ttl;
  return it->second.ttl;
}

Status InMemoryEtcd::revoke_lease(etcd::LeaseId lease, Deadline deadline) {
  MutexLock lock(mu_);
  if (auto error = refuse(Method::revoke_lease, deadline)) return std::unexpected(*error);
  expire_leases();
  if (!leases_.contains(lease)) {
    return std::unexpected(Error{ErrorKind::not_found, std::string(kLeaseNotFound), 404, 0});
  }
  revoke(lease);
  return {};
}

void InMemoryEtcd::revoke(etcd::LeaseId lease) {
  std::vector<std::string> attached;
  for (const auto& [key, history] : keys_) {
    if (const auto* kv = at(history, 0); kv && kv->lease == lease) attached.push_back(key);
  }
  bool changed = false;
  for (const auto& key : attached) write_delete(key, {}, changed);
  if (changed) ++revision_;
  leases_.erase(lease);
}

void InMemoryEtcd::expire_leases() {
  const MonoTime now = clock_.now();
  std::vector<etcd::LeaseId> expired;
  for (const auto& [id, state] : leases_) {
    if (state.expires <= now) expired.push_back(id);
  }
  for (auto id : expired) revoke(id);
}

Status InMemoryEtcd::compact(etcd::Revision revision) {
  MutexLock lock(mu_);
  if (revision > revision_)
    return std::unexpected(Error{ErrorKind::http, std::string(kFuture), 400, 0});
  if (revision <= compacted_) {
    return std::unexpected(Error{ErrorKind::http, std::string(kCompacted), 400, 0});
  }
  for (auto it = keys_.begin(); it != keys_.end();) {
    auto& history = it->second;
    // Keep the newest version at or below `revision` (unless it is a tombstone) and all after.
    std::size_t keep_from = 0;
    for (std::size_t i = 0; i < history.size() && history[i].revision <= revision; ++i)
      keep_from = i;
    if (!history.empty() && history.front().revision <= revision) {
      if (history[keep_from].tombstone) ++keep_from;
      history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(keep_from));
    }
    it = history.empty() ? keys_.erase(it) : std::next(it);
  }
  compacted_ = revision;
  return {};
}

void InMemoryEtcd::fail_next(int calls, ErrorKind kind, std::optional<Method> only) {
  MutexLock lock(mu_);
  faults_.push_back(Fault{calls, kind, only});
}

void InMemoryEtcd::fail_ranges_after(int successful_pages, ErrorKind kind, int failures) {
  MutexLock lock(mu_);
  ranges_before_failure_ = successful_pages;
  range_failures_ = failures;
  range_failure_kind_ = kind;
}

void InMemoryEtcd::before_txn(std::function<void()> hook) {
  MutexLock lock(mu_);
  before_txn_ = std::move(hook);
}

void InMemoryEtcd::before_range(std::function<void()> hook) {
  MutexLock lock(mu_);
  before_range_ = std::move(hook);
}

std::vector<etcd::RangeRequest> InMemoryEtcd::range_log() const {
  MutexLock lock(mu_);
  return range_log_;
}

int InMemoryEtcd::calls(Method method) const {
  MutexLock lock(mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

int InMemoryEtcd::total_calls() const {
  MutexLock lock(mu_);
  int total = 0;
  for (const auto& [method, n] : calls_) total += n;
  return total;
}

std::vector<std::string> InMemoryEtcd::deleted_by_txn() const {
  MutexLock lock(mu_);
  return deleted_by_txn_;
}

std::optional<etcd::KeyValue> InMemoryEtcd::get(std::string_view key) {
  MutexLock lock(mu_);
  expire_leases();
  auto live = live_range(key, {}, 0);
  if (live.empty()) return std::nullopt;
  return *live.front();
}

std::size_t InMemoryEtcd::live_keys(std::string_view prefix) {
  MutexLock lock(mu_);
  expire_leases();
  return live_range(prefix, etcd::prefix_end(prefix), 0).size();
}

etcd::Revision InMemoryEtcd::revision() {
  MutexLock lock(mu_);
  expire_leases();
  return revision_;
}

std::int64_t InMemoryEtcd::remove(std::string_view key, std::string_view range_end) {
  MutexLock lock(mu_);
  expire_leases();
  bool changed = false;
  const std::int64_t n = write_delete(key, range_end, changed);
  if (changed) ++revision_;
  return n;
}

}  // namespace cn::testing
