#include "common/notify/protocol.h"

#include "common/cni/ifname.h"

#include <nlohmann/json.hpp>

#include "common/util/alloc_id.h"

namespace cn::notify {
namespace {

using json = nlohmann::json;

std::string dump_line(const json& j) {
  std::string out = j.dump(-1, ' ', false, json::error_handler_t::replace);
  out.push_back('\n');
  return out;
}

Result<json> parse_line(std::string_view line) {
  if (line.size() > kMaxFrameBytes) return fail("frame larger than 64 KiB");
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("frame is not a JSON object");
  auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer()) return fail("frame has no integer \"v\"");
  if (v->get<long long>() != kProtocolVersion) {
    return fail("unsupported protocol version " + v->dump());
  }
  return j;
}

Result<std::string> string_field(const json& j, const char* key, bool required) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return fail(std::string("missing \"") + key + "\"");
    return std::string{};
  }
  if (!it->is_string()) return fail(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

Result<std::vector<std::string>> string_list(const json& j, const char* key, std::size_t max) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array() || it->size() > max) {
    return fail(std::string("\"") + key + "\" must be an array of at most " + std::to_string(max));
  }
  for (const auto& v : *it) {
    if (!v.is_string()) return fail(std::string("\"") + key + "\" must hold strings");
    out.push_back(v.get<std::string>());
  }
  return out;
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
  auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer()) return std::nullopt;
  long long version = v->get<long long>();
  if (version < 0 || version > 1'000'000) return std::nullopt;
  return static_cast<int>(version);
}

Result<Request> decode_request(std::string_view line) {
  auto j = parse_line(line);
  if (!j) return std::unexpected(j.error());
  Request r;
  auto op = string_field(*j, "op", true);
  if (!op) return std::unexpected(op.error());
  if (*op == "add")
    r.op = Op::kAdd;
  else if (*op == "del")
    r.op = Op::kDel;
  else if (*op == "check")
    r.op = Op::kCheck;
  else
    return fail("unknown op");

  auto alloc = string_field(*j, "alloc_id", true);
  if (!alloc) return std::unexpected(alloc.error());
  if (!is_valid_alloc_id(*alloc)) return fail("alloc_id is not a UUID");
  r.alloc_id = std::move(*alloc);

  auto ifname = string_field(*j, "ifname", true);
  if (!ifname) return std::unexpected(ifname.error());
  if (!cni::is_valid_ifname(*ifname)) return fail("invalid ifname");
  r.ifname = std::move(*ifname);

  auto netns = string_field(*j, "netns", false);
  if (!netns) return std::unexpected(netns.error());
  r.netns = std::move(*netns);

  auto ips = string_list(*j, "ips", 16);
  if (!ips) return std::unexpected(ips.error());
  r.ips = std::move(*ips);

  if (auto nomad = j->find("nomad"); nomad != j->end() && !nomad->is_null()) {
    if (!nomad->is_object()) return fail("\"nomad\" must be an object");
    for (auto [key, field] : {std::pair{"region", &r.nomad.region},
                              {"namespace", &r.nomad.namespace_},
                              {"job", &r.nomad.job_id},
                              {"group", &r.nomad.group}}) {
      auto value = string_field(*nomad, key, false);
      if (!value) return std::unexpected(value.error());
      *field = std::move(*value);
    }
  }
  r.nomad.alloc_id = r.alloc_id;

  if (auto wait = j->find("wait_ms"); wait != j->end() && !wait->is_null()) {
    if (!wait->is_number_integer() || wait->get<long long>() < 0 ||
        wait->get<long long>() > 600'000) {
      return fail("wait_ms must be an integer from 0 to 600000");
    }
    r.wait_ms = wait->get<int>();
  }
  return r;
}

Result<Reply> decode_reply(std::string_view line) {
  auto j = parse_line(line);
  if (!j) {
    if (auto v = peek_version(line); v && *v != kProtocolVersion) {
      return Reply{ReplyStatus::kUnsupportedVersion, 0, 0, {}, "labeler speaks another version"};
    }
    return std::unexpected(j.error());
  }
  Reply r;
  auto status = string_field(*j, "status", true);
  if (!status) return std::unexpected(status.error());
  if (*status == "labeled")
    r.status = ReplyStatus::kLabeled;
  else if (*status == "pending")
    r.status = ReplyStatus::kPending;
  else if (*status == "failed")
    r.status = ReplyStatus::kFailed;
  else if (*status == "unsupported-version")
    r.status = ReplyStatus::kUnsupportedVersion;
  else
    return fail("unknown status");
  for (auto [key, field] : {std::pair{"endpoint_id", &r.endpoint_id}, {"identity", &r.identity}}) {
    if (auto it = j->find(key); it != j->end() && !it->is_null()) {
      if (!it->is_number_integer()) return fail(std::string("\"") + key + "\" must be an integer");
      *field = it->get<long long>();
    }
  }
  auto labels = string_list(*j, "labels", 256);
  if (!labels) return std::unexpected(labels.error());
  r.labels = std::move(*labels);
  auto message = string_field(*j, "message", false);
  if (!message) return std::unexpected(message.error());
  r.message = std::move(*message);
  return r;
}

}  // namespace cn::notify
