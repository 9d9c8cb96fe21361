#pragma once
// The REST path for agents 1.16 and 1.17, which have no --lb-state-file: one agent service
// (`PUT /v1/service/{id}`) per VIP:port. Nothing prunes REST services on an agent without
// Kubernetes, and their IDs survive agent restarts (BPF maps, restored at start), so every
// apply reconciles against what `GET /v1/service` lists: an ID already serving a frontend is
// reused, only what differs is written, and frontends the labeler owns but no longer wants are
// deleted. Owned means inside the configured VIP ranges; anything else is never touched.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_services_api.h"
#include "common/util/ip_prefix.h"
#include "labeler/services/lb_writer.h"

namespace cn::labeler {

struct LbRestWriterOptions {
  // The VIP ranges: frontends inside them are the labeler's. Empty: nothing is owned, so
  // nothing is written or deleted.
  std::vector<IpPrefix> vip_ranges;
  std::shared_ptr<spdlog::logger> log;  // nullptr: spdlog's default logger
};

// What the last apply did, for logs and `services`.
struct LbRestReport {
  int written = 0;    // PUTs that landed
  int deleted = 0;    // DELETEs that landed (or found the service already gone)
  int unchanged = 0;  // frontends already served as wanted
  // One line per frontend the agent did not take ("PUT 10.96.0.2:80/tcp (prod/api) ID 3:
  // HTTP 461: ..."); the others landed regardless.
  std::vector<std::string> failures;
};

class LbRestWriter final : public LbWriter {
 public:
  // `agent` must outlive the writer.
  LbRestWriter(cilium::CiliumServicesApi& agent, LbRestWriterOptions options);

  LbApi api() const override { return LbApi::rest; }
  // Fails only when the agent cannot be listed (then nothing was written); a PUT or DELETE the
  // agent refuses is in last_report().failures and does not stop the others.
  [[nodiscard]] Result<bool> apply(const std::vector<LbService>& services,
                                   const Deadline& deadline) override;

  const LbRestReport& last_report() const { return report_; }

 private:
  cilium::CiliumServicesApi& agent_;
  LbRestWriterOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  LbRestReport report_;
};

// The REST service IDs are 16-bit (the agent refuses larger ones), 0 is the bulk-update form.
inline constexpr std::int64_t kFirstRestServiceId = 1;
inline constexpr std::int64_t kLastRestServiceId = 65535;

}  // namespace cn::labeler
