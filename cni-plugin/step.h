#pragma once
// The steps a verb goes through once its input is parsed. The current step names the cause in
// the fail-open log line, and tests throw from each one through the fault hook.
#include <functional>
#include <string_view>

namespace cn::plugin {

enum class Step {
  kConfigParsed,
  kStateRead,
  kStateWrite,
  kStateWritten,
  kLabelerNotify,
  kLabelerNotified,
  kOutput,
};

std::string_view step_name(Step step);

// Test seam: called as each step begins, so that a test can throw there. Empty in production,
// and nothing outside a test sets it.
using FaultHook = std::function<void(Step)>;

}  // namespace cn::plugin
