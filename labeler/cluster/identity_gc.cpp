#include "labeler/cluster/identity_gc.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "labeler/cluster/duty_skeleton.h"
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

// Identity GC as a policy over the duty skeleton: the three scans and the two-pass rule decide,
// the skeleton deletes.
class IdentityGc::Pass final : public DutyPolicy {
 public:
  Pass(IdentityGc& gc, const IdentityRange& range, IdentityGcReport& report)
      : gc_(gc), range_(range), report_(report) {}

  DutyScan scan(ScanCounters& counters, const std::stop_token& stop) override {
    // 1. What the labelers report in use. The first answer's revision pins every later page.
    // A report that cannot be parsed is one node's bug (or a format change mid-upgrade): it
    // does not stop the GC for everyone. That node's identities are then kept by the evidence
    // the operator relies on alone, its agent's user keys, which step 3 requires for every
    // identity anyway. A read that fails is still doubt: then nobody's report is known.
    auto read = scan_prefix(gc_.etcd_, gc_.clock_, gc_.options_.scan,
                            in_use_prefix(gc_.options_.cluster_name), report_.revision, counters,
                            stop, [&](const etcd::KeyValue& kv) {
                              ++report_.in_use_reports;
                              auto parsed = parse_in_use_report(kv.value);
                              if (!parsed) {
                                ++report_.unreadable_in_use_reports;
                                gc_.log_->warn(
                                    "identity gc: unreadable in-use report, its node's "
                                    "identities kept by their user keys only: key=\"{}\" "
                                    "error=\"{}\"",
                                    kv.key, parsed.error().message);
                                return;
                              }
                              in_use_.insert(parsed->identities.begin(), parsed->identities.end());
                            });
    if (!read) return duty_scan(read);
    report_.in_use_reports_read = true;

    // 2. Every value key: the label strings and IDs in use on some node.
    read = scan_prefix(gc_.etcd_, gc_.clock_, gc_.options_.scan, kvstore::kIdentityValuePrefix,
                       report_.revision, counters, stop,
                       [&](const etcd::KeyValue& kv) { count_value_key(kv); });
    if (!read) return duty_scan(read);

    // 3. Every master key: referenced, reported, or a candidate.
    read = scan_prefix(gc_.etcd_, gc_.clock_, gc_.options_.scan, kvstore::kIdentityIdPrefix,
                       report_.revision, counters, stop,
                       [&](const etcd::KeyValue& kv) { judge_master_key(kv); });
    return duty_scan(read);
  }

