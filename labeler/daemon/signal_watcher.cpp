#include "labeler/daemon/signal_watcher.h"

#include <pthread.h>

#include <csignal>

#include <spdlog/spdlog.h>

namespace cn::labeler {
namespace {

sigset_t watched() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void SignalWatcher::block_signals() {
  sigset_t set = watched();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void SignalWatcher::unblock_signals() {
  sigset_t set = watched();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

SignalWatcher::SignalWatcher(std::stop_source stop, std::shared_ptr<spdlog::logger> log)
    : stop_(std::move(stop)), log_(log ? std::move(log) : spdlog::default_logger()) {
  block_signals();
  thread_ = std::thread([this] { run(); });
}

SignalWatcher::~SignalWatcher() {
  closing_ = true;
  // Aimed at the watcher thread alone: it stays pending for that thread if the thread has not
  // reached sigwait yet, so the wake-up cannot be lost. Every thread blocks SIGTERM
  // (block_signals), so it wakes sigwait and never terminates anything.
  pthread_kill(thread_.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  thread_.join();
}

void SignalWatcher::run() {
  const sigset_t set = watched();
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (closing_) return;
    if (sig == SIGHUP) {
      log_->info(
          "signal ignored: signal={} name=SIGHUP reason=\"the labeler has nothing to reload\"",
          sig);
      continue;
    }
    log_->info("signal received, shutting down: signal={} name={}", sig,
               sig == SIGTERM ? "SIGTERM" : "SIGINT");
    stop_.request_stop();
  }
}

}  // namespace cn::labeler
