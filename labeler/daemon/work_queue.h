#pragma once
// Per-allocation work queue. Guarantees:
//  - never two workers on one allocation (a label write races itself otherwise);
//  - notifications for an allocation that is queued are merged into the queued item, and one
//    that arrives while it is being worked on runs once more afterwards (never lost, never
//    doubled);
//  - bounded: at most `max_queued` distinct allocations wait; beyond that enqueue() refuses
//    and the caller relies on the periodic reconcile;
//  - delayed items (retries with backoff) wait on the injected clock.
#include <condition_variable>
#include <functional>
#include <map>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/util/mutex.h"
#include "labeler/daemon/work_item.h"

namespace cn::labeler {

class WorkQueue {
 public:
  using Handler = std::function<void(WorkItem)>;

  WorkQueue(Clock& clock, int workers, std::size_t max_queued, Handler handler);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void start();
  // Stops taking work; in-flight items finish, queued ones are dropped (the next start's
  // reconcile picks them up: the state file and Cilium are the source of truth, not this queue).
  void stop();

  bool enqueue(WorkItem item) EXCLUDES(mu_);
  bool enqueue_after(WorkItem item, std::chrono::milliseconds delay) EXCLUDES(mu_);

  std::size_t depth() const EXCLUDES(mu_);  // queued (ready + delayed), not counting in-flight
  std::size_t in_flight() const EXCLUDES(mu_);
  // Blocks (bounded, real time) until nothing is queued or in flight: for tests and shutdown.
  bool wait_idle(std::chrono::milliseconds timeout) EXCLUDES(mu_);

 private:
  void worker_loop(std::stop_token stop) EXCLUDES(mu_);
  void timer_loop(std::stop_token stop) EXCLUDES(mu_);
  // Queues the item, merges it into the queued one, or keeps it for a rerun.
  bool add(WorkItem item) REQUIRES(mu_);

  Clock& clock_;
  int worker_count_;
  std::size_t max_queued_;
  Handler handler_;

  mutable Mutex mu_;
  std::condition_variable_any ready_cv_;
  std::condition_variable_any idle_cv_;
  std::vector<std::string> ready_order_ GUARDED_BY(mu_);   // FIFO of alloc IDs
  std::map<std::string, WorkItem> ready_ GUARDED_BY(mu_);  // alloc ID -> merged item
  std::multimap<MonoTime, WorkItem> delayed_ GUARDED_BY(mu_);
  std::set<std::string> running_ GUARDED_BY(mu_);
  std::map<std::string, WorkItem> rerun_ GUARDED_BY(mu_);  // arrived while running
  std::stop_source timer_wake_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::jthread> threads_;
};

}  // namespace cn::labeler
