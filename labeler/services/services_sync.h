#pragma once
// One pass of the services feature on one node: read Nomad's services and the nodes' reports,
// claim or release VIPs, publish this node's report, and hand the agent (through an LbWriter)
// what it should serve. The daemon runs it on its loop; `services` reads what the last
// pass saw.
//
// Nomad unreachable: the pass fails and the file stays as it is, so the agent keeps the last
// known backends. A service whose registrations cannot be read keeps those of the last pass
// that read them.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/nomad/client/nomad_services_api.h"
#include "common/util/clock.h"
#include "common/util/mutex.h"
#include "common/util/result.h"
#include "labeler/services/lb_service_check.h"
#include "labeler/services/lb_writer.h"
#include "labeler/services/node_report.h"
#include "labeler/services/registration_store.h"
#include "labeler/services/service_catalog.h"
#include "labeler/services/vip_table.h"

namespace cn::labeler {

struct ServicesSyncOptions {
  std::string node_id;  // this node's Nomad node ID: the report it publishes
  std::string reports_namespace = "default";
  std::string reports_prefix = "cilium-nomad/services/nodes";
  LbCheckOptions check;
};

struct ServicesPass {
  Catalog catalog;
  LbCheckResult checked;
  std::vector<LbProblem> claim_problems;  // services left without a VIP, and why
  bool lb_written = false;                // the agent was given a new set of services
};

class ServicesSync {
 public:
  ServicesSync(nomad::NomadApi& nomad, nomad::NomadServicesApi& services, VipTable& vips,
               LbWriter& writer, ServicesSyncOptions options);

  // `relist`: read every service's registrations again (at start, every resync, after a gap in
  // the event stream); otherwise the pass uses what the listing and the events since gave.
  [[nodiscard]] Result<ServicesPass> run_once(const Deadline& deadline, bool relist_all = true)
      EXCLUDES(registrations_mu_);

  LbApi lb_api() const { return writer_.api(); }

  // One frame of the Service event topic, from the loop's event thread. True when it changed
  // the registrations (a pass is due).
  bool apply_events(const nomad::EventFrame& frame) EXCLUDES(registrations_mu_);
  // The Raft index the registrations reflect: the event stream resumes after it.
  std::uint64_t registrations_index() const EXCLUDES(registrations_mu_);

  // Reads the checks of this node's instances and publishes its report when it changed (the
  // other nodes see it through their watch of the reports). True when it was written.
  [[nodiscard]] Result<bool> poll_own_checks(const Deadline& deadline) EXCLUDES(registrations_mu_);

 private:
  // Lists the services; reads each one's registrations unless the registrations table has not
  // moved since the last listing read them all.
  [[nodiscard]] Status relist(const Deadline& deadline) EXCLUDES(registrations_mu_);
  std::vector<nomad::ServiceRegistration> registrations() const EXCLUDES(registrations_mu_);
  [[nodiscard]] Result<bool> publish_own_report(const std::vector<nomad::ServiceRegistration>& all,
                                                const Deadline& deadline);
  // This node's allocation `alloc_id`, read once (its ports and addresses do not change).
  [[nodiscard]] Result<const nomad::Allocation*> own_allocation(const std::string& alloc_id,
                                                                const Deadline& deadline);
  [[nodiscard]] Status read_reports(const Deadline& deadline);
  std::string report_path(std::string_view node_id) const;

  nomad::NomadApi& nomad_;
  nomad::NomadServicesApi& services_;
  VipTable& vips_;
  LbWriter& writer_;
  ServicesSyncOptions options_;
  // From the last listing and the Service events since: the event thread writes, passes read.
  mutable Mutex registrations_mu_;
  RegistrationStore registrations_ GUARDED_BY(registrations_mu_);
  // The registrations table's index when a listing last read every service; 0: never.
  std::uint64_t listed_index_ = 0;
  // This node's allocations that have services, by ID (see own_allocation).
  std::map<std::string, nomad::Allocation> own_allocations_;
  // Every node's report by variable path, with the ModifyIndex it was read at.
  std::map<std::string, std::pair<std::uint64_t, NodeReport>> reports_;
  // This node's report as Nomad holds it (nullopt: not read or written yet), and its index.
  std::optional<std::map<std::string, std::string>> own_report_;
  std::uint64_t own_report_index_ = 0;
};

}  // namespace cn::labeler
