// Nomad services on Cilium's load balancer (docs/services.md) at 1,000 services x 10 instances:
// the real ServicesLoop and ServicesSync, the real curl client, VipTable and LbStateFileWriter,
// in this process on the system clock, against the fake Nomad over loopback TCP. Measures:
//  1. cold start: loop start -> the first state file with every service and backend, the VIP
//     table empty (1,000 claims); then a warm restart over the same table;
//  2. a change -> the new file on disk, seen through inotify (no polling period): one instance
//     deregistered or registered again (the Service event topic), a peer node's report turning
//     one instance not ready or ready (the variables watch), and this node's own check turning
//     (bounded by the check interval the loop polls on);
//  3. RSS growth of this process over each labeler's life;
//  4. the requests the fake Nomad receives per minute when nothing changes, by route.
//
// The 1,000 services are 100 jobs whose group has 10 services (one port each), placed 10 times
// on 10 nodes: 1,000 allocations, 100 per node. A node's report holds its allocations, and one
// Nomad variable holds at most 64 KiB: 100 allocations of 10 services fit, 1,000 would not. The
// labeler under test is node 0; the nine others' reports are written by the bench, as their
// labelers would (the same instance_report over the same allocation and checks).
#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <stop_token>
#include <thread>

#include <spdlog/spdlog.h>

#include "bench/bench_stats.h"
#include "bench/support/bench_dir.h"
#include "bench/support/file_arrival.h"
#include "bench/support/proc_stats.h"
#include "bench/support/wait_until.h"
#include "common/nomad/client/curl_nomad_client.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/serve/metrics.h"
#include "labeler/services/lb_state_file_writer.h"
#include "labeler/services/node_report.h"
#include "labeler/services/services_loop.h"
#include "labeler/services/services_sync.h"
#include "labeler/services/vip_table.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace {

using namespace cn;
using namespace cn::bench;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

constexpr int kJobs = 100;
constexpr int kServicesPerGroup = 10;
constexpr int kNodes = 10;  // one instance of every service per node
constexpr int kServices = kJobs * kServicesPerGroup;
constexpr int kBackends = kServices * kNodes;
const std::string kReportsPrefix = "cilium-nomad/services/nodes/";

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

double ms_between(Steady::time_point a, Steady::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string node_id(int n) {
  if (n == 0) return fakes::FakeNomadConfig{}.node_id;
  char buf[40];
  std::snprintf(buf, sizeof buf, "0a9b8c7d-0000-4000-8000-%012d", n);
  return buf;
}

std::string service_name(int job, int s) {
  return "svc-" + std::to_string(job) + "-" + std::to_string(s);
}

// Resident memory of this process with freed heap handed back first: what is live.
long live_rss_kb() {
  ::malloc_trim(0);
  auto s = sample_process(::getpid());
  return s ? s->rss_kb : 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string mb(long kb) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(kb) / 1024.0);
  return buf;
}

std::unique_ptr<nomad::CurlNomadClient> client_for(const fakes::FakeNomad& fake) {
  nomad::NomadClientConfig c;
  c.address = fake.address();
  c.retry_seed = 1;
  auto client = nomad::CurlNomadClient::create(std::move(c));
  if (!client) throw std::runtime_error("curl client: " + client.error().message);
  return std::move(*client);
}

struct Cluster {
  std::unique_ptr<fakes::FakeNomad> fake;
  // Per allocation: its node and its services' names (one registration each).
  struct Instance {
    std::string alloc_id;
    int job = 0;
    int node = 0;
  };
  std::vector<Instance> instances;
  std::map<int, labeler::NodeReport> peer_reports;  // the nine other nodes' reports
};

void put_report(Cluster& c, int node) {
  auto put = c.fake->put_variable("default", kReportsPrefix + node_id(node),
                                  labeler::encode_node_report(c.peer_reports[node]));
  if (!put) throw std::runtime_error("peer report: " + put.error().message);
}

