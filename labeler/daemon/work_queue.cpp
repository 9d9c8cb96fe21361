#include "labeler/daemon/work_queue.h"

#include <algorithm>

namespace cn::labeler {

WorkQueue::WorkQueue(Clock& clock, int workers, std::size_t max_queued, Handler handler)
    : clock_(clock),
      worker_count_(std::max(1, workers)),
      max_queued_(max_queued),
      handler_(std::move(handler)) {}

WorkQueue::~WorkQueue() {
  stop();
}

void WorkQueue::start() {
  for (int i = 0; i < worker_count_; ++i) {
    threads_.emplace_back([this](std::stop_token st) { worker_loop(st); });
  }
  threads_.emplace_back([this](std::stop_token st) { timer_loop(st); });
}

void WorkQueue::stop() {
  {
    MutexLock lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    timer_wake_.request_stop();
  }
  for (auto& t : threads_) t.request_stop();
  ready_cv_.notify_all();
  threads_.clear();  // joins
  MutexLock lock(mu_);
  ready_.clear();
  ready_order_.clear();
  delayed_.clear();
  rerun_.clear();
  idle_cv_.notify_all();
}

bool WorkQueue::add(WorkItem item) {
  const std::string id = item.alloc_id;
  if (running_.contains(id)) {
    auto [it, inserted] = rerun_.try_emplace(id, item);
    if (!inserted) merge_into(it->second, std::move(item));
    return true;
  }
  if (auto it = ready_.find(id); it != ready_.end()) {
    merge_into(it->second, std::move(item));
    return true;
  }
  if (ready_.size() + delayed_.size() >= max_queued_) return false;
  ready_.emplace(id, std::move(item));
  ready_order_.push_back(id);
  return true;
}

bool WorkQueue::enqueue(WorkItem item) {
  {
    MutexLock lock(mu_);
    if (stopping_) return false;
    if (!add(std::move(item))) return false;
  }
  ready_cv_.notify_one();
  return true;
}

bool WorkQueue::enqueue_after(WorkItem item, std::chrono::milliseconds delay) {
  MutexLock lock(mu_);
  if (stopping_ || ready_.size() + delayed_.size() >= max_queued_) return false;
  MonoTime due = clock_.now() + delay;
  bool earliest = delayed_.empty() || due < delayed_.begin()->first;
  delayed_.emplace(due, std::move(item));
  if (earliest) timer_wake_.request_stop();  // re-arm the timer for the new earliest due time
  return true;
}

std::size_t WorkQueue::depth() const {
  MutexLock lock(mu_);
  return ready_.size() + delayed_.size() + rerun_.size();
}

std::size_t WorkQueue::in_flight() const {
  MutexLock lock(mu_);
  return running_.size();
}

bool WorkQueue::wait_idle(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  return idle_cv_.wait_for(lock, timeout, [&]() REQUIRES(mu_) {
    return ready_.empty() && delayed_.empty() && running_.empty() && rerun_.empty();
  });
}

void WorkQueue::worker_loop(std::stop_token stop) {
  for (;;) {
    WorkItem item;
    {
      MutexLock lock(mu_);
      if (!ready_cv_.wait(lock, stop, [&]() REQUIRES(mu_) { return !ready_order_.empty(); }))
        return;
      std::string id = ready_order_.front();
      ready_order_.erase(ready_order_.begin());
      auto node = ready_.extract(id);
      item = std::move(node.mapped());
      running_.insert(id);
    }
    handler_(item);
    {
      MutexLock lock(mu_);
      running_.erase(item.alloc_id);
      if (auto node = rerun_.extract(item.alloc_id); !node.empty() && !stopping_) {
        add(std::move(node.mapped()));
        ready_cv_.notify_one();
      }
      if (ready_.empty() && delayed_.empty() && running_.empty() && rerun_.empty()) {
        idle_cv_.notify_all();
      }
    }
  }
}

void WorkQueue::timer_loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    MonoTime due;
    std::stop_token wake;
    {
      MutexLock lock(mu_);
      if (timer_wake_.stop_requested()) timer_wake_ = std::stop_source{};
      wake = timer_wake_.get_token();
      due = delayed_.empty() ? clock_.now() + std::chrono::hours{24} : delayed_.begin()->first;
    }
    std::stop_callback on_stop(stop, [&] {
      MutexLock lock(mu_);
      timer_wake_.request_stop();
    });
    clock_.sleep_until(due, wake);
    if (stop.stop_requested()) return;
    MutexLock lock(mu_);
    MonoTime now = clock_.now();
    bool moved = false;
    while (!delayed_.empty() && delayed_.begin()->first <= now) {
      auto node = delayed_.extract(delayed_.begin());
      moved = add(std::move(node.mapped())) || moved;
    }
    if (moved) ready_cv_.notify_all();
  }
}

}  // namespace cn::labeler
