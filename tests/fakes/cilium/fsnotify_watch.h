#pragma once
// One directory watched the way Go's fsnotify watches it for the agent (inotify on the
// directory, the mask of its Add()), its events handed to a callback on a thread of its own.
// The fake agent's policy directory and its load-balancer state file both read through it.
#include <sys/inotify.h>

#include <functional>
#include <string>
#include <thread>

#include "common/util/result.h"

namespace cn::fakes::cilium {

class FsnotifyWatch {
 public:
  // Returns false to end the watch (the caller is gone, as after a fatal).
  using OnEvent = std::function<bool(const inotify_event& event)>;

  FsnotifyWatch() = default;
  ~FsnotifyWatch();
  FsnotifyWatch(const FsnotifyWatch&) = delete;
  FsnotifyWatch& operator=(const FsnotifyWatch&) = delete;

  // fsnotify.NewWatcher: the inotify instance (and the eventfd stop() wakes the thread with).
  [[nodiscard]] Status init();
  // Watcher.Add(dir).
  [[nodiscard]] Status add(const std::string& dir);
  // Reads events on a thread until stop() or `on_event` returns false.
  void start(OnEvent on_event);
  // Joins the thread and closes both descriptors; safe to call twice.
  void stop();

 private:
  void run(std::stop_token stop, const OnEvent& on_event);

  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  std::jthread thread_;
};

}  // namespace cn::fakes::cilium
