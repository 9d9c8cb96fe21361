#include "labeler/policy/policy_distributor.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "common/policy/policy_delegation.h"
#include "common/policy/policy_document.h"
#include "common/util/atomic_file.h"
#include "common/util/json_read.h"
#include "labeler/policy/policy_mode.h"
#include "labeler/watch/watcher.h"

namespace cn::labeler::policy {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Nomad's one answer proving a variable is gone (api/variables.go ErrVariableNotFound): a 404
// from anything else (a proxy, an old Nomad without the API) proves nothing.
bool proves_deleted(const Error& error) {
  return error.kind == ErrorKind::not_found && error.status == 404 &&
         error.message.find("variable not found") != std::string::npos;
}

// Every namespace in one list (nomad/variables_endpoint.go listAllVariables in hashicorp/nomad):
// Nomad drops the variables the token may not list, silently, so a token that reads only some
// namespaces sees their policies and no error.
constexpr std::string_view kAllNamespaces = "*";

// "<pointer>: <rule>" of a refusal -> its two halves ("/" when the message has no pointer).
std::pair<std::string, std::string> split_refusal(const std::string& message) {
  const auto colon = message.find(": ");
  if (!message.starts_with('/') || colon == std::string::npos) return {"/", message};
  return {message.substr(0, colon), message.substr(colon + 2)};
}

}  // namespace

PolicyDistributor::PolicyDistributor(PolicySettings settings, nomad::NomadApi& nomad, Clock& clock,
                                     Metrics& metrics, CallRecorder& calls,
                                     std::shared_ptr<spdlog::logger> log, cilium::CiliumApi* cilium)
    : settings_(std::move(settings)),
      nomad_(nomad),
      clock_(clock),
      metrics_(metrics),
      calls_(calls),
      log_(log ? std::move(log) : spdlog::default_logger()),
      dir_(settings_.dir),
      list_prefix_(cn::policy::policy_list_prefix(settings_.prefix)),
      cilium_(cilium) {
  options_ = cilium::resolve_agent_options({}, settings_.agent_option_overrides);
  status_.agent_options = options_.describe();
  status_.nomad_namespace = settings_.nomad_namespace;
  status_.prefix = settings_.prefix;
  status_.directory = settings_.dir;
}

Deadline PolicyDistributor::call_deadline(std::stop_token stop) const {
  return Deadline{clock_.now() + settings_.call_timeout, std::move(stop)};
}

PolicyStatus PolicyDistributor::status() const {
  MutexLock lock(mu_);
  return status_;
}

bool PolicyDistributor::has_pending() const {
  MutexLock lock(mu_);
  return std::any_of(status_.policies.begin(), status_.policies.end(),
                     [](const auto& p) { return p.second.state == PolicyState::pending; });
}

void PolicyDistributor::set_state(PolicyRecord& rec, PolicyState state, std::string reason) {
  if (rec.state == state && rec.reason == reason) return;
  rec.state = state;
  rec.reason = std::move(reason);
  rec.changed_unix_ms = unix_millis(clock_.wall_now());
}

void PolicyDistributor::refresh_agent_options(std::stop_token stop) {
  std::string unasked_reason;
  if (cilium_) {
    auto reported = cilium_->agent_options(call_deadline(stop));
    calls_.record(Peer::cilium, reported);
    if (reported) {
      last_reported_ = *reported;
    } else {
      unasked_reason = reported.error().message;
    }
  } else {
    unasked_reason = "the agent is not asked";
  }
  // An answer that failed now keeps what the agent said last: its options change only when it
  // restarts, and a restart is what this pass may be racing.
  const cilium::ReportedAgentOptions reported =
      last_reported_.value_or(cilium::ReportedAgentOptions{});
  std::string assumed;
  for (const auto& row : cilium::agent_option_table()) {
    const auto i = static_cast<std::size_t>(row.option);
    if (reported[i] || settings_.agent_option_overrides[i]) continue;
    assumed += (assumed.empty() ? "" : ",") + std::string(row.flag);
  }
  if (!assumed.empty() && assumed != assumed_logged_) {
    log_->info(
        "agent options assumed at upstream defaults options={} reason=\"{}\"", assumed,
        unasked_reason.empty() ? "not in the agent's GET /v1/config answer" : unasked_reason);
  }
  assumed_logged_ = assumed;
  auto next = cilium::resolve_agent_options(reported, settings_.agent_option_overrides);
  if (next == options_) return;
  options_ = next;
  recheck_ = true;
  log_->info("agent options changed, policies re-checked options=\"{}\"", options_.describe());
  MutexLock lock(mu_);
  status_.agent_options = options_.describe();
}

