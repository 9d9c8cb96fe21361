#include "labeler/cluster/node_reaper.h"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "common/util/json_read.h"
#include "labeler/cluster/duty_skeleton.h"
#include "labeler/cluster/fenced_txn.h"
#include "labeler/cluster/kvstore_layout.h"

namespace cn::labeler::cluster {
namespace {

// etcd refuses a txn with more than 128 operations (--max-txn-ops); markers are written this
// many to a txn, each with its own compare.
constexpr std::size_t kMarkerBatch = 50;

etcd::Compare key_absent(std::string key) {
  return etcd::Compare{
      std::move(key), {}, etcd::CompareTarget::create_revision, etcd::CompareResult::equal, 0, {}};
}

etcd::TxnOp put_op(std::string key, std::string value) {
  return etcd::TxnOp{etcd::TxnOp::Kind::put, std::move(key), {}, std::move(value), 0};
}

}  // namespace

std::string nomad_node_marker_prefix(std::string_view cluster) {
  std::string prefix = "cilium-nomad/";
  prefix.append(cluster);
  prefix.append("/nomad-nodes/");
  return prefix;
}

std::string nomad_node_marker_key(std::string_view cluster, std::string_view node) {
  return nomad_node_marker_prefix(cluster).append(node);
}

std::string nomad_node_marker_json(const NomadNodeMarker& marker) {
  nlohmann::json doc = {
      {"id", marker.id}, {"name", marker.name}, {"region", marker.region}, {"at", marker.at}};
  return doc.dump();
}

Result<NomadNodeMarker> parse_nomad_node_marker(std::string_view value) {
  auto doc = json::parse_json_text(value, "Nomad node marker");
  if (!doc) return std::unexpected(doc.error());
  NomadNodeMarker marker;
  json::JsonReader reader(*doc, "Nomad node marker");
  reader.read_required("id", marker.id);
  reader.read_required("name", marker.name);
  reader.read("region", marker.region);
  reader.read("at", marker.at);
  // An empty region is a real one (a marker of a single-region Nomad); only its absence is not.
  if (reader.ok() && !doc->contains("region")) reader.fail_at("region", "missing");
  if (!reader.ok()) return fail(ErrorKind::bad_answer, reader.error());
  return marker;
}

NodeReaper::NodeReaper(etcd::EtcdApi& etcd, Clock& clock, NodeReaperOptions options,
                       std::shared_ptr<spdlog::logger> log)
    : etcd_(etcd),
      clock_(clock),
      options_(std::move(options)),
      log_(log ? std::move(log) : spdlog::default_logger()) {
  options_.max_per_pass = std::max<std::int64_t>(options_.max_per_pass, 1);
}

// Node reaping as a policy over the duty skeleton: markers and node entries at one revision,
// Nomad's list and the grace decide; markers are written before anything is deleted and removed
// after; each entry goes in its own txn with its marker.
class NodeReaper::Pass final : public DutyPolicy {
 public:
  Pass(NodeReaper& reaper, const NomadListing& nomad, NodeReapReport& report)
      : reaper_(reaper), nomad_(nomad), report_(report) {}

  DutyScan scan(ScanCounters& counters, const std::stop_token& stop) override {
    // Markers first, then the node entries, both at the revision the first page pins: one
    // snapshot.
    const NodeReaperOptions& options = reaper_.options_;
    const std::string marker_prefix = nomad_node_marker_prefix(options.cluster_name);
    auto read = scan_prefix(
        reaper_.etcd_, reaper_.clock_, options.scan, marker_prefix, report_.revision, counters,
        stop, [&](const etcd::KeyValue& kv) {
          const std::string_view name = std::string_view(kv.key).substr(marker_prefix.size());
          const bool named = !name.empty() && name.find('/') == std::string_view::npos;
          // A malformed marker proves nothing, and is not overwritten either.
          if (named) marked_.emplace(name);
          auto marker = parse_nomad_node_marker(kv.value);
          if (!named || !marker) {
            ++report_.skipped_unknown_shape;
            reaper_.log_->warn(
                "node reaper skips a marker of unknown shape: key=\"{}\" error=\"{}\"", kv.key,
                marker ? "not a node name" : marker.error().message);
            return;
          }
          if (marker->region == options.region)
            ours_.emplace(name, Entry{std::string(name), kv.mod_revision});
        });
    if (!read) return duty_scan(read);
    return duty_scan(scan_prefix(
        reaper_.etcd_, reaper_.clock_, options.scan, kvstore::node_prefix(options.cluster_name),
        report_.revision, counters, stop, [&](const etcd::KeyValue& kv) { judge_entry(kv); }));
  }

