#pragma once
// What the daemon hands each part of the label path (the labeler and the reconciler): the two
// peers, the node's state file, time, and where calls and counts are reported. One list, so the
// parts cannot be wired to different instances.
#include <memory>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/nomad/client/nomad_api.h"
#include "common/state/state_store.h"
#include "common/util/clock.h"

namespace cn::labeler {

class CallRecorder;
class Metrics;

struct LabelPathDeps {
  nomad::NomadApi& nomad;
  cilium::CiliumApi& cilium;
  state::StateStore& state;
  Clock& clock;
  Metrics& metrics;
  CallRecorder& calls;
  std::shared_ptr<spdlog::logger> log;  // null: spdlog's default logger
};

}  // namespace cn::labeler