Cluster build_cluster() {
  Cluster c;
  fakes::FakeNomadConfig cfg;
  cfg.blocking_jitter = false;
  c.fake = std::make_unique<fakes::FakeNomad>(cfg);
  for (int n = 1; n < kNodes; ++n) {
    fakes::NodeRecord node;
    node.id = node_id(n);
    node.name = "worker-" + std::to_string(n + 1);
    node.ip = "10.0.1." + std::to_string(15 + n);
    c.fake->add_node(node);
  }
  if (!c.fake->start()) throw std::runtime_error("fake Nomad did not start");
  for (int j = 0; j < kJobs; ++j) {
    fakes::JobSpec job;
    job.id = "app-" + std::to_string(j);
    fakes::GroupSpec g;
    g.name = "app";
    for (int s = 0; s < kServicesPerGroup; ++s) {
      const std::string label = "p" + std::to_string(s);
      g.ports.push_back(fakes::PortSpec{label, 8000 + s, std::nullopt});
      fakes::ServiceSpec svc;
      svc.name = service_name(j, s);
      svc.port_label = label;
      svc.address_mode = "alloc";
      svc.checks = {fakes::CheckSpec{svc.name + "-alive", "http", false}};
      g.services.push_back(svc);
    }
    job.groups = {g};
    if (!c.fake->register_job(job)) throw std::runtime_error("register_job");
    std::vector<fakes::PlaceRequest> reqs(kNodes);
    for (int n = 0; n < kNodes; ++n) {
      reqs[static_cast<std::size_t>(n)].job_id = job.id;
      reqs[static_cast<std::size_t>(n)].node_id = node_id(n);
    }
    auto ids = c.fake->place_allocs(std::move(reqs));
    if (!ids) throw std::runtime_error("place_allocs: " + ids.error().message);
    for (int n = 0; n < kNodes; ++n) {
      const std::string& id = (*ids)[static_cast<std::size_t>(n)];
      const std::string ip = "10.200." + std::to_string(j) + "." + std::to_string(n + 1);
      if (!c.fake->set_network_status(id, {ip, "", "eth0"}))
        throw std::runtime_error("set_network_status");
      if (!c.fake->register_services(id)) throw std::runtime_error("register_services");
      for (int s = 0; s < kServicesPerGroup; ++s) {
        if (!c.fake->set_check_status(id, service_name(j, s) + "-alive", "success"))
          throw std::runtime_error("set_check_status");
      }
      c.instances.push_back({id, j, n});
    }
  }
  // The other nodes' labelers publish what they read from their own agents.
  auto client = client_for(*c.fake);
  const Deadline deadline{system_clock().now() + 60s};
  for (const auto& inst : c.instances) {
    if (inst.node == 0) continue;
    auto alloc = client->allocation(inst.alloc_id, deadline);
    auto checks = client->alloc_checks(inst.alloc_id, deadline);
    if (!alloc || !checks) throw std::runtime_error("peer allocation or checks unreadable");
    std::vector<std::string> names;
    for (int s = 0; s < kServicesPerGroup; ++s) names.push_back(service_name(inst.job, s));
    c.peer_reports[inst.node][inst.alloc_id] = labeler::instance_report(*alloc, names, *checks);
  }
  for (int n = 1; n < kNodes; ++n) put_report(c, n);
  return c;
}

labeler::ServicesSyncOptions sync_options() {
  labeler::ServicesSyncOptions o;
  o.node_id = node_id(0);
  return o;
}

// One labeler's services stack on node 0, its loop on a thread of its own.
struct Labeler {
  Labeler(const fakes::FakeNomad& fake, const labeler::VipRange& range, std::string state_file)
      : client(client_for(fake)),
        vips(*client, *client, range, system_clock()),
        writer(std::move(state_file)),
        sync(*client, *client, vips, writer, sync_options()),
        calls(metrics),
        loop(labeler::ServicesLoopDeps{*client, sync, system_clock(), metrics, calls,
                                       spdlog::default_logger()},
             labeler::ServicesLoopOptions{.seed = 1}) {}
  void start() {
    thread = std::jthread([this](std::stop_token stop) { loop.run(stop); });
  }
  // Until the pass after `before` has finished (the file lands inside the pass).
  void wait_pass_after(std::uint64_t before) const {
    if (!wait_until([&] { return loop.passes() > before; }, 30s, 1ms))
      throw std::runtime_error("no pass finished");
  }

