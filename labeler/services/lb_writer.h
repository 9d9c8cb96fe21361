#pragma once
// How the services the labeler checked reach the local agent's load balancer. From Cilium 1.18
// the agent reads them from its --lb-state-file (lb_state_file_writer.h); 1.16 and 1.17 have no
// such file and take them over the REST API, `PUT /v1/service/{id}`.
#include <string_view>
#include <vector>

#include "common/util/clock.h"
#include "common/util/result.h"
#include "labeler/services/lb_service.h"

namespace cn::labeler {

enum class LbApi { state_file, rest };
std::string_view to_string(LbApi api);

class LbWriter {
 public:
  virtual ~LbWriter() = default;

  virtual LbApi api() const = 0;
  // Makes the agent serve exactly `services` (already checked, sorted) among what the labeler
  // owns, and leaves everything else alone. True when something was written. On an error the
  // agent keeps what it served before.
  [[nodiscard]] virtual Result<bool> apply(const std::vector<LbService>& services,
                                           const Deadline& deadline) = 0;
};

}  // namespace cn::labeler
