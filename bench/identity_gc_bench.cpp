// Identity GC at scale (docs/cluster-duties.md): a real etcd (Debian's, on loopback) seeded the way
// the agents write identities, 10 % of them unused, and two passes of the real IdentityGc through
// the real CurlEtcdClient with the rate limit off: the first remembers the unused identities, the
// second deletes them. Per pass: wall time, etcd requests and pages, and how much the process's
// peak RSS grew during the pass (VmHWM reset through /proc/self/clear_refs just before it), at
// three store sizes in the same run, so the table shows whether memory follows the store. Beside
// it, the same store read the way a pass must not: one unpaged range over the value keys.
// Then, on the same etcd, the IP GC (ip_gc.h): four ipcache entries per identity (200,000 at
// 50,000), 90 % on their agent's lease as agents write them, 10 % without a lease and stale (half
// of a live node's dead endpoints, half of a node Nomad reports down), its two passes measured
// the same way with the per-pass cap off.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "bench/bench_stats.h"
#include "common/etcd/curl_etcd_client.h"
#include "labeler/cluster/identity_gc.h"
#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/ip_gc.h"
#include "labeler/cluster/ip_key.h"
#include "labeler/cluster/kvstore_layout.h"
#include "labeler/cluster/node_reaper.h"
#include "tests/support/etcd_server.h"
#include "tests/support/peak_rss.h"

namespace {

using namespace cn;
using namespace cn::bench;
using namespace std::chrono_literals;
namespace cluster = cn::labeler::cluster;
namespace kvstore = cn::labeler::cluster::kvstore;

constexpr std::uint64_t kFirstId = 10000;  // inside the GC's range 256..65535
constexpr int kNodes = 50;
constexpr int kUnusedEvery = 10;  // identity i is unused when i % 10 == 9: 10 %
constexpr int kIpsPerIdentity = 4;
constexpr int kLeaselessEvery = 10;  // IP entry j has no lease when j % 10 == 9: 10 %
// etcd's default --max-txn-ops.
constexpr std::size_t kOpsPerTxn = 128;

// The sizes of the run: $GC_BENCH_SIZES ("10000,25000,50000" by default).
std::vector<int> sizes() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read once at start, before any thread exists.
  const char* env = std::getenv("GC_BENCH_SIZES");
  std::string text = env != nullptr && *env != '\0' ? env : "10000,25000,50000";
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  return out;
}

Deadline soon() {
  return {system_clock().now() + 60s};
}

std::string labels_of(int i) {
  return "k8s:app=svc-" + std::to_string(i) + ";k8s:io.kubernetes.pod.namespace=default;";
}

std::string node_ip(int i) {
  return "10.0." + std::to_string(i % kNodes / 250) + "." + std::to_string(i % kNodes % 250 + 1);
}

void flush(etcd::CurlEtcdClient& client, etcd::TxnRequest& txn) {
  if (txn.success.empty()) return;
  auto done = client.txn(txn, soon());
  if (!done) throw std::runtime_error("seed txn: " + done.error().message);
  txn.success.clear();
}

// Master keys without a lease; the users' value keys on their node's lease, as each agent
// writes its own under the lease it keeps alive.
void seed(etcd::CurlEtcdClient& client, int identities) {
  std::vector<etcd::LeaseId> node_lease;
  for (int n = 0; n < kNodes; ++n) {
    auto lease = client.grant_lease(3600s, soon());
    if (!lease) throw std::runtime_error("grant_lease: " + lease.error().message);
    node_lease.push_back(lease->id);
  }
  etcd::TxnRequest txn;
  auto add = [&](etcd::TxnOp op) {
    txn.success.push_back(std::move(op));
    if (txn.success.size() == kOpsPerTxn) flush(client, txn);
  };
  for (int i = 0; i < identities; ++i) {
    const std::uint64_t id = kFirstId + static_cast<std::uint64_t>(i);
    const std::string labels = labels_of(i);
    add({etcd::TxnOp::Kind::put, kvstore::master_key(id), {}, labels, 0});
    if (i % kUnusedEvery == kUnusedEvery - 1) continue;
    add({etcd::TxnOp::Kind::put,
         std::string(kvstore::kIdentityValuePrefix) + labels + "/" + node_ip(i),
         {},
         std::to_string(id),
         node_lease[static_cast<std::size_t>(i % kNodes)]});
  }
  flush(client, txn);
}

// The leader key, created only if absent and on a lease, as the election does.
cluster::LeaderFence lead(etcd::CurlEtcdClient& client) {
  auto lease = client.grant_lease(3600s, soon());
  if (!lease) throw std::runtime_error("grant_lease: " + lease.error().message);
  const std::string key = "cilium-nomad/default/leader";
  etcd::TxnRequest claim;
  claim.compare.push_back(
      {key, {}, etcd::CompareTarget::create_revision, etcd::CompareResult::equal, 0, {}});
  claim.success.push_back({etcd::TxnOp::Kind::put, key, {}, "bench", lease->id});
  auto done = client.txn(claim, soon());
  if (!done || !done->succeeded) throw std::runtime_error("leader key not created");
  return {key, done->revision, lease->id};
}

