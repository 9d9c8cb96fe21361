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
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "labeler/work_item.h"

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

  bool enqueue(WorkItem item);
  bool enqueue_after(WorkItem item, std::chrono::milliseconds delay);

  std::size_t depth() const;  // queued (ready + delayed), not counting in-flight
  std::size_t in_flight() const;
  // Blocks (bounded, real time) until nothing is queued or in flight: for tests and shutdown.
  bool wait_idle(std::chrono::milliseconds timeout);

 private:
  void worker_loop(std::stop_token stop);
  void timer_loop(std::stop_token stop);
  bool enqueue_locked(WorkItem item);

  Clock& clock_;
  int worker_count_;
  std::size_t max_queued_;
  Handler handler_;

  mutable std::mutex mu_;
  std::condition_variable_any ready_cv_;
  std::condition_variable idle_cv_;
  std::vector<std::string> ready_order_;   // FIFO of alloc IDs
  std::map<std::string, WorkItem> ready_;  // alloc ID -> merged item
  std::multimap<MonoTime, WorkItem> delayed_;
  std::set<std::string> running_;
  std::map<std::string, WorkItem> rerun_;  // arrived while running
  std::stop_source timer_wake_;
  bool stopping_ = false;
  std::vector<std::jthread> threads_;
};

}  // namespace cn::labeler
