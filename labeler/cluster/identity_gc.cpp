#include "labeler/cluster/identity_gc.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "labeler/cluster/fenced_deletes.h"
#include "labeler/cluster/fenced_txn.h"
#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/kvstore_layout.h"

namespace cn::labeler::cluster {
namespace {

// The label strings that value keys reference, kept as 64-bit hashes so a pass over 50,000
// identities holds 400 KB rather than every label string. A collision can only make an unused
// identity look used (kept one more pass), never the reverse.
std::uint64_t label_hash(std::string_view labels) {
  return std::hash<std::string_view>{}(labels);
}

}  // namespace

IdentityGc::IdentityGc(etcd::EtcdApi& etcd, Clock& clock, IdentityGcOptions options,
                       std::shared_ptr<spdlog::logger> log)
    : etcd_(etcd),
      clock_(clock),
      options_(std::move(options)),
      log_(log ? std::move(log) : spdlog::default_logger()),
      limiter_(clock, options_.deletions_per_minute) {}

void IdentityGc::set_range(Result<IdentityRange> range) {
  const bool same =
      range.has_value() == options_.range.has_value() && (!range || *range == *options_.range);
  if (same) return;
  if (range) range_refusal_logged_ = false;
  forget();
  options_.range = std::move(range);
}

IdentityGcReport IdentityGc::run_pass(const LeaderFence& fence, std::stop_token stop) {
  IdentityGcReport report;
  ScanCounters counters;
  const auto finish = [&](PassEnd end, std::string detail) {
    report.end = end;
    report.detail = std::move(detail);
    report.pages = counters.pages;
    report.etcd_requests += counters.requests;
    if (end != PassEnd::complete) {
      log_->warn("identity gc pass ended early: end={} detail=\"{}\" deleted={}", to_string(end),
                 report.detail, report.deleted);
    }
    return report;
  };

  // 0. Which identities are this cluster's. Unknown: nothing is read, nothing is deleted.
  if (!options_.range) {
    if (!range_refusal_logged_) {
      log_->error(
          "identity gc refuses to run: this cluster's identity range is unknown: error=\"{}\" "
          "fix=\"set --cluster-id and --max-connected-clusters as the agent's\"",
          options_.range.error().message);
      range_refusal_logged_ = true;
    }
    report.end = PassEnd::doubt;
    report.detail = "identity range unknown: " + options_.range.error().message;
    return report;
  }
  const IdentityRange& range = *options_.range;
  report.range_size = range.size();

  // 1. What the labelers report in use. The first answer's revision pins every later page.
  // A report that cannot be parsed is one node's bug (or a format change mid-upgrade): it does
  // not stop the GC for everyone. That node's identities are then kept by the evidence the
  // operator relies on alone, its agent's user keys, which step 3 requires for every identity
  // anyway. A read that fails is still doubt: then nobody's report is known.
  std::unordered_set<std::uint64_t> in_use;
  auto read = scan_prefix(etcd_, clock_, options_.scan, in_use_prefix(options_.cluster_name),
                          report.revision, counters, stop, [&](const etcd::KeyValue& kv) {
                            ++report.in_use_reports;
                            auto parsed = parse_in_use_report(kv.value);
                            if (!parsed) {
                              ++report.unreadable_in_use_reports;
                              log_->warn(
                                  "identity gc: unreadable in-use report, its node's identities "
                                  "kept by their user keys only: key=\"{}\" error=\"{}\"",
                                  kv.key, parsed.error().message);
                              return;
                            }
                            in_use.insert(parsed->identities.begin(), parsed->identities.end());
                          });
  if (!read) return finish(scan_stop(read.error()), read.error().message);
  report.in_use_reports_read = true;

  // 2. Every value key: the label strings and IDs in use on some node.
  // ID -> the value keys naming it; label hash -> the value keys under it (the users counted for
  // the headroom), and whether one of them holds no ID (then no duplicate of it is collected).
  std::unordered_map<std::uint64_t, GcLabelUse> used_labels;
  std::unordered_map<std::uint64_t, std::int64_t> used_ids;
  read = scan_prefix(etcd_, clock_, options_.scan, kvstore::kIdentityValuePrefix, report.revision,
                     counters, stop, [&](const etcd::KeyValue& kv) {
                       ++report.value_keys;
                       auto id = kvstore::parse_identity_number(kv.value);
                       if (id) ++used_ids[*id];
                       auto value_key = kvstore::parse_value_key(kv.key);
                       if (!value_key) {
                         ++report.value_keys_unknown_shape;
                         return;
                       }
                       GcLabelUse& use = used_labels[label_hash(value_key->labels)];
                       ++use.users;
                       if (!id) use.not_an_id = true;
                     });
  if (!read) return finish(scan_stop(read.error()), read.error().message);

  // 3. Every master key: referenced, reported, or a candidate.
  std::unordered_map<std::uint64_t, etcd::Revision> candidates;
  std::unordered_map<std::uint64_t, etcd::Revision> in_range;
  std::vector<Deletion> confirmed;
  // In range, unreported, named by no value key's ID but with value keys under their label
  // string: a duplicate's unused copy if another master key holds the string (known only once
  // every master key was read), else referenced as every release has it.
  std::vector<Deletion> label_only;
  read = scan_prefix(
      etcd_, clock_, options_.scan, kvstore::kIdentityIdPrefix, report.revision, counters, stop,
      [&](const etcd::KeyValue& kv) {
        ++report.scanned;
        auto id = kvstore::parse_master_key(kv.key);
        if (!id || !kvstore::is_label_string(kv.value)) {
          ++report.skipped_unknown_shape;
          log_->debug("identity gc: unknown master key shape, skipped: key=\"{}\"", kv.key);
          return;
        }
        const std::uint64_t hash = label_hash(kv.value);
        const auto by_label = used_labels.find(hash);
        // Master keys per used label string, in any range: a duplicate may be another
        // cluster's allocation of the same labels.
        if (by_label != used_labels.end()) ++by_label->second.masters;
        if (!range.contains(*id)) {
          ++report.skipped_out_of_range;
          return;
        }
        ++report.in_range;
        in_range.emplace(*id, kv.create_revision);
        auto before = seen_.find(*id);
        if (seen_baseline_ && (before == seen_.end() || before->second != kv.create_revision)) {
          ++report.first_seen;
        }
        // A user names the label string or the ID; a key doing both counts once.
        const auto by_id = used_ids.find(*id);
        const std::int64_t id_users = by_id == used_ids.end() ? 0 : by_id->second;
        const std::int64_t label_users = by_label == used_labels.end() ? 0 : by_label->second.users;
        const std::int64_t users = std::max(label_users, id_users);
        report.users_min = report.in_range == 1 ? users : std::min(report.users_min, users);
        report.users_max = std::max(report.users_max, users);
        report.users_total += users;
        if (id_users > 0) {
          ++report.referenced;
          return;
        }
        if (in_use.contains(*id)) {
          ++report.reported_in_use;
          return;
        }
        if (label_users > 0) {
          label_only.push_back(Deletion{*id, kv.value, kv.mod_revision, true});
          return;
        }
        add_candidate(Deletion{*id, {}, kv.mod_revision, false}, kv.value, candidates, confirmed,
                      report);
      });
  if (!read) return finish(scan_stop(read.error()), read.error().message);
  for (auto& deletion : label_only) {
    const GcLabelUse& use = used_labels.at(label_hash(deletion.labels));
    if (use.masters < 2 || use.not_an_id) {
      ++report.referenced;
      continue;
    }
    ++report.duplicate_candidates;
    std::string labels = std::move(deletion.labels);
    add_candidate(std::move(deletion), labels, candidates, confirmed, report);
  }

  // Every read complete: this pass is the one the next pass confirms against.
  report.counted = true;
  remembered_ = std::move(candidates);
  seen_ = std::move(in_range);
  seen_baseline_ = true;
  delete_confirmed(fence, confirmed, report, stop);
  if (report.end != PassEnd::complete) return finish(report.end, report.detail);
  log_->info(
      "identity gc pass: range={}-{} scanned={} in_range={} range_size={} first_seen={} "
      "referenced={} candidates={} duplicates={} deleted={} would_delete={} refused={} "
      "unreadable_reports={} "
      "requests={}",
      range.min, range.max, report.scanned, report.in_range, report.range_size, report.first_seen,
      report.referenced, report.candidates, report.duplicate_candidates, report.deleted,
      report.would_delete, report.refused, report.unreadable_in_use_reports,
      report.etcd_requests + counters.requests);
  return finish(PassEnd::complete, {});
}

void IdentityGc::add_candidate(Deletion deletion, std::string_view labels,
                               std::unordered_map<std::uint64_t, etcd::Revision>& candidates,
                               std::vector<Deletion>& confirmed, IdentityGcReport& report) const {
  ++report.candidates;
  candidates.emplace(deletion.id, deletion.mod_revision);
  auto seen = remembered_.find(deletion.id);
  if (seen == remembered_.end() || seen->second != deletion.mod_revision) return;
  ++report.confirmed;
  deletion.labels = std::string(labels);
  confirmed.push_back(std::move(deletion));
}

void IdentityGc::delete_confirmed(const LeaderFence& fence, std::vector<Deletion>& confirmed,
                                  IdentityGcReport& report, const std::stop_token& stop) {
  if (options_.dry_run) {
    for (const auto& deletion : confirmed) {
      ++report.would_delete;
      log_->info("identity gc dry run, would delete: id={} labels=\"{}\" duplicate={}", deletion.id,
                 deletion.labels, deletion.duplicate);
    }
    return;
  }
  std::vector<FencedDeletion> deletions;
  deletions.reserve(confirmed.size());
  for (const auto& deletion : confirmed) {
    const std::string key = kvstore::master_key(deletion.id);
    const std::string users = kvstore::value_key_prefix(deletion.labels);
    // etcd compares every key of the range; a value compare over an empty range fails, so a
    // duplicate whose string lost every user key is kept and judged by the plain rule next.
    deletions.push_back(FencedDeletion{
        key,
        {mod_revision_is(key, deletion.mod_revision),
         deletion.duplicate
             ? etcd::Compare{users, etcd::prefix_end(users), etcd::CompareTarget::value,
                             etcd::CompareResult::not_equal, 0, std::to_string(deletion.id)}
             : etcd::Compare{users,
                             etcd::prefix_end(users),
                             etcd::CompareTarget::create_revision,
                             etcd::CompareResult::equal,
                             0,
                             {}}}});
  }
  FencedDeleteSettings settings{options_.deletions_per_txn, options_.scan.call_timeout};
  auto result = delete_fenced(
      etcd_, clock_, limiter_, fence, deletions, settings, stop, [&](std::size_t i, bool applied) {
        const Deletion& deletion = confirmed[i];
        // Deleted, or changed since the read: the next pass must find it unused twice again.
        remembered_.erase(deletion.id);
        if (!applied) {
          log_->info("identity gc kept identity, changed or used since read: id={}", deletion.id);
          return;
        }
        ++report.deleted;
        if (deletion.duplicate) ++report.deleted_duplicates;
        log_->info("identity gc deleted unused identity: id={} labels=\"{}\" duplicate={}",
                   deletion.id, deletion.labels, deletion.duplicate);
      });
  report.etcd_requests += result.requests;
  report.refused += result.refused;
  if (result.end != PassEnd::complete) {
    report.end = result.end;
    report.detail = std::move(result.detail);
  }
}

}  // namespace cn::labeler::cluster
