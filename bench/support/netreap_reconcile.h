#pragma once
// netreap's startup reconcile (reapers/endpoints.go, per shared/reference/netreap.md): list the
// agent's endpoints, then ask Nomad for each endpoint's allocation, one GET /v1/allocation/:id
// per endpoint, and compare labels. Rebuilt here with our clients and label code so the
// benchmark measures the algorithm (calls and their cost), not another language's runtime.
#include <cstddef>
#include <string>

#include "common/cilium/client/cilium_api.h"
#include "common/labels/label_policy.h"
#include "common/nomad/client/nomad_api.h"

namespace cn::bench {

struct NetreapReport {
  std::size_t endpoints = 0;
  std::size_t correct = 0;
  std::size_t to_write = 0;
  std::size_t nomad_errors = 0;
};

Result<NetreapReport> netreap_reconcile(nomad::NomadApi& nomad, cilium::CiliumApi& cilium,
                                        const labels::LabelPolicy& policy, MonoTime deadline);

}  // namespace cn::bench
