#pragma once
// Nomad's service registrations as this node knows them: a full listing at start and at every
// resync, and between them the Service event topic, one registration per event. A listing
// costs one request per service; the topic carries only what changed.
//
// On topic Service, Type "ServiceRegistration" is an upsert and every other Type a deletion of
// the payload's registration: Nomad files deletions under the Raft message of the transaction
// that made them (ServiceDeregistration, AllocationUpdated, PlanResult, NodeStreamEvent,
// nomad/state/events.go in hashicorp/nomad). Registrations removed by an allocation's garbage
// collection publish no event at all: only the periodic listing sees them go.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/nomad/model/event_frame.h"
#include "common/nomad/model/service_registration.h"

namespace cn::labeler {

using ServiceId = std::pair<std::string, std::string>;  // namespace, name

class RegistrationStore {
 public:
  // Everything from a full listing taken at Raft index `index` (the registrations table's
  // X-Nomad-Index): events at or below it are already in it.
  void replace(std::vector<nomad::ServiceRegistration> all, std::uint64_t index);
  // One frame of topic Service. Events at or below index() are skipped, as is an upsert older
  // (by ModifyIndex) than what the store holds. True when the store changed.
  bool apply(const nomad::EventFrame& frame);

  std::vector<nomad::ServiceRegistration> all() const;
  std::size_t size() const { return by_key_.size(); }
  // The last Raft index the store reflects; the event stream resumes after it.
  std::uint64_t index() const { return index_; }

 private:
  // (namespace, ID): Nomad's primary key.
  std::map<std::pair<std::string, std::string>, nomad::ServiceRegistration> by_key_;
  std::uint64_t index_ = 0;
};

// The services the registrations belong to. Taken from a snapshot (RegistrationStore::all()),
// so that a pass sees its services and their registrations as of one moment.
std::set<ServiceId> service_ids(const std::vector<nomad::ServiceRegistration>& registrations);

}  // namespace cn::labeler
