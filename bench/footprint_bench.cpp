// Labeler footprint at 1,000 allocations: the real cilium-nomad-labeler binary against the
// fake-nomad and fake-cilium-agent binaries, read from /proc (VmRSS, VmHWM, utime + stime).
// Startup labels 1,000 endpoints; then a steady window during which allocations on OTHER nodes
// keep changing, as in a busy cluster. Ours watches this node's allocations (blocking query);
// the event-stream design (`--watch events`) hears every allocation event of the cluster.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/bench_stats.h"
#include "bench/support/bench_dir.h"
#include "bench/support/child_process.h"
#include "bench/support/proc_stats.h"
#include "bench/support/wait_until.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/support/process.h"

namespace {

using namespace cn;
using namespace cn::bench;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr int kLocalAllocs = 1000;
constexpr int kOtherAllocs = 200;  // on another node: the churn the event stream carries
constexpr int kChurnPerSecond = 50;
constexpr auto kWindow = 10s;
const std::string kNode = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";
const std::string kOtherNode = "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d";

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

json call(const fakes::HttpTarget& target, const std::string& method, const std::string& path,
          const std::string& body = {}) {
  auto r = fakes::http_request(target, method, path, body, {{"Content-Type", "application/json"}},
                               std::chrono::seconds{30});
  if (!r || r->status >= 300) throw std::runtime_error(method + " " + path + " failed");
  return r->body.empty() ? json() : json::parse(r->body, nullptr, false);
}

struct Footprint {
  std::string design;
  double startup_wall_s = 0;
  ProcSample after_startup;
  ProcSample after_window;
  double steady_cpu_percent = 0;
  int nomad_requests_in_window = 0;
};

Footprint measure(const std::string& watch) {
  BenchDir dir;
  const std::string bin = testing::bin_dir();
  const auto agent_sock = dir.file("cilium.sock");
  ChildProcess agent({bin + "/fake-cilium-agent", "--socket", agent_sock, "--rate-limits", "off",
                      "--identity-delay-ms", "0", "--regeneration-step-ms", "0", "--ready-file",
                      dir.file("agent.ready")},
                     dir.file("agent.log"));

  json scenario = {{"jobs", json::array({{{"id", "web"}}})},
                   {"nodes", json::array({{{"id", kOtherNode}, {"name", "worker-2"}}})},
                   {"allocs", json::array()}};
  for (int i = 0; i < kLocalAllocs; ++i) {
    std::string ip = "10.200." + std::to_string(1 + i / 200) + "." + std::to_string(10 + i % 200);
    scenario["allocs"].push_back(
        {{"job", "web"}, {"network", {{"address", ip}}}, {"client_status", "running"}});
  }
  for (int i = 0; i < kOtherAllocs; ++i) {
    scenario["allocs"].push_back(
        {{"job", "web"}, {"node", kOtherNode}, {"client_status", "running"}});
  }
  std::ofstream(dir.file("scenario.json")) << scenario.dump();
  ChildProcess nomad({bin + "/fake-nomad", "--port", "0", "--port-file", dir.file("nomad.port"),
                      "--node-id", kNode, "--scenario", dir.file("scenario.json")},
                     dir.file("nomad.log"));
  if (!wait_until([&] { return !read_text(dir.file("nomad.port")).empty(); }, 30s) ||
      !wait_until([&] { return !read_text(dir.file("agent.ready")).empty(); }, 30s)) {
    throw std::runtime_error("fakes did not start:\n" + nomad.log_tail() + agent.log_tail());
  }
  const int nomad_port = std::stoi(read_text(dir.file("nomad.port")));
  const auto nomad_at = fakes::HttpTarget::tcp("127.0.0.1", nomad_port);
  const auto agent_at = fakes::HttpTarget::unix_socket(agent_sock);

  // cilium-cni's endpoints for this node's allocations, still reserved:init.
  std::vector<std::string> others;
  const json state = call(nomad_at, "GET", "/_fake/state");
  for (const auto& a : state["allocs"]) {
    if (a["node"] != kNode) {
      others.push_back(a["id"]);
      continue;
    }
    std::string id = a["id"];
    call(agent_at, "POST", "/_fake/endpoints",
         json{{"container-id", id},
              {"container-interface-name", "eth0"},
              {"interface-name", "lxc" + id.substr(0, 8)},
              {"addressing", {{"ipv4", a["address"]}}},
              {"state", "waiting-for-identity"},
              {"sync-build-endpoint", true}}
             .dump());
  }

  auto started = std::chrono::steady_clock::now();
  // LABELER_PREFIX="heaptrack -o /tmp/labeler" runs the labeler under a profiler (its figures
  // then describe the profiler, not the labeler).
  std::vector<std::string> argv;
  if (const char* prefix = std::getenv("LABELER_PREFIX")) {
    std::istringstream words(prefix);
    for (std::string w; words >> w;) argv.push_back(w);
  }
  const int metrics_port = free_port();
  std::vector<std::string> args = {bin + "/cilium-nomad-labeler",
                                   "run",
                                   "--cilium-socket",
                                   agent_sock,
                                   "--nomad-addr",
                                   "http://127.0.0.1:" + std::to_string(nomad_port),
                                   "--node-id",
                                   kNode,
                                   "--socket",
                                   dir.file("labeler.sock"),
                                   "--state-file",
                                   dir.file("state.json"),
                                   "--watch",
                                   watch,
                                   "--metrics-addr",
                                   "127.0.0.1:" + std::to_string(metrics_port)};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess labeler(argv, dir.file("labeler.log"));
  const std::string patches = "/_fake/requests/count?method=PATCH&route=/endpoint/%7Bid%7D";
  bool labeled =
      wait_until([&] { return call(agent_at, "GET", patches)["count"].get<int>() >= kLocalAllocs; },
                 120s, 50ms);
  if (!labeled)
    throw std::runtime_error("startup did not label every endpoint:\n" + labeler.log_tail());
  Footprint r;
  r.design = watch;
  r.startup_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The writes are out; each is then looked at once more until its identity resolved (the
  // reconcile's writes do not wait for it). The steady window starts when that is done too.
  const auto metrics_at = fakes::HttpTarget::tcp("127.0.0.1", metrics_port);
  auto idle = [&] {
    auto m = fakes::http_request(metrics_at, "GET", "/metrics", "", {}, std::chrono::seconds{5});
    return m && m->body.find("\ncilium_nomad_unlabeled_allocations 0\n") != std::string::npos &&
           m->body.find("\ncilium_nomad_queue_depth 0\n") != std::string::npos;
  };
  if (!wait_until(idle, 120s, 50ms))
    throw std::runtime_error("labeler never became idle:\n" + labeler.log_tail());
  r.after_startup = sample_process(labeler.pid()).value_or(ProcSample{});

  call(nomad_at, "DELETE", "/_fake/requests");
  auto window_start = std::chrono::steady_clock::now();
  ProcSample before = sample_process(labeler.pid()).value_or(ProcSample{});
  // Allocations elsewhere in the cluster keep reporting (at a fixed pace: this is load, not a
  // wait).
  const auto step = std::chrono::microseconds{1'000'000 / kChurnPerSecond};
  for (int i = 0; std::chrono::steady_clock::now() < window_start + kWindow; ++i) {
    const std::string& id = others[static_cast<std::size_t>(i) % others.size()];
    call(nomad_at, "POST", "/_fake/allocs/" + id + "/client-status",
         json{{"status", i % 2 ? "running" : "pending"}}.dump());
    std::this_thread::sleep_until(window_start + step * (i + 1));
  }
  ProcSample after = sample_process(labeler.pid()).value_or(ProcSample{});
  double window_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - window_start).count();
  r.after_window = after;
  r.steady_cpu_percent = (after.cpu_seconds - before.cpu_seconds) / window_s * 100;
  const json requests = call(nomad_at, "GET", "/_fake/requests");
  for (const auto& [route, n] : requests["counts"].items()) {
    r.nomad_requests_in_window += n.get<int>();
  }
  labeler.stop();
  nomad.stop();
  agent.stop();
  return r;
}

std::string mb(long kb) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(kb) / 1024.0);
  return buf;
}

}  // namespace

