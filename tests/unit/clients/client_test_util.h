#pragma once
// Helpers for the API client tests: temp dirs for sockets and certificates, a logger whose
// output a test can search (token redaction), and a pump that moves a ManualClock whenever a
// retry sleeps on it, so backoff runs in simulated time.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "common/util/clock.h"
#include "tests/support/eventually.h"

namespace cn::client_testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cncl-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Everything logged at any level, as text. Also installed as the default logger while alive,
// so messages from code that logs through spdlog's default logger are caught too.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    logger_ = std::make_shared<spdlog::logger>("capture", sink);
    logger_->set_level(spdlog::level::trace);
    logger_->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger_);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::shared_ptr<spdlog::logger> logger() const { return logger_; }
  std::string text() const {
    logger_->flush();
    return out_.str();
  }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> logger_;
};

// Advances `clock` by `step` each time a thread sleeps on it, until destroyed. For tests where
// only the outcome of a backoff matters, not its exact timing. After each step it gives the
// woken sleeper time to leave (a sleeper still counted would otherwise be advanced again and
// again while it waits for the clock's mutex).
class ClockPump {
 public:
  ClockPump(ManualClock& clock, std::chrono::milliseconds step)
      : thread_([&clock, step](std::stop_token stop) {
          while (!stop.stop_requested()) {
            if (!clock.wait_for_sleepers(1, std::chrono::milliseconds{20})) continue;
            clock.advance(step);
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds{20};
            while (clock.sleepers() > 0 && std::chrono::steady_clock::now() < until) {
              std::this_thread::sleep_for(std::chrono::microseconds{200});
            }
          }
        }) {}

 private:
  std::jthread thread_;
};

// A getenv over a map, for from_env tests that must not touch the process environment.
inline std::function<const char*(const char*)> env_of(
    const std::map<std::string, std::string>& vars) {
  return [&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

using ::cn::testing::eventually;

}  // namespace cn::client_testing
