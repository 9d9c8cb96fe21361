#include "common/cilium/model/agent_version.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/util/json_read.h"

namespace cn::cilium {

namespace {

// One decimal number at the front of `text`, consumed; nullopt when there is none.
std::optional<int> take_number(std::string_view& text) {
  int value = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || p == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(p - text.data()));
  return value;
}

bool take_dot(std::string_view& text) {
  if (!text.starts_with('.')) return false;
  text.remove_prefix(1);
  return true;
}

}  // namespace

bool AgentVersion::at_least(int want_major, int want_minor, int want_patch) const {
  const auto have = std::tie(major, minor, patch);
  const auto want = std::tie(want_major, want_minor, want_patch);
  if (have != want) return have > want;
  return !prerelease;
}

std::string to_string(const AgentVersion& version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor) + "." +
         std::to_string(version.patch) + (version.prerelease ? "-pre" : "");
}

std::optional<AgentVersion> parse_agent_version_text(std::string_view msg) {
  AgentVersion v;
  auto major = take_number(msg);
  if (!major || !take_dot(msg)) return std::nullopt;
  auto minor = take_number(msg);
  if (!minor || !take_dot(msg)) return std::nullopt;
  auto patch = take_number(msg);
  if (!patch) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  v.patch = *patch;
  // Release builds are followed by a space; "-rc.1", "-pre.2" and "-dev" mark the others.
  if (msg.starts_with('-')) {
    v.prerelease = true;
  } else if (!msg.empty() && !msg.starts_with(' ')) {
    return std::nullopt;
  }
  return v;
}

Result<std::optional<AgentVersion>> parse_healthz_version(std::string_view body) {
  static const json::Fields fields = {{"cilium", {{"msg", {}}}}};
  auto doc = json::parse_json_text(body, "StatusResponse", fields);
  if (!doc) return std::unexpected(doc.error());
  json::JsonReader r(*doc, "StatusResponse");
  std::string msg;
  r.with_object("cilium", [&](json::JsonReader& cilium) { cilium.read("msg", msg); });
  if (!r.ok()) return fail(r.error());
  return parse_agent_version_text(msg);
}

}  // namespace cn::cilium
