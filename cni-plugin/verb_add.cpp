// ADD and CHECK: record the allocation, tell the labeler, and (ADD) hand prevResult on.
// Everything after input validation fails open: a broken state file, a missing labeler or a
// slow Cilium must never fail an allocation's networking, and neither must an exception
// (fail_open.cpp).
#include <nlohmann/json.hpp>

#include "cni-plugin/verb_context.h"
#include "common/cni/cni_args.h"
#include "common/cni/sandbox_addresses.h"
#include "common/notify/notify_client.h"

namespace cn::plugin {
namespace {

using cni::CniError;
using cni::ErrorCode;

// Connecting to a live labeler takes microseconds; this only bounds a wedged one.
constexpr auto kFireAndForgetBudget = std::chrono::milliseconds{200};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out.empty() ? "-" : out;
}

state::StateEntry make_entry(const VerbContext& ctx, const cni::SandboxAddresses& addrs,
                             const cni::NomadWorkload& nomad) {
  state::StateEntry e;
  e.ifname = ctx.ifname;
  e.netns = ctx.netns;
  e.ips = addrs.ips;
  WallTime now = ctx.clock.wall_now();
  e.added_at = rfc3339(now);
  e.added_unix_ms = unix_millis(now);
  e.nomad = {nomad.region, nomad.namespace_, nomad.job_id, nomad.group};
  return e;
}

// Returns a short word for the log line.
std::string record(VerbContext& ctx, state::StateEntry entry) {
  auto store = ctx.state_store();
  auto ok = store.update_entry(
      ctx.container_id,
      [&](std::optional<state::StateEntry>& current) {
        if (current) {
          // Nomad retries ADD without DEL: keep what the labeler learned if the attachment is the
          // same.
          if (current->ifname == entry.ifname && current->ips == entry.ips)
            entry.labeled = current->labeled;
          entry.unknown = current->unknown;
        }
        current = std::move(entry);
        return true;
      },
      state::StateStore::Creation::allowed);
  if (!ok) {
    ctx.log.get().error(
        "state write failed, continuing (fail-open; the labeler's reconcile covers this alloc): "
        "alloc={} file={} error=\"{}\"",
        ctx.container_id, ctx.conf.state_file, ok.error().message);
    return "failed";
  }
  return "ok";
}

std::string notify_labeler(VerbContext& ctx, const cni::SandboxAddresses& addrs,
                           const cni::NomadWorkload& nomad, int wait_ms, std::string& detail) {
  notify::Request req;
  req.op = notify::Op::kAdd;
  req.alloc_id = ctx.container_id;
  req.ifname = ctx.ifname;
  req.netns = ctx.netns;
  req.ips = addrs.ips;
  req.nomad = nomad;
  req.wait_ms = wait_ms;
  MonoTime deadline =
      ctx.started + (wait_ms > 0 ? std::chrono::milliseconds{wait_ms} : kFireAndForgetBudget);
  auto reply = notify::send_request(ctx.conf.labeler_socket, req, ctx.clock, deadline);
  if (!reply) {
    detail = reply.error().message;
    return reply.error().kind == ErrorKind::timeout ? "timeout" : "unreachable";
  }
  if (!*reply) return "sent";
  const notify::Reply& r = **reply;
  if (r.status == notify::ReplyStatus::kLabeled) {
    detail =
        "identity=" + std::to_string(r.identity) + " endpoint=" + std::to_string(r.endpoint_id);
  } else {
    detail = r.message;
  }
  return std::string(notify::to_string(r.status));
}

// Shared by ADD and CHECK. Returns an error only for malformed input.
std::optional<CniError> record_and_notify(VerbContext& ctx, const nlohmann::json& prev, int wait_ms,
                                          const char* verb) {
  auto addrs = cni::sandbox_addresses(prev);
  if (!addrs) {
    return CniError{ErrorCode::kInvalidNetworkConfig, "invalid prevResult", addrs.error().message};
  }
  if (addrs->ips.empty()) {
    ctx.log.get().warn(
        "prevResult has no address on a sandbox interface; the labeler will find the endpoint by "
        "attachment ID: alloc={}",
        ctx.container_id);
  }
  cni::NomadWorkload nomad;
  if (auto workload =
          cni::nomad_workload_from_cni_args(ctx.invocation.get("CNI_ARGS").value_or(""))) {
    nomad = std::move(*workload);
  } else {
    ctx.log.get().warn("{}: alloc={}", workload.error().message, ctx.container_id);
  }
  ctx.enter(Step::kStateWrite);
  std::string state_result = record(ctx, make_entry(ctx, *addrs, nomad));
  ctx.enter(Step::kStateWritten);
  std::string detail;
  ctx.enter(Step::kLabelerNotify);
  std::string labeler = notify_labeler(ctx, *addrs, nomad, wait_ms, detail);
  ctx.enter(Step::kLabelerNotified);
  auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(ctx.clock.now() - ctx.started);
  bool ok = state_result == "ok" && (labeler == "labeled" || labeler == "sent");
  auto level = ok ? spdlog::level::info : spdlog::level::warn;
  ctx.log.get().log(
      level, "{} alloc={} ifname={} ips={} job={} state={} labeler={} {}elapsed_ms={}", verb,
      ctx.container_id, ctx.ifname, join(addrs->ips), nomad.job_id.empty() ? "-" : nomad.job_id,
      state_result, labeler, detail.empty() ? "" : "detail=\"" + detail + "\" ", elapsed.count());
  return std::nullopt;
}

}  // namespace

Outcome add_output(VerbContext& ctx) {
  if (!ctx.conf.prev_result) {
    return error_outcome(CniError{ErrorCode::kInvalidNetworkConfig, "missing prevResult",
                                  "cilium-nomad-cni must be chained after cilium-cni"},
                         ctx.conf.cni_version, ctx.log);
  }
  // Pass-through: the same document, stamped with the version this chain runs at.
  nlohmann::json result = *ctx.conf.prev_result;
  result["cniVersion"] = ctx.conf.cni_version;
  Outcome out;
  out.stdout_data = result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return out;
}

Outcome verb_add(VerbContext& ctx) {
  if (!ctx.conf.prev_result)
    return add_output(ctx);  // the missing-prevResult error, before any work
  if (auto err =
          record_and_notify(ctx, *ctx.conf.prev_result, ctx.conf.wait_for_labels_ms, "add")) {
    return error_outcome(*err, ctx.conf.cni_version, ctx.log);
  }
  ctx.enter(Step::kOutput);
  return add_output(ctx);
}

Outcome verb_check(VerbContext& ctx) {
  ctx.enter(Step::kStateRead);
  auto store = ctx.state_store();
  auto doc = store.load();
  if (!doc) {
    // Never fail CHECK on our own trouble: Nomad would tear the allocation's network down.
    ctx.log.get().warn("check: state unreadable, passing: alloc={} error=\"{}\"", ctx.container_id,
                       doc.error().message);
    return {};
  }
  if (doc->allocations.contains(ctx.container_id)) return {};
  if (!ctx.conf.prev_result) {
    ctx.log.get().warn("check: entry missing and no prevResult to rebuild it from: alloc={}",
                       ctx.container_id);
    return {};
  }
  if (auto err = record_and_notify(ctx, *ctx.conf.prev_result, 0, "check-recreate")) {
    return error_outcome(*err, ctx.conf.cni_version, ctx.log);
  }
  ctx.enter(Step::kOutput);
  return {};
}

}  // namespace cn::plugin
