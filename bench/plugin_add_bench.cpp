// Plugin ADD overhead: N runs of the real binary, exec'd like a CNI runtime does, against a
// static do-nothing floor fed the same stdin. Cases: labeler absent, and a labeler that confirms
// at once. The state file sits on tmpfs, as /run/cilium-nomad does on a node.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/bench_stats.h"
#include "common/state/state_store.h"
#include "tests/support/netns.h"
#include "tests/support/process.h"
#include "tests/support/stub_labeler.h"

namespace {

using namespace cn;
using nlohmann::json;

std::string tmpfs_dir() {
  std::string base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string tmpl = base + "/cn-bench-XXXXXX";
  if (!::mkdtemp(tmpl.data())) std::abort();
  return tmpl;
}

json add_conf(const std::string& dir, int wait_ms) {
  return {
      {"cniVersion", "1.0.0"},
      {"name", "cilium"},
      {"type", "cilium-nomad-cni"},
      {"state-file", dir + "/state.json"},
      {"labeler-socket", dir + "/labeler.sock"},
      {"wait-for-labels-ms", wait_ms},
      {"prevResult",
       json::parse(
           R"({"cniVersion":"1.0.0","interfaces":[{"name":"lxc5b2f3c9d1e0a","mac":"9a:0c:51:7e:2b:44"},
            {"name":"eth0","mac":"e6:3d:8f:10:aa:07","sandbox":"/var/run/netns/x"}],
            "ips":[{"interface":1,"address":"10.200.3.17/32","gateway":"10.200.3.1"}],
            "routes":[{"dst":"10.200.3.1/32"},{"dst":"0.0.0.0/0","gw":"10.200.3.1"}]})")}};
}

// A busy node: this many allocations already in the state file when an ADD comes.
constexpr int kResidentAllocs = 100;

void populate(const std::string& dir) {
  state::StateStore store({dir + "/state.json"}, system_clock(), nullptr);
  (void)store.update([](state::StateDoc& doc) {
    for (int i = 0; i < kResidentAllocs; ++i) {
      auto& e = doc.allocations[testing::random_alloc_id()];
      e.ifname = "eth0";
      e.ips = {"10.200.3." + std::to_string(i + 1)};
      e.netns = "/var/run/netns/x";
      e.nomad = {"global", "default", "web", "app"};
      e.labeled = state::LabeledInfo{
          1000 + i,
          48213,
          {"k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
           "nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"},
          "2026-11-29T20:00:00.000Z"};
    }
    return true;
  });
}

// Removes the run's entry afterwards (untimed), so every ADD meets kResidentAllocs entries.
void forget(const std::string& dir, const std::string& id) {
  state::StateStore store({dir + "/state.json"}, system_clock(), nullptr);
  (void)store.update([&](state::StateDoc& doc) { return doc.allocations.erase(id) > 0; });
}

std::vector<double> time_runs(const std::vector<std::string>& argv, const std::string& stdin_data,
                              int runs, const std::string& dir) {
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    std::string id = testing::random_alloc_id();
    std::map<std::string, std::string> env = {
        {"CNI_COMMAND", "ADD"},
        {"CNI_CONTAINERID", id},
        {"CNI_IFNAME", "eth0"},
        {"CNI_NETNS", "/var/run/netns/x"},
        {"CNI_PATH", "/opt/cni/bin"},
        {"CNI_ARGS",
         "IgnoreUnknown=true;NOMAD_NAMESPACE=default;NOMAD_JOB_ID=web;NOMAD_GROUP_NAME=app"}};
    auto start = std::chrono::steady_clock::now();
    auto r = testing::run_process(argv, env, stdin_data);
    auto end = std::chrono::steady_clock::now();
    if (r.exit_code != 0) {
      std::fprintf(stderr, "run failed: %s %s\n", r.out.c_str(), r.err.c_str());
      std::exit(1);
    }
    samples.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    forget(dir, id);
  }
  return samples;
}

// The state write alone, in-process, through the call the plugin makes (one entry): lock,
// read, upsert, write temp, fsync, rename, fsync dir.
std::vector<double> time_state_writes(const std::string& dir, int runs) {
  state::StateStore store({dir + "/state.json"}, system_clock(), nullptr);
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) {
    std::string id = testing::random_alloc_id();
    auto start = std::chrono::steady_clock::now();
    auto ok = store.update_entry(
        id,
        [&](std::optional<state::StateEntry>& entry) {
          entry.emplace();
          entry->ifname = "eth0";
          entry->ips = {"10.200.3.17"};
          return true;
        },
        state::StateStore::Creation::allowed);  // an ADD writes a new entry
    auto end = std::chrono::steady_clock::now();
    if (!ok) std::exit(1);
    samples.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    forget(dir, id);
  }
  return samples;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cn;
  int runs = argc > 1 ? std::atoi(argv[1]) : 1000;
  std::string bin = cn::testing::bin_dir();
  std::string floor_bin = std::filesystem::path(argv[0]).parent_path().string() + "/cn-noop-floor";
  std::string plugin = bin + "/cilium-nomad-cni";

  std::string dir_floor = tmpfs_dir(), dir_absent = tmpfs_dir(), dir_confirm = tmpfs_dir(),
              dir_state = tmpfs_dir();
  std::string input_absent = add_conf(dir_absent, 3000).dump();
  std::string input_confirm = add_conf(dir_confirm, 3000).dump();

  for (const auto& d : {dir_absent, dir_confirm, dir_state}) populate(d);
  auto floor_s = bench::summarize(time_runs({floor_bin}, input_absent, runs, dir_floor));
  auto echo_s = bench::summarize(time_runs({floor_bin, "--echo"}, input_absent, runs, dir_floor));
  auto absent_s = bench::summarize(time_runs({plugin}, input_absent, runs, dir_absent));
  bench::Summary confirm_s;
  {
    testing::StubLabeler labeler(dir_confirm + "/labeler.sock",
                                 testing::StubLabeler::Mode::kConfirm);
    confirm_s = bench::summarize(time_runs({plugin}, input_confirm, runs, dir_confirm));
  }
  auto state_s = bench::summarize(time_state_writes(dir_state, runs));

  double budget = 1.5 * floor_s.p50_ms + state_s.p50_ms;
  bench::MarkdownTable t(
      {"case (" + std::to_string(runs) + " runs)", "p50 ms", "p99 ms", "max ms"});
  auto row = [&](const std::string& name, const bench::Summary& s) {
    t.add({name, bench::fmt_ms(s.p50_ms), bench::fmt_ms(s.p99_ms), bench::fmt_ms(s.max_ms)});
  };
  row("floor: static no-op, same stdin", floor_s);
  row("floor printing its stdin back (not the target's floor)", echo_s);
  row("state write alone (in-process, tmpfs)", state_s);
  row("ADD, labeler absent", absent_s);
  row("ADD, labeler confirms at once", confirm_s);
  std::string text =
      "### Plugin ADD overhead\n\nState file on tmpfs holding " + std::to_string(kResidentAllocs) +
      " allocations, as on a busy node.\n\n" + t.str() +
      "\nTarget: ADD p50 <= 1.5 x floor p50 + state write p50 = " + bench::fmt_ms(budget) +
      " ms. Labeler absent: " + (absent_s.p50_ms <= budget ? "met" : "MISSED") +
      "; labeler confirming: " + (confirm_s.p50_ms <= budget ? "met" : "MISSED") + ".\n";
  bench::publish("plugin_add", text);
  for (const auto& d : {dir_floor, dir_absent, dir_confirm, dir_state})
    std::filesystem::remove_all(d);
  return 0;
}