std::vector<cn::policy::PolicyRequirement> PolicyDistributor::file_unmet(
    const OwnedFile& file) const {
  // Written by this labeler as JSON; anything else is not ours to judge here.
  auto doc = json::parse_json_text(file.content, "policy file");
  if (!doc) return {};
  return cn::policy::unmet_requirements(cn::policy::policy_requirements(*doc), options_);
}

PolicyMode PolicyDistributor::file_mode(const OwnedFile& file) {
  auto doc = json::parse_json_text(file.content, "policy file");
  return doc ? policy_mode_of(*doc) : PolicyMode::enforce;
}

void PolicyDistributor::mark_unsupported(const nomad::VariableMeta& meta, std::uint64_t index,
                                         const std::vector<cn::policy::PolicyRequirement>& unmet,
                                         const OwnedFile* file, PolicyRecord& rec) {
  const auto& first = unmet.front();
  const std::string option(cilium::agent_option_info(first.option).flag);
  std::string reason = cn::policy::requirement_reason(first, options_);
  bool removed = false;
  if (file && !file_unmet(*file).empty()) {
    // The last good file needs an option the agent lacks too (the agent's options changed):
    // leaving it would stop the agent at its next start.
    if (auto gone = dir_.remove(file->name); gone) {
      removed = true;
      rec.file.clear();
      rec.applied_index = 0;
      metrics_.policy_last_apply_timestamp().Set(
          static_cast<double>(unix_millis(clock_.wall_now())) / 1000.0);
    } else {
      metrics_.policy_errors(PolicyErrorReason::remove).Increment();
      log_->warn("policy removal failed file={} error=\"{}\"", file->path, gone.error().message);
    }
  }
  if (rec.state != PolicyState::unsupported || rec.reason != reason || removed) {
    log_->warn(
        "policy unsupported by the local agent, not written namespace={} path={} modify_index={} "
        "pointer={} option={} kept_file={} removed_file={} reason=\"{}\"",
        meta.nomad_namespace, meta.path, index, first.pointer, option, file != nullptr && !removed,
        removed, reason);
  }
  rec.option = option;
  set_state(rec, PolicyState::unsupported, std::move(reason));
}

Result<std::uint64_t> PolicyDistributor::reconcile(std::stop_token stop) {
  auto listed = nomad_.variables(kAllNamespaces, list_prefix_, 0, settings_.wait,
                                 clock_.now() + settings_.call_timeout, stop);
  calls_.record(Peer::nomad, listed);
  if (!listed) {
    metrics_.policy_errors(PolicyErrorReason::list).Increment();
    return std::unexpected(listed.error());
  }
  refresh_agent_options(stop);
  apply(listed->value, stop);
  return listed->index;
}

