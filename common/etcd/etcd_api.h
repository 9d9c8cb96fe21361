#pragma once
// What the cluster duties ask of etcd: its v3 API as the JSON gateway serves it
// (POST /v3/kv/range, /v3/kv/txn, /v3/lease/*). A pure interface: the curl implementation lives
// beside it, unit tests use an in-memory double with the same revision and compare rules, and
// integration tests a real etcd on loopback.
//
// Keys and values are raw bytes (the gateway's base64 is the client's business). Every write a
// duty makes goes through txn() so that it can carry the leader fence (see
// labeler/cluster/leader_fence.h); put() exists for tests that seed a store.
//
// Errors: transport, timeout, tls: no answer from any endpoint; cancelled: the deadline's stop;
// permission: etcd's auth refused the user or a key (gRPC codes 7 and 16, and etcd's auth
// failures sent as 3); invalid: any other InvalidArgument (a request etcd will never take, e.g.
// too many ops in a txn); bad_answer: a body that breaks the gateway's shape; not_found: a lease
// etcd no longer knows; http: any other etcd error, its message kept (a compacted revision is
// one: the caller restarts its read). common/etcd/etcd_error.h has the whole table.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::etcd {

using LeaseId = std::int64_t;   // 0: no lease
using Revision = std::int64_t;  // etcd's store revision; 0 in a request: the newest

struct KeyValue {
  std::string key;
  std::string value;  // empty when the range asked for keys only
  Revision create_revision = 0;
  Revision mod_revision = 0;
  std::int64_t version = 0;
  LeaseId lease = 0;
};

struct RangeRequest {
  std::string key;
  // Empty: only `key`. Otherwise the half-open range [key, range_end); prefix_end(key) for a
  // prefix.
  std::string range_end;
  std::int64_t limit = 0;  // 0: no limit
  Revision revision = 0;   // read the store as of this revision (a consistent paged scan)
  bool keys_only = false;
  bool count_only = false;
};

struct RangePage {
  std::vector<KeyValue> kvs;  // sorted by key
  bool more = false;          // the limit cut the answer short
  std::int64_t count = 0;     // keys in the whole range (not only this page)
  Revision revision = 0;      // the store's revision the answer was read at (header)
};

enum class CompareTarget { version, create_revision, mod_revision, value, lease };
enum class CompareResult { equal, not_equal, greater, less };

// etcd compares every key of [key, range_end) when range_end is set; a range with no key
// compares as one absent key (all revisions 0, lease 0), which is how "no key under this prefix"
// is checked atomically.
struct Compare {
  std::string key;
  std::string range_end;
  CompareTarget target = CompareTarget::create_revision;
  CompareResult result = CompareResult::equal;
  std::int64_t number = 0;  // the revision, version or lease compared
  std::string value;        // for CompareTarget::value
};

struct TxnOp {
  enum class Kind { put, delete_range, range };
  Kind kind = Kind::range;
  std::string key;
  std::string range_end;  // delete_range and range
  std::string value;      // put
  LeaseId lease = 0;      // put
};

struct TxnRequest {
  std::vector<Compare> compare;
  std::vector<TxnOp> success;
  std::vector<TxnOp> failure;
};

struct TxnResult {
  bool succeeded = false;
  Revision revision = 0;
  // One entry per op of the branch that ran, in order: the keys a range op read; for a
  // delete_range, `deleted` below counts per op instead.
  std::vector<RangePage> ranges;
  std::vector<std::int64_t> deleted;
};

struct Lease {
  LeaseId id = 0;
  std::chrono::seconds ttl{0};
};

class EtcdApi {
 public:
  virtual ~EtcdApi() = default;

  [[nodiscard]] virtual Result<RangePage> range(const RangeRequest& request, Deadline deadline) = 0;
  [[nodiscard]] virtual Result<TxnResult> txn(const TxnRequest& request, Deadline deadline) = 0;
  // Tests and seeding only; duties write through txn().
  [[nodiscard]] virtual Result<Revision> put(std::string_view key, std::string_view value,
                                             LeaseId lease, Deadline deadline) = 0;

  [[nodiscard]] virtual Result<Lease> grant_lease(std::chrono::seconds ttl, Deadline deadline) = 0;
  // One keep-alive. The TTL etcd granted again; not_found when the lease has expired or was
  // revoked (the gateway answers TTL 0 or omits it).
  [[nodiscard]] virtual Result<std::chrono::seconds> keep_alive(LeaseId lease,
                                                                Deadline deadline) = 0;
  [[nodiscard]] virtual Status revoke_lease(LeaseId lease, Deadline deadline) = 0;

  // For logs and status output: "https://10.0.0.5:2379" (the endpoint last answered).
  virtual std::string describe() const = 0;
};

// The smallest key after every key that starts with `prefix` ("a/" -> "a0"), as etcd's
// clientv3.GetPrefixRangeEnd: the range_end of a prefix scan. "\0" for an empty prefix or one of
// only 0xff bytes (every key).
std::string prefix_end(std::string_view prefix);

}  // namespace cn::etcd
