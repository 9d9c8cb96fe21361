#include "labeler/serve/readiness.h"

namespace cn::labeler {

HealthVerdict daemon_readiness(LabelerDaemon& daemon) {
  if (!daemon.ready()) return {false, daemon.not_ready_reason()};
  return daemon.health().verdict();
}

}  // namespace cn::labeler
