#pragma once
// What the services feature asks of Nomad, beside NomadApi: native service registrations, the
// local client's check results, and writing a variable with check-and-set (the VIP table, the
// published health). An interface of its own so that the label path's doubles need not grow.
// Errors as in nomad_api.h.
#include <chrono>
#include <cstdint>
#include <map>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/nomad/client/nomad_api.h"
#include "common/nomad/model/alloc_checks.h"
#include "common/nomad/model/service_registration.h"
#include "common/nomad/model/variable.h"
#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::nomad {

// The outcome of a check-and-set write. A conflict is an answer, not an error: `current` is
// the variable as Nomad holds it (modify_index 0 and no items when it does not exist, or when
// the token may write but not read it).
struct VariableWrite {
  bool written = false;
  Variable current;
};

class NomadServicesApi {
 public:
  virtual ~NomadServicesApi() = default;

  // GET /v1/services?namespace=*: every service name in every namespace the token may read. A
  // blocking query on the whole registrations table (index 0: answer at once).
  [[nodiscard]] virtual Result<Indexed<std::vector<ServiceListEntry>>> service_list(
      std::uint64_t index, std::chrono::seconds wait, MonoTime deadline,
      std::stop_token stop = {}) = 0;

  // GET /v1/service/:name?namespace=, every page: each instance of one service. Not blocking.
  [[nodiscard]] virtual Result<Indexed<std::vector<ServiceRegistration>>> service_registrations(
      std::string_view nomad_namespace, std::string_view service_name, Deadline deadline) = 0;

  // GET /v1/client/allocation/:id/checks, answered by the agent that runs the allocation.
  [[nodiscard]] virtual Result<std::vector<CheckResult>> alloc_checks(std::string_view alloc_id,
                                                                      Deadline deadline) = 0;

  // PUT /v1/var/:path?namespace=&cas=: `cas` 0 creates only if absent; otherwise the write
  // lands only if the variable's ModifyIndex is still `cas`.
  [[nodiscard]] virtual Result<VariableWrite> put_variable(
      std::string_view nomad_namespace, std::string_view path,
      const std::map<std::string, std::string>& items, std::uint64_t cas, Deadline deadline) = 0;

  // DELETE /v1/var/:path?namespace=&cas=: lands only if the variable's ModifyIndex is still
  // `cas` (Nomad refuses to store a variable without items, so an emptied one is deleted).
  [[nodiscard]] virtual Result<VariableWrite> delete_variable(std::string_view nomad_namespace,
                                                              std::string_view path,
                                                              std::uint64_t cas,
                                                              Deadline deadline) = 0;
};

}  // namespace cn::nomad