void PolicyDistributor::apply(const std::vector<nomad::VariableMeta>& listed,
                              std::stop_token stop) {
  auto files = dir_.owned_files();
  if (!files) {
    // Without a view of the directory nothing can be decided safely: no write, no removal.
    metrics_.policy_errors(PolicyErrorReason::write).Increment();
    log_->warn("policy directory unreadable dir={} error=\"{}\"", settings_.dir,
               files.error().message);
    return;
  }
  std::set<std::string> listed_names;
  std::set<std::string> listed_paths;
  // Files of ours as this pass leaves them: the --policy-max-count bound counts new ones too.
  std::size_t owned_count = files->size();
  const bool recheck = std::exchange(recheck_, false);
  // The operator's namespace first: a file of the previous release named after one of its
  // variables ("nomad-team-a.web.yaml" for "cilium/policies/team-a/web") may bear the name a
  // team's variable now maps to, and is migrated out of the way before that one is written.
  std::vector<const nomad::VariableMeta*> order;
  order.reserve(listed.size());
  for (const auto& meta : listed) order.push_back(&meta);
  std::stable_partition(order.begin(), order.end(), [&](const nomad::VariableMeta* m) {
    return m->nomad_namespace == settings_.nomad_namespace;
  });
  for (const nomad::VariableMeta* listed_meta : order) {
    const nomad::VariableMeta& meta = *listed_meta;
    if (stop.stop_requested()) return;
    // Nomad's list matches the prefix as a string; a proxy or an older fake may still answer
    // variables beside it ("cilium/policies-old/x"), which are someone else's, not invalid ones.
    if (!meta.path.starts_with(list_prefix_) || meta.nomad_namespace.empty()) continue;
    const std::string key = policy_record_key(meta.nomad_namespace, meta.path);
    listed_paths.insert(key);
    auto name = cn::policy::policy_name_from_path(settings_.prefix, meta.path);
    Result<std::string> stem = name ? cn::policy::policy_file_stem(meta.nomad_namespace, *name)
                                    : Result<std::string>(std::unexpected(name.error()));
    PolicyRecord rec;
    {
      MutexLock lock(mu_);
      rec = status_.policies[key];
    }
    rec.nomad_namespace = meta.nomad_namespace;
    rec.variable_path = meta.path;
    // New agent options: what was written or held back is looked at again.
    if (recheck && (rec.state == PolicyState::applied || rec.state == PolicyState::unsupported))
      rec.seen_index = 0;
    if (!stem) {
      if (rec.seen_index != meta.modify_index || rec.state != PolicyState::invalid) {
        metrics_.policy_errors(PolicyErrorReason::invalid).Increment();
        log_->warn("policy refused namespace={} path={} reason=\"{}\"", meta.nomad_namespace,
                   meta.path, stem.error().message);
      }
      rec.seen_index = meta.modify_index;
      set_state(rec, PolicyState::invalid, stem.error().message);
    } else {
      listed_names.insert(*stem);
      rec.name = *stem;
      // The previous release's file of this variable stays ours until the new one replaces it.
      const OwnedFile* legacy = legacy_file(meta, *name, *stem, *files);
      if (legacy) listed_names.insert(legacy->name);
      apply_variable(meta, *stem, legacy, *files, owned_count, rec, stop);
    }
    MutexLock lock(mu_);
    status_.policies[key] = std::move(rec);
  }
  remove_unlisted(*files, listed_names, stop);
  {
    // A record of a variable no longer listed and with no file of ours has nothing left to show.
    MutexLock lock(mu_);
    std::erase_if(status_.policies, [&](const auto& p) {
      return !listed_paths.contains(p.first) &&
             (p.second.name.empty() || !files->contains(p.second.name));
    });
  }
  publish();
  if (on_pass_) on_pass_();
}

const OwnedFile* PolicyDistributor::legacy_file(
    const nomad::VariableMeta& meta, const std::string& name, const std::string& stem,
    const std::map<std::string, OwnedFile>& files) const {
  // The previous release read the operator's namespace only and named files nomad-<name>.yaml;
  // its annotations say which variable a file holds, so only a file that names this very
  // variable is taken for its old copy.
  if (meta.nomad_namespace != settings_.nomad_namespace || name == stem) return nullptr;
  const auto it = files.find(name);
  if (it == files.end() || !it->second.source) return nullptr;
  const auto& source = *it->second.source;
  if (source.nomad_namespace != meta.nomad_namespace || source.variable_path != meta.path)
    return nullptr;
  return &it->second;
}

void PolicyDistributor::retire_legacy(const OwnedFile* legacy, const nomad::VariableMeta& meta) {
  // Only after the new file holds a good version: the policy is never missing from the
  // directory, and for a moment both carry it (the same rules, which the agent merges).
  if (!legacy) return;
  if (auto gone = dir_.remove(legacy->name); !gone) {
    metrics_.policy_errors(PolicyErrorReason::remove).Increment();
    log_->warn("policy removal failed file={} error=\"{}\"", legacy->path, gone.error().message);
    return;
  }
  log_->info("policy file renamed, previous release's removed namespace={} path={} file={}",
             meta.nomad_namespace, meta.path, legacy->path);
}

