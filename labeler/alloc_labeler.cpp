#include "labeler/alloc_labeler.h"

#include <spdlog/spdlog.h>

#include "common/labels/derive_labels.h"
#include "common/labels/parent_job.h"
#include "common/cilium/model/label_write_plan.h"
#include "common/nomad/model/alloc_identity.h"
#include "common/util/alloc_id.h"

namespace cn::labeler {
namespace {

using notify::ReplyStatus;

LabelOutcome outcome(ReplyStatus status, std::string message, bool retry) {
  LabelOutcome o;
  o.status = status;
  o.message = std::move(message);
  o.retry = retry;
  return o;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// Transport trouble and server-side errors pass; a 4xx other than 429 will not change by itself.
bool transient(const Error& e) { return e.code == 0 || e.code == 429 || e.code >= 500; }

}  // namespace

AllocLabeler::AllocLabeler(nomad::NomadApi& nomad, cilium::CiliumApi& cilium, state::StateStore& state,
                           Clock& clock, Metrics& metrics, LabelSettings settings,
                           std::shared_ptr<spdlog::logger> log)
    : nomad_(nomad), cilium_(cilium), state_(state), clock_(clock), metrics_(metrics),
      settings_(std::move(settings)), log_(log ? std::move(log) : spdlog::default_logger()) {}

MonoTime AllocLabeler::call_deadline(MonoTime item_deadline) const {
  return std::min(item_deadline, clock_.now() + settings_.call_timeout);
}

void AllocLabeler::count_call(const char* target, const Error* error) {
  std::string status = error ? (error->code == 0 ? "transport" : std::to_string(error->code)) : "ok";
  metrics_.inc("cilium_nomad_api_calls_total", std::string("target=\"") + target + "\",status=\"" + status + "\"");
}

void AllocLabeler::note_labeled(const std::string& alloc_id) {
  constexpr std::size_t kRemembered = 4096;  // more than a node runs; beyond it, forget the old
  const MonoTime now = clock_.now();
  std::lock_guard lock(labeled_mu_);
  labeled_at_[alloc_id] = now;
  if (labeled_at_.size() <= kRemembered) return;
  // A resync snapshot is minutes old at most; forgetting older entries costs at worst one
  // redundant write.
  std::erase_if(labeled_at_, [&](const auto& kv) { return now - kv.second > std::chrono::minutes{10}; });
  if (labeled_at_.size() > kRemembered) labeled_at_.clear();
}

bool AllocLabeler::labeled_since(const std::string& alloc_id, MonoTime since) {
  std::lock_guard lock(labeled_mu_);
  auto it = labeled_at_.find(alloc_id);
  return it != labeled_at_.end() && it->second >= since;
}

std::expected<AllocLabeler::Identity, LabelOutcome> AllocLabeler::resolve_identity(const WorkItem& item,
                                                                                  MonoTime deadline) {
  std::optional<nomad::Allocation> alloc = item.alloc;
  if (!alloc || !alloc->job) {
    auto fetched = nomad_.allocation(item.alloc_id, call_deadline(deadline));
    count_call("nomad", fetched ? nullptr : &fetched.error());
    if (fetched && fetched->id != item.alloc_id) {
      // A confused proxy or cache answered about another allocation: labeling from it would give
      // this endpoint someone else's identity. Try again rather than trust it.
      return std::unexpected(outcome(ReplyStatus::kPending, "Nomad answered for allocation " + fetched->id +
                                                                " when asked for " + item.alloc_id, true));
    }
    if (fetched) {
      alloc = std::move(*fetched);
    } else if (fetched.error().code == 404) {
      return std::unexpected(outcome(ReplyStatus::kFailed, "Nomad has no allocation " + item.alloc_id, false));
    } else if (item.hint.has_identity()) {
      // Nomad is away but the plugin passed what Nomad >= 1.9.4 puts in CNI_ARGS: label from
      // that now, and check the full set (meta labels) once Nomad answers again.
      log_->warn("nomad unreachable, labeling from CNI_ARGS: alloc={} error=\"{}\"", item.alloc_id,
                 fetched.error().message);
      Identity id;
      id.identity.nomad_namespace = item.hint.namespace_;
      id.identity.job_id = labels::parent_job_of(item.hint.job_id);
      id.identity.task_group = item.hint.group;
      id.degraded = true;
      return id;
    } else {
      return std::unexpected(outcome(ReplyStatus::kPending, "Nomad: " + fetched.error().message, true));
    }
  }
  if (alloc->is_client_terminal() || alloc->desired_status == "stop" || alloc->desired_status == "evict") {
    return std::unexpected(outcome(ReplyStatus::kFailed, "allocation is terminal (client " +
                                                              alloc->client_status + ", desired " +
                                                              alloc->desired_status + ")", false));
  }
  auto identity = nomad::identity_of(*alloc);
  if (!identity) {
    return std::unexpected(outcome(ReplyStatus::kFailed, "cannot derive labels: " + identity.error().message, false));
  }
  return Identity{std::move(*identity), false};
}

std::expected<cilium::Endpoint, LabelOutcome> AllocLabeler::find_endpoint(const WorkItem& item, MonoTime deadline) {
  std::vector<cilium::EndpointRef> refs;
  auto add = [&](Result<cilium::EndpointRef> r) {
    if (r) refs.push_back(std::move(*r));
  };
  add(cilium::EndpointRef::cni_attachment(item.alloc_id, item.ifname));
  add(cilium::EndpointRef::container_id(item.alloc_id));
  for (const auto& ip : item.ips) {
    add(ip.find(':') == std::string::npos ? cilium::EndpointRef::ipv4(ip) : cilium::EndpointRef::ipv6(ip));
  }
  auto preferred = static_cast<cilium::EndpointIdKind>(preferred_kind_.load());
  std::stable_partition(refs.begin(), refs.end(), [&](const auto& r) { return r.kind() == preferred; });

  std::string last_error = "no endpoint for this allocation yet";
  for (const auto& ref : refs) {
    auto ep = cilium_.endpoint(ref, call_deadline(deadline));
    count_call("cilium", ep ? nullptr : &ep.error());
    if (ep) {
      // An IP can be reused by a newer allocation: only accept an endpoint that is this one's,
      // or one that does not say whose it is.
      auto owner = cilium::attachment_of(*ep);
      if (owner && owner->alloc_id != item.alloc_id) continue;
      preferred_kind_ = static_cast<int>(ref.kind());
      return std::move(*ep);
    }
    // 400: this agent does not know the prefix (cni-attachment-id before 1.15); 404: no match.
    if (ep.error().code == 400 || ep.error().code == 404) continue;
    return std::unexpected(outcome(ReplyStatus::kPending, "Cilium: " + ep.error().message, transient(ep.error())));
  }
  return std::unexpected(outcome(ReplyStatus::kPending, last_error, true));
}

std::expected<cilium::Endpoint, LabelOutcome> AllocLabeler::write_labels(const WorkItem& item, cilium::Endpoint ep,
                                                                       const labels::LabelSet& desired,
                                                                       MonoTime deadline, bool& wrote) {
  const auto ref = cilium::EndpointRef::local(static_cast<std::uint16_t>(ep.id));
  // Written already, identity still resolving (a previous attempt, or the reconciler): the
  // agent holds our set as its security-relevant labels. Writing again would only cost a
  // rate-limited PATCH and another identity change; confirm() waits for the resolution instead.
  if (!endpoint_patch_gone_) {
    auto pending = labels::LabelSet::from_strings(ep.security_relevant_labels);
    if (pending.only_source(labels::kSourceNomad) == desired && !pending.has_source(labels::kSourceReserved)) {
      return ep;
    }
  }
  // Two rounds at most: the /labels fallback needs a second, identical PATCH to drop init.
  for (int round = 0; round < 3; ++round) {
    auto plan = cilium::plan_label_write(ep, desired);
    switch (plan.action) {
      case cilium::LabelWriteAction::none:
        return ep;
      case cilium::LabelWriteAction::skip_reserved:
        return std::unexpected(outcome(ReplyStatus::kFailed, "endpoint " + std::to_string(ep.id) +
                                                                 " belongs to the agent (host/health)", false));
      case cilium::LabelWriteAction::filtered:
        metrics_.inc("cilium_nomad_errors_total", "kind=\"labels_filtered\"");
        return std::unexpected(outcome(ReplyStatus::kFailed,
                                       "the agent's --labels filter drops nomad: labels; add \"nomad:.*\"", false));
      case cilium::LabelWriteAction::write:
        break;
    }
    // PATCH /endpoint/{id} replaces the orchestration identity in one step: init goes with the
    // same write, one identity change, no grace period. It is deprecated in the spec, so if an
    // agent no longer has it we fall back to the diffing /labels API (two PATCHes, the second
    // strips init, and the agent waits its identity-change grace period).
    Status written = fail("not attempted");
    const char* api = "endpoint";
    // A write may wait out the agent's PATCH limiter (0.5/s, burst 4, up to 15 s by default)
    // before it is served: it gets the rest of the item's budget, not one call's 5 s. Giving up
    // earlier only sends the same write again later, from the back of the queue.
    const MonoTime write_deadline = deadline;
    if (!endpoint_patch_gone_) {
      written = cilium_.replace_identity_labels(ref, desired.to_strings(), write_deadline);
      count_call("cilium", written ? nullptr : &written.error());
      if (!written && (written.error().code == 405 || written.error().code == 501)) {
        endpoint_patch_gone_ = true;
        log_->warn("agent refuses PATCH /v1/endpoint/{{id}}; using PATCH /v1/endpoint/{{id}}/labels");
      }
    }
    if (endpoint_patch_gone_) {
      api = "labels";
      written = cilium_.set_user_labels(ref, desired.to_strings(), write_deadline);
      count_call("cilium", written ? nullptr : &written.error());
    }
    if (!written) {
      if (written.error().code == 404) {
        return std::unexpected(outcome(ReplyStatus::kPending, "endpoint vanished during the write", true));
      }
      metrics_.inc("cilium_nomad_errors_total", "kind=\"label_write\"");
      return std::unexpected(outcome(ReplyStatus::kPending, "label write failed: " + written.error().message,
                                     transient(written.error())));
    }
    wrote = true;
    metrics_.inc("cilium_nomad_label_writes_total", std::string("api=\"") + api + "\"");
    log_->info("labels written: alloc={} endpoint={} api={} labels={} missing={} stale={}", item.alloc_id, ep.id, api,
               join(desired.to_strings()), join(plan.missing), join(plan.stale));
    if (!endpoint_patch_gone_) return ep;
    // /labels: look again; if init is still there with our labels, the second PATCH is due.
    auto fresh = cilium_.endpoint(ref, call_deadline(deadline));
    count_call("cilium", fresh ? nullptr : &fresh.error());
    if (!fresh) return ep;
    ep = std::move(*fresh);
  }
  return ep;
}

std::expected<cilium::Endpoint, LabelOutcome> AllocLabeler::confirm(const cilium::EndpointRef& ref,
                                                                  const labels::LabelSet& desired, MonoTime deadline) {
  // Identity resolution is asynchronous. Back off from 10 ms: a real agent rate-limits GETs at
  // 4/s with a burst of 4, and resolution usually takes a few milliseconds.
  auto delay = std::chrono::milliseconds{10};
  for (;;) {
    auto ep = cilium_.endpoint(ref, call_deadline(deadline));
    count_call("cilium", ep ? nullptr : &ep.error());
    if (ep && cilium::plan_label_write(*ep, desired).action == cilium::LabelWriteAction::none &&
        ep->identity_id != 0 && !cilium::is_init(*ep)) {
      return std::move(*ep);
    }
    if (!ep && ep.error().code == 404) {
      return std::unexpected(outcome(ReplyStatus::kPending, "endpoint vanished before its identity resolved", true));
    }
    if (clock_.now() + delay >= deadline) {
      return std::unexpected(outcome(ReplyStatus::kPending, "identity not resolved yet", true));
    }
    clock_.sleep_for(delay, {});
    delay = std::min(delay * 2, std::chrono::milliseconds{500});
  }
}

void AllocLabeler::record(const WorkItem& item, const cilium::Endpoint& ep, const labels::AllocationIdentity& identity,
                          const labels::LabelSet& desired) {
  state::LabeledInfo info{ep.id, ep.identity_id, desired.to_strings(), rfc3339(clock_.wall_now())};
  // Only this allocation's line: decoding and re-encoding the whole document for every label
  // made labeling a full node quadratic (1,000 endpoints at startup: ~11 s of CPU).
  auto ok = state_.update_entry(item.alloc_id, [&](std::optional<state::StateEntry>& entry) {
    const bool inserted = !entry;
    if (inserted) entry.emplace();
    state::StateEntry& e = *entry;
    if (inserted) {
      // Rebuilt from what the labeler saw: the plugin never recorded it, or the file was lost.
      e.ifname = item.ifname;
      e.ips = item.ips;
      if (e.ips.empty()) {
        for (const auto& a : ep.addressing) {
          if (!a.ipv4.empty()) e.ips.push_back(a.ipv4);
          if (!a.ipv6.empty()) e.ips.push_back(a.ipv6);
        }
      }
      e.added_at = rfc3339(clock_.wall_now());
      e.added_unix_ms = unix_millis(clock_.wall_now());
    }
    if (e.nomad.namespace_.empty()) e.nomad.namespace_ = identity.nomad_namespace;
    if (e.nomad.job_id.empty()) e.nomad.job_id = identity.job_id;
    if (e.nomad.group.empty()) e.nomad.group = identity.task_group;
    // A re-check that changed nothing keeps the original time: `state` shows when labeling
    // happened, not when it was last looked at.
    if (e.labeled && e.labeled->endpoint_id == info.endpoint_id && e.labeled->labels == info.labels &&
        (e.labeled->identity == info.identity || info.identity == 0)) {
      return false;
    }
    e.labeled = info;
    return true;
  });
  if (!ok) {
    metrics_.inc("cilium_nomad_errors_total", "kind=\"state_write\"");
    log_->error("state write failed: alloc={} error=\"{}\"", item.alloc_id, ok.error().message);
  }
}

LabelOutcome AllocLabeler::label(const WorkItem& item) {
  if (!is_valid_alloc_id(item.alloc_id)) return outcome(ReplyStatus::kFailed, "invalid allocation ID", false);
  const MonoTime deadline = clock_.now() + settings_.item_budget;

  auto identity = resolve_identity(item, deadline);
  if (!identity) return identity.error();
  auto desired = labels::derive_labels(identity->identity, settings_.policy);
  if (!labels::is_complete(identity->identity)) {
    return outcome(ReplyStatus::kFailed, "allocation has no namespace, job or group to label with", false);
  }

  // A resync's snapshot may predate a notification's work on the same allocation (the list was
  // read, then the queue took a while): look again rather than write from it a second time.
  const bool fresh = item.endpoint && !labeled_since(item.alloc_id, item.endpoint_seen_at);
  auto ep = fresh ? std::expected<cilium::Endpoint, LabelOutcome>(*item.endpoint) : find_endpoint(item, deadline);
  if (!ep) return ep.error();

  bool wrote = false;
  auto written = write_labels(item, std::move(*ep), desired, deadline, wrote);
  if (!written) return written.error();

  cilium::Endpoint final_ep = std::move(*written);
  if (item.confirm && (wrote || cilium::is_init(final_ep) || final_ep.identity_id == 0)) {
    auto confirmed = confirm(cilium::EndpointRef::local(static_cast<std::uint16_t>(final_ep.id)), desired, deadline);
    if (!confirmed) {
      auto o = confirmed.error();
      o.wrote = wrote;
      return o;
    }
    final_ep = std::move(*confirmed);
  } else if (wrote) {
    final_ep.identity_id = 0;  // written, not yet seen resolved: the next reconcile fills it in
  }
  record(item, final_ep, identity->identity, desired);
  note_labeled(item.alloc_id);

  LabelOutcome o;
  o.status = ReplyStatus::kLabeled;
  o.endpoint_id = final_ep.id;
  o.identity = final_ep.identity_id;
  o.labels = desired.to_strings();
  o.wrote = wrote;
  o.degraded = identity->degraded;
  o.retry = identity->degraded;
  if (wrote) {
    metrics_.inc("cilium_nomad_endpoints_labeled_total", std::string("source=\"") +
                                                           std::string(to_string(item.source)) + "\"");
  }
  return o;
}

}  // namespace cn::labeler
