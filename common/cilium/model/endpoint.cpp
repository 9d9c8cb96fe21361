#include "common/cilium/model/endpoint.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/util/alloc_id.h"
#include "common/util/json_read.h"

namespace cn::cilium {

namespace {

using json::JsonReader;

void read_addressing(JsonReader& networking, std::vector<Addressing>& out) {
  const auto* list = networking.array("addressing");
  if (list == nullptr) return;
  for (std::size_t i = 0; i < list->size() && networking.ok(); ++i) {
    JsonReader r((*list)[i], networking.at("addressing", i));
    Addressing a;
    r.read("ipv4", a.ipv4);
    r.read("ipv6", a.ipv6);
    if (!r.ok()) return networking.fail(r.error());
    out.push_back(std::move(a));
  }
}

void read_status(JsonReader& status, Endpoint& ep) {
  status.read("state", ep.state);
  status.with_object("identity", [&](JsonReader& r) {
    r.read("id", ep.identity_id);
    r.read("labels", ep.identity_labels);
  });
  status.with_object("labels", [&](JsonReader& r) {
    r.with_object("realized",
                  [&](JsonReader& realized) { realized.read("user", ep.realized_user_labels); });
    r.read("security-relevant", ep.security_relevant_labels);
    r.read("derived", ep.derived_labels);
    r.read("disabled", ep.disabled_labels);
  });
  status.with_object("external-identifiers", [&](JsonReader& r) {
    r.read("cni-attachment-id", ep.cni_attachment_id);
    r.read("container-id", ep.container_id);
  });
  status.with_object("networking", [&](JsonReader& r) { read_addressing(r, ep.addressing); });
  status.with_object("health", [&](JsonReader& r) { r.read("overallHealth", ep.health); });
  status.with_object("policy", [&](JsonReader& policy) {
    policy.with_object("realized", [&](JsonReader& r) {
      r.read("policy-revision", ep.realized_policy_revision);
      r.read("policy-enabled", ep.realized_policy_enabled);
    });
  });
}

}  // namespace

const json::Fields& endpoint_fields() {
  static const json::Fields fields = {
      {"id", {}},
      {"spec", {{"label-configuration", {{"user", {}}}}, {"options", {{"PolicyAuditMode", {}}}}}},
      {"status",
       {{"state", {}},
        {"identity", {{"id", {}}, {"labels", {}}}},
        {"labels",
         {{"realized", {{"user", {}}}},
          {"security-relevant", {}},
          {"derived", {}},
          {"disabled", {}}}},
        {"external-identifiers", {{"cni-attachment-id", {}}, {"container-id", {}}}},
        {"networking", {{"addressing", {{"ipv4", {}}, {"ipv6", {}}}}}},
        {"health", {{"overallHealth", {}}}},
        {"policy", {{"realized", {{"policy-revision", {}}, {"policy-enabled", {}}}}}}}}};
  return fields;
}

Result<Endpoint> parse_endpoint(const nlohmann::json& value, const json::JsonWhere& where) {
  JsonReader r(value, where);
  Endpoint ep;
  r.read("id", ep.id);
  r.with_object("spec", [&](JsonReader& spec) {
    spec.with_object("label-configuration",
                     [&](JsonReader& lc) { lc.read("user", ep.spec_user_labels); });
    spec.with_object("options", [&](JsonReader& options) {
      options.read(kOptionPolicyAuditMode, ep.policy_audit_mode);
    });
  });
  r.with_object("status", [&](JsonReader& status) { read_status(status, ep); });
  if (!r.ok()) return fail(r.error());
  return ep;
}

Result<Endpoint> parse_endpoint_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "Endpoint", endpoint_fields());
  if (!doc) return std::unexpected(doc.error());
  return parse_endpoint(*doc);
}

Result<EndpointList> parse_endpoint_list(std::string_view body) {
  EndpointList list;
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return list;
  auto doc = json::parse_json_text(body, "endpoint list", endpoint_fields());
  if (!doc) return std::unexpected(doc.error());
  if (doc->is_null()) return list;
  if (!doc->is_array()) {
    return fail(std::string("endpoint list: expected an array, got ") + doc->type_name());
  }
  list.endpoints.reserve(doc->size());
  for (std::size_t i = 0; i < doc->size(); ++i) {
    auto ep = parse_endpoint((*doc)[i], json::JsonWhere("endpoint list").index(i));
    if (ep) {
      list.endpoints.push_back(std::move(*ep));
    } else {
      list.rejected.push_back(std::move(ep.error()));
    }
  }
  return list;
}

std::optional<bool> policy_audit_enabled(const Endpoint& ep) {
  if (ep.policy_audit_mode == kOptionEnabled) return true;
  if (ep.policy_audit_mode == kOptionDisabled) return false;
  return std::nullopt;
}

bool is_init(const Endpoint& ep) {
  if (ep.identity_id == kIdentityInit) return true;
  return identity_labels(ep).contains(
      labels::Label{std::string(labels::kSourceReserved), "init", ""});
}

bool is_reserved_only(const Endpoint& ep) {
  if (ep.identity_id == kIdentityHost || ep.identity_id == kIdentityHealth) return true;
  auto set = identity_labels(ep);
  if (set.empty() || is_init(ep)) return false;
  return std::all_of(set.begin(), set.end(),
                     [](const labels::Label& l) { return l.is_reserved(); });
}

labels::LabelSet user_labels(const Endpoint& ep) {
  return labels::LabelSet::from_strings(ep.realized_user_labels);
}

labels::LabelSet identity_labels(const Endpoint& ep) {
  return labels::LabelSet::from_strings(ep.identity_labels);
}

std::optional<Attachment> parse_attachment_id(std::string_view cni_attachment_id) {
  auto colon = cni_attachment_id.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view alloc = cni_attachment_id.substr(0, colon);
  std::string_view ifname = cni_attachment_id.substr(colon + 1);
  if (!is_valid_alloc_id(alloc) || ifname.empty()) return std::nullopt;
  return Attachment{std::string(alloc), std::string(ifname)};
}

std::optional<Attachment> attachment_of(const Endpoint& ep) {
  if (!ep.cni_attachment_id.empty()) return parse_attachment_id(ep.cni_attachment_id);
  if (is_valid_alloc_id(ep.container_id)) return Attachment{ep.container_id, ""};
  return std::nullopt;
}

}  // namespace cn::cilium
