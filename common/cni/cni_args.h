#pragma once
// CNI_ARGS is `K=V;K=V`. Nomad >= 1.9.4 adds its workload fields there, in random order, next to
// IgnoreUnknown=true and the user's own `cni { args }`. Unlike Go's LoadArgs we split on the
// first '=' (a value may contain '=') and never fail on unknown keys.
#include <map>
#include <string>
#include <string_view>

#include "common/util/result.h"

namespace cn::cni {

std::map<std::string, std::string> parse_cni_args(std::string_view args);

// What Nomad tells us about the allocation on ADD (empty strings when Nomad < 1.9.4).
struct NomadWorkload {
  std::string region;
  std::string namespace_;
  std::string job_id;
  std::string group;
  std::string alloc_id;

  bool has_identity() const { return !namespace_.empty() && !job_id.empty() && !group.empty(); }
  bool operator==(const NomadWorkload&) const = default;
};

NomadWorkload nomad_workload_from_args(const std::map<std::string, std::string>& args);

// The workload fields of raw CNI_ARGS, refused when a NOMAD_* key appears more than once. Nomad
// writes each of its keys once, after the job's own `network { cni { args } }`, which it does not
// check for ';' (nomad client/allocrunner/networking_cni.go, addCustomCNIArgs): a job's value
// "x;NOMAD_JOB_ID=admin" becomes a second NOMAD_JOB_ID, and which copy comes last is random.
[[nodiscard]] Result<NomadWorkload> nomad_workload_from_cni_args(std::string_view args);

}  // namespace cn::cni
