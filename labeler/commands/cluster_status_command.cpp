#include "labeler/commands/cluster_status_command.h"

#include <nlohmann/json.hpp>

#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/kvstore_layout.h"
#include "labeler/cluster/leader_election.h"
#include "labeler/cluster/paged_scan.h"
#include "labeler/commands/cli_errors.h"
#include "labeler/commands/text_table.h"

namespace cn::labeler::cluster {

namespace {

struct Counted {
  const char* what;
  std::string prefix;
};

std::string printable(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, 256)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// The etcd client's messages start with "etcd <endpoint>: " already.
int failed(std::ostream& err, const Error& error) {
  return cli::runtime_failure(err, "cluster status", error.message);
}

}  // namespace

int render_cluster_status(etcd::EtcdApi& etcd, const std::string& cluster_name,
                          const Result<IdentityRange>& range, bool as_json, Clock& clock,
                          std::ostream& out, std::ostream& err) {
  auto deadline = [&clock] { return Deadline{clock.now() + std::chrono::seconds{10}}; };
  etcd::RangeRequest leader_read;
  leader_read.key = leader_key(cluster_name);
  auto leader = etcd.range(leader_read, deadline());
  if (!leader) {
    return failed(err, leader.error());
  }
  // The text form is written from these typed values, never read back out of `doc`.
  nlohmann::json doc;
  doc["cluster"] = cluster_name;
  doc["leader_key"] = leader_read.key;
  std::string holder = "none (no labeler leads)";
  if (leader->kvs.empty()) {
    doc["leader"] = nullptr;
  } else {
    const auto& kv = leader->kvs.front();
    holder = printable(kv.value);
    doc["leader"] = {
        {"holder", holder}, {"lease", kv.lease}, {"since_revision", kv.create_revision}};
  }

  etcd::RangeRequest reports;
  reports.key = in_use_prefix(cluster_name);
  reports.range_end = etcd::prefix_end(reports.key);
  auto reported = etcd.range(reports, deadline());
  if (!reported) {
    return failed(err, reported.error());
  }
  doc["in_use_reports"] = nlohmann::json::array();
  for (const auto& kv : reported->kvs)
    doc["in_use_reports"].push_back(printable(kv.key.substr(reports.key.size())));

  const Counted counted[] = {
      {"identities", "cilium/state/identities/v1/id/"},
      {"identity_users", "cilium/state/identities/v1/value/"},
      {"allocator_locks", "cilium/state/identities/v1/locks/"},
      {"nodes", "cilium/state/nodes/v1/" + cluster_name + "/"},
      // The ipcache entries the IP GC reads (agents write them under `default` only).
      {"ip_entries", "cilium/state/ip/v1/default/"},
  };
  std::vector<std::vector<std::string>> rows = {{"KEYS", "COUNT"}};
  for (const auto& c : counted) {
    etcd::RangeRequest count;
    count.key = c.prefix;
    count.range_end = etcd::prefix_end(c.prefix);
    count.count_only = true;
    auto page = etcd.range(count, deadline());
    if (!page) return failed(err, page.error());
    doc["counts"][c.what] = page->count;
    rows.push_back({c.prefix, std::to_string(page->count)});
  }

  // Headroom: the master keys in this cluster's range, counted from their keys alone.
  long long in_range = 0;
  long long size = 0;
  if (range) {
    etcd::Revision revision = 0;
    ScanCounters counters;
    auto read = scan_prefix(etcd, clock, ScanSettings{}, kvstore::kIdentityIdPrefix, revision,
                            counters, {}, [&](const etcd::KeyValue& kv) {
                              auto id = kvstore::parse_master_key(kv.key);
                              if (id && range->contains(*id)) ++in_range;
                            });
    if (!read) {
      err << "etcd " << etcd.describe() << ": " << read.error().message << "\n";
      return 1;
    }
    size = static_cast<long long>(range->size());
    doc["identity_range"] = {{"cluster_id", range->cluster_id},
                             {"max_connected_clusters", range->max_connected_clusters},
                             {"min", range->min},
                             {"max", range->max},
                             {"size", size},
                             {"used", in_range},
                             {"free", size - in_range}};
  } else {
    doc["identity_range"] = {{"unknown", range.error().message}};
  }

  if (as_json) {
    out << doc.dump(2) << "\n";
    return 0;
  }
  out << "cluster:  " << cluster_name << "\n";
  out << "leader:   " << holder << "\n";
  out << "reports:  " << reported->kvs.size() << " node(s) report the identities they use\n\n";
  out << render_table(rows);
  if (!range) {
    out << "\nheadroom: unknown (" << range.error().message << ")\n";
  } else {
    out << "\nheadroom: " << size - in_range << " of " << size
        << " identities free in this cluster's range " << describe(*range) << ", " << in_range
        << " used (" << (size > 0 ? in_range * 100 / size : 0) << "%)\n";
  }
  return 0;
}

}  // namespace cn::labeler::cluster