  std::vector<FencedDeletion> decide(const LeaderFence& fence,
                                     const std::stop_token& stop) override {
    reaper_.log_never_listed(std::move(never_listed_));
    // Remember every node the list has, before anything is deleted: a node purged from Nomad
    // later is then still known to be ours.
    reaper_.write_markers(reaper_.unmarked(nomad_, marked_), fence, report_, stop);
    if (report_.end != PassEnd::complete) return {};
    due_ = reaper_.due_entries(gone_, report_);
    const std::string& cluster = reaper_.options_.cluster_name;
    std::vector<FencedDeletion> deletions;
    deletions.reserve(due_.size());
    for (const auto& entry : due_) {
      std::string key = kvstore::node_prefix(cluster) + entry.name;
      // The marker goes with the entry it proved ours: a node Nomad still lists gets a new one.
      deletions.push_back(FencedDeletion{key,
                                         {mod_revision_is(key, entry.mod_revision)},
                                         {nomad_node_marker_key(cluster, entry.name)}});
    }
    return deletions;
  }

  void over_cap(std::size_t due) override {
    reaper_.log_->warn("node reaper leaves due entries for the next pass: due={} max_per_pass={}",
                       due, reaper_.options_.max_per_pass);
  }

  void would_delete(std::size_t i) override {
    reaper_.log_->info("node reaper dry run, would delete: node={}", due_[i].name);
  }

  void deleted(std::size_t i, bool applied) override {
    const Entry& entry = due_[i];
    if (!applied) {
      reaper_.log_->info("node reaper kept a node entry written since it was read: node={}",
                         entry.name);
      return;
    }
    reaper_.gone_since_.erase(entry.name);
    reaper_.log_->warn(
        "node reaper deleted the Cilium node entry of a node Nomad reports down or "
        "gone: node={}",
        entry.name);
  }

  void complete(const LeaderFence& fence, const std::stop_token& stop) override {
    // Our own keys of nodes Nomad no longer lists and that have no entry: nothing left to prove.
    std::vector<Entry> stale;
    for (const auto& [name, marker] : ours_)
      if (!nomad_.contains(name) && !entries_.contains(name)) stale.push_back(marker);
    reaper_.remove_markers(stale, fence, report_, stop);
  }

  void ended_early() override {
    reaper_.log_->warn("node reaper pass ended early: end={} detail=\"{}\"", to_string(report_.end),
                       report_.detail);
  }

 private:
  void judge_entry(const etcd::KeyValue& kv) {
    const std::string& cluster = reaper_.options_.cluster_name;
    ++report_.scanned;
    auto name = kvstore::parse_node_key(kv.key, cluster);
    auto entry = kvstore::parse_node_value(kv.value);
    if (!name || !entry || entry->name != *name || entry->cluster != cluster) {
      ++report_.skipped_unknown_shape;
      reaper_.log_->warn("node reaper skips an entry of unknown shape: key=\"{}\" error=\"{}\"",
                         kv.key,
                         entry ? "Name or Cluster differ from the key" : entry.error().message);
      return;
    }
    entries_.emplace(*name);
    switch (node_verdict(nomad_, *name, ours_.contains(*name))) {
      case NodeVerdict::alive:
        ++report_.alive;
        return;
      case NodeVerdict::never_listed:
        // Not proven ours: a Cilium node that never ran Nomad, another region's, or one listed
        // before markers existed. Its own lease is what removes it.
        ++report_.never_listed;
        never_listed_.emplace(*name);
        return;
      case NodeVerdict::down:
        ++report_.down;
        break;
      case NodeVerdict::absent:
        ++report_.absent;
        break;
    }
    gone_.push_back(Entry{std::string(*name), kv.mod_revision});
  }