void PolicyDistributor::apply_variable(const nomad::VariableMeta& meta, const std::string& name,
                                       const OwnedFile* legacy,
                                       const std::map<std::string, OwnedFile>& files,
                                       std::size_t& owned_count, PolicyRecord& rec,
                                       std::stop_token stop) {
  const auto found = files.find(name);
  const OwnedFile* file = found == files.end() ? nullptr : &found->second;
  // What a refusal keeps: the file of this name, else the previous release's.
  const OwnedFile* last_good = file ? file : legacy;
  const auto holds_this_variable = [&](const OwnedFile* f) {
    return f && f->source && f->source->nomad_namespace == meta.nomad_namespace &&
           f->source->variable_path == meta.path;
  };
  const auto file_holds = [&](std::uint64_t index) {
    return holds_this_variable(file) && file->source->modify_index == index;
  };
  // Nothing moved and the file still holds what we wrote: the common case, no Nomad call.
  if (rec.seen_index == meta.modify_index && rec.state != PolicyState::pending &&
      (rec.state == PolicyState::invalid || rec.state == PolicyState::unsupported ||
       rec.state == PolicyState::not_delegated || file_holds(rec.applied_index)) &&
      !(legacy && file_holds(rec.applied_index))) {
    return;
  }
  // A restart finds the directory already current: no read, no rewrite, unless the file needs
  // an option the agent now lacks.
  if (file_holds(meta.modify_index)) {
    rec.seen_index = meta.modify_index;
    if (auto unmet = file_unmet(*file); !unmet.empty()) {
      rec.file = file->path;
      return mark_unsupported(meta, meta.modify_index, unmet, file, rec);
    }
    retire_legacy(legacy, meta);
    rec.applied_index = meta.modify_index;
    rec.file = file->path;
    rec.option.clear();
    rec.mode = std::string(to_string(file_mode(*file)));
    set_state(rec, PolicyState::applied, "");
    return;
  }
  rec.seen_index = meta.modify_index;
  if (file && file->source && !holds_this_variable(file)) {
    // Another variable's file of the previous release bears this name; it is migrated first
    // (apply() takes the operator's namespace first), and this one waits for the name.
    set_state(rec, PolicyState::pending,
              "the file name is held by " + file->source->nomad_namespace + ":" +
                  file->source->variable_path + " until its file is renamed");
    return;
  }

  auto var = nomad_.variable(meta.nomad_namespace, meta.path, call_deadline(stop));
  calls_.record(Peer::nomad, var);
  if (!var) {
    // Deleted between the list and the read: the next listing no longer has it, and the removal
    // rule takes it from there.
    metrics_.policy_errors(PolicyErrorReason::read).Increment();
    set_state(rec, PolicyState::pending, "cannot read the variable: " + var.error().message);
    log_->warn("policy read failed namespace={} path={} error=\"{}\"{}", meta.nomad_namespace,
               meta.path, var.error().message, remedy_note(var.error()));
    return;
  }
  if (last_good) rec.file = last_good->path;
  const auto refuse = [&](std::string reason) {
    if (rec.state != PolicyState::invalid || rec.reason != reason) {
      metrics_.policy_errors(PolicyErrorReason::invalid).Increment();
      log_->warn("policy refused namespace={} path={} modify_index={} kept_file={} reason=\"{}\"",
                 meta.nomad_namespace, meta.path, var->meta.modify_index, last_good != nullptr,
                 reason);
    }
    set_state(rec, PolicyState::invalid, std::move(reason));
  };
  const auto item = var->items.find("policy");
  if (item == var->items.end()) return refuse("the variable has no \"policy\" item");
  if (item->second.size() > cn::policy::kMaxPolicyBytes) {
    return refuse("the policy item is " + std::to_string(item->second.size()) +
                  " bytes; the limit is " + std::to_string(cn::policy::kMaxPolicyBytes));
  }
  if (!last_good && owned_count >= settings_.max_policies) {
    return refuse("the directory already holds " + std::to_string(owned_count) +
                  " policies of ours; the limit (--policy-max-count) is " +
                  std::to_string(settings_.max_policies));
  }
  const cn::policy::PolicySource source{meta.nomad_namespace, meta.path, var->meta.modify_index};
  auto object = cn::policy::policy_object_from_item(
      item->second, std::string(cn::policy::kFilePrefix) + name, source);
  if (!object) return refuse(object.error().message);
  if (auto delegated =
          cn::policy::check_delegation(*object, meta.nomad_namespace, settings_.nomad_namespace);
      !delegated) {
    auto [pointer, rule] = split_refusal(delegated.error().message);
    if (rec.state != PolicyState::not_delegated || rec.reason != delegated.error().message) {
      metrics_.policy_errors(PolicyErrorReason::not_delegated).Increment();
      log_->warn(
          "policy not delegated to its namespace, not written namespace={} path={} "
          "modify_index={} pointer={} kept_file={} reason=\"{}\"",
          meta.nomad_namespace, meta.path, var->meta.modify_index, pointer, last_good != nullptr,
          rule);
    }
    return set_state(rec, PolicyState::not_delegated, delegated.error().message);
  }
  auto mode = parse_policy_mode(var->items);
  if (!mode) return refuse(mode.error().message);
  mark_policy_mode(*object, *mode);
  if (auto unmet =
          cn::policy::unmet_requirements(cn::policy::policy_requirements(*object), options_);
      !unmet.empty()) {
    return mark_unsupported(meta, var->meta.modify_index, unmet, last_good, rec);
  }

  // Compact: the file stays about the size of the item Nomad accepted (pretty-printing a 39 KB
  // item gave 106 KB); JSON is YAML, and the agent reads it as such.
  const std::string content = object->dump() + "\n";
  if (content.size() > cn::policy::kMaxPolicyFileBytes) {
    return refuse("the policy item is " + std::to_string(item->second.size()) +
                  " bytes and its file would be " + std::to_string(content.size()) +
                  " bytes; the file limit is " + std::to_string(cn::policy::kMaxPolicyFileBytes));
  }
  bool changed = false;
  if (auto written = dir_.write(name, content, changed); !written) {
    metrics_.policy_errors(PolicyErrorReason::write).Increment();
    set_state(rec, PolicyState::pending, "cannot write the file: " + written.error().message);
    log_->warn("policy write failed namespace={} path={} error=\"{}\"", meta.nomad_namespace,
               meta.path, written.error().message);
    return;
  }
  if (!last_good && rec.file.empty()) ++owned_count;
  retire_legacy(legacy, meta);
  rec.applied_index = var->meta.modify_index;
  rec.file = dir_.file_path(name);
  rec.option.clear();
  rec.mode = std::string(to_string(*mode));
  set_state(rec, PolicyState::applied, "");
  if (changed) {
    rec.changed_unix_ms = unix_millis(clock_.wall_now());
    metrics_.policy_last_apply_timestamp().Set(static_cast<double>(rec.changed_unix_ms) / 1000.0);
    log_->info("policy applied namespace={} path={} modify_index={} file={}", meta.nomad_namespace,
               meta.path, var->meta.modify_index, rec.file);
  }
}

