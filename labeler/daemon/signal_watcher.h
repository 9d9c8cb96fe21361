#pragma once
// SIGTERM and SIGINT ask the daemon to stop; SIGHUP (a closed terminal, or a `reload` an
// operator expects to work) is logged and ignored instead of killing the process with 129.
// One thread takes them with sigwait, so nothing runs in a signal handler. Every state of the
// process is covered, half-started included: the stop request is all that shutdown needs.
#include <atomic>
#include <memory>
#include <stop_token>
#include <thread>

#include <spdlog/fwd.h>

namespace cn::labeler {

class SignalWatcher {
 public:
  // Blocks the three signals in the calling thread. Call it before starting any thread: the
  // threads inherit the mask, so the watcher is the only one that ever takes them.
  static void block_signals();
  // Gives the three signals their default action again in the calling thread: for a one-shot
  // command, a signal blocked while the command line was parsed then ends it as usual.
  static void unblock_signals();

  SignalWatcher(std::stop_source stop, std::shared_ptr<spdlog::logger> log);
  // Wakes the watcher if no signal came and joins it, so returning early never hangs.
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  void run();

  std::stop_source stop_;
  std::shared_ptr<spdlog::logger> log_;
  std::atomic<bool> closing_{false};
  std::thread thread_;
};

}  // namespace cn::labeler
