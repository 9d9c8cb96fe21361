// One node-watch wake-up on a node with 1,000 allocations (Jobs embedded, as Nomad sends them) of
// which one changed: the CPU the watcher's thread spends decoding the answer and diffing it, for
// three decodes in the same run: the SAX decoder the byte-skipping reader replaced (nlohmann's SAX
// parser filtering members, every Job decoded), today's reader decoding every Job, and today's
// reader decoding only the Jobs of changed allocations (the selector NodeWatcher passes). The real
// NodeWatcher runs against a stand-in NomadApi that answers each blocking query at once with the
// next body, so the network and Nomad stay out of it; each body is rendered before the clock
// starts.
#include <algorithm>
#include <atomic>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include <spdlog/spdlog.h>

#include "bench/bench_stats.h"
#include "bench/support/sax_field_filter.h"
#include "common/nomad/client/nomad_api.h"
#include "labeler/watch/node_watcher.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace {

using namespace cn;
using namespace cn::bench;

constexpr int kAllocs = 1000;
constexpr int kJobs = 20;
constexpr int kWakeUps = 30;

enum class Decode { kSaxBefore, kAllJobs, kChangedJobs };

double thread_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1000 + static_cast<double>(t.tv_nsec) / 1e6;
}

// The node's allocations as the fake Nomad renders them, as a document to edit.
nlohmann::json node_list() {
  fakes::FakeNomad fake;
  if (!fake.start()) throw std::runtime_error("fake Nomad did not start");
  for (int j = 0; j < kJobs; ++j) {
    fakes::JobSpec job;
    job.id = "svc-" + std::to_string(j);
    if (!fake.register_job(job)) throw std::runtime_error("register_job");
    std::vector<fakes::PlaceRequest> reqs(kAllocs / kJobs);
    for (auto& r : reqs) r.job_id = job.id;
    auto ids = fake.place_allocs(std::move(reqs));
    if (!ids) throw std::runtime_error("place_allocs: " + ids.error().message);
    for (const auto& id : *ids) {
      if (!fake.set_network_status(id, {"10.1.0.1", "", "eth0"}))
        throw std::runtime_error("set_network_status");
    }
  }
  auto r = fakes::http_request(fakes::HttpTarget::tcp("127.0.0.1", fake.port()), "GET",
                               "/v1/node/" + fakes::FakeNomadConfig{}.node_id + "/allocations", {},
                               {}, std::chrono::minutes{2});
  fake.stop();
  if (!r || r->status != 200) throw std::runtime_error("fake Nomad: node allocations failed");
  return nlohmann::json::parse(r->body);
}

// Answers every query at once: the whole list first, then the list with one more allocation
// modified per call. Measures, on the caller's (the watcher's) thread, each decode and the work
// between two calls (the diff and the loop).
class StandInNomad final : public nomad::NomadApi {
 public:
  StandInNomad(nlohmann::json list, Decode decode) : list_(std::move(list)), decode_(decode) {
    for (const auto& a : list_)
      max_index_ = std::max(max_index_, a["ModifyIndex"].get<std::uint64_t>());
  }

  Result<nomad::Indexed<nomad::AllocationList>> node_allocations(
      std::string_view, std::uint64_t, std::chrono::seconds, MonoTime, std::stop_token stop,
      const nomad::AllocationSelector& with_job) override {
    const double entered = thread_cpu_ms();
    if (calls_ > 1) between_ms_.push_back(entered - returned_);
    if (calls_ > 0) {
      // One allocation changes, as when its client reports a new status.
      auto& changed = list_[static_cast<std::size_t>(calls_ % kAllocs)];
      changed["ModifyIndex"] = ++max_index_;
    }
    const std::string body = list_.dump();
    const double start = thread_cpu_ms();
    auto list = decode_ == Decode::kSaxBefore ? sax_parse_allocation_list(body)
                : decode_ == Decode::kAllJobs ? nomad::parse_allocation_list(body)
                                              : nomad::parse_allocation_list(body, with_job);
    returned_ = thread_cpu_ms();
    if (calls_ > 0) decode_ms_.push_back(returned_ - start);
    ++calls_;
    if (calls_ > kWakeUps) {
      done_ = true;
      done_.notify_all();
      // Park like a blocking query until the watcher is stopped.
      while (!stop.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds{1});
      return fail("stopped");
    }
    if (!list) return std::unexpected(list.error());
    return nomad::Indexed<nomad::AllocationList>{std::move(*list), max_index_};
  }

  Result<std::string> local_node_id(Deadline) override { return fail("unused"); }
  Result<nomad::Allocation> allocation(std::string_view, Deadline) override {
    return fail("unused");
  }
  Result<nomad::Job> job(std::string_view, std::string_view, Deadline) override {
    return fail("unused");
  }
  Status event_stream(const nomad::EventStreamQuery&, const std::function<bool(std::string_view)>&,
                      std::chrono::milliseconds, std::stop_token) override {
    return fail("unused");
  }
  Result<nomad::Indexed<std::vector<nomad::VariableMeta>>> variables(std::string_view,
                                                                     std::string_view,
                                                                     std::uint64_t,
                                                                     std::chrono::seconds, MonoTime,
                                                                     std::stop_token) override {
    return fail("unused");
  }
  Result<nomad::Variable> variable(std::string_view, std::string_view, Deadline) override {
    return fail("unused");
  }
  Result<std::vector<nomad::NodeStub>> nodes(Deadline) override { return fail("unused"); }