std::int64_t count_under(etcd::CurlEtcdClient& client, std::string_view prefix) {
  etcd::RangeRequest r{std::string(prefix), etcd::prefix_end(prefix)};
  r.count_only = true;
  auto page = client.range(r, soon());
  if (!page) throw std::runtime_error("count: " + page.error().message);
  return page->count;
}

std::string kib(long kb) {
  char out[32];
  if (kb >= 10L * 1024) {
    std::snprintf(out, sizeof out, "%.1f MiB", static_cast<double>(kb) / 1024);
  } else {
    std::snprintf(out, sizeof out, "%ld KiB", kb);
  }
  return out;
}

struct SizeResult {
  double seed_s = 0;
  double slowest_pass_ms = 0;
  double slowest_ip_pass_ms = 0;
  bool ok = true;
};

// Node `n`'s host IP and its j-th endpoint IP (10.<16 + n / 250>.x.y: up to 65,536 a node).
std::string bench_host_ip(int n) {
  return "192.168." + std::to_string(n / 250) + "." + std::to_string(n % 250 + 1);
}
std::string bench_endpoint_ip(int j) {
  return "10." + std::to_string(16 + j / 65536) + "." + std::to_string(j / 256 % 256) + "." +
         std::to_string(j % 256);
}
std::string bench_node_name(int n) {
  return "node-" + std::to_string(n);
}

// Node 0 is the labeler's own; the last node is down in Nomad (a marker says it was listed):
// its entries are the gone node's. Every other node reports its live endpoints' IPs. Entry j
// belongs to node j % kNodes; every tenth has no lease and is stale: of the down node, or a
// dead endpoint missing from its live node's report.
struct IpSeed {
  std::int64_t keys = 0;
  std::int64_t stale = 0;
};
IpSeed seed_ips(etcd::CurlEtcdClient& client, int ip_keys, std::vector<nomad::NodeStub>& nomad) {
  const WallTime now = system_clock().wall_now();
  std::vector<etcd::LeaseId> node_lease;
  std::vector<std::vector<std::string>> reported(kNodes);
  etcd::TxnRequest txn;
  auto add = [&](etcd::TxnOp op) {
    txn.success.push_back(std::move(op));
    if (txn.success.size() == kOpsPerTxn) flush(client, txn);
  };
  for (int n = 0; n < kNodes; ++n) {
    auto lease = client.grant_lease(3600s, soon());
    if (!lease) throw std::runtime_error("grant_lease: " + lease.error().message);
    node_lease.push_back(lease->id);
    const std::string name = bench_node_name(n);
    add({etcd::TxnOp::Kind::put,
         kvstore::node_prefix("default") + name,
         {},
         R"({"Name":")" + name +
             R"(","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":")" +
             bench_host_ip(n) + R"("}],"ClusterID":0,"Source":"local"})",
         lease->id});
    add({etcd::TxnOp::Kind::put,
         cluster::nomad_node_marker_key("default", name),
         {},
         cluster::nomad_node_marker_json({"id-" + name, name, "", "2026-12-03T16:00:00Z"}),
         0});
    nomad.push_back({"id-" + name, name, n == kNodes - 1 ? "down" : "ready"});
  }
  IpSeed seeded;
  for (int j = 0; j < ip_keys; ++j) {
    const int n = j % kNodes;
    const std::string ip = bench_endpoint_ip(j);
    const bool leaseless = j % kLeaselessEvery == kLeaselessEvery - 1;
    if (!leaseless && n != kNodes - 1) reported[static_cast<std::size_t>(n)].push_back(ip);
    seeded.stale += leaseless ? 1 : 0;
    add({etcd::TxnOp::Kind::put,
         kvstore::ip_key(ip),
         {},
         R"({"IP":")" + ip + R"(","Mask":null,"HostIP":")" + bench_host_ip(n) + R"(","ID":)" +
             std::to_string(kFirstId + static_cast<std::uint64_t>(j % 1000)) +
             R"(,"Key":0,"Metadata":"","K8sNamespace":"default","K8sPodName":"web-)" +
             std::to_string(j) + R"("})",
         leaseless ? 0 : node_lease[static_cast<std::size_t>(n)]});
  }
  flush(client, txn);
  for (int n = 0; n + 1 < kNodes; ++n) {
    const std::string name = bench_node_name(n);
    auto put = client.put(
        cluster::in_use_key("default", name),
        cluster::in_use_report_json(name, {kFirstId}, reported[static_cast<std::size_t>(n)], now),
        node_lease[static_cast<std::size_t>(n)], soon());
    if (!put) throw std::runtime_error("report: " + put.error().message);
  }
  seeded.keys = ip_keys;
  return seeded;
}

