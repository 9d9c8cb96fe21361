#include "cni-plugin/plugin_logger.h"

#include <cctype>

#include "cni-plugin/plugin_log_sink.h"

namespace cn::plugin {
namespace {

constexpr const char* kLoggerName = "cilium-nomad-cni";

}  // namespace

PluginLogger::PluginLogger() {
  logger_ = std::make_shared<spdlog::logger>(kLoggerName,
                                             std::make_shared<PluginLogSink>(&stderr_buffer_));
  logger_->set_level(spdlog::level::info);
}

void PluginLogger::use_file(const std::string& path) {
  if (path.empty()) return;
  auto sink = PluginLogSink::append_to(path);
  if (!sink) {
    logger_->warn("cannot open log-file, logging to stderr: path={} error=\"{}\"", path,
                  sink.error().message);
    return;
  }
  auto file_logger = std::make_shared<spdlog::logger>(kLoggerName, std::move(*sink));
  file_logger->set_level(logger_->level());
  logger_ = std::move(file_logger);
}
std::string verb_log_name(std::string_view command) {
  std::string out(command);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace cn::plugin