void PolicyDistributor::remove_unlisted(const std::map<std::string, OwnedFile>& files,
                                        const std::set<std::string>& listed_names,
                                        std::stop_token stop) {
  for (const auto& [name, file] : files) {
    if (listed_names.contains(name) || stop.stop_requested()) continue;
    if (!file.source) {
      log_->warn("policy file kept: not written by this labeler or unreadable file={}", file.path);
      continue;
    }
    auto var = nomad_.variable(file.source->nomad_namespace, file.source->variable_path,
                               call_deadline(stop));
    calls_.record(Peer::nomad, var);
    if (var) {
      // Missing from the list yet readable: a list filtered by the token's ACL, or a variable
      // outside the prefix now. Either way it is not deleted.
      log_->debug("policy file kept: its variable still exists file={} path={}", file.path,
                  file.source->variable_path);
      continue;
    }
    if (!proves_deleted(var.error())) {
      log_->warn("policy file kept: cannot confirm its variable is gone file={} error=\"{}\"",
                 file.path, var.error().message);
      continue;
    }
    if (auto removed = dir_.remove(name); !removed) {
      metrics_.policy_errors(PolicyErrorReason::remove).Increment();
      log_->warn("policy removal failed file={} error=\"{}\"", file.path, removed.error().message);
      continue;
    }
    metrics_.policy_last_apply_timestamp().Set(static_cast<double>(unix_millis(clock_.wall_now())) /
                                               1000.0);
    log_->info("policy removed namespace={} path={} file={}", file.source->nomad_namespace,
               file.source->variable_path, file.path);
    MutexLock lock(mu_);
    status_.policies.erase(
        policy_record_key(file.source->nomad_namespace, file.source->variable_path));
  }
}