SizeResult run_size(int identities, MarkdownTable& passes, MarkdownTable& giant,
                    MarkdownTable& ip_passes) {
  SizeResult result;
  testing::EtcdServer server;
  if (!server.started()) throw std::runtime_error("etcd did not start:\n" + server.log());
  etcd::EtcdConfig config;
  config.source = "bench";
  config.endpoints = {server.endpoint()};
  auto created = etcd::CurlEtcdClient::create(config);
  if (!created) throw std::runtime_error("etcd client: " + created.error().message);
  etcd::CurlEtcdClient& client = **created;

  const auto seed_start = std::chrono::steady_clock::now();
  seed(client, identities);
  result.seed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - seed_start).count();
  const int unused = identities / kUnusedEvery;
  const std::int64_t value_keys = count_under(client, kvstore::kIdentityValuePrefix);

  // The GC logs every deletion at info: formatted as in production, written nowhere.
  auto log = std::make_shared<spdlog::logger>("identity-gc",
                                              std::make_shared<spdlog::sinks::null_sink_mt>());
  log->set_level(spdlog::level::info);
  cluster::IdentityGcOptions options;
  options.deletions_per_minute = 0;
  options.range = cluster::identity_range(0, 255);
  cluster::IdentityGc gc(client, system_clock(), options, log);
  const cluster::LeaderFence fence = lead(client);

  for (int pass = 1; pass <= 2; ++pass) {
    cluster::IdentityGcReport report;
    const testing::PeakRssGrowth m =
        testing::measure_peak_rss_growth([&] { report = gc.run_pass(fence, {}); });
    result.slowest_pass_ms = std::max(result.slowest_pass_ms, m.wall_ms);
    const bool expected = report.end == cluster::PassEnd::complete &&
                          report.scanned == identities && report.candidates == unused &&
                          report.deleted == (pass == 1 ? 0 : unused) && report.refused == 0;
    if (!expected) {
      std::cerr << "identity gc bench: " << identities << " identities, pass " << pass
                << ": end=" << cluster::to_string(report.end) << " detail=\"" << report.detail
                << "\" scanned=" << report.scanned << " candidates=" << report.candidates
                << " deleted=" << report.deleted << " refused=" << report.refused << "\n";
      result.ok = false;
    }
    passes.add({std::to_string(identities), std::to_string(value_keys),
                pass == 1 ? "1 (remembers)" : "2 (deletes)", fmt_duration(m.wall_ms),
                std::to_string(report.etcd_requests), std::to_string(report.pages),
                std::to_string(report.deleted), kib(m.peak_growth_kb)});
  }
  const std::int64_t left = count_under(client, kvstore::kIdentityIdPrefix);
  if (left != identities - unused) {
    std::cerr << "identity gc bench: " << left << " master keys left, expected "
              << identities - unused << "\n";
    result.ok = false;
  }

  // The comparison: the value keys in one answer, held at once as a pass that did not page
  // would hold them (before it even reads the master keys).
  std::size_t kvs = 0;
  std::size_t bytes = 0;
  const testing::PeakRssGrowth m = testing::measure_peak_rss_growth([&] {
    etcd::RangeRequest r{std::string(kvstore::kIdentityValuePrefix),
                         etcd::prefix_end(kvstore::kIdentityValuePrefix)};
    auto page = client.range(r, Deadline(system_clock().now() + 60s));
    if (!page) throw std::runtime_error("unpaged range: " + page.error().message);
    kvs = page->kvs.size();
    for (const auto& kv : page->kvs) bytes += kv.key.size() + kv.value.size();
  });
  if (static_cast<std::int64_t>(kvs) != value_keys) {
    std::cerr << "identity gc bench: the unpaged range returned " << kvs << " keys, expected "
              << value_keys << "\n";
    result.ok = false;
  }
  giant.add({std::to_string(identities), std::to_string(kvs), fmt_duration(m.wall_ms), "1",
             kib(static_cast<long>(bytes / 1024)), kib(m.peak_growth_kb)});

  // The IP GC on the same etcd, beside the identities left.
  std::vector<nomad::NodeStub> nomad;
  const IpSeed ips = seed_ips(client, identities * kIpsPerIdentity, nomad);
  cluster::IpGcOptions ip_options;
  ip_options.local_node = bench_node_name(0);
  ip_options.deletions_per_minute = 0;
  ip_options.max_per_pass = ips.keys;  // the cap off: the whole deleting pass measured
  cluster::IpGc ip_gc(client, system_clock(), ip_options, log);
  for (int pass = 1; pass <= 2; ++pass) {
    cluster::IpGcReport report;
    const testing::PeakRssGrowth ip_m =
        testing::measure_peak_rss_growth([&] { report = ip_gc.run_pass(nomad, fence, {}); });
    result.slowest_ip_pass_ms = std::max(result.slowest_ip_pass_ms, ip_m.wall_ms);
    const bool expected = report.end == cluster::PassEnd::complete && report.scanned == ips.keys &&
                          report.candidates == ips.stale &&
                          report.deleted == (pass == 1 ? 0 : ips.stale) && report.refused == 0;
    if (!expected) {
      std::cerr << "ip gc bench: " << ips.keys << " IP entries, pass " << pass
                << ": end=" << cluster::to_string(report.end) << " detail=\"" << report.detail
                << "\" scanned=" << report.scanned << " candidates=" << report.candidates
                << " deleted=" << report.deleted << " refused=" << report.refused << "\n";
      result.ok = false;
    }
    ip_passes.add({std::to_string(ips.keys), std::to_string(identities - unused),
                   pass == 1 ? "1 (remembers)" : "2 (deletes)", fmt_duration(ip_m.wall_ms),
                   std::to_string(report.etcd_requests), std::to_string(report.pages),
                   std::to_string(report.deleted), kib(ip_m.peak_growth_kb)});
  }
  return result;
}

