#pragma once
// `cilium-nomad-labeler services`: every Nomad service the labeler saw in its last pass, with its
// VIP, ports, address modes and backends, and why a service or a backend is left out. Read from
// the status file the daemon keeps beside the state file; read-only, works with the daemon
// stopped. A missing file says the feature is off or no pass has ended yet.
#include <cstddef>
#include <string>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::labeler {

enum class ServicesView {
  table,  // a row per service fitting kServicesTableWidth, then the backends that are not ready
  wide,   // every cell whole, and every backend
  json,   // the status file as it is, for machines
};

// What an 80- to 100-column terminal shows without wrapping.
inline constexpr std::size_t kServicesTableWidth = 100;

[[nodiscard]] Result<std::string> render_services(const std::string& status_file, ServicesView view,
                                                  Clock& clock);

}  // namespace cn::labeler
