#pragma once
// One line of GET /v1/event/stream: a heartbeat `{}` or a frame of events sharing a Raft index.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/nomad/model/allocation.h"
#include "common/nomad/model/service_registration.h"
#include "common/util/result.h"

namespace cn::nomad {

struct Event {
  std::string topic;  // Allocation, Job, Node, ...
  std::string type;   // PlanResult, AllocationUpdated, ...
  std::string key;    // alloc ID on the Allocation topic, registration ID on Service
  std::string nomad_namespace;
  std::uint64_t index = 0;
  std::vector<std::string> filter_keys;  // [JobID, DeploymentID] on the Allocation topic
  // Payload.Allocation of an Allocation-topic event, without its Job (Nomad strips it).
  std::optional<Allocation> allocation;
  // Payload.Service of a Service-topic event: the registration as stored, also for deletions.
  std::optional<ServiceRegistration> service;
  // Set when an Allocation- or Service-topic event carried a payload we could not use; the rest
  // of the frame is still good, so one bad event does not cost the others.
  std::optional<Error> payload_error;
};

struct EventFrame {
  std::uint64_t index = 0;
  std::vector<Event> events;
};

struct Heartbeat {};

using StreamMessage = std::variant<Heartbeat, EventFrame>;

// `{}` is a heartbeat; any other object is a frame (missing Events = no events). Anything else
// (not JSON, not an object, wrong types in the frame shape, Nomad's plain-text termination
// message) is an error: the stream is broken and must be reopened.
[[nodiscard]] Result<StreamMessage> parse_event_frame(std::string_view line);

}  // namespace cn::nomad
