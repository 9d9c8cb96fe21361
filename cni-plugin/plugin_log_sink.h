#pragma once
// The plugin's one spdlog sink: each record becomes one line (UTC time, level, pid, message),
// kept in a string for stderr or appended to the netconf's log-file with one write(2).
//
// Not spdlog's ostream and file sinks, which the plugin used before: on every allocation start
// they cost an std::ostringstream (the C++ locale's first-use set-up), a stdio FILE, the parse of
// a pattern, and gmtime_r, whose tzset opens and reads /etc/localtime. The line is the one that
// pattern gave ("%Y-%m-%dT%H:%M:%S.%eZ %l cilium-nomad-cni pid=%P %v"); it is fixed, so
// set_pattern and set_formatter change nothing.
#include <memory>
#include <string>

#include <spdlog/sinks/sink.h>

#include "common/util/result.h"

namespace cn::plugin {

class PluginLogSink final : public spdlog::sinks::sink {
 public:
  // Lines go to `*captured`, which must outlive the sink.
  explicit PluginLogSink(std::string* captured) : captured_(captured) {}
  // A log-file that reaches this size is renamed `<path>.1` (replacing the one before) when the
  // next plugin run opens it: the two files never hold much more than twice this.
  static constexpr long kMaxLogBytes = 10L * 1024 * 1024;
  // Appends to `path`: a regular file, never through a symbolic link, created 0640 (minus the
  // umask) with its missing parent directories. Control bytes in a message are escaped
  // (common/util/control_chars.h), so a value never starts a line of its own.
  [[nodiscard]] static Result<std::shared_ptr<PluginLogSink>> append_to(const std::string& path);
  ~PluginLogSink() override;
  PluginLogSink(const PluginLogSink&) = delete;
  PluginLogSink& operator=(const PluginLogSink&) = delete;

  void log(const spdlog::details::log_msg& msg) override;
  void flush() override {}  // every line is written when it is logged
  void set_pattern(const std::string&) override {}
  void set_formatter(std::unique_ptr<spdlog::formatter>) override {}

 private:
  explicit PluginLogSink(int fd) : fd_(fd) {}

  std::string* captured_ = nullptr;
  int fd_ = -1;
  int pid_ = 0;  // looked up at the first line: most runs of the plugin log one
};

}  // namespace cn::plugin
