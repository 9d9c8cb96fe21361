#include <nlohmann/json.hpp>

#include "common/etcd/base64.h"
#include "common/etcd/etcd_json.h"

namespace cn::etcd {
namespace {

using nlohmann::json;

std::string dump(const json& body) {
  // A user name or password that is not UTF-8 must not throw out of an encoder.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

// int64 fields travel as decimal strings; zero is left out as the gateway itself does.
void put_int(json& body, const char* field, std::int64_t value) {
  if (value != 0) body[field] = std::to_string(value);
}

void put_bytes(json& body, const char* field, std::string_view bytes) {
  if (!bytes.empty()) body[field] = base64_encode(bytes);
}

json range_body(std::string_view key, std::string_view range_end) {
  json body = json::object();
  body["key"] = base64_encode(key);
  put_bytes(body, "range_end", range_end);
  return body;
}

json range_json(const RangeRequest& request) {
  json body = range_body(request.key, request.range_end);
  put_int(body, "limit", request.limit);
  put_int(body, "revision", request.revision);
  if (request.keys_only) body["keys_only"] = true;
  if (request.count_only) body["count_only"] = true;
  return body;
}

json put_json(std::string_view key, std::string_view value, LeaseId lease) {
  json body = json::object();
  body["key"] = base64_encode(key);
  put_bytes(body, "value", value);
  put_int(body, "lease", lease);
  return body;
}

const char* target_name(CompareTarget target) {
  switch (target) {
    case CompareTarget::version:
      return "VERSION";
    case CompareTarget::create_revision:
      return "CREATE";
    case CompareTarget::mod_revision:
      return "MOD";
    case CompareTarget::value:
      return "VALUE";
    case CompareTarget::lease:
      return "LEASE";
  }
  return "VERSION";
}

const char* result_name(CompareResult result) {
  switch (result) {
    case CompareResult::equal:
      return "EQUAL";
    case CompareResult::not_equal:
      return "NOT_EQUAL";
    case CompareResult::greater:
      return "GREATER";
    case CompareResult::less:
      return "LESS";
  }
  return "EQUAL";
}

// The compared number or value is a oneof in the proto: etcd treats an unset VALUE operand
// differently from an empty one, so the operand is always sent, zero and empty included.
json compare_json(const Compare& compare) {
  json body = range_body(compare.key, compare.range_end);
  body["target"] = target_name(compare.target);
  body["result"] = result_name(compare.result);
  const std::string number = std::to_string(compare.number);
  switch (compare.target) {
    case CompareTarget::version:
      body["version"] = number;
      break;
    case CompareTarget::create_revision:
      body["create_revision"] = number;
      break;
    case CompareTarget::mod_revision:
      body["mod_revision"] = number;
      break;
    case CompareTarget::lease:
      body["lease"] = number;
      break;
    case CompareTarget::value:
      body["value"] = base64_encode(compare.value);
      break;
  }
  return body;
}

json op_json(const TxnOp& op) {
  json body = json::object();
  switch (op.kind) {
    case TxnOp::Kind::put:
      body["request_put"] = put_json(op.key, op.value, op.lease);
      break;
    case TxnOp::Kind::delete_range:
      body["request_delete_range"] = range_body(op.key, op.range_end);
      break;
    case TxnOp::Kind::range:
      body["request_range"] = range_body(op.key, op.range_end);
      break;
  }
  return body;
}

json ops_json(const std::vector<TxnOp>& ops) {
  json list = json::array();
  for (const auto& op : ops) list.push_back(op_json(op));
  return list;
}

}  // namespace

std::string encode_range(const RangeRequest& request) {
  return dump(range_json(request));
}

std::string encode_txn(const TxnRequest& request) {
  json body = json::object();
  json compares = json::array();
  for (const auto& compare : request.compare) compares.push_back(compare_json(compare));
  body["compare"] = std::move(compares);
  body["success"] = ops_json(request.success);
  body["failure"] = ops_json(request.failure);
  return dump(body);
}

std::string encode_put(std::string_view key, std::string_view value, LeaseId lease) {
  return dump(put_json(key, value, lease));
}

std::string encode_lease_grant(std::chrono::seconds ttl) {
  json body = json::object();
  put_int(body, "TTL", ttl.count());
  return dump(body);
}

std::string encode_lease_id(LeaseId lease) {
  json body = json::object();
  put_int(body, "ID", lease);
  return dump(body);
}

std::string encode_authenticate(std::string_view user, std::string_view password) {
  json body = json::object();
  body["name"] = std::string(user);
  body["password"] = std::string(password);
  return dump(body);
}

std::string encode_compaction(Revision revision) {
  json body = json::object();
  put_int(body, "revision", revision);
  return dump(body);
}

}  // namespace cn::etcd