int main() {
  std::vector<Footprint> results;
  // FOOTPRINT_WATCH=node (or events) measures one design only, e.g. under LABELER_PREFIX.
  const char* only = std::getenv("FOOTPRINT_WATCH");
  for (const std::string watch : {"node", "events"}) {
    if (only && watch != only) continue;
    // Caught here so that the stack unwinds and stops the child processes it started.
    try {
      results.push_back(measure(watch));
    } catch (const std::exception& e) {
      std::cerr << "footprint (" << watch << "): " << e.what() << "\n";
      return 1;
    }
  }

  MarkdownTable t({"design", "startup: 1,000 labeled in", "CPU at startup", "RSS after startup",
                   "peak RSS", "steady CPU", "RSS at end", "threads", "Nomad requests in window"});
  for (const auto& r : results) {
    char cpu[32], steady[32];
    std::snprintf(cpu, sizeof cpu, "%.2f s", r.after_startup.cpu_seconds);
    std::snprintf(steady, sizeof steady, "%.2f %%", r.steady_cpu_percent);
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.1f s", r.startup_wall_s);
    t.add({r.design == "node" ? "ours: `--watch node` (blocking query)"
                              : "event stream: `--watch events`",
           wall, cpu, mb(r.after_startup.rss_kb), mb(r.after_window.hwm_kb), steady,
           mb(r.after_window.rss_kb), std::to_string(r.after_window.threads),
           std::to_string(r.nomad_requests_in_window)});
  }
  const Footprint& ours = results.front();
  double rss_mb =
      static_cast<double>(std::max(ours.after_startup.rss_kb, ours.after_window.rss_kb)) / 1024.0;
  char window[240];
  std::snprintf(window, sizeof window,
                "%lld s window, %d allocation updates/s on another node (the event stream carries "
                "every one of "
                "them to the labeler; the node-scoped blocking query none)",
                static_cast<long long>(kWindow.count()), kChurnPerSecond);
  std::string text =
      "### Labeler footprint\n\n1,000 allocations on the node, all starting under reserved:init; " +
      std::string("the real binaries (labeler, fake-nomad, fake-cilium-agent). Steady: ") + window +
      ".\n\n" + t.str() +
      "\nTarget: RSS ≤ 30 MB at 1,000 allocations: " + mb(static_cast<long>(rss_mb * 1024)) + ", " +
      (rss_mb <= 30 ? "met" : "MISSED") + " (peak during startup: " + mb(ours.after_window.hwm_kb) +
      ").\n";
  publish("footprint", text);
  return 0;
}
