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
#include "labeler/services/service_vip_variables.h"
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
  // Why this node's report could not be published (the other nodes then keep its last one);
  // the pass itself still served this node's own instances as it saw them.
  std::string report_error;
  // The variables that tell jobs their service's VIP (service_vip_variables.h) this node owns
  // and could not write or remove, and why; the agent was served regardless.
  std::vector<LbProblem> variable_problems;
};

class ServicesSync {
 public:
  ServicesSync(nomad::NomadApi& nomad, nomad::NomadServicesApi& services, VipTable& vips,
               LbWriter& writer, ServicesSyncOptions options);

  // `relist_all`: read every service's registrations and this node's checks again (at start,
  // every resync, after a gap in the event stream); otherwise the pass uses what the listing and
  // the events since gave, and reads checks only of instances it has not reported yet.
  [[nodiscard]] Result<ServicesPass> run_once(const Deadline& deadline, bool relist_all = true)
      EXCLUDES(registrations_mu_);

  LbApi lb_api() const { return writer_.api(); }

  // One frame of the Service event topic, from the loop's event thread. True when it changed
  // the registrations (a pass is due).
  bool apply_events(const nomad::EventFrame& frame) EXCLUDES(registrations_mu_);
  // The Raft index the registrations reflect: the event stream resumes after it.
  std::uint64_t registrations_index() const EXCLUDES(registrations_mu_);

  // Whether a listing of the reports and the VIP table (path -> ModifyIndex) holds only what
  // this node last read or wrote: the loop's watch then skips the pass that its own writes would
  // otherwise wake. Thread-safe.
  bool has_seen(const std::map<std::string, std::uint64_t>& listing) const EXCLUDES(seen_mu_);

  // Reads the checks of this node's instances and publishes its report when it changed (the
  // other nodes see it through their watch of the reports). True when it was written.
  [[nodiscard]] Result<bool> poll_own_checks(const Deadline& deadline) EXCLUDES(registrations_mu_);

 private:
  // Lists the services; reads each one's registrations unless the registrations table has not
  // moved since the last listing read them all.
  [[nodiscard]] Status relist(const Deadline& deadline) EXCLUDES(registrations_mu_);
  std::vector<nomad::ServiceRegistration> registrations() const EXCLUDES(registrations_mu_);
  // `read_all_checks` false (a pass): checks are read only for instances not reported yet; the
  // poll reads them all. True when some part of the report was written.
  [[nodiscard]] Result<bool> publish_own_report(const std::vector<nomad::ServiceRegistration>& all,
                                                bool read_all_checks, const Deadline& deadline);
  // Writes the report's parts that changed and deletes the parts it no longer needs.
  [[nodiscard]] Result<bool> write_own_report(const Deadline& deadline);
  bool is_own_report(std::string_view path) const;
  // The VIP variables of the served services this node owns, and the removal of those whose
  // address left the VIP table.
  [[nodiscard]] Status publish_vip_variables(
      const std::vector<nomad::ServiceRegistration>& registrations, ServicesPass& pass,
      const Deadline& deadline);
  // This node's allocation `alloc_id`, read once (its ports and addresses do not change).
  [[nodiscard]] Result<const nomad::Allocation*> own_allocation(const std::string& alloc_id,
                                                                const Deadline& deadline);
  [[nodiscard]] Status read_reports(const Deadline& deadline);
  std::string report_path(std::string_view node_id) const;
  // After a pass or a write of the report: what has_seen() compares with.
  void remember_seen() EXCLUDES(seen_mu_);

  nomad::NomadApi& nomad_;
  nomad::NomadServicesApi& services_;
  VipTable& vips_;
  LbWriter& writer_;
  ServiceVipVariables vip_variables_;
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
  // This node's instances as it last saw them: served from here, not from Nomad's copy.
  NodeReport own_instances_;
  // The parts of this node's report in Nomad, by path: the ModifyIndex and, when known, the
  // items Nomad holds (nullopt: seen in a listing only, or not yet read after a restart).
  struct ReportPart {
    std::uint64_t index = 0;
    std::optional<std::map<std::string, std::string>> items;
  };
  std::map<std::string, ReportPart> own_parts_;
  std::string report_error_;
  mutable Mutex seen_mu_;
  std::map<std::string, std::uint64_t> seen_
      GUARDED_BY(seen_mu_);  // why the last write of this node's report failed; empty: it did not
};

}  // namespace cn::labeler
