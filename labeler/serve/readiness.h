#pragma once
// The one answer /healthz and the cilium_nomad_ready gauge give for a daemon.
#include "labeler/daemon/labeler_daemon.h"
#include "labeler/serve/health_tracker.h"

namespace cn::labeler {

// Until the first reconcile the daemon's own reason (what it still waits for); after it, the
// health tracker's verdict on Cilium and Nomad.
HealthVerdict daemon_readiness(LabelerDaemon& daemon);

}  // namespace cn::labeler
