#pragma once
// The one recorder for tests: keeps, in order, what a callback running on another thread was
// handed (work items a watcher enqueued, requests a server saw), and lets the test wait, bounded,
// for a count instead of sleeping.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace cn::testing {

template <class T>
class Recorder {
 public:
  void add(T item) {
    std::lock_guard lock(mu_);
    items_.push_back(std::move(item));
    cv_.notify_all();
  }
  // A callback that records its argument and reports success (the shape of an enqueue function).
  auto fn() {
    return [this](T item) {
      add(std::move(item));
      return true;
    };
  }
  // Waits until at least `n` items were recorded; false at the deadline.
  bool wait_for(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds{15}) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return items_.size() >= n; });
  }
  std::vector<T> items() const {
    std::lock_guard lock(mu_);
    return items_;
  }

  // For records that name an allocation (work items): the IDs in order, and how often one came.
  std::vector<std::string> ids() const requires requires(const T& t) { std::string(t.alloc_id); }
  {
    std::vector<std::string> out;
    for (const auto& i : items()) out.push_back(i.alloc_id);
    return out;
  }
  int count(const std::string& id) const requires requires(const T& t) { std::string(t.alloc_id); }
  {
    int n = 0;
    for (const auto& i : ids()) n += i == id ? 1 : 0;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<T> items_;
};

}  // namespace cn::testing
