// Plugin ADD overhead: N runs of the real binary, exec'd like a CNI runtime does, against static
// floors fed the same stdin (bench/noop_floor.cpp): a no-op, one that echoes, and one that also
// takes the lock and rewrites the state file durably, the reference of the plugin's target. Cases:
// labeler absent, and a labeler that confirms at once. The state files sit on tmpfs, as
// /run/cilium-nomad does on a node.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

std::map<std::string, std::string> add_env(const std::string& id) {
  return {{"CNI_COMMAND", "ADD"},
          {"CNI_CONTAINERID", id},
          {"CNI_IFNAME", "eth0"},
          {"CNI_NETNS", "/var/run/netns/x"},
          {"CNI_PATH", "/opt/cni/bin"},
          {"CNI_ARGS",
           "IgnoreUnknown=true;NOMAD_NAMESPACE=default;NOMAD_JOB_ID=web;NOMAD_GROUP_NAME=app"}};
}

// One exec'd case: its command line, its stdin and the directory whose state file it meets.
struct ExecCase {
  std::string name;
  std::vector<std::string> argv;
  std::string stdin_data;
  std::string dir;
  std::vector<double> samples;
};

double run_once(ExecCase& c) {
  std::string id = testing::random_alloc_id();
  auto start = std::chrono::steady_clock::now();
  auto r = testing::run_process(c.argv, add_env(id), c.stdin_data);
  auto end = std::chrono::steady_clock::now();
  if (r.exit_code != 0) {
    std::fprintf(stderr, "%s: run failed: %s %s\n", c.name.c_str(), r.out.c_str(), r.err.c_str());
    std::exit(1);
  }
  forget(c.dir, id);
  return std::chrono::duration<double, std::milli>(end - start).count();
}

