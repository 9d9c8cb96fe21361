#include "labeler/cluster/duty.h"

namespace cn::labeler::cluster {

std::string_view to_string(DutyName name) {
  switch (name) {
    case DutyName::heartbeat:
      return "heartbeat";
    case DutyName::identity_gc:
      return "identity_gc";
    case DutyName::lock_gc:
      return "lock_gc";
    case DutyName::node_reaping:
      return "node_reaping";
    case DutyName::cluster_config:
      return "cluster_config";
    case DutyName::ip_gc:
      return "ip_gc";
  }
  return "heartbeat";
}

std::string_view to_string(SkipReason reason) {
  switch (reason) {
    case SkipReason::unknown_shape:
      return "unknown_shape";
    case SkipReason::changed:
      return "changed";
    case SkipReason::doubt:
      return "doubt";
    case SkipReason::never_listed:
      return "never_listed";
    case SkipReason::over_cap:
      return "over_cap";
    case SkipReason::not_ours:
      return "not_ours";
  }
  return "doubt";
}

}  // namespace cn::labeler::cluster
