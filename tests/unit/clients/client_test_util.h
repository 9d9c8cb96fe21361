#pragma once
// Helpers for the API client tests: a logger whose output a test can search (token redaction),
// and the shared temp dir and clock pump under the names these tests use.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "common/util/clock.h"
#include "tests/support/clock_pump.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"

namespace cn::client_testing {

using TempDir = ::cn::testing::TempDir;
using ::cn::testing::ClockPump;

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
