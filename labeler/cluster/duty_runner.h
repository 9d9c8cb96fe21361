#pragma once
// Runs each cluster duty on its own thread, on its own schedule, only while this labeler leads.
// One thread per duty because their paces differ by orders of magnitude: a rate-limited identity
// GC pass may last minutes, and the heartbeat must not wait for it (agents call a heartbeat older
// than two minutes unhealthy).
//
// A duty's schedule survives leadership changes: a labeler that loses and regains leadership
// does not run a pass early, so two identity GC passes are never closer than their interval.
#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <thread>
#include <vector>

#include <spdlog/fwd.h>

#include "common/util/backoff.h"
#include "common/util/clock.h"
#include "labeler/cluster/duty.h"
#include "labeler/cluster/leader_election.h"

namespace cn::labeler::cluster {

class DutyRunner {
 public:
  using PassObserver =
      std::function<void(DutyName, const PassOutcome&, std::chrono::milliseconds took)>;

  // `poll`: how often a follower looks whether it leads now.
  DutyRunner(LeaderElection& election, Clock& clock, std::vector<std::unique_ptr<Duty>> duties,
             PassObserver observer, std::shared_ptr<spdlog::logger> log,
             std::chrono::milliseconds poll = std::chrono::milliseconds{500});
  ~DutyRunner();
  DutyRunner(const DutyRunner&) = delete;
  DutyRunner& operator=(const DutyRunner&) = delete;

  void start(std::stop_token stop);
  void join();

 private:
  void run_duty(Duty& duty, std::stop_token stop);

  LeaderElection& election_;
  Clock& clock_;
  std::vector<std::unique_ptr<Duty>> duties_;
  PassObserver observer_;
  std::shared_ptr<spdlog::logger> log_;
  std::chrono::milliseconds poll_;
  std::vector<std::jthread> threads_;
};

}  // namespace cn::labeler::cluster
