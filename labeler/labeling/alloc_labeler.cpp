#include "labeler/labeling/alloc_labeler.h"

#include <spdlog/spdlog.h>

#include "common/cilium/model/label_write_plan.h"
#include "common/labels/derive_labels.h"
#include "common/util/alloc_id.h"
#include "common/util/join.h"
#include "labeler/labeling/identity_trust.h"
#include "labeler/labeling/state_rebuild.h"
#include "labeler/serve/call_recorder.h"

namespace cn::labeler {
namespace {

using notify::ReplyStatus;

LabelOutcome outcome(ReplyStatus status, std::string message, RetryRule retry,
                     std::optional<LabelFailure> failure) {
  LabelOutcome o;
  o.status = status;
  o.message = std::move(message);
  o.retry = retry;
  o.failure = failure;
  return o;
}

// A token that may not read an allocation's namespace gets 500 "Unknown allocation" from Nomad
// rather than a 403: the lookup cannot tell hidden from missing, the operator can.
bool looks_like_acl_hidden(const Error& e) {
  return e.kind == ErrorKind::http && e.message.find("nknown allocation") != std::string::npos;
}

// Which reason a failed call to `peer` is recorded under; nullopt when the caller only stopped.
std::optional<LabelFailure> failure_of(Peer peer, const Error& e) {
  if (e.kind == ErrorKind::cancelled) return std::nullopt;
  if (peer == Peer::cilium) {
    return counts_as_unreachable(e) ? LabelFailure::agent_unreachable : LabelFailure::agent_error;
  }
  if (e.kind == ErrorKind::permission || looks_like_acl_hidden(e))
    return LabelFailure::nomad_access_denied;
  if (e.kind == ErrorKind::not_found) return LabelFailure::nomad_alloc_unknown;
  if (e.kind == ErrorKind::bad_answer) return LabelFailure::nomad_answer_unusable;
  return LabelFailure::nomad_unreachable;
}

}  // namespace

std::expected<AllocLabeler::Identity, LabelOutcome> AllocLabeler::identity_of_live(
    const nomad::Allocation& alloc, std::string_view alloc_id, IdentitySource source) const {
  if (alloc.is_terminal()) {
    return std::unexpected(outcome(ReplyStatus::kFailed,
                                   "allocation is terminal (client " + alloc.client_status +
                                       ", desired " + alloc.desired_status + ")",
                                   RetryRule::never, LabelFailure::alloc_terminal));
  }
  auto identity = trusted_identity(NomadClaim{alloc}, alloc_id, trust_rules());
  if (!identity) {
    // bad_answer: Nomad's answer may be whole on the next read; invalid: it never will be.
    const bool later = identity.error().kind == ErrorKind::bad_answer;
    return std::unexpected(outcome(ReplyStatus::kFailed, identity.error().message,
                                   later ? RetryRule::later : RetryRule::never,
                                   LabelFailure::nomad_answer_unusable));
  }
  return Identity{std::move(*identity), source, false};
}

TrustRules AllocLabeler::trust_rules() const {
  return TrustRules{settings_.cni_args_first, !settings_.policy.meta_keys.empty()};
}

labels::LabelPolicy label_policy(const LabelSettings& settings) {
  labels::LabelPolicy policy = settings.policy;
  if (settings.cluster_name) policy.cluster_name = settings.cluster_name->get();
  return policy;
}

struct AllocLabeler::Attempt {
  MonoTime deadline;        // lookups and confirmation
  MonoTime write_deadline;  // the label write, which may wait out the agent's limiter
  std::stop_token stop;
};

AllocLabeler::AllocLabeler(LabelPathDeps deps, LabelSettings settings)
    : deps_(std::move(deps)),
      settings_(std::move(settings)),
      write_slots_(std::clamp(settings_.max_concurrent_writes, 1, 64)) {
  if (!deps_.log) deps_.log = spdlog::default_logger();
}

Deadline AllocLabeler::call_deadline(const Attempt& attempt) const {
  return Deadline{std::min(attempt.deadline, deps_.clock.now() + settings_.call_timeout),
                  attempt.stop};
}

LabelOutcome AllocLabeler::failed_call(Peer peer, std::string context, const Error& error) {
  LabelOutcome o = outcome(ReplyStatus::kPending, std::move(context) + error.message,
                           retry_rule(error), failure_of(peer, error));
  o.remedy = std::string(remedy(error, peer));
  if (peer == Peer::nomad && looks_like_acl_hidden(error)) {
    o.remedy =
        "Nomad hides allocations whose namespace the token may not read: attach "
        "conf-examples/acl-policy.hcl to NOMAD_TOKEN";
  }
  if (error.kind == ErrorKind::cancelled) o.retry = RetryRule::never;
  return o;
}

void AllocLabeler::note_labeled(const std::string& alloc_id) {
  constexpr std::size_t kRemembered = 4096;  // more than a node runs; beyond it, forget the old
  const MonoTime now = deps_.clock.now();
  MutexLock lock(labeled_mu_);
  labeled_at_[alloc_id] = now;
  if (labeled_at_.size() <= kRemembered) return;
  // A resync snapshot is minutes old at most; forgetting older entries costs at worst one
  // redundant write.
  std::erase_if(labeled_at_,
                [&](const auto& kv) { return now - kv.second > std::chrono::minutes{10}; });
  if (labeled_at_.size() > kRemembered) labeled_at_.clear();
}

bool AllocLabeler::labeled_since(const std::string& alloc_id, MonoTime since) {
  MutexLock lock(labeled_mu_);
  auto it = labeled_at_.find(alloc_id);
  return it != labeled_at_.end() && it->second >= since;
}

std::expected<AllocLabeler::Identity, LabelOutcome> AllocLabeler::resolve_identity(
    const WorkItem& item, const Attempt& attempt) {
  // Cheapest first: what the item carries, what the watch already read, what the plugin passed.
  if (item.alloc && item.alloc->job)
    return identity_of_live(*item.alloc, item.alloc_id, IdentitySource::allocation);
  if (settings_.cache) {
    if (auto cached = settings_.cache->identity(item.alloc_id)) {
      return Identity{std::move(*cached), IdentitySource::cache, false};
    }
  }
  // A re-check after labeling from CNI_ARGS must come from Nomad, never CNI_ARGS again.
  if (!item.verify_cni_args) {
    auto from_args = trusted_identity(CniArgsClaim{item.hint, CniArgsUse::before_nomad},
                                      item.alloc_id, trust_rules());
    if (from_args) return Identity{std::move(*from_args), IdentitySource::cni_args, false};
  }
  return fetch_identity(item, attempt);
}

std::expected<AllocLabeler::Identity, LabelOutcome> AllocLabeler::fetch_identity(
    const WorkItem& item, const Attempt& attempt) {
  auto fetched = deps_.nomad.allocation(item.alloc_id, call_deadline(attempt));
  deps_.calls.record(Peer::nomad, fetched);
  if (fetched && fetched->id != item.alloc_id) {
    // A confused proxy or cache answered about another allocation: try again rather than trust it.
    return std::unexpected(
        outcome(ReplyStatus::kPending,
                "Nomad answered for allocation " + fetched->id + " when asked for " + item.alloc_id,
                RetryRule::later, LabelFailure::nomad_answer_unusable));
  }
  if (fetched) {
    if (settings_.cache) settings_.cache->observe(*fetched);
    return identity_of_live(*fetched, item.alloc_id, IdentitySource::nomad);
  }
  if (fetched.error().kind == ErrorKind::not_found) {
    return std::unexpected(outcome(ReplyStatus::kFailed, "Nomad has no allocation " + item.alloc_id,
                                   RetryRule::never, LabelFailure::nomad_alloc_unknown));
  }
  auto failed = failed_call(Peer::nomad, "Nomad: ", fetched.error());
  if (fetched.error().kind == ErrorKind::cancelled || item.verify_cni_args)
    return std::unexpected(failed);
  // Nomad is away. CNI_ARGS may stand in only where the trust rule allows; otherwise the endpoint
  // stays on reserved:init (its networking works, fail-open) and the item is retried.
  auto from_args = trusted_identity(CniArgsClaim{item.hint, CniArgsUse::nomad_unavailable},
                                    item.alloc_id, trust_rules());
  if (!from_args) {
    const bool had_args = item.hint.has_identity() || !item.hint.alloc_id.empty();
    if (had_args) failed.message += "; CNI_ARGS not trusted: " + from_args.error().message;
    return std::unexpected(failed);
  }
  deps_.log->warn("nomad unreachable, labeling from CNI_ARGS: alloc={} error=\"{}\"", item.alloc_id,
                  fetched.error().message);
  return Identity{std::move(*from_args), IdentitySource::cni_args, true};
}

std::expected<cilium::Endpoint, LabelOutcome> AllocLabeler::find_endpoint(const WorkItem& item,
                                                                          const Attempt& attempt) {
  auto refs = cilium::endpoint_refs_for(item.alloc_id, item.ifname, item.ips);
  auto preferred = static_cast<cilium::EndpointIdKind>(preferred_kind_.load());
  std::stable_partition(refs.begin(), refs.end(),
                        [&](const auto& r) { return r.kind() == preferred; });

  for (const auto& ref : refs) {
    auto ep = deps_.cilium.endpoint(ref, call_deadline(attempt));
    deps_.calls.record(Peer::cilium, ep);
    if (ep) {
      // An IP can be reused by a newer allocation: only accept an endpoint that is this one's,
      // or one that does not say whose it is.
      auto owner = cilium::attachment_of(*ep);
      if (owner && owner->alloc_id != item.alloc_id) continue;
      preferred_kind_ = static_cast<int>(ref.kind());
      return std::move(*ep);
    }
    // 400: this agent does not parse the prefix (cni-attachment-id before 1.15, container-id
    // from 1.20); not found: no match under this form. Either way the next form may match.
    if (ep.error().kind == ErrorKind::not_found || ep.error().status == 400) continue;
    return std::unexpected(failed_call(Peer::cilium, "Cilium: ", ep.error()));
  }
  return std::unexpected(outcome(ReplyStatus::kPending, "no endpoint for this allocation yet",
                                 RetryRule::later, LabelFailure::endpoint_not_found));
}

std::expected<cilium::Endpoint, LabelOutcome> AllocLabeler::write_labels(
    const WorkItem& item, cilium::Endpoint ep, const labels::LabelSet& desired,
    const Attempt& attempt, bool& wrote) {
  auto ref = cilium::EndpointRef::local(ep.id);
  if (!ref) {
    deps_.metrics.errors(ErrorKindLabel::endpoint_id).Increment();
    return std::unexpected(outcome(ReplyStatus::kPending, "Cilium: " + ref.error().message,
                                   RetryRule::later, LabelFailure::endpoint_unusable));
  }
  // Written already, identity still resolving (a previous attempt, or the reconciler): the
  // agent holds our set as its security-relevant labels. Writing again would only cost a
  // rate-limited PATCH and another identity change; confirm() waits for the resolution instead.
  if (!endpoint_patch_gone_ && cilium::labels_written_pending(ep, desired)) return ep;
  // A free write slot, or the item goes back to the queue: a worker must not sit behind writes
  // that the agent's limiter holds.
  if (!write_slots_.try_acquire_for(std::chrono::milliseconds{50})) {
    return std::unexpected(outcome(ReplyStatus::kPending,
                                   "every label write slot is busy (agent limiter)",
                                   RetryRule::later, LabelFailure::write_slots_busy));
  }
  struct SlotRelease {
    std::counting_semaphore<64>& slots;
    ~SlotRelease() { slots.release(); }
  } release{write_slots_};

  // Two rounds at most: the /labels fallback needs a second, identical PATCH to drop init.
  for (int round = 0; round < 3; ++round) {
    auto plan = cilium::plan_label_write(ep, desired);
    switch (plan.action) {
      case cilium::LabelWriteAction::none:
        return ep;
      case cilium::LabelWriteAction::skip_reserved:
        return std::unexpected(
            outcome(ReplyStatus::kFailed,
                    "endpoint " + std::to_string(ep.id) + " belongs to the agent (host/health)",
                    RetryRule::never, LabelFailure::endpoint_unusable));
      case cilium::LabelWriteAction::filtered:
        deps_.metrics.errors(ErrorKindLabel::labels_filtered).Increment();
        return std::unexpected(outcome(ReplyStatus::kFailed, std::string(kLabelsFilteredDetail),
                                       RetryRule::at_resync, LabelFailure::labels_filtered));
      case cilium::LabelWriteAction::write:
        break;
    }
    // PATCH /endpoint/{id} replaces the orchestration identity in one step: init goes with the
    // same write, one identity change, no grace period. It is deprecated in the spec, so if an
    // agent no longer has it we fall back to the diffing /labels API (two PATCHes, the second
    // strips init, and the agent waits its identity-change grace period).
    Status written = fail("not attempted");
    LabelWriteApi api = LabelWriteApi::endpoint;
    const Deadline write_deadline{attempt.write_deadline, attempt.stop};
    if (!endpoint_patch_gone_) {
      written = deps_.cilium.replace_identity_labels(*ref, desired.to_strings(), write_deadline);
      deps_.calls.record(Peer::cilium, written);
      if (!written && written.error().kind == ErrorKind::http &&
          retry_rule(written.error()) == RetryRule::never) {
        endpoint_patch_gone_ = true;
        deps_.log->warn(
            "agent refuses PATCH /v1/endpoint/{{id}}; using PATCH /v1/endpoint/{{id}}/labels");
      }
    }
    if (endpoint_patch_gone_) {
      api = LabelWriteApi::labels;
      written = deps_.cilium.set_user_labels(*ref, desired.to_strings(), write_deadline);
      deps_.calls.record(Peer::cilium, written);
    }
    if (!written) {
      if (written.error().kind == ErrorKind::not_found) {
        return std::unexpected(outcome(ReplyStatus::kPending, "endpoint vanished during the write",
                                       RetryRule::later, LabelFailure::endpoint_not_found));
      }
      deps_.metrics.errors(ErrorKindLabel::label_write).Increment();
      auto failed = failed_call(Peer::cilium, "label write failed: ", written.error());
      if (failed.failure == LabelFailure::agent_error)
        failed.failure = LabelFailure::label_write_refused;
      return std::unexpected(std::move(failed));
    }
    wrote = true;
    deps_.metrics.label_writes(api).Increment();
    deps_.log->info("labels written: alloc={} endpoint={} api={} labels={} missing={} stale={}",
                    item.alloc_id, ep.id, to_string(api), join(desired.to_strings(), ","),
                    join(plan.missing, ","), join(plan.stale, ","));
    if (!endpoint_patch_gone_) return ep;
    // /labels: look again; if init is still there with our labels, the second PATCH is due.
    auto fresh = deps_.cilium.endpoint(*ref, call_deadline(attempt));
    deps_.calls.record(Peer::cilium, fresh);
    if (!fresh) return ep;
    ep = std::move(*fresh);
  }
  return ep;
}

std::expected<cilium::Endpoint, LabelOutcome> AllocLabeler::confirm(const cilium::EndpointRef& ref,
                                                                    const labels::LabelSet& desired,
                                                                    const Attempt& attempt) {
  // Identity resolution is asynchronous. Back off from 10 ms up to 500 ms: a real agent
  // rate-limits GETs at 4/s with a burst of 4, and resolution usually takes a few milliseconds.
  // The jitter keeps workers that wrote together from polling together.
  BackoffStrategy backoff(
      BackoffPolicy{std::chrono::milliseconds{10}, std::chrono::milliseconds{500},
                    std::chrono::milliseconds{10}},
      confirm_jitter_);
  for (;;) {
    auto ep = deps_.cilium.endpoint(ref, call_deadline(attempt));
    deps_.calls.record(Peer::cilium, ep);
    if (ep && cilium::plan_label_write(*ep, desired).action == cilium::LabelWriteAction::none &&
        ep->identity_id != 0 && !cilium::is_init(*ep)) {
      return std::move(*ep);
    }
    if (!ep && ep.error().kind == ErrorKind::not_found) {
      return std::unexpected(outcome(ReplyStatus::kPending,
                                     "endpoint vanished before its identity resolved",
                                     RetryRule::later, LabelFailure::endpoint_not_found));
    }
    if (!ep && ep.error().kind == ErrorKind::cancelled)
      return std::unexpected(failed_call(Peer::cilium, "", ep.error()));
    const auto delay = backoff.next_delay();
    if (deps_.clock.now() + delay >= attempt.deadline) {
      return std::unexpected(outcome(ReplyStatus::kPending, "identity not resolved yet",
                                     RetryRule::later, LabelFailure::identity_pending));
    }
    if (!deps_.clock.sleep_for(delay, attempt.stop)) {
      return std::unexpected(
          outcome(ReplyStatus::kPending, "stopping", RetryRule::never, std::nullopt));
    }
  }
}

void AllocLabeler::record(const WorkItem& item, const cilium::Endpoint& ep,
                          const labels::AllocationIdentity& identity,
                          const labels::LabelSet& desired) {
  state::LabeledInfo info{ep.id, ep.identity_id, desired.to_strings(),
                          rfc3339(deps_.clock.wall_now())};
  bool present = false;
  // Update-only: an absent entry was DEL'd while this worker labeled (or never recorded); the
  // plugin's ADD/CHECK and the reconciler's rebuild are the only ones that may create entries.
  // Only this allocation's line is touched: decoding the whole document for every label made
  // labeling a full node quadratic.
  auto ok = deps_.state.update_entry(
      item.alloc_id,
      [&](std::optional<state::StateEntry>& entry) {
        present = true;
        state::StateEntry& e = *entry;
        fill_nomad_fields(e, identity);
        // A re-check that changed nothing keeps the original time: `state` shows when labeling
        // happened, not when it was last looked at.
        const bool same = e.labeled && e.labeled->endpoint_id == info.endpoint_id &&
                          e.labeled->labels == info.labels &&
                          (e.labeled->identity == info.identity || info.identity == 0);
        if (same && !e.last_attempt) return false;
        if (!same) e.labeled = info;
        e.last_attempt.reset();  // labeled: whatever failed before is over
        return true;
      },
      state::StateStore::Creation::forbidden);
  if (!ok) {
    deps_.metrics.errors(ErrorKindLabel::state_write).Increment();
    deps_.metrics.label_failures(LabelFailure::state_write).Increment();
    deps_.log->error("state write failed: alloc={} error=\"{}\"", item.alloc_id,
                     ok.error().message);
  } else if (!present) {
    deps_.log->debug("state entry gone (deleted), not recorded: alloc={}", item.alloc_id);
  }
}

LabelOutcome AllocLabeler::label(const WorkItem& item, std::stop_token stop) {
  LabelOutcome out = attempt_label(item, std::move(stop));
  if (out.failure) {
    deps_.metrics.label_failures(*out.failure).Increment();
    record_failure(item, *out.failure, out);
  }
  return out;
}

void AllocLabeler::record_failure(const WorkItem& item, LabelFailure failure,
                                  const LabelOutcome& out) {
  state::LastAttempt attempt{std::string(to_string(failure)), out.message,
                             rfc3339(deps_.clock.wall_now())};
  if (!out.remedy.empty()) attempt.detail += "; fix: " + out.remedy;
  // Update-only, like record(). The same failure again keeps its first time: the entry says
  // since when it has been failing, and a retry loop does not rewrite the file on every attempt.
  auto ok = deps_.state.update_entry(
      item.alloc_id,
      [&](std::optional<state::StateEntry>& entry) {
        auto& last = entry->last_attempt;
        if (last && last->reason == attempt.reason && last->detail == attempt.detail) return false;
        last = std::move(attempt);
        return true;
      },
      state::StateStore::Creation::forbidden);
  if (!ok) {
    deps_.metrics.errors(ErrorKindLabel::state_write).Increment();
    deps_.log->error("state write failed (last attempt not recorded): alloc={} error=\"{}\"",
                     item.alloc_id, ok.error().message);
  }
}

LabelOutcome AllocLabeler::attempt_label(const WorkItem& item, std::stop_token stop) {
  if (!is_valid_alloc_id(item.alloc_id))
    // The notification server refuses such IDs first; nothing could be recorded under one.
    return outcome(ReplyStatus::kFailed, "invalid allocation ID", RetryRule::never, std::nullopt);
  const MonoTime now = deps_.clock.now();
  const Attempt attempt{now + settings_.item_budget,
                        now + std::max(settings_.item_budget, settings_.write_budget),
                        std::move(stop)};

  auto step = [&](LabelStep s) {
    if (settings_.fault_hook) settings_.fault_hook(s);
  };
  step(LabelStep::resolve_identity);
  auto identity = resolve_identity(item, attempt);
  if (!identity) return identity.error();
  deps_.metrics.identity_sources(identity->source).Increment();
  auto desired = labels::derive_labels(identity->identity, label_policy(settings_));

  // A resync's snapshot may predate a notification's work on the same allocation (the list was
  // read, then the queue took a while): look again rather than write from it a second time.
  const bool fresh = item.endpoint && !labeled_since(item.alloc_id, item.endpoint_seen_at);
  step(LabelStep::find_endpoint);
  auto ep = fresh ? std::expected<cilium::Endpoint, LabelOutcome>(*item.endpoint)
                  : find_endpoint(item, attempt);
  if (!ep) return ep.error();

  step(LabelStep::write_labels);
  bool wrote = false;
  auto written = write_labels(item, std::move(*ep), desired, attempt, wrote);
  if (!written) {
    auto o = written.error();
    o.wrote = wrote;
    return o;
  }
  if (wrote && item.verify_cni_args) {
    // The labels CNI_ARGS gave were not Nomad's. Never expected: it means a Nomad that builds
    // CNI_ARGS differently from what labeler/labeling/identity_trust.h assumes, or a job that
    // steered its own CNI_ARGS; the endpoint now carries Nomad's labels.
    deps_.metrics.cni_args_relabels().Increment();
    deps_.log->warn("nomad disagreed with CNI_ARGS, relabeled: alloc={} labels={}", item.alloc_id,
                    join(desired.to_strings(), ","));
  }

  cilium::Endpoint final_ep = std::move(*written);
  if (item.confirm && (wrote || cilium::is_init(final_ep) || final_ep.identity_id == 0)) {
    auto ref = cilium::EndpointRef::local(final_ep.id);
    if (!ref)
      return outcome(ReplyStatus::kPending, "Cilium: " + ref.error().message, RetryRule::later,
                     LabelFailure::endpoint_unusable);
    step(LabelStep::confirm);
    auto confirmed = confirm(*ref, desired, attempt);
    if (!confirmed) {
      auto o = confirmed.error();
      o.wrote = wrote;
      return o;
    }
    final_ep = std::move(*confirmed);
  } else if (wrote) {
    final_ep.identity_id = 0;  // written, not yet seen resolved: the next reconcile fills it in
  }
  step(LabelStep::record);
  record(item, final_ep, identity->identity, desired);
  note_labeled(item.alloc_id);

  LabelOutcome o;
  o.status = ReplyStatus::kLabeled;
  o.endpoint_id = final_ep.id;
  o.identity = final_ep.identity_id;
  o.labels = desired.to_strings();
  o.wrote = wrote;
  o.degraded = identity->degraded;
  o.identity_from = identity->source;
  o.verify = identity->source == IdentitySource::cni_args;
  o.retry = o.verify ? RetryRule::later : RetryRule::never;
  if (wrote) {
    deps_.metrics.endpoints_labeled(item.source).Increment();
  }
  return o;
}

}  // namespace cn::labeler
