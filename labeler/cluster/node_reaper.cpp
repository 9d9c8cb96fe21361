#include "labeler/cluster/node_reaper.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "labeler/cluster/fenced_txn.h"
#include "labeler/cluster/kvstore_layout.h"

namespace cn::labeler::cluster {
namespace {

enum class NomadView { alive, down };

}  // namespace

std::optional<NodeNameRule> parse_node_name_rule(std::string_view text) {
  if (text == "name") return NodeNameRule::name;
  if (text == "short-name") return NodeNameRule::short_name;
  return std::nullopt;
}

std::string cilium_node_name(std::string_view nomad_name, NodeNameRule rule) {
  if (rule == NodeNameRule::short_name)
    return std::string(nomad_name.substr(0, nomad_name.find('.')));
  return std::string(nomad_name);
}

NodeReaper::NodeReaper(etcd::EtcdApi& etcd, Clock& clock, NodeReaperOptions options,
                       std::shared_ptr<spdlog::logger> log)
    : etcd_(etcd),
      clock_(clock),
      options_(std::move(options)),
      log_(log ? std::move(log) : spdlog::default_logger()) {}

NodeReapReport NodeReaper::run_pass(const std::vector<nomad::NodeStub>& nomad_nodes,
                                    const LeaderFence& fence, std::stop_token stop) {
  NodeReapReport report;
  report.nomad_nodes = static_cast<std::int64_t>(nomad_nodes.size());
  const auto doubt = [&](std::string why) {
    report.end = PassEnd::doubt;
    report.detail = std::move(why);
    log_->warn("node reaper deletes nothing this pass: reason=\"{}\"", report.detail);
    return report;
  };
  if (nomad_nodes.empty()) return doubt("Nomad listed no node");
  if (options_.local_node.empty()) return doubt("the local node's name is not configured");
  if (std::none_of(nomad_nodes.begin(), nomad_nodes.end(),
                   [&](const nomad::NodeStub& n) { return n.name == options_.local_node; })) {
    return doubt("Nomad's node list lacks the local node " + options_.local_node);
  }

  // A Cilium name several Nomad nodes map to (a node re-registered under a new ID, two FQDNs with
  // one short name) is alive while any of them is.
  std::map<std::string, NomadView, std::less<>> nomad;
  for (const auto& node : nomad_nodes) {
    const NomadView view = node.status == "down" ? NomadView::down : NomadView::alive;
    auto [it, added] = nomad.try_emplace(cilium_node_name(node.name, options_.name_rule), view);
    if (!added && view == NomadView::alive) it->second = NomadView::alive;
  }

  std::vector<Entry> gone;
  ScanCounters counters;
  auto read = scan_prefix(
      etcd_, clock_, options_.scan, kvstore::node_prefix(options_.cluster_name), report.revision,
      counters, stop, [&](const etcd::KeyValue& kv) {
        ++report.scanned;
        auto name = kvstore::parse_node_key(kv.key, options_.cluster_name);
        auto entry = kvstore::parse_node_value(kv.value);
        if (!name || !entry || entry->name != *name || entry->cluster != options_.cluster_name) {
          ++report.skipped_unknown_shape;
          log_->warn("node reaper skips an entry of unknown shape: key=\"{}\" error=\"{}\"", kv.key,
                     entry ? "Name or Cluster differ from the key" : entry.error().message);
          return;
        }
        auto seen = nomad.find(*name);
        if (seen != nomad.end() && seen->second == NomadView::alive) {
          ++report.alive;
          return;
        }
        ++(seen == nomad.end() ? report.absent : report.down);
        gone.push_back(Entry{std::string(*name), kv.mod_revision});
      });
  report.pages = counters.pages;
  report.etcd_requests = counters.requests;
  if (!read) {
    report.end = scan_stop(read.error());
    report.detail = read.error().message;
    log_->warn("node reaper pass ended early: end={} detail=\"{}\"", to_string(report.end),
               report.detail);
    return report;
  }

  delete_entries(due_entries(gone, report), fence, report, stop);
  if (report.end != PassEnd::complete) {
    log_->warn("node reaper pass ended early: end={} detail=\"{}\"", to_string(report.end),
               report.detail);
  }
  return report;
}

std::vector<NodeReaper::Entry> NodeReaper::due_entries(const std::vector<Entry>& gone,
                                                       NodeReapReport& report) {
  // The clocks restart from this complete pass: a node seen alive again, or whose entry is gone,
  // loses its clock.
  const MonoTime now = clock_.now();
  std::map<std::string, MonoTime, std::less<>> since;
  std::vector<Entry> due;
  for (const auto& entry : gone) {
    auto old = gone_since_.find(entry.name);
    const MonoTime first = old == gone_since_.end() ? now : old->second;
    since.emplace(entry.name, first);
    if (now - first > options_.grace) {
      due.push_back(entry);
    } else {
      ++report.waiting;
    }
  }
  gone_since_ = std::move(since);
  return due;
}

void NodeReaper::delete_entries(const std::vector<Entry>& due, const LeaderFence& fence,
                                NodeReapReport& report, const std::stop_token& stop) {
  for (const auto& entry : due) {
    const std::string key = kvstore::node_prefix(options_.cluster_name) + entry.name;
    if (options_.dry_run) {
      ++report.would_delete;
      log_->info("node reaper dry run, would delete: node={}", entry.name);
      continue;
    }
    ++report.etcd_requests;
    auto outcome =
        run_fenced(etcd_, fence, {mod_revision_is(key, entry.mod_revision)}, {delete_key_op(key)},
                   Deadline(clock_.now() + options_.scan.call_timeout, stop));
    if (!outcome || *outcome == FencedOutcome::fence_lost) {
      if (outcome) ++report.refused;
      auto [end, detail] = write_stop(outcome);
      report.end = end;
      report.detail = std::move(detail);
      return;
    }
    switch (*outcome) {
      case FencedOutcome::applied:
        ++report.deleted;
        gone_since_.erase(entry.name);
        log_->warn(
            "node reaper deleted the Cilium node entry of a node Nomad reports down or "
            "gone: node={}",
            entry.name);
        break;
      case FencedOutcome::refused:
        ++report.refused;
        log_->info("node reaper kept a node entry written since it was read: node={}", entry.name);
        break;
      case FencedOutcome::fence_lost:
        break;  // handled above
    }
  }
}

}  // namespace cn::labeler::cluster