  void wait_done() { done_.wait(false); }
  // Per wake-up: its decode, plus the diff and loop until the next query.
  std::vector<double> wake_up_ms() const {
    std::vector<double> out;
    for (std::size_t i = 0; i < between_ms_.size() && i < decode_ms_.size(); ++i)
      out.push_back(decode_ms_[i] + between_ms_[i]);
    return out;
  }
  const std::vector<double>& decode_ms() const { return decode_ms_; }

 private:
  nlohmann::json list_;
  Decode decode_;
  std::uint64_t max_index_ = 0;
  int calls_ = 0;
  double returned_ = 0;
  std::vector<double> decode_ms_;
  std::vector<double> between_ms_;
  std::atomic<bool> done_{false};
};

struct Outcome {
  std::vector<double> wake_up_ms;
  std::vector<double> decode_ms;
  std::size_t enqueued = 0;
  std::size_t enqueued_with_job = 0;
};

Outcome measure(const nlohmann::json& list, Decode decode) {
  StandInNomad nomad(list, decode);
  labeler::Metrics metrics;
  labeler::CallRecorder calls(metrics);
  Outcome out;
  // Runs on the watcher's thread; read after it is joined.
  auto enqueue = [&](labeler::WorkItem item) {
    ++out.enqueued;
    if (item.alloc && item.alloc->job) ++out.enqueued_with_job;
    return true;
  };
  labeler::NodeWatchOptions options;
  options.min_quiet_interval = std::chrono::milliseconds{0};
  options.seed = 1;
  labeler::NodeWatcher watcher(
      labeler::WatcherDeps{nomad, system_clock(), metrics, calls, fakes::FakeNomadConfig{}.node_id,
                           enqueue, [] {}, spdlog::default_logger()},
      options);
  {
    std::jthread thread([&](std::stop_token stop) { watcher.run(stop); });
    nomad.wait_done();
  }
  out.wake_up_ms = nomad.wake_up_ms();
  out.decode_ms = nomad.decode_ms();
  return out;
}

int run() {
  const nlohmann::json list = node_list();
  const double mb = static_cast<double>(list.dump().size()) / 1e6;
  MarkdownTable t({"decode", "wake-ups", "CPU per wake-up p50", "max", "of which decoding p50",
                   "enqueued (with Job)"});
  double ours_p50 = 0;
  for (auto [decode, name] :
       {std::pair{Decode::kSaxBefore, "SAX decoder: nlohmann SAX filter, every Job"},
        std::pair{Decode::kAllJobs, "byte-skipping reader, every Job"},
        std::pair{Decode::kChangedJobs, "ours: byte-skipping reader, changed allocations' Jobs"}}) {
    Outcome o = measure(list, decode);
    auto wake = summarize(o.wake_up_ms);
    auto dec = summarize(o.decode_ms);
    if (decode == Decode::kChangedJobs) ours_p50 = wake.p50_ms;
    t.add({name, std::to_string(wake.n), fmt_duration(wake.p50_ms), fmt_duration(wake.max_ms),
           fmt_duration(dec.p50_ms),
           std::to_string(o.enqueued) + " (" + std::to_string(o.enqueued_with_job) + ")"});
    // The first answer enqueues all 1,000; each wake-up after it exactly the one changed, Job
    // attached so its worker needs no Nomad call.
    if (o.enqueued != kAllocs + kWakeUps - 1 || o.enqueued_with_job != o.enqueued) {
      std::cerr << "node watch bench: " << name << " enqueued " << o.enqueued << " ("
                << o.enqueued_with_job << " with their Job), expected " << (kAllocs + kWakeUps - 1)
                << "\n";
      return 1;
    }
  }
  char intro[512];
  std::snprintf(intro, sizeof intro,
                "### Node watch wake-up\n\nThe real `NodeWatcher` on a node with %d allocations "
                "(%d jobs, the fake Nomad's rendering: %.1f MB per answer), one allocation "
                "modified per answer. CPU of the watcher's thread per wake-up: decoding the "
                "answer, diffing it and enqueuing the changed allocation. Enqueued counts the "
                "first (full) answer too.\n\n",
                kAllocs, kJobs, mb);
  std::string text = intro + t.str() + "\nTarget: a wake-up with one allocation changed ≤ 10 ms " +
                     "of CPU: " + fmt_duration(ours_p50) + ", " +
                     (ours_p50 <= 10 ? "met" : "MISSED") + ".\n";
  publish("node_watch", text);
  return 0;
}

}  // namespace

int main() {
  spdlog::set_level(spdlog::level::warn);
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "node watch bench: " << e.what() << "\n";
    return 1;
  }
}