  std::vector<FencedDeletion> decide(const LeaderFence& /*fence*/,
                                     const std::stop_token& /*stop*/) override {
    for (auto& deletion : label_only_) {
      const GcLabelUse& use = used_labels_.at(label_hash(deletion.labels));
      if (use.masters < 2 || use.not_an_id) {
        ++report_.referenced;
        continue;
      }
      ++report_.duplicate_candidates;
      std::string labels = std::move(deletion.labels);
      add_candidate(std::move(deletion), labels);
    }
    // Every read complete: this pass is the one the next pass confirms against.
    report_.counted = true;
    gc_.remembered_ = std::move(candidates_);
    gc_.seen_ = std::move(in_range_);
    gc_.seen_baseline_ = true;
    std::vector<FencedDeletion> deletions;
    deletions.reserve(confirmed_.size());
    for (const auto& deletion : confirmed_) {
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
                               {}}},
          {}});
    }
    return deletions;
  }

  void would_delete(std::size_t i) override {
    const Deletion& deletion = confirmed_[i];
    gc_.log_->info("identity gc dry run, would delete: id={} labels=\"{}\" duplicate={}",
                   deletion.id, deletion.labels, deletion.duplicate);
  }

  void deleted(std::size_t i, bool applied) override {
    const Deletion& deletion = confirmed_[i];
    // Deleted, or changed since the read: the next pass must find it unused twice again.
    gc_.remembered_.erase(deletion.id);
    if (!applied) {
      gc_.log_->info("identity gc kept identity, changed or used since read: id={}", deletion.id);
      return;
    }
    if (deletion.duplicate) ++report_.deleted_duplicates;
    gc_.log_->info("identity gc deleted unused identity: id={} labels=\"{}\" duplicate={}",
                   deletion.id, deletion.labels, deletion.duplicate);
  }

  void complete(const LeaderFence& /*fence*/, const std::stop_token& /*stop*/) override {
    gc_.log_->info(
        "identity gc pass: range={}-{} scanned={} in_range={} range_size={} first_seen={} "
        "referenced={} candidates={} duplicates={} deleted={} would_delete={} refused={} "
        "unreadable_reports={} "
        "requests={}",
        range_.min, range_.max, report_.scanned, report_.in_range, report_.range_size,
        report_.first_seen, report_.referenced, report_.candidates, report_.duplicate_candidates,
        report_.deleted, report_.would_delete, report_.refused, report_.unreadable_in_use_reports,
        report_.etcd_requests);
  }

  void ended_early() override {
    gc_.log_->warn("identity gc pass ended early: end={} detail=\"{}\" deleted={}",
                   to_string(report_.end), report_.detail, report_.deleted);
  }

 private:
  // ID -> the value keys naming it; label hash -> the value keys under it (the users counted
  // for the headroom), and whether one of them holds no ID (then no duplicate of it is
  // collected).
  void count_value_key(const etcd::KeyValue& kv) {
    ++report_.value_keys;
    auto id = kvstore::parse_identity_number(kv.value);
    if (id) ++used_ids_[*id];
    auto value_key = kvstore::parse_value_key(kv.key);
    if (!value_key) {
      ++report_.value_keys_unknown_shape;
      return;
    }
    GcLabelUse& use = used_labels_[label_hash(value_key->labels)];
    ++use.users;
    if (!id) use.not_an_id = true;
  }

  void judge_master_key(const etcd::KeyValue& kv) {
    ++report_.scanned;
    auto id = kvstore::parse_master_key(kv.key);
    if (!id || !kvstore::is_label_string(kv.value)) {
      ++report_.skipped_unknown_shape;
      gc_.log_->debug("identity gc: unknown master key shape, skipped: key=\"{}\"", kv.key);
      return;
    }
    const std::uint64_t hash = label_hash(kv.value);
    const auto by_label = used_labels_.find(hash);
    // Master keys per used label string, in any range: a duplicate may be another cluster's
    // allocation of the same labels.
    if (by_label != used_labels_.end()) ++by_label->second.masters;
    if (!range_.contains(*id)) {
      ++report_.skipped_out_of_range;
      return;
    }
    ++report_.in_range;
    in_range_.emplace(*id, kv.create_revision);
    auto before = gc_.seen_.find(*id);
    if (gc_.seen_baseline_ && (before == gc_.seen_.end() || before->second != kv.create_revision)) {
      ++report_.first_seen;
    }
    // A user names the label string or the ID; a key doing both counts once.
    const auto by_id = used_ids_.find(*id);
    const std::int64_t id_users = by_id == used_ids_.end() ? 0 : by_id->second;
    const std::int64_t label_users = by_label == used_labels_.end() ? 0 : by_label->second.users;
    const std::int64_t users = std::max(label_users, id_users);
    report_.users_min = report_.in_range == 1 ? users : std::min(report_.users_min, users);
    report_.users_max = std::max(report_.users_max, users);
    report_.users_total += users;
    if (id_users > 0) {
      ++report_.referenced;
      return;
    }
    if (in_use_.contains(*id)) {
      ++report_.reported_in_use;
      return;
    }
    if (label_users > 0) {
      label_only_.push_back(Deletion{*id, kv.value, kv.mod_revision, true});
      return;
    }
    add_candidate(Deletion{*id, {}, kv.mod_revision, false}, kv.value);
  }

  // Counts an unused identity and remembers it; queues it for deletion when the previous
  // complete pass remembered it with the same ModRevision.
  void add_candidate(Deletion deletion, std::string_view labels) {
    ++report_.candidates;
    candidates_.emplace(deletion.id, deletion.mod_revision);
    auto seen = gc_.remembered_.find(deletion.id);
    if (seen == gc_.remembered_.end() || seen->second != deletion.mod_revision) return;
    ++report_.confirmed;
    deletion.labels = std::string(labels);
    confirmed_.push_back(std::move(deletion));
  }

  IdentityGc& gc_;
  const IdentityRange& range_;
  IdentityGcReport& report_;
  std::unordered_set<std::uint64_t> in_use_;
  std::unordered_map<std::uint64_t, GcLabelUse> used_labels_;
  std::unordered_map<std::uint64_t, std::int64_t> used_ids_;
  std::unordered_map<std::uint64_t, etcd::Revision> candidates_;
  std::unordered_map<std::uint64_t, etcd::Revision> in_range_;
  std::vector<Deletion> confirmed_;
  // In range, unreported, named by no value key's ID but with value keys under their label
  // string: a duplicate's unused copy if another master key holds the string (known only once
  // every master key was read), else referenced as every release has it.
  std::vector<Deletion> label_only_;
};

IdentityGcReport IdentityGc::run_pass(const LeaderFence& fence, std::stop_token stop) {
  IdentityGcReport report;
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
  report.range_size = options_.range->size();
  Pass pass(*this, *options_.range, report);
  run_duty_pass(pass, report,
                DutyDeletes{etcd_,
                            clock_,
                            &limiter_,
                            {options_.deletions_per_txn, options_.scan.call_timeout},
                            options_.dry_run,
                            0},
                fence, stop);
  return report;
}

}  // namespace cn::labeler::cluster
