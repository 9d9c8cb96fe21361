// The state file under contention: 100 plugin processes in flight at once, each doing ADDs
// (then DELs) of its own allocations against one state file on tmpfs that already holds 100,
// beside the same 100-way concurrency of the static no-op floor. No labeler: every ADD finds
// the socket absent at once, so what is measured is exec + the state file lock and write.
// Afterwards the file must hold exactly what was added (no lost update).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <latch>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/bench_stats.h"
#include "bench/support/bench_dir.h"
#include "bench/support/plugin_call.h"
#include "tests/support/netns.h"
#include "tests/support/process.h"

namespace {

using namespace cn;
using namespace cn::bench;

constexpr int kResident = 100;
constexpr int kProcesses = 100;

struct Phase {
  std::vector<double> ms;
  double wall_s = 0;
  int failures = 0;
};

// kProcesses threads, each running its share of `allocs` one after the other: kProcesses
// plugin processes are in flight for the whole phase.
Phase run_phase(const PluginTarget& target, const std::string& verb,
                const std::vector<std::string>& allocs) {
  Phase phase;
  std::vector<std::vector<double>> per_thread(kProcesses);
  std::vector<int> failures(kProcesses, 0);
  std::latch go(kProcesses);
  auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kProcesses; ++t) {
      threads.emplace_back([&, t] {
        go.arrive_and_wait();
        for (std::size_t i = static_cast<std::size_t>(t); i < allocs.size(); i += kProcesses) {
          auto run = run_plugin(target, verb, allocs[i], plugin_netconf(target, "10.200.9.9"));
          per_thread[static_cast<std::size_t>(t)].push_back(run.ms);
          if (run.exit_code != 0) ++failures[static_cast<std::size_t>(t)];
        }
      });
    }
  }
  phase.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int t = 0; t < kProcesses; ++t) {
    phase.ms.insert(phase.ms.end(), per_thread[static_cast<std::size_t>(t)].begin(),
                    per_thread[static_cast<std::size_t>(t)].end());
    phase.failures += failures[static_cast<std::size_t>(t)];
  }
  return phase;
}

// Through the product's own reader, so the count does not depend on the file format.
long entries(const std::string& state_file) {
  auto r = testing::run_process(
      {testing::bin_dir() + "/cilium-nomad-labeler", "state", "--state-file", state_file, "--json"},
      {}, "");
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  return doc.is_object() ? static_cast<long>(doc.size()) : -1;
}

std::vector<std::string> new_allocs(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(testing::random_alloc_id());
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  const int per_process =
      std::getenv("CONTENTION_OPS") ? std::atoi(std::getenv("CONTENTION_OPS")) : 10;
  BenchDir dir;
  PluginTarget plugin{testing::bin_dir() + "/cilium-nomad-cni", dir.file("state.json"),
                      dir.file("labeler.sock"), 3000};
  PluginTarget floor = plugin;
  floor.binary = std::filesystem::path(argv[0]).parent_path().string() + "/cn-noop-floor";
  (void)argc;

  for (const auto& id : new_allocs(kResident)) {
    if (run_plugin(plugin, "ADD", id, plugin_netconf(plugin, "10.200.9.8")).exit_code != 0)
      return 1;
  }
  const auto ids = new_allocs(kProcesses * per_process);
  Phase floor_phase = run_phase(floor, "ADD", ids);
  Phase add = run_phase(plugin, "ADD", ids);
  long after_add = entries(plugin.state_file);
  Phase del = run_phase(plugin, "DEL", ids);
  long after_del = entries(plugin.state_file);

  MarkdownTable t({"case (100 processes in flight)", "ops", "ops/s", "p50", "p99", "max",
                   "entries after (expected)"});
  auto row = [&](const std::string& name, const Phase& p, const std::string& check) {
    auto s = summarize(p.ms);
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.0f", static_cast<double>(p.ms.size()) / p.wall_s);
    t.add({name + (p.failures ? " (" + std::to_string(p.failures) + " failed)" : ""),
           std::to_string(p.ms.size()), rate, fmt_duration(s.p50_ms), fmt_duration(s.p99_ms),
           fmt_duration(s.max_ms), check});
  };
  row("floor: static no-op, same stdin", floor_phase, "-");
  row("ADD, labeler absent", add,
      std::to_string(after_add) + " (" + std::to_string(kResident + static_cast<long>(ids.size())) +
          ")");
  row("DEL", del, std::to_string(after_del) + " (" + std::to_string(kResident) + ")");
  std::string text =
      "### State file under contention\n\nOne state file on tmpfs, " + std::to_string(kResident) +
      " allocations resident; " + std::to_string(kProcesses) +
      " plugin processes in flight for the whole phase, " + std::to_string(per_process) +
      " operations each. Entries are counted afterwards with `cilium-nomad-labeler state "
      "--json`.\n\n" +
      t.str();
  publish("state_contention", text);
  bool lost = after_add != kResident + static_cast<long>(ids.size()) || after_del != kResident;
  return lost || add.failures || del.failures ? 1 : 0;
}
