// Nomad without a leader (every call answered 500 "No cluster leader") under the in-process
// daemon, in simulated time: the daemon, its clients and their retries run on a ManualClock
// that a pump moves 100x faster than real time, so a 30 s or 5 min outage costs a second.
#include <gtest/gtest.h>

#include "common/labels/label_policy.h"
#include "tests/reliability/support/in_process_labeler.h"
#include "tests/reliability/support/wait.h"
#include "tests/support/clock_pump.h"
#include "tests/support/manual_clock.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;

constexpr int kAllocs = 6;

cni::NomadWorkload web_hint() {
  cni::NomadWorkload hint;
  hint.namespace_ = "default";
  hint.job_id = "web";
  hint.group = "app";
  return hint;
}

class NomadOutage : public ::testing::Test {
 protected:
  NomadOutage() : node_(options()) {}
  static FakeNodeOptions options() {
    FakeNodeOptions o;
    o.identity_delay =
        0ms;  // the agent runs in real time; keep it out of the simulated clock's way
    return o;
  }

  void start(std::chrono::seconds resync) {
    auto config = InProcessLabeler::config_for(node_);
    config.policy = *labels::parse_label_policy("team");
    config.resync_interval = resync;
    labeler_ = std::make_unique<InProcessLabeler>(node_, config, clock_);
    ASSERT_TRUE(labeler_->start());
    for (int i = 0; i < kAllocs; ++i)
      allocs_.push_back(node_.running_alloc("10.200.40." + std::to_string(i + 1)));
  }

  // Even allocations come with CNI_ARGS (Nomad >= 1.9.4), odd ones without.
  void notify_all() {
    for (int i = 0; i < kAllocs; ++i) {
      auto hint = i % 2 == 0 ? web_hint() : cni::NomadWorkload{};
      ASSERT_TRUE(labeler_->notify_add(allocs_[static_cast<std::size_t>(i)],
                                       "10.200.40." + std::to_string(i + 1), 0, hint));
    }
  }

  // Real-time bound on simulated time passing.
  bool simulated(std::chrono::seconds d, MonoTime from) {
    return eventually([&] { return clock_.now() - from >= d; }, 60s, 1ms);
  }

  int nomad_calls() const {
    int n = 0;
    for (const auto& [route, count] : node_.nomad().request_counts()) n += count;
    return n;
  }

  void run_time() {
    pump_ = std::make_unique<testing::ClockPump>(clock_, 100ms, testing::ClockPump::Mode::periodic);
  }

  FakeNode node_;
  ManualClock clock_;
  // Declared before the daemon, so it still moves time while the daemon shuts down: a worker
  // in a retry sleep on this clock must be able to wake up and see the stop.
  std::unique_ptr<testing::ClockPump> pump_;
  std::unique_ptr<InProcessLabeler> labeler_;
  std::vector<std::string> allocs_;
};

// Expected: during 30 s of 500s, allocations whose ADD carried CNI_ARGS are labeled from them
// at once (namespace/job/group, no meta); the others wait. Retries back off on the injected
// clock, so Nomad gets a bounded number of calls. Once a leader is back, every endpoint carries
// its full label set (meta included) within the retry schedule, with no resync and no watch.
// Writes: one per endpoint, two for those first labeled from CNI_ARGS. Data lost: 0.
TEST_F(NomadOutage, FiveHundredsFor30sLeaderLossEveryEndpointConvergesByRetriesAlone) {
  start(0s);
  node_.nomad().clear_requests();
  node_.nomad().fail_next(1'000'000, 500);
  run_time();
  const MonoTime outage_start = clock_.now();
  notify_all();
  ASSERT_TRUE(simulated(30s, outage_start));

  const int calls_during_outage = nomad_calls();
  for (int i = 0; i < kAllocs; ++i) {
    const auto& a = allocs_[static_cast<std::size_t>(i)];
    if (i % 2 == 0) {
      EXPECT_TRUE(node_.labeled(a, kWebLabels)) << "labeled from CNI_ARGS during the outage";
    } else {
      EXPECT_EQ(node_.label_writes(a), 0) << "nothing to label with yet";
    }
  }
  node_.nomad().clear_faults();
  const MonoTime recovered = clock_.now();

  for (const auto& a : allocs_)
    ASSERT_TRUE(node_.wait_labeled(a, kWebLabelsWithTeam, 30s)) << a << labeler_->logs();
  const auto converge_s =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.now() - recovered).count();
  for (int i = 0; i < kAllocs; ++i) {
    EXPECT_EQ(node_.label_writes(allocs_[static_cast<std::size_t>(i)]), i % 2 == 0 ? 2 : 1);
  }
  // 6 allocations x at most 10 worker attempts (the cap; full jitter can fit them all in 30 s)
  // x 4 client tries: without backoff this would be thousands.
  EXPECT_LE(calls_during_outage, kAllocs * 10 * 4);
  EXPECT_NE(labeler_->logs().find("No cluster leader"), std::string::npos)
      << "Nomad's own words are logged";
  std::printf(
      "30 s leader loss: %d Nomad calls during the outage; converged %lld s (simulated) after "
      "recovery\n",
      calls_during_outage, static_cast<long long>(converge_s));
}

// Expected: an outage longer than the worker's whole retry schedule (10 attempts, ~1.5-3 min)
// leaves the unlabeled allocations to the periodic resync, which fails cleanly while Nomad is
// down and labels everything on its first run after recovery. Data lost: 0.
TEST_F(NomadOutage, FiveMinuteOutageOutlastingRetriesIsHealedByTheFirstResyncAfterRecovery) {
  start(60s);
  node_.nomad().fail_next(1'000'000, 500);
  run_time();
  const MonoTime outage_start = clock_.now();
  notify_all();
  ASSERT_TRUE(simulated(300s, outage_start));
  EXPECT_NE(labeler_->logs().find("resync failed"), std::string::npos)
      << "resyncs fail cleanly during the outage";
  EXPECT_NE(labeler_->logs().find(
                "giving up after 10 attempts, leaving the allocation to the next resync"),
            std::string::npos)
      << "the log says when retries end";
  for (int i = 1; i < kAllocs; i += 2)
    EXPECT_EQ(node_.label_writes(allocs_[static_cast<std::size_t>(i)]), 0);
  node_.nomad().clear_faults();
  const MonoTime recovered = clock_.now();

  for (const auto& a : allocs_)
    ASSERT_TRUE(node_.wait_labeled(a, kWebLabelsWithTeam, 30s)) << a << labeler_->logs();
  EXPECT_LE(clock_.now() - recovered, 66s + 30s)
      << "one resync interval (+10% jitter) and its work";
  for (const auto& a : allocs_) EXPECT_LE(node_.label_writes(a), 2);
}

}  // namespace
}  // namespace cn::reliability
