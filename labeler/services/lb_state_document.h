#pragma once
// The file the agent's --lb-state-file reads (1.18+): Kubernetes Service and EndpointSlice
// objects as JSON (type StateFile in pkg/loadbalancer/reflectors/file.go in cilium/cilium).
// Every field the agent reads is written explicitly, never left to a default that changed
// between agent versions (docs/services.md, "The state file").
#include <string>
#include <vector>

#include "labeler/services/lb_service.h"

namespace cn::labeler {

// The label and value our objects carry, so that a reader of the file (or of the agent's
// tables) can tell them from an operator's own.
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByValue = "cilium-nomad";

// The whole file for `services` (already checked: lb_service_check.h), in a stable order, so
// that every node writes the same bytes for the same services and an unchanged set is not
// rewritten. No services: {"services":[],"endpoints":[]}, since the agent reads an empty .json
// file as an error and keeps its previous state.
std::string render_lb_state_json(const std::vector<LbService>& services);

}  // namespace cn::labeler
