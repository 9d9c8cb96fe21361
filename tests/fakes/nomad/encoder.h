#pragma once
// Nomad's wire shape (go-msgpack JSON): struct keys sorted (nlohmann::json's std::map ordering is
// the same byte order), every field of nested structs present, omitempty only where Nomad's
// struct tags ask for it, zero times null, UnixNano integers kept as int64.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fakes/nomad/model.h"

namespace cn::fakes {

nlohmann::json encode_job(const Job& job);

// The top-level Allocation is omitempty as a whole (its `_struct` tag): "", 0, false, null,
// empty maps/slices and an all-null DesiredTransition vanish. Event payloads pass
// include_job = false, as Nomad strips Job before publishing.
nlohmann::json encode_alloc(const Alloc& alloc, bool include_job);

// AllocListStub: no Job, no NetworkStatus, every field present. AllocatedResources only on request
// (?resources=true); ?task_states=false gives "TaskStates": null.
nlohmann::json encode_alloc_stub(const Alloc& alloc, bool resources, bool task_states);

// Sanitised Node (SecretID "") plus the synthetic "Drain" bool.
nlohmann::json encode_node(const NodeRecord& node);

// NodeListStub (GET /v1/nodes): every field present but Attributes, only with ?os=true and then
// only os.name, and the resources (?resources=true), which the fake's nodes do not have.
nlohmann::json encode_node_stub(const NodeRecord& node, bool os);

nlohmann::json encode_event(std::uint64_t index, const Event& event);
// One NDJSON line with its '\n'.
std::string encode_event_frame(std::uint64_t index, const std::vector<Event>& events);

// Compact without a trailing newline; ?pretty gives 4-space indent plus a newline.
std::string to_wire(const nlohmann::json& value, bool pretty = false);

// Go omitempty on one struct level: drops "", 0, false, null, [] and {}.
void omit_empty(nlohmann::json& object);

}  // namespace cn::fakes
