#pragma once
// A logger whose lines a test can search, for code under test that takes a logger.
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

namespace cn::reliability {

// Keeps every formatted line; text() copies under the sink's mutex, since workers log while
// the test reads.
class StringSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string text() {
    std::lock_guard lock(mutex_);
    return text_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    text_.append(formatted.data(), formatted.size());
  }
  void flush_() override {}

 private:
  std::string text_;
};

class LogCapture {
 public:
  LogCapture()
      : sink_(std::make_shared<StringSink>()),
        logger_(std::make_shared<spdlog::logger>("capture", sink_)) {
    logger_->set_level(spdlog::level::debug);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::shared_ptr<spdlog::logger> logger() const { return logger_; }
  std::string text() const { return sink_->text(); }

 private:
  std::shared_ptr<StringSink> sink_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace cn::reliability
