#include "common/notify/protocol.h"

#include "common/cni/ifname.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/util/alloc_id.h"
#include "common/util/json_read.h"

namespace cn::notify {
namespace {

using json = nlohmann::json;

std::string dump_line(const json& j) {
  std::string out = j.dump(-1, ' ', false, json::error_handler_t::replace);
  out.push_back('\n');
  return out;
}

// "v" as an integer, or nothing when it is absent or is not one.
std::optional<std::int64_t> frame_version(const json& j) {
  auto v = j.find("v");
  if (v == j.end()) return std::nullopt;
  auto n = cn::json::integer_in_range(*v, std::numeric_limits<std::int64_t>::min(),
                                      std::numeric_limits<std::int64_t>::max());
  if (!n) return std::nullopt;
  return *n;
}

Result<json> parse_line(std::string_view line) {
  if (line.size() > kMaxFrameBytes) return fail("frame larger than 64 KiB");
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("frame is not a JSON object");
  auto version = frame_version(j);
  if (!version) return fail("frame has no integer \"v\"");
  if (*version != kProtocolVersion) {
    return fail("unsupported protocol version " + std::to_string(*version));
  }
  return j;
}

// A list of strings with at most `max` of them.
void read_short_list(cn::json::JsonReader& r, std::string_view key, std::size_t max,
                     std::vector<std::string>& out) {
  r.read(key, out);
  if (out.size() > max) r.fail_at(key, "expected at most " + std::to_string(max) + " strings");
}

// The value whose wire name (to_string) is `name`, of those listed.
template <class Enum>
std::optional<Enum> protocol_enum_named(std::string_view name, std::initializer_list<Enum> all) {
  for (Enum value : all) {
    if (to_string(value) == name) return value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Op op) {
  switch (op) {
    case Op::kAdd:
      return "add";
    case Op::kDel:
      return "del";
    case Op::kCheck:
      return "check";
  }
  return "add";
}

std::string_view to_string(ReplyStatus status) {
  switch (status) {
    case ReplyStatus::kLabeled:
      return "labeled";
    case ReplyStatus::kPending:
      return "pending";
    case ReplyStatus::kFailed:
      return "failed";
    case ReplyStatus::kUnsupportedVersion:
      return "unsupported-version";
  }
  return "failed";
}

std::string encode(const Request& r) {
  json j = {{"v", kProtocolVersion},
            {"op", to_string(r.op)},
            {"alloc_id", r.alloc_id},
            {"ifname", r.ifname}};
  if (!r.netns.empty()) j["netns"] = r.netns;
  if (!r.ips.empty()) j["ips"] = r.ips;
  json nomad = json::object();
  if (!r.nomad.region.empty()) nomad["region"] = r.nomad.region;
  if (!r.nomad.namespace_.empty()) nomad["namespace"] = r.nomad.namespace_;
  if (!r.nomad.job_id.empty()) nomad["job"] = r.nomad.job_id;
  if (!r.nomad.group.empty()) nomad["group"] = r.nomad.group;
  if (!nomad.empty()) j["nomad"] = std::move(nomad);
  if (r.wait_ms > 0) j["wait_ms"] = r.wait_ms;
  return dump_line(j);
}

std::string encode(const Reply& r) {
  json j = {{"v", kProtocolVersion}, {"status", to_string(r.status)}};
  if (r.endpoint_id != 0) j["endpoint_id"] = r.endpoint_id;
  if (r.identity != 0) j["identity"] = r.identity;
  if (!r.labels.empty()) j["labels"] = r.labels;
  if (!r.message.empty()) j["message"] = r.message;
  if (r.status == ReplyStatus::kUnsupportedVersion) j["versions"] = {kProtocolVersion};
  return dump_line(j);
}

std::optional<int> peek_version(std::string_view line) {
  if (line.size() > kMaxFrameBytes) return std::nullopt;
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto version = frame_version(j);
  if (!version || *version < 0 || *version > 1'000'000) return std::nullopt;
  return static_cast<int>(*version);
}

Result<Request> decode_request(std::string_view line) {
  auto j = parse_line(line);
  if (!j) return std::unexpected(j.error());
  cn::json::JsonReader r(*j, "frame");
  Request req;
  std::string op;
  r.read_required("op", op);
  r.read_required("alloc_id", req.alloc_id);
  r.read_required("ifname", req.ifname);
  r.read("netns", req.netns);
  read_short_list(r, "ips", 16, req.ips);
  r.with_object("nomad", [&](cn::json::JsonReader& nomad) {
    for (auto [key, field] : {std::pair{"region", &req.nomad.region},
                              {"namespace", &req.nomad.namespace_},
                              {"job", &req.nomad.job_id},
                              {"group", &req.nomad.group}}) {
      nomad.read(key, *field);
    }
  });
  r.read_int("wait_ms", req.wait_ms, 0, 600'000);
  if (!r.ok()) return fail(r.error());

  auto known_op = protocol_enum_named(op, {Op::kAdd, Op::kDel, Op::kCheck});
  if (!known_op) return fail("unknown op");
  req.op = *known_op;
  if (!is_valid_alloc_id(req.alloc_id)) return fail("alloc_id is not a UUID");
  if (!cni::is_valid_ifname(req.ifname)) return fail("invalid ifname");
  req.nomad.alloc_id = req.alloc_id;
  return req;
}

Result<Reply> decode_reply(std::string_view line) {
  auto j = parse_line(line);
  if (!j) {
    if (auto v = peek_version(line); v && *v != kProtocolVersion) {
      return Reply{ReplyStatus::kUnsupportedVersion, 0, 0, {}, "labeler speaks another version"};
    }
    return std::unexpected(j.error());
  }
  cn::json::JsonReader r(*j, "frame");
  Reply reply;
  std::string status;
  r.read_required("status", status);
  r.read_int("endpoint_id", reply.endpoint_id);
  r.read_int("identity", reply.identity);
  read_short_list(r, "labels", 256, reply.labels);
  r.read("message", reply.message);
  if (!r.ok()) return fail(r.error());
  auto known_status =
      protocol_enum_named(status, {ReplyStatus::kLabeled, ReplyStatus::kPending,
                                   ReplyStatus::kFailed, ReplyStatus::kUnsupportedVersion});
  if (!known_status) return fail("unknown status");
  reply.status = *known_status;
  return reply;
}

}  // namespace cn::notify
