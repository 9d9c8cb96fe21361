#include "cni-plugin/plugin_logger.h"

#include <cctype>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/ostream_sink.h>

namespace cn::plugin {
namespace {

constexpr const char* kPattern = "%Y-%m-%dT%H:%M:%S.%eZ %l cilium-nomad-cni pid=%P %v";

}  // namespace

PluginLogger::PluginLogger() {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(stderr_buffer_);
  logger_ = std::make_shared<spdlog::logger>("cilium-nomad-cni", std::move(sink));
  logger_->set_pattern(kPattern, spdlog::pattern_time_type::utc);
  logger_->set_level(spdlog::level::info);
}

void PluginLogger::use_file(const std::string& path) {
  if (path.empty()) return;
  try {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_st>(path, /*truncate=*/false);
    auto file_logger = std::make_shared<spdlog::logger>("cilium-nomad-cni", std::move(sink));
    file_logger->set_pattern(kPattern, spdlog::pattern_time_type::utc);
    file_logger->set_level(logger_->level());
    file_logger->flush_on(spdlog::level::trace);
    logger_ = std::move(file_logger);
  } catch (const spdlog::spdlog_ex& e) {
    logger_->warn("cannot open log-file, logging to stderr: path={} error=\"{}\"", path, e.what());
  }
}

std::string verb_log_name(std::string_view command) {
  std::string out(command);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace cn::plugin
