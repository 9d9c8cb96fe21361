#pragma once
// How a pass of a cluster duty ended, one fixed set for every duty so that the runner can log it
// and label a metric with it.
#include <string_view>

namespace cn::labeler::cluster {

enum class PassEnd {
  complete,      // every read complete; every decided write was attempted
  read_failed,   // a read failed or was cut short: nothing deleted, no memory advanced
  doubt,         // the input could not be trusted (a malformed in-use report, an empty Nomad
                 // node list, one without the local node): nothing deleted
  fence_lost,    // etcd refused a write because the leader key is no longer ours: stopped at once
  write_failed,  // a write got no answer (its effect unknown): stopped, the rest left for later
  stopped,       // the stop token was requested
};

constexpr std::string_view to_string(PassEnd end) {
  switch (end) {
    case PassEnd::complete:
      return "complete";
    case PassEnd::read_failed:
      return "read_failed";
    case PassEnd::doubt:
      return "doubt";
    case PassEnd::fence_lost:
      return "fence_lost";
    case PassEnd::write_failed:
      return "write_failed";
    case PassEnd::stopped:
      return "stopped";
  }
  return "unknown";
}

}  // namespace cn::labeler::cluster
