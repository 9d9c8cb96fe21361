#pragma once
// How a job finds a service's VIP the Nomad way: one Nomad Variable per service, in the
// service's own namespace, that a `template` block reads with nomadVar (docs/services.md, "Jobs
// find their VIP"). Path "cilium-nomad/vip/<service>", items `vip`, one `port_<label>` per
// frontend port and `service` = "<namespace>/<name>". The `service` item is how the labeler
// knows a variable is its own: one at that path without it, or naming another service, was put
// there by someone else and is never written over nor deleted.
//
// One node writes each service's variable (its owner, see owned_services), so that a cluster
// of N nodes does not make N writes per service. Every write is a check-and-set on what this
// node last saw, so an owner that changes during a pass cannot undo a newer write.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/nomad/client/nomad_api.h"
#include "common/nomad/client/nomad_services_api.h"
#include "common/nomad/model/service_registration.h"
#include "common/util/clock.h"
#include "common/util/ip_prefix.h"
#include "common/util/result.h"
#include "labeler/services/lb_service.h"

namespace cn::labeler {

inline constexpr std::string_view kServiceVipPrefix = "cilium-nomad/vip";

// A service this node owns, as its variable should say it.
struct ServiceVipWant {
  std::string nomad_namespace;
  std::string name;
  IpPrefix vip;
  std::vector<LbPort> ports;
};

// A service whose variable is not as wanted after a pass, and why.
struct ServiceVipFailure {
  std::string nomad_namespace;
  std::string name;
  std::string reason;
  // A variable at the path that the labeler did not write: left alone until its owner (an
  // operator, another tool) removes it.
  bool foreign = false;
};

struct ServiceVipSyncReport {
  int written = 0;    // variables created or rewritten
  int conflicts = 0;  // writes that met someone else's: settled on the next pass
  std::vector<ServiceVipFailure> failures;
};

// "cilium-nomad/vip/<name>".
std::string service_vip_path(std::string_view service_name);
// The items the variable of `want` holds. A port without a label is `port`; a second port with
// the same item name is left out (the first one of `want.ports` wins), since one item cannot
// hold two ports.
std::map<std::string, std::string> service_vip_items(const ServiceVipWant& want);

// The services (namespace, name) whose variable `node_id` writes: those whose registration with
// the smallest allocation ID runs on that node. Every node reads the same registrations, so all
// agree on one owner per service without talking to each other.
std::set<std::pair<std::string, std::string>> owned_services(
    const std::vector<nomad::ServiceRegistration>& registrations, std::string_view node_id);

class ServiceVipVariables {
 public:
  ServiceVipVariables(nomad::NomadApi& nomad, nomad::NomadServicesApi& writes);

  // Brings the variable of every wanted service to its items: a variable not seen yet is read
  // first (one GET), then written with check-and-set only if its items differ. A conflict takes
  // Nomad's copy and tries again on the next call. A service that fails (a namespace the token
  // may not write, a foreign variable) is reported and does not stop the others; an error only
  // when Nomad cannot be reached, since then every other service would fail too. Services not
  // in `wanted` are forgotten (another node owns them now), never deleted.
  [[nodiscard]] Result<ServiceVipSyncReport> sync(const std::vector<ServiceVipWant>& wanted,
                                                  const Deadline& deadline);

  // Deletes the variable of (namespace, name) when it is ours and still holds `vip`: the one
  // moment to do it is when the VIP table frees the address for good, so that a job never reads
  // an address another service may get. Anything else at the path is left alone; a variable
  // that is already gone is success.
  [[nodiscard]] Status remove(std::string_view nomad_namespace, std::string_view service_name,
                              const IpPrefix& vip, const Deadline& deadline);

 private:
  struct Seen {
    std::uint64_t modify_index = 0;  // 0: the variable does not exist
    std::map<std::string, std::string> items;
  };
  using Key = std::pair<std::string, std::string>;  // (namespace, service name)

  // The variable as last seen, reading it if it has not been (modify_index 0: absent).
  [[nodiscard]] Result<const Seen*> seen(const Key& key, const Deadline& deadline);

  nomad::NomadApi& nomad_;
  nomad::NomadServicesApi& writes_;
  std::map<Key, Seen> seen_;
};

}  // namespace cn::labeler
