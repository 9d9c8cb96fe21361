#include "tests/fakes/nomad/model.h"

namespace cn::fakes {

const GroupSpec* Job::group(const std::string& name) const {
  for (const auto& g : spec.groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

bool Alloc::terminal() const {
  // Nomad's TerminalStatus(): server side stop/evict, or a finished client.
  return desired_status == "stop" || desired_status == "evict" || client_status == "complete" ||
         client_status == "failed" || client_status == "lost";
}

}  // namespace cn::fakes
