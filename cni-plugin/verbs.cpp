#include <string_view>

#include <nlohmann/json.hpp>

#include "cni-plugin/fail_open.h"
#include "cni-plugin/verb_context.h"
#include "cni-plugin/version_rules.h"
#include "common/cni/cni_version.h"
#include "common/cni/ifname.h"
#include "common/cni/netconf_keys.h"
#include "common/notify/protocol.h"
#include "common/util/alloc_id.h"

namespace cn::plugin {
namespace {

using cni::CniError;
using cni::ErrorCode;

// Nomad fingerprints every binary in cni_path by running it with no CNI_COMMAND and reading the
// first semver from the combined output. stdout stays reserved for CNI JSON, so this goes to
// stderr.
Outcome about() {
  Outcome out;
  out.stderr_data = std::string("CNI cilium-nomad-cni plugin v") + CN_VERSION +
                    "\nCNI protocol versions supported: " + cni::supported_versions_text() + "\n";
  return out;
}

Outcome version(const Invocation& inv) {
  // VERSION answers in the version the caller asked about, or the newest when stdin is empty
  // or unreadable: a version probe must not fail on a partial config.
  std::string asked(cni::kNewestVersion);
  auto doc = nlohmann::json::parse(inv.stdin_data, nullptr, false);
  if (doc.is_object()) {
    if (auto it = doc.find("cniVersion"); it != doc.end() && it->is_string()) {
      asked = it->get<std::string>();
    }
  }
  nlohmann::json j = {{"cniVersion", asked}, {"supportedVersions", nlohmann::json::array()}};
  for (auto v : cni::kSupportedVersions) j["supportedVersions"].push_back(v);
  Outcome out;
  out.stdout_data = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return out;
}

std::optional<CniError> validate_attachment_env(VerbContext& ctx) {
  auto id = ctx.invocation.get("CNI_CONTAINERID");
  if (!id || id->empty()) {
    return CniError{ErrorCode::kInvalidEnvironment, "missing CNI_CONTAINERID",
                    "CNI_CONTAINERID must hold the Nomad allocation ID"};
  }
  if (!is_valid_alloc_id(*id)) {
    return CniError{ErrorCode::kInvalidEnvironment, "invalid CNI_CONTAINERID",
                    "CNI_CONTAINERID must be a Nomad allocation ID (a UUID)"};
  }
  auto ifname = ctx.invocation.get("CNI_IFNAME");
  if (!ifname || ifname->empty()) {
    return CniError{ErrorCode::kInvalidEnvironment, "missing CNI_IFNAME", ""};
  }
  if (!cni::is_valid_ifname(*ifname)) {
    return CniError{ErrorCode::kInvalidEnvironment, "invalid CNI_IFNAME",
                    "an interface name has 1 to 15 characters, without '/', ':' or whitespace"};
  }
  ctx.container_id = *id;
  ctx.ifname = *ifname;
  ctx.netns = ctx.invocation.get("CNI_NETNS").value_or("");
  return std::nullopt;
}

// Everything after the config parsed, where the verb has a context to fail open with.
Outcome dispatch(VerbContext& ctx, const std::string& command) {
  ctx.log.use_file(ctx.conf.log_file);
  ctx.enter(Step::kConfigParsed);
  static const std::map<std::string_view, Outcome (*)(VerbContext&)> attachment_verbs = {
      {"ADD", verb_add}, {"DEL", verb_del}, {"CHECK", verb_check}};
  if (auto it = attachment_verbs.find(command); it != attachment_verbs.end()) {
    if (auto err = validate_attachment_env(ctx)) {
      return error_outcome(*err, ctx.conf.cni_version, ctx.log);
    }
    if (auto err = version_rule_violation(command, ctx.conf.cni_version)) {
      return error_outcome(*err, ctx.conf.cni_version, ctx.log);
    }
    return it->second(ctx);
  }
  if (auto err = version_rule_violation(command, ctx.conf.cni_version)) {
    return error_outcome(*err, ctx.conf.cni_version, ctx.log);
  }
  if (command == "STATUS") {
    ctx.enter(Step::kOutput);
    return Outcome{};  // ADD never depends on a daemon: always ready
  }
  if (command == "GC") return verb_gc(ctx);
  return error_outcome(
      CniError{ErrorCode::kInvalidEnvironment, "unknown CNI_COMMAND", "got \"" + command + "\""},
      ctx.conf.cni_version, ctx.log);
}

}  // namespace

void VerbContext::enter(Step next) {
  step = next;
  if (fault_hook) fault_hook(next);
}

state::StateStore VerbContext::state_store() const {
  // Nomad may start a hundred allocations at once and each ADD holds the lock for a few
  // milliseconds; 10 s leaves room for a loaded node and still bounds a wedged holder.
  return state::StateStore({conf.state_file, std::chrono::seconds{10}}, clock, log.shared());
}

Outcome error_outcome(const CniError& error, const std::string& cni_version, PluginLogger& log) {
  log.get().error("{}: code={} details=\"{}\"", error.msg, static_cast<int>(error.code),
                  error.details);
  Outcome out;
  out.exit_code = 1;
  out.stdout_data = error.to_json(cni_version);
  return out;
}

Outcome run_cni(const Invocation& inv, PluginContext& pctx) {
  PluginLogger log;
  auto finish = [&](Outcome out) {
    out.stderr_data = log.captured_stderr() + out.stderr_data;
    return out;
  };
  auto command = inv.get("CNI_COMMAND");
  if (!command) return finish(about());
  if (*command == "VERSION") return finish(version(inv));

  auto conf = cni::parse_plugin_conf(inv.stdin_data);
  if (!conf) {
    return finish(error_outcome(conf.error(), std::string(cni::kNewestVersion), log));
  }
  if (!conf->unknown_keys.empty()) {
    // To stderr, before a log-file takes over: the runtime's log shows it, and it stays one
    // warning, not an error: the allocation's networking goes on (fail-open).
    log.get().warn("netconf keys ignored: keys=\"{}\"",
                   cni::describe_unknown_keys(conf->unknown_keys));
  }
  VerbContext ctx{inv, *conf, log, pctx.clock, pctx.clock.now(), {}, {}, {}, pctx.fault_hook};
  try {
    return finish(dispatch(ctx, *command));
  } catch (const std::exception& e) {
    return finish(fail_open(ctx, *command, e.what()));
  } catch (...) {
    return finish(fail_open(ctx, *command, "an exception not derived from std::exception"));
  }
}

}  // namespace cn::plugin
