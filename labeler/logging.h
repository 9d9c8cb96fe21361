#pragma once
// The labeler's log set-up: one line per event to stderr (Nomad captures it), as text
// (`ts level msg key=value ...`) or as one JSON object per line for log shippers.
#include <string>

#include "common/util/result.h"

namespace cn::labeler {

Status setup_logging(const std::string& level, const std::string& format);

}  // namespace cn::labeler
