#include "labeler/daemon/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "common/util/control_chars.h"
#include "labeler/daemon/log_line.h"

namespace cn::labeler {
namespace {

// `"msg":"...","key":value,...`: the line's message and each of its fields (log_line.h).
class JsonMembersFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string members =
        log_line_json_members(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(members.data(), members.data() + members.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMembersFlag>();
  }
};

// The message with its control bytes escaped: one event stays one line whatever its values hold.
class EscapedMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string text =
        escape_control_chars(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<EscapedMessageFlag>();
  }
};

}  // namespace

Result<std::unique_ptr<spdlog::formatter>> make_log_formatter(const std::string& format) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (format == "json") {
    formatter->add_flag<JsonMembersFlag>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","logger":"cilium-nomad-labeler",%*})");
  } else if (format == "text") {
    formatter->add_flag<EscapedMessageFlag>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %*");
  } else {
    return fail("unknown --log-format " + format + " (text or json)");
  }
  return formatter;
}

Status setup_logging(const std::string& level, const std::string& format) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") return fail("unknown --log-level " + level);
  auto formatter = make_log_formatter(format);
  if (!formatter) return std::unexpected(formatter.error());
  auto logger = std::make_shared<spdlog::logger>("cilium-nomad-labeler",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(std::move(*formatter));
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return {};
}

}  // namespace cn::labeler
