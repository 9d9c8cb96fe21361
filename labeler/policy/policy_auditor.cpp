#include "labeler/policy/policy_auditor.h"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "common/cilium/model/endpoint.h"
#include "common/util/atomic_file.h"
#include "common/util/join.h"
#include "labeler/policy/policy_directory.h"
#include "labeler/policy/policy_mode.h"

namespace cn::labeler::policy {
namespace {

bool audit_claims_hold(const std::vector<AuditClaim>& claims, const AuditClaim& claim) {
  return std::ranges::any_of(claims, [&](const AuditClaim& c) {
    return c.id == claim.id && c.attachment == claim.attachment;
  });
}

}  // namespace

PolicyAuditor::PolicyAuditor(PolicySettings settings, cilium::CiliumApi& cilium, Clock& clock,
                             Metrics& metrics, CallRecorder& calls,
                             std::shared_ptr<spdlog::logger> log)
    : settings_(std::move(settings)),
      dir_(settings_.dir),
      cilium_(cilium),
      clock_(clock),
      metrics_(metrics),
      calls_(calls),
      log_(log ? std::move(log) : spdlog::default_logger()) {
  if (settings_.audit_file.empty()) return;
  // What a previous run turned on is still ours to turn off.
  auto saved = read_audit_record(settings_.audit_file);
  if (saved) {
    MutexLock lock(mu_);
    record_ = std::move(*saved);
    last_text_ = to_text(record_);
  } else if (saved.error().kind != ErrorKind::not_found) {
    // Unreadable claims: nothing is ours to switch off until a pass claims it again.
    log_->warn("policy audit record unreadable, starting without claims file={} error=\"{}\"",
               settings_.audit_file, saved.error().message);
  }
}

Deadline PolicyAuditor::call_deadline(std::stop_token stop) const {
  return Deadline{clock_.now() + settings_.call_timeout, std::move(stop)};
}

AuditRecord PolicyAuditor::record() const {
  MutexLock lock(mu_);
  return record_;
}

void PolicyAuditor::kick() {
  wakeup_.kick();
}

Result<std::vector<AuditPolicy>> PolicyAuditor::audit_policies() const {
  auto files = dir_.owned_files();
  if (!files) return std::unexpected(files.error());
  std::vector<AuditPolicy> out;
  for (const auto& [name, file] : *files) {
    // Our own JSON; a file that does not parse holds no mode we could honour.
    auto object = nlohmann::json::parse(file.content, nullptr, false);
    if (object.is_discarded() || policy_mode_of(object) != PolicyMode::audit) continue;
    out.push_back({file.source ? file.source->variable_path : file.path, std::move(object)});
  }
  return out;
}

Result<bool> PolicyAuditor::global_audit(std::stop_token stop) {
  const auto index = static_cast<std::size_t>(cilium::AgentOption::policy_audit_mode);
  if (const auto forced = settings_.agent_option_overrides[index]) return *forced;
  auto reported = cilium_.agent_options(call_deadline(std::move(stop)));
  calls_.record(Peer::cilium, reported);
  if (!reported) return std::unexpected(reported.error());
  return (*reported)[index].value_or(false);
}

bool PolicyAuditor::set_audit(const AuditClaim& claim, bool enabled, std::stop_token stop) {
  const std::string value(enabled ? cilium::kOptionEnabled : cilium::kOptionDisabled);
  // By attachment where the agent has one: an endpoint number freed between the list and
  // this call may already name another allocation's endpoint.
  const auto attachment = cilium::parse_attachment_id(claim.attachment);
  auto ref = attachment && !attachment->ifname.empty()
                 ? cilium::EndpointRef::cni_attachment(attachment->alloc_id, attachment->ifname)
                 : cilium::EndpointRef::local(claim.id);
  Status done = ref ? Status{} : Status{std::unexpected(ref.error())};
  if (ref) {
    done =
        cilium_.set_endpoint_options(*ref, {{std::string(cilium::kOptionPolicyAuditMode), value}},
                                     call_deadline(std::move(stop)));
  }
  calls_.record(Peer::cilium, done);
  if (!done) {
    metrics_.policy_errors(PolicyErrorReason::audit).Increment();
    log_->warn("policy audit mode not set endpoint={} attachment={} audit_mode={} error=\"{}\"",
               claim.id, claim.attachment, value, done.error().message);
    return false;
  }
  log_->info("policy audit mode set endpoint={} attachment={} audit_mode={} policies={}", claim.id,
             claim.attachment, value, join(claim.policies, ","));
  return true;
}

Status PolicyAuditor::pass(std::stop_token stop) {
  auto policies = audit_policies();
  if (!policies) {
    metrics_.policy_errors(PolicyErrorReason::audit).Increment();
    return std::unexpected(policies.error());
  }
  const AuditRecord before = record();
  if (policies->empty() && before.claims.empty() && before.foreign.empty()) {
    metrics_.policy_audit_endpoints().Set(0);
    return {};
  }
  auto global = global_audit(stop);
  if (!global) {
    // Without the agent's answer an endpoint might be audited by its flag: touch nothing.
    metrics_.policy_errors(PolicyErrorReason::audit).Increment();
    return std::unexpected(global.error());
  }
  if (*global && !global_logged_) {
    log_->info(
        "agent policy-audit-mode is on: every endpoint is in audit, endpoint modes left alone "
        "claims={}",
        before.claims.size());
  }
  global_logged_ = *global;
  auto listed = cilium_.endpoints(call_deadline(stop));
  calls_.record(Peer::cilium, listed);
  if (!listed) {
    metrics_.policy_errors(PolicyErrorReason::audit).Increment();
    return std::unexpected(listed.error());
  }
  std::vector<AuditEndpoint> endpoints;
  for (const auto& ep : listed->endpoints) {
    // Only allocations' endpoints: the agent's own and other orchestrators' are not ours.
    if (!cilium::attachment_of(ep) || cilium::is_reserved_only(ep)) continue;
    endpoints.push_back(
        {ep.id, ep.cni_attachment_id.empty() ? ep.container_id : ep.cni_attachment_id,
         cilium::identity_labels(ep), cilium::policy_audit_enabled(ep).value_or(false)});
  }
  const AuditPlan plan =
      plan_audit(*policies, endpoints, before.claims, *global, listed->rejected.empty());
  AuditRecord next;
  next.global_audit = *global;
  next.claims = plan.keep;
  next.foreign = plan.foreign;
  bool all_done = true;
  for (const auto& claim : plan.enable) {
    if (stop.stop_requested()) return fail(ErrorKind::cancelled, "stopped");
    const bool set = set_audit(claim, true, stop);
    // A claim that could not be renewed (the agent restarted the endpoint) is still ours.
    if (set || audit_claims_hold(before.claims, claim)) next.claims.push_back(claim);
    all_done = all_done && set;
  }
  for (const auto& claim : plan.disable) {
    if (stop.stop_requested()) return fail(ErrorKind::cancelled, "stopped");
    if (!set_audit(claim, false, stop)) {
      next.claims.push_back(claim);  // still ours; the retry turns it off
      all_done = false;
    }
  }
  std::ranges::sort(next.claims, [](const AuditClaim& a, const AuditClaim& b) {
    return std::tie(a.id, a.attachment) < std::tie(b.id, b.attachment);
  });
  const std::size_t claimed = next.claims.size();
  save(std::move(next));
  metrics_.policy_audit_endpoints().Set(static_cast<double>(claimed));
  if (!all_done) return fail(ErrorKind::io, "some endpoint audit modes could not be set");
  return {};
}

void PolicyAuditor::save(AuditRecord next) {
  std::string text = to_text(next);
  {
    MutexLock lock(mu_);
    record_ = std::move(next);
    if (text == last_text_ || settings_.audit_file.empty()) return;
    last_text_ = text;
  }
  if (auto written = replace_file_atomically(settings_.audit_file, text, 0644); !written) {
    log_->warn("policy audit record not written file={} error=\"{}\"", settings_.audit_file,
               written.error().message);
  }
}

void PolicyAuditor::run(std::stop_token stop) {
  BackoffStrategy backoff(settings_.backoff);  // after an incomplete pass
  MonoTime retry_at = MonoTime::max();
  while (!stop.stop_requested()) {
    if (clock_.now() < retry_at &&
        !wakeup_.wait_until(clock_, std::min(retry_at, clock_.now() + std::chrono::hours{24}),
                            stop)) {
      continue;  // the retry time, the daily wake or stop: the loop's head tells which
    }
    Status done;
    try {
      done = pass(stop);
    } catch (const std::exception& e) {
      metrics_.errors(ErrorKindLabel::exception).Increment();
      done = fail(ErrorKind::io, std::string("policy audit pass threw: ") + e.what());
    }
    if (done || stop.stop_requested()) {
      backoff.reset();
      retry_at = MonoTime::max();
      continue;
    }
    const auto delay = backoff.next_delay();
    retry_at = clock_.now() + delay;
    {
      MutexLock lock(mu_);
      record_.last_error = done.error().message;
    }
    log_->warn("policy audit pass incomplete error=\"{}\" retry_ms={}", done.error().message,
               delay.count());
  }
}

}  // namespace cn::labeler::policy