void PolicyDistributor::publish() {
  std::string text;
  {
    MutexLock lock(mu_);
    int applied = 0;
    int invalid = 0;
    std::map<std::string, int> unsupported;
    for (const auto& row : cilium::agent_option_table()) unsupported[std::string(row.flag)] = 0;
    for (const auto& [path, rec] : status_.policies) {
      if (rec.state == PolicyState::applied) ++applied;
      // Refused either way: one gauge for the alert (docs/alerting.md), the state tells which.
      if (rec.state == PolicyState::invalid || rec.state == PolicyState::not_delegated) ++invalid;
      if (rec.state == PolicyState::unsupported) ++unsupported[rec.option];
    }
    metrics_.policies_applied().Set(applied);
    metrics_.policies_invalid().Set(invalid);
    for (const auto& [option, n] : unsupported) metrics_.policies_unsupported(option).Set(n);
    // The status file changes only with the policies, not with every pass. Compared as records,
    // not as text: with thousands of policies, rendering the file to compare was most of a pass.
    if (settings_.status_file.empty()) return;
    const long long updated = std::exchange(status_.updated_unix_ms, 0);
    if (last_published_ == status_) {
      status_.updated_unix_ms = updated;
      return;
    }
    last_published_ = status_;
    status_.updated_unix_ms = unix_millis(clock_.wall_now());
    text = to_text(status_);
  }
  if (auto written = replace_file_atomically(settings_.status_file, text, 0644); !written) {
    log_->warn("policy status file not written file={} error=\"{}\"", settings_.status_file,
               written.error().message);
  }
}

void PolicyDistributor::run(std::stop_token stop) {
  // A pass that throws (memory, a bug) costs that pass, never the distributor: the next one
  // starts over from a full listing after a pause.
  BackoffStrategy restarts(settings_.backoff, jitter_);
  while (!stop.stop_requested()) {
    try {
      watch(stop);
      return;
    } catch (const std::exception& e) {
      metrics_.errors(ErrorKindLabel::exception).Increment();
      log_->error("policy distributor threw error=\"{}\"", e.what());
      clock_.sleep_for(restarts.next_delay(), stop);
    }
  }
}

void PolicyDistributor::watch(std::stop_token stop) {
  if (int removed = dir_.remove_temp_files(); removed > 0)
    log_->warn("removed temp files of interrupted policy writes dir={} count={}", settings_.dir,
               removed);
  std::uint64_t index = 0;
  BackoffStrategy list_backoff(settings_.backoff, jitter_);  // after failed lists
  // Passes in a row that left a policy pending ask again sooner, on the same backoff.
  BackoffStrategy pending_backoff(settings_.backoff, jitter_);
  MonoTime next_full = clock_.now();
  while (!stop.stop_requested()) {
    const MonoTime now = clock_.now();
    const bool full = index == 0 || now >= next_full;
    // The blocking wait ends in time for the next resync, and soon when a policy is pending.
    seconds wait = settings_.wait;
    if (settings_.resync_interval.count() > 0)
      wait = std::min(wait, std::chrono::ceil<seconds>(next_full - now));
    if (has_pending()) {
      wait = std::min(wait, std::chrono::ceil<seconds>(pending_backoff.next_delay()));
    } else {
      pending_backoff.reset();
    }
    wait = std::max(wait, seconds{1});

    // A blocking list is held by Nomad up to wait + wait/16 of jitter: its deadline must outlast
    // that, or every quiet watch fails and backs off, and a write waits out the backoff.
    const MonoTime deadline =
        full ? now + settings_.call_timeout : now + wait + wait / 16 + settings_.call_timeout;
    auto listed =
        nomad_.variables(kAllNamespaces, list_prefix_, full ? 0 : index, wait, deadline, stop);
    calls_.record(Peer::nomad, listed);
    if (!listed) {
      if (stop.stop_requested()) return;
      metrics_.policy_errors(PolicyErrorReason::list).Increment();
      const auto delay = list_backoff.next_delay();
      (list_backoff.retries() == 1
           ? log_->warn("policy list failed error=\"{}\" retry_ms={}{}", listed.error().message,
                        delay.count(), remedy_note(listed.error()))
           : log_->debug("policy list failed error=\"{}\" retry_ms={}", listed.error().message,
                         delay.count()));
      clock_.sleep_for(delay, stop);
      continue;
    }
    list_backoff.reset();
    if (!full && listed->index < index) {
      // A restored or rebuilt Nomad counts from a lower index: start over from a full listing.
      log_->warn("policy list index went back, full reconcile: from={} to={}", index,
                 listed->index);
      index = 0;
      continue;
    }
    const bool moved = full || listed->index != index;
    if (full) refresh_agent_options(stop);
    if (moved || has_pending()) apply(listed->value, stop);
    if (full && settings_.resync_interval.count() > 0) next_full = now + settings_.resync_interval;
    if (full && settings_.resync_interval.count() == 0) next_full = MonoTime::max();
    if (!moved && clock_.now() - now < settings_.min_quiet_interval)
      clock_.sleep_for(settings_.min_quiet_interval, stop);
    index = std::max<std::uint64_t>(listed->index, 1);
  }
}

}  // namespace cn::labeler::policy