// Drops each binary's pages from the page cache, so that exec reads them in again as on a node
// after a boot. How the pages got there changes what mapping them costs: a freshly linked
// binary, or one read in by exec's faults, sits in small folios, while a file just written by
// cp sits in large ones and maps faster (0.18 ms less per ADD for the same plugin here). Without
// this, a before/after pair would compare how each binary was copied.
void evict_from_page_cache(const std::vector<ExecCase>& cases) {
  for (const auto& c : cases) {
    int fd = ::open(c.argv.front().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// Round robin, one run of each case in turn: load from other work on the machine drifts over a
// run of minutes, and interleaving spreads it over every case alike, so the ratios between the
// cases hold even when the absolute figures move.
void time_interleaved(std::vector<ExecCase>& cases, int runs) {
  for (auto& c : cases) c.samples.reserve(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    for (auto& c : cases) c.samples.push_back(run_once(c));
  }
}

// CN_BENCH_PLUGIN_TRACE="strace -f -c -o /tmp/add.txt" runs one more ADD of the given case,
// untimed, under that command (split on spaces): the same environment, stdin and state file as
// the timed runs, for strace or perf stat.
void trace_once(const ExecCase& c, const char* prefix) {
  std::vector<std::string> argv;
  std::string word;
  for (const char* p = prefix;; ++p) {
    if (*p == ' ' || *p == '\0') {
      if (!word.empty()) argv.push_back(word);
      word.clear();
      if (*p == '\0') break;
    } else {
      word += *p;
    }
  }
  argv.insert(argv.end(), c.argv.begin(), c.argv.end());
  std::string id = testing::random_alloc_id();
  auto r = testing::run_process(argv, add_env(id), c.stdin_data);
  std::fprintf(stderr, "traced %s: exit %d\n%s", c.name.c_str(), r.exit_code, r.err.c_str());
  forget(c.dir, id);
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

  std::string dir_floor = tmpfs_dir(), dir_durable = tmpfs_dir(), dir_absent = tmpfs_dir(),
              dir_confirm = tmpfs_dir(), dir_state = tmpfs_dir();
  std::string input_absent = add_conf(dir_absent, 3000).dump();
  std::string input_confirm = add_conf(dir_confirm, 3000).dump();

  for (const auto& d : {dir_durable, dir_absent, dir_confirm, dir_state}) populate(d);
  std::vector<ExecCase> cases = {
      {"floor: static no-op, same stdin", {floor_bin}, input_absent, dir_floor, {}},
      {"floor printing its stdin back", {floor_bin, "--echo"}, input_absent, dir_floor, {}},
      {"floor: lock + read + durable atomic write + echo (the target's floor)",
       {floor_bin, "--durable", dir_durable + "/state.json"},
       input_absent,
       dir_durable,
       {}},
      {"ADD, labeler absent", {plugin}, input_absent, dir_absent, {}},
      {"ADD, labeler confirms at once", {plugin}, input_confirm, dir_confirm, {}}};
  // CN_BENCH_PLUGIN_BEFORE=<an older cilium-nomad-cni> adds its two ADD cases to the same
  // interleaved run (each on a state file of its own), for a before/after comparison that the
  // machine's drift cannot tilt.
  const char* before = std::getenv("CN_BENCH_PLUGIN_BEFORE");
  std::string dir_before_absent, dir_before_confirm;
  if (before != nullptr) {
    dir_before_absent = tmpfs_dir();
    dir_before_confirm = tmpfs_dir();
    populate(dir_before_absent);
    populate(dir_before_confirm);
    cases.push_back({"ADD, labeler absent, CN_BENCH_PLUGIN_BEFORE",
                     {before},
                     add_conf(dir_before_absent, 3000).dump(),
                     dir_before_absent,
                     {}});
    cases.push_back({"ADD, labeler confirms at once, CN_BENCH_PLUGIN_BEFORE",
                     {before},
                     add_conf(dir_before_confirm, 3000).dump(),
                     dir_before_confirm,
                     {}});
  }
  ExecCase& durable = cases[2];
  ExecCase& absent = cases[3];
  ExecCase& confirm = cases[4];
  {
    testing::StubLabeler labeler(dir_confirm + "/labeler.sock",
                                 testing::StubLabeler::Mode::kConfirm);
    std::optional<testing::StubLabeler> labeler_before;
    if (before != nullptr)
      labeler_before.emplace(dir_before_confirm + "/labeler.sock",
                             testing::StubLabeler::Mode::kConfirm);
    evict_from_page_cache(cases);
    time_interleaved(cases, runs);
    if (const char* trace = std::getenv("CN_BENCH_PLUGIN_TRACE")) {
      for (ExecCase* c : {&durable, &absent, &confirm}) trace_once(*c, trace);
    }
  }
  auto state_s = bench::summarize(time_state_writes(dir_state, runs));
  auto floor_s = bench::summarize(cases[0].samples);
  auto durable_s = bench::summarize(durable.samples);
  auto absent_s = bench::summarize(absent.samples);
  auto confirm_s = bench::summarize(confirm.samples);

  double budget = 1.5 * floor_s.p50_ms + state_s.p50_ms;
  bench::MarkdownTable t(
      {"case (" + std::to_string(runs) + " runs, interleaved)", "p50 ms", "p99 ms", "max ms"});
  auto row = [&](const std::string& name, const bench::Summary& s) {
    t.add({name, bench::fmt_ms(s.p50_ms), bench::fmt_ms(s.p99_ms), bench::fmt_ms(s.max_ms)});
  };
  for (std::size_t i = 0; i < 5; ++i) row(cases[i].name, bench::summarize(cases[i].samples));
  row("state write alone (in-process, tmpfs)", state_s);
  for (std::size_t i = 5; i < cases.size(); ++i)
    row(cases[i].name, bench::summarize(cases[i].samples));
  auto ratio = [&](const bench::Summary& s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", s.p50_ms / durable_s.p50_ms);
    return std::string(buf);
  };
  std::string text =
      "### Plugin ADD overhead\n\nState file on tmpfs holding " + std::to_string(kResidentAllocs) +
      " allocations, as on a busy node.\n\n" + t.str() +
      "\nTarget: ADD p50 <= 1.25 x the durable floor's p50. Labeler absent: " + ratio(absent_s) +
      " x (" + (absent_s.p50_ms <= 1.25 * durable_s.p50_ms ? "met" : "MISSED") +
      "); labeler confirming: " + ratio(confirm_s) + " x (" +
      (confirm_s.p50_ms <= 1.25 * durable_s.p50_ms ? "met" : "MISSED") +
      ").\nEarlier target: ADD p50 <= 1.5 x no-op floor p50 + state write p50 = " +
      bench::fmt_ms(budget) +
      " ms. Labeler absent: " + (absent_s.p50_ms <= budget ? "met" : "MISSED") +
      "; labeler confirming: " + (confirm_s.p50_ms <= budget ? "met" : "MISSED") + ".\n";
  if (before != nullptr) {
    text += "CN_BENCH_PLUGIN_BEFORE (" + std::string(before) + "), same ratio: labeler absent " +
            ratio(bench::summarize(cases[5].samples)) + " x; labeler confirming " +
            ratio(bench::summarize(cases[6].samples)) + " x.\n";
  }
  bench::publish("plugin_add", text);
  for (const auto& d : {dir_floor, dir_durable, dir_absent, dir_confirm, dir_state,
                        dir_before_absent, dir_before_confirm})
    if (!d.empty()) std::filesystem::remove_all(d);
  return 0;
}
