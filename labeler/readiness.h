#pragma once
// The one answer /healthz and the cilium_nomad_ready gauge give for a daemon.
#include "labeler/health_tracker.h"
#include "labeler/labeler_daemon.h"

namespace cn::labeler {

// Until the first reconcile the daemon's own reason (what it still waits for); after it, the
// health tracker's verdict on Cilium and Nomad.
HealthVerdict daemon_readiness(LabelerDaemon& daemon);

}  // namespace cn::labeler
