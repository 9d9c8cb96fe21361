#include "cni-plugin/step.h"

namespace cn::plugin {

std::string_view step_name(Step step) {
  switch (step) {
    case Step::kConfigParsed:
      return "config-parsed";
    case Step::kStateRead:
      return "state-read";
    case Step::kStateWrite:
      return "state-write";
    case Step::kStateWritten:
      return "state-written";
    case Step::kLabelerNotify:
      return "labeler-notify";
    case Step::kLabelerNotified:
      return "labeler-notified";
    case Step::kOutput:
      return "output";
  }
  return "unknown";
}

}  // namespace cn::plugin
