#pragma once
// The bodies of etcd's v3 JSON gateway (grpc-gateway over api/etcdserverpb/rpc.proto, checked
// against etcd 3.4.23): field names are the proto names in snake_case, bytes fields are base64,
// int64 fields are JSON strings and, like false booleans, absent when zero.
//
// encode_*: the request bodies. decode_*: a 2xx answer's body into our types; a body that breaks
// the shape is bad_answer, naming the field.
#include <chrono>
#include <string>
#include <string_view>

#include "common/etcd/etcd_api.h"
#include "common/util/result.h"

namespace cn::etcd {

std::string encode_range(const RangeRequest& request);
std::string encode_txn(const TxnRequest& request);
std::string encode_put(std::string_view key, std::string_view value, LeaseId lease);
std::string encode_lease_grant(std::chrono::seconds ttl);
std::string encode_lease_id(LeaseId lease);  // keep-alive and revoke
std::string encode_authenticate(std::string_view user, std::string_view password);
std::string encode_compaction(Revision revision);

[[nodiscard]] Result<RangePage> decode_range(std::string_view body);
[[nodiscard]] Result<TxnResult> decode_txn(std::string_view body);
[[nodiscard]] Result<Revision> decode_put(std::string_view body);
[[nodiscard]] Result<Lease> decode_lease_grant(std::string_view body);
// The TTL etcd renewed the lease for; 0 when etcd no longer knows the lease.
[[nodiscard]] Result<std::chrono::seconds> decode_keep_alive(std::string_view body);
[[nodiscard]] Result<std::string> decode_authenticate(std::string_view body);

}  // namespace cn::etcd