int run() {
  MarkdownTable passes({"identities", "value keys", "pass", "wall time", "etcd requests", "pages",
                        "deleted", "peak RSS growth"});
  MarkdownTable giant({"identities", "value keys read", "wall time", "etcd requests",
                       "keys + values", "peak RSS growth"});
  MarkdownTable seeding({"identities", "seeding (txns of 128 puts)"});
  MarkdownTable ip_passes({"IP entries", "identities beside", "pass", "wall time", "etcd requests",
                           "pages", "deleted", "peak RSS growth"});
  double largest_slowest_ip_ms = 0;
  // The target is the largest store's.
  int largest = 0;
  double largest_slowest_ms = 0;
  bool ok = true;
  for (int n : sizes()) {
    const SizeResult r = run_size(n, passes, giant, ip_passes);
    if (n >= largest) {
      largest = n;
      largest_slowest_ms = r.slowest_pass_ms;
      largest_slowest_ip_ms = r.slowest_ip_pass_ms;
    }
    ok = ok && r.ok;
    char seed[32];
    std::snprintf(seed, sizeof seed, "%.1f s", r.seed_s);
    seeding.add({std::to_string(n), seed});
  }
  std::string text =
      "### Identity GC at scale\n\nA real etcd 3.4 on loopback (one member, a fresh data dir per "
      "size), identities seeded as the agents write them: master keys without a lease, value "
      "keys on one of 50 node leases; 10 % of the identities have no value key. The real "
      "`IdentityGc` through the real `CurlEtcdClient`, rate limit off, pages of 1,000 keys, "
      "deletion logs formatted into a null sink. Peak RSS growth: the process's VmHWM after the "
      "pass minus its VmRSS before it (VmHWM reset through `/proc/self/clear_refs` and freed "
      "heap trimmed just before).\n\n" +
      passes.str() +
      "\nThe comparison, same run and store (after the passes): the value keys in one unpaged "
      "range (limit 0), as a pass that does not page would hold them.\n\n" +
      giant.str() + "\n" + seeding.str() + "\nTarget: one pass over 50,000 identities ≤ 10 s. " +
      "Slowest pass over " + std::to_string(largest) +
      " identities: " + fmt_duration(largest_slowest_ms) + ", " +
      (largest < 50'000               ? "not this size"
       : largest_slowest_ms <= 10'000 ? "met"
                                      : "MISSED") +
      ".\n\n### IP GC at scale\n\nThe same etcd after the identity passes: " +
      std::to_string(kIpsPerIdentity) +
      " ipcache entries per identity, each of 50 node entries (with a marker; Nomad lists the "
      "last node down), 90 % on their node's lease, 10 % without a lease and stale (of the down "
      "node, or missing from their live node's in-use report of endpoint IPs). The real `IpGc`, "
      "rate limit and per-pass cap off.\n\n" +
      ip_passes.str() + "\nSlowest IP GC pass over " + std::to_string(largest * kIpsPerIdentity) +
      " entries: " + fmt_duration(largest_slowest_ip_ms) + ".\n";
  publish("identity_gc", text);
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  spdlog::set_level(spdlog::level::warn);
  if (!testing::EtcdServer::available()) {
    std::cerr << "identity gc bench: " << testing::EtcdServer::kBinary << " is not installed\n";
    return 1;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "identity gc bench: " << e.what() << "\n";
    return 1;
  }
}
