#pragma once
// The labeler's log set-up: one line per event to stderr (Nomad captures it), as text
// (`ts level msg key=value ...`) or as one JSON object per line for log shippers, each field of
// the line in its own key (docs/logging.md).
#include <memory>
#include <string>

#include <spdlog/formatter.h>

#include "common/util/result.h"

namespace cn::labeler {

// The formatter for --log-format `text` or `json`.
[[nodiscard]] Result<std::unique_ptr<spdlog::formatter>> make_log_formatter(
    const std::string& format);

[[nodiscard]] Status setup_logging(const std::string& level, const std::string& format);

}  // namespace cn::labeler