  std::unique_ptr<nomad::CurlNomadClient> client;
  labeler::VipTable vips;
  labeler::LbStateFileWriter writer;
  labeler::ServicesSync sync;
  labeler::Metrics metrics;
  labeler::CallRecorder calls;
  labeler::ServicesLoop loop;
  std::jthread thread;  // last: joined before the rest goes
};

// Every service and every backend in the file, each backend ready.
bool complete(const std::string& text) {
  std::size_t slices = 0;
  for (auto at = text.find("\"kubernetes.io/service-name\""); at != std::string::npos;
       at = text.find("\"kubernetes.io/service-name\"", at + 1))
    ++slices;
  std::size_t ready = 0;
  for (auto at = text.find("\"ready\":true"); at != std::string::npos;
       at = text.find("\"ready\":true", at + 1))
    ++ready;
  std::size_t services = 0;
  for (auto at = text.find("\"clusterIP\""); at != std::string::npos;
       at = text.find("\"clusterIP\"", at + 1))
    ++services;
  return services == kServices && slices == kBackends && ready == kBackends;
}

std::string slice_name(const Cluster::Instance& inst, int s) {
  return "\"" + service_name(inst.job, s) + "-" + inst.alloc_id + "\"";
}

std::string registration_id(const fakes::FakeNomad& fake, const Cluster::Instance& inst, int s) {
  for (const auto& r : fake.service_registrations()) {
    if (r.alloc_id == inst.alloc_id && r.service_name == service_name(inst.job, s)) return r.id;
  }
  throw std::runtime_error("no registration for " + inst.alloc_id);
}

struct StartResult {
  double to_file_ms = 0;
  std::map<std::string, int> requests;
  long rss_growth_kb = 0;
};

StartResult start_and_wait(Cluster& c, Labeler& l, const std::string& dir,
                           const std::string& path) {
  FileArrival arrival(dir);
  c.fake->clear_requests();
  const auto t0 = Steady::now();
  l.start();
  auto seen = arrival.wait(path, complete, 60s);
  if (!seen) throw std::runtime_error("no complete state file within 60 s");
  StartResult r;
  r.to_file_ms = ms_between(t0, *seen);
  r.requests = c.fake->request_counts();
  return r;
}

std::string route_counts(const std::map<std::string, int>& counts, double scale) {
  std::string out;
  for (const auto& [route, n] : counts) {
    if (n == 0) continue;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.0f", out.empty() ? "" : ", ", route.c_str(),
                  static_cast<double>(n) * scale);
    out += buf;
  }
  return out.empty() ? "none" : out;
}

int total(const std::map<std::string, int>& counts) {
  int n = 0;
  for (const auto& [route, k] : counts) n += k;
  return n;
}

