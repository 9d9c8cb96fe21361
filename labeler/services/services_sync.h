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

  [[nodiscard]] Result<ServicesPass> run_once(const Deadline& deadline);

 private:
  [[nodiscard]] Result<std::vector<nomad::ServiceRegistration>> read_registrations(
      const Deadline& deadline);
  [[nodiscard]] Status publish_own_report(const std::vector<nomad::ServiceRegistration>& all,
                                          const Deadline& deadline);
  [[nodiscard]] Status read_reports(const Deadline& deadline);
  std::string report_path(std::string_view node_id) const;

  nomad::NomadApi& nomad_;
  nomad::NomadServicesApi& services_;
  VipTable& vips_;
  LbWriter& writer_;
  ServicesSyncOptions options_;
  // As the last pass read them; the Service event stream will keep it current between passes.
  RegistrationStore registrations_;
  // Every node's report by variable path, with the ModifyIndex it was read at.
  std::map<std::string, std::pair<std::uint64_t, NodeReport>> reports_;
  // This node's report as Nomad holds it (nullopt: not read or written yet), and its index.
  std::optional<std::map<std::string, std::string>> own_report_;
  std::uint64_t own_report_index_ = 0;
};

}  // namespace cn::labeler