  NodeReaper& reaper_;
  const NomadListing& nomad_;
  NodeReapReport& report_;
  std::map<std::string, Entry, std::less<>> ours_;  // markers of this region
  std::set<std::string, std::less<>> marked_;       // every marker's name, any region
  std::vector<Entry> gone_;
  std::set<std::string, std::less<>> entries_;  // names with a well-shaped entry
  std::set<std::string, std::less<>> never_listed_;
  std::vector<Entry> due_;
};

NodeReapReport NodeReaper::run_pass(const std::vector<nomad::NodeStub>& nomad_nodes,
                                    const LeaderFence& fence, std::stop_token stop) {
  NodeReapReport report;
  report.nomad_nodes = static_cast<std::int64_t>(nomad_nodes.size());
  auto listing = nomad_listing(nomad_nodes, options_.local_node, options_.name_rule);
  if (!listing) {
    report.end = PassEnd::doubt;
    report.detail = listing.error().message;
    log_->warn("node reaper deletes nothing this pass: reason=\"{}\"", report.detail);
    return report;
  }
  Pass pass(*this, *listing, report);
  run_duty_pass(pass, report,
                DutyDeletes{etcd_,
                            clock_,
                            nullptr,
                            {1, options_.scan.call_timeout},
                            options_.dry_run,
                            options_.max_per_pass},
                fence, stop);
  return report;
}

std::vector<NodeReaper::Entry> NodeReaper::due_entries(const std::vector<Entry>& gone,
                                                       NodeReapReport& report) {
  // The clocks restart from this complete pass: a node seen alive again, or whose entry is gone,
  // loses its clock.
  const MonoTime now = clock_.now();
  std::map<std::string, MonoTime, std::less<>> since;
  std::vector<std::pair<MonoTime, Entry>> due;
  for (const auto& entry : gone) {
    auto old = gone_since_.find(entry.name);
    const MonoTime first = old == gone_since_.end() ? now : old->second;
    since.emplace(entry.name, first);
    if (now - first > options_.grace) {
      due.emplace_back(first, entry);
    } else {
      ++report.waiting;
    }
  }
  gone_since_ = std::move(since);
  // Longest gone first, so a capped pass never starves one node.
  std::stable_sort(due.begin(), due.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Entry> out;
  out.reserve(due.size());
  for (auto& [first, entry] : due) out.push_back(std::move(entry));
  return out;
}

void NodeReaper::log_never_listed(std::set<std::string, std::less<>> names) {
  // Once per name while this reaper runs: such entries are normal beside non-Nomad nodes.
  for (const auto& name : names) {
    if (never_listed_logged_.contains(name)) continue;
    log_->info(
        "node reaper leaves alone a Cilium node this Nomad region never listed: node={} "
        "region=\"{}\"",
        name, options_.region);
  }
  never_listed_logged_ = std::move(names);
}

std::vector<NomadNodeMarker> NodeReaper::unmarked(
    const NomadListing& nomad, const std::set<std::string, std::less<>>& marked) const {
  std::vector<NomadNodeMarker> missing;
  const std::string at = rfc3339(clock_.wall_now());
  for (const auto& [name, listed] : nomad) {
    if (marked.contains(name) || name.empty() || name.find('/') != std::string::npos) continue;
    missing.push_back(NomadNodeMarker{listed.stub.id, listed.stub.name, options_.region, at});
  }
  return missing;
}

bool NodeReaper::stop_on(const Result<FencedOutcome>& outcome, NodeReapReport& report) {
  if (outcome && *outcome != FencedOutcome::fence_lost) return false;
  auto [end, detail] = write_stop(outcome);
  report.end = end;
  report.detail = std::move(detail);
  return true;
}

void NodeReaper::write_markers(const std::vector<NomadNodeMarker>& missing,
                               const LeaderFence& fence, NodeReapReport& report,
                               const std::stop_token& stop) {
  if (options_.dry_run || missing.empty()) return;
  // Each put only if the marker is still absent, so a marker is never rewritten; a batch that
  // etcd refuses (one appeared meanwhile) is retried one marker at a time.
  const auto write = [&](std::size_t from, std::size_t to) -> Result<FencedOutcome> {
    std::vector<etcd::Compare> own;
    std::vector<etcd::TxnOp> ops;
    for (std::size_t i = from; i < to; ++i) {
      const auto& m = missing[i];
      std::string key = nomad_node_marker_key(options_.cluster_name,
                                              cilium_node_name(m.name, options_.name_rule));
      own.push_back(key_absent(key));
      ops.push_back(put_op(std::move(key), nomad_node_marker_json(m)));
    }
    ++report.etcd_requests;
    return run_fenced(etcd_, fence, std::move(own), std::move(ops),
                      Deadline(clock_.now() + options_.scan.call_timeout, stop));
  };
  for (std::size_t from = 0; from < missing.size(); from += kMarkerBatch) {
    const std::size_t to = std::min(missing.size(), from + kMarkerBatch);
    auto outcome = write(from, to);
    if (stop_on(outcome, report)) return;
    if (*outcome == FencedOutcome::applied) {
      report.markers_written += static_cast<std::int64_t>(to - from);
      continue;
    }
    for (std::size_t i = from; i < to; ++i) {
      auto one = write(i, i + 1);
      if (stop_on(one, report)) return;
      if (*one == FencedOutcome::applied) ++report.markers_written;
    }
  }
  log_->info("node reaper remembered nodes Nomad listed for the first time: count={}",
             report.markers_written);
}

void NodeReaper::remove_markers(const std::vector<Entry>& stale, const LeaderFence& fence,
                                NodeReapReport& report, const std::stop_token& stop) {
  if (options_.dry_run) return;
  for (const auto& marker : stale) {
    const std::string key = nomad_node_marker_key(options_.cluster_name, marker.name);
    ++report.etcd_requests;
    // Only while the node's entry is still absent: an entry that came back keeps its proof.
    auto outcome =
        run_fenced(etcd_, fence,
                   {mod_revision_is(key, marker.mod_revision),
                    key_absent(kvstore::node_prefix(options_.cluster_name) + marker.name)},
                   {delete_key_op(key)}, Deadline(clock_.now() + options_.scan.call_timeout, stop));
    if (stop_on(outcome, report)) return;
    if (*outcome == FencedOutcome::applied) {
      ++report.markers_removed;
      log_->info(
          "node reaper forgot a node Nomad no longer lists and Cilium no longer has: node={}",
          marker.name);
    }
  }
}

}  // namespace cn::labeler::cluster