int run() {
  const int changes = env_int("SERVICES_CHANGES", 200);
  const int report_flips = env_int("SERVICES_REPORT_FLIPS", 50);
  const int own_flips = env_int("SERVICES_OWN_FLIPS", 4);
  const int idle_s = env_int("SERVICES_IDLE_S", 30);
  const auto range = *labeler::VipRange::parse("10.96.0.0/16");

  const auto setup_start = Steady::now();
  Cluster c = build_cluster();
  std::cerr << "services bench: cluster set up in "
            << fmt_duration(ms_between(setup_start, Steady::now())) << "\n";
  BenchDir dir;
  c.fake->clear_requests();

  // 1. Cold start: no VIP yet, so the first passes claim all 1,000.
  StartResult cold;
  const long rss_before_cold = live_rss_kb();
  {
    Labeler cold_labeler(*c.fake, range, dir.file("cold.json"));
    cold = start_and_wait(c, cold_labeler, dir.path(), dir.file("cold.json"));
    // Its passes triggered by its own VIP writes settle before it is measured and stopped.
    c.fake->clear_requests();
    cold.rss_growth_kb = live_rss_kb() - rss_before_cold;
  }
  // Warm restart: the VIP table holds every service's VIP.
  const long rss_before_warm = live_rss_kb();
  Labeler l(*c.fake, range, dir.file("warm.json"));
  StartResult warm = start_and_wait(c, l, dir.path(), dir.file("warm.json"));
  // Let the start's own follow-ups (the watch's first answer, our report) finish first.
  c.fake->wait_for_blocked(1, 10s);
  const long rss_after_warm = live_rss_kb() - rss_before_warm;

  // 2. Changes. Each waits for the pass that wrote it to finish, so none is coalesced.
  FileArrival arrival(dir.path());
  const std::string path = dir.file("warm.json");
  std::vector<double> reg_ms;
  std::vector<Cluster::Instance> peers;
  for (const auto& inst : c.instances)
    if (inst.node != 0) peers.push_back(inst);
  for (int i = 0; i < changes; ++i) {
    const auto& inst = peers[static_cast<std::size_t>(i / 2 * 7) % peers.size()];
    // A deregistration and the registration that brings the same instance back.
    const int s = (i / 2) % kServicesPerGroup;
    const std::string slice = slice_name(inst, s);
    const bool remove = i % 2 == 0;
    const std::uint64_t before = l.loop.passes();
    const auto t0 = Steady::now();
    if (remove) {
      if (!c.fake->delete_service_registration("default", registration_id(*c.fake, inst, s)))
        throw std::runtime_error("delete_service_registration");
    } else if (!c.fake->register_services(inst.alloc_id)) {
      throw std::runtime_error("register_services");
    }
    auto seen = arrival.wait(
        path,
        [&](const std::string& text) { return (text.find(slice) == std::string::npos) == remove; },
        30s);
    if (!seen) throw std::runtime_error("registration change never reached the file");
    reg_ms.push_back(ms_between(t0, *seen));
    l.wait_pass_after(before);
  }

  // A peer's labeler reports one of its instances failing, then passing again.
  std::vector<double> report_ms;
  for (int i = 0; i < report_flips; ++i) {
    const auto& inst = peers[static_cast<std::size_t>(i / 2 * 13) % peers.size()];
    const std::string name = service_name(inst.job, (i / 2) % kServicesPerGroup);
    auto& health = c.peer_reports[inst.node][inst.alloc_id].services[name];
    const bool fail = i % 2 == 0;
    health = fail ? labeler::InstanceHealth{labeler::BackendState::not_ready,
                                            "check " + name + "-alive: failure"}
                  : labeler::InstanceHealth{};
    const std::string before_text = read_text(path);
    const std::uint64_t before = l.loop.passes();
    const auto t0 = Steady::now();
    put_report(c, inst.node);
    auto seen = arrival.wait(
        path, [&](const std::string& text) { return text != before_text; }, 30s);
    if (!seen) throw std::runtime_error("peer report never reached the file");
    report_ms.push_back(ms_between(t0, *seen));
    l.wait_pass_after(before);
  }

  // This node's own check: read by the loop's poll every check interval (5 s by default).
  std::vector<double> own_ms;
  std::vector<Cluster::Instance> own;
  for (const auto& inst : c.instances)
    if (inst.node == 0) own.push_back(inst);
  for (int i = 0; i < own_flips; ++i) {
    const auto& inst = own[static_cast<std::size_t>(i / 2) % own.size()];
    const std::string name = service_name(inst.job, 0);
    const bool fail = i % 2 == 0;
    const std::string before_text = read_text(path);
    const auto t0 = Steady::now();
    if (!c.fake->set_check_status(inst.alloc_id, name + "-alive", fail ? "failure" : "success"))
      throw std::runtime_error("set_check_status");
    auto seen = arrival.wait(
        path, [&](const std::string& text) { return text != before_text; }, 30s);
    if (!seen) throw std::runtime_error("own check never reached the file");
    own_ms.push_back(ms_between(t0, *seen));
  }

  // 4. Nothing changes: what the loop asks of Nomad at its default intervals.
  const std::uint64_t passes_before_idle = l.loop.passes();
  c.fake->clear_requests();
  std::this_thread::sleep_for(std::chrono::seconds{idle_s});  // the measuring window itself
  const auto idle = c.fake->request_counts();
  const std::uint64_t idle_passes = l.loop.passes() - passes_before_idle;
  const double per_minute = 60.0 / idle_s;
  c.fake->clear_requests();
  const long rss_warm_end = live_rss_kb() - rss_before_warm;

  const auto reg = summarize(reg_ms);
  const auto rep = summarize(report_ms);
  const auto own_s = summarize(own_ms);
  MarkdownTable t({"figure", "result", "target"});
  t.add({"cold start → complete file (1,000 VIP claims)", fmt_duration(cold.to_file_ms), "≤ 3 s"});
  t.add({"warm restart → complete file (VIPs held)", fmt_duration(warm.to_file_ms), "≤ 3 s"});
  t.add({"registration change → file, p50 / p99 / max (n=" + std::to_string(reg.n) + ")",
         fmt_duration(reg.p50_ms) + " / " + fmt_duration(reg.p99_ms) + " / " +
             fmt_duration(reg.max_ms),
         "p50 ≤ 100 ms, p99 ≤ 500 ms"});
  t.add({"peer report (check turned) → file, p50 / p99 (n=" + std::to_string(rep.n) + ")",
         fmt_duration(rep.p50_ms) + " / " + fmt_duration(rep.p99_ms), "—"});
  t.add({"own check turned → file, p50 / max (n=" + std::to_string(own_s.n) + ")",
         fmt_duration(own_s.p50_ms) + " / " + fmt_duration(own_s.max_ms),
         "≤ check interval (5 s)"});
  t.add({"RSS growth, cold labeler (after start)", mb(cold.rss_growth_kb), "≤ 30 MB"});
  t.add({"RSS growth, warm labeler (start, changes, idle)",
         mb(std::max(rss_after_warm, rss_warm_end)), "≤ 30 MB"});
  char idle_cell[64];
  std::snprintf(idle_cell, sizeof idle_cell, "%.0f / min (%d passes in %d s)",
                total(idle) * per_minute, static_cast<int>(idle_passes), idle_s);
  t.add({"Nomad requests when nothing changes", idle_cell, "report"});

  std::string text =
      "### Nomad services on the load balancer\n\n"
      "1,000 services × 10 instances (100 jobs of 10 group services, 1,000 allocations on 10 "
      "nodes, 100 per node); the labeler under test is node 0. The real `ServicesLoop` at its "
      "default intervals, `ServicesSync`, curl client, `VipTable` and `LbStateFileWriter` in "
      "this process, the fake Nomad over loopback TCP; the file's arrival seen through inotify. "
      "RSS growth counts the whole process, the fake Nomad's own growth included.\n\n" +
      t.str() + "\nNomad requests at cold start: " + std::to_string(total(cold.requests)) + " (" +
      route_counts(cold.requests, 1) + "); warm restart: " + std::to_string(total(warm.requests)) +
      " (" + route_counts(warm.requests, 1) +
      "). Idle, per minute: " + route_counts(idle, per_minute) + ".\n";
  publish("services", text);
  l.thread.request_stop();
  return 0;
}

}  // namespace

int main() {
  // CN_BENCH_LOG=info shows the loop's passes and writes.
  const char* level = std::getenv("CN_BENCH_LOG");
  spdlog::set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "services bench: " << e.what() << "\n";
    return 1;
  }
}
