#include "tests/fakes/cilium/clock_scheduler.h"

namespace cn::fakes::cilium {

ClockScheduler::ClockScheduler(Clock& clock)
    : clock_(clock), worker_([this](std::stop_token st) { run(st); }) {}

ClockScheduler::~ClockScheduler() {
  worker_.request_stop();
  {
    std::lock_guard lock(mu_);
    if (wake_) wake_->request_stop();
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void ClockScheduler::at(MonoTime when, std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    queue_.push(Task{when, seq_++, std::move(fn)});
    if (wake_) wake_->request_stop();  // the sleeper may be waiting for a later deadline
  }
  cv_.notify_all();
}

std::size_t ClockScheduler::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void ClockScheduler::clear() {
  std::lock_guard lock(mu_);
  queue_ = {};
  if (wake_) wake_->request_stop();
}

bool ClockScheduler::idle_locked() const {
  return !running_ && (queue_.empty() || queue_.top().when > clock_.now());
}

bool ClockScheduler::wait_idle(std::chrono::milliseconds real_timeout) {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + real_timeout;
  // The clock can move without notifying us (ManualClock::advance), so re-check in slices.
  while (!idle_locked()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    idle_cv_.wait_for(lock, std::chrono::milliseconds(5));
  }
  return true;
}

void ClockScheduler::run(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    if (queue_.empty()) {
      cv_.wait(lock, stop, [this] { return !queue_.empty(); });
      continue;
    }
    const MonoTime next = queue_.top().when;
    if (clock_.now() >= next) {
      Task task = queue_.top();
      queue_.pop();
      running_ = true;
      lock.unlock();
      task.fn();
      lock.lock();
      running_ = false;
      idle_cv_.notify_all();
      continue;
    }
    std::stop_source wake;
    wake_ = &wake;
    lock.unlock();
    {
      std::stop_callback forward(stop, [&wake] { wake.request_stop(); });
      clock_.sleep_until(next, wake.get_token());
    }
    lock.lock();
    wake_ = nullptr;
  }
}

}  // namespace cn::fakes::cilium
