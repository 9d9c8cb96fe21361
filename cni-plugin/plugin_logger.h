#pragma once
// One short key=value line per event, to the netconf's log-file or else to stderr (captured
// into Outcome::stderr_data so that stdout stays CNI JSON only).
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace cn::plugin {

class PluginLogger {
 public:
  PluginLogger();
  // The sink writes into stderr_buffer_: the logger stays where it was made.
  PluginLogger(const PluginLogger&) = delete;
  PluginLogger& operator=(const PluginLogger&) = delete;
  // Switches to the log file once the netconf names one; on failure keeps stderr and says so.
  void use_file(const std::string& path);
  spdlog::logger& get() { return *logger_; }
  std::shared_ptr<spdlog::logger> shared() { return logger_; }
  std::string captured_stderr() const { return stderr_buffer_; }

 private:
  std::string stderr_buffer_;
  std::shared_ptr<spdlog::logger> logger_;
};

// A CNI command as the log lines name it: lowercase ("add", "del").
std::string verb_log_name(std::string_view command);

}  // namespace cn::plugin
