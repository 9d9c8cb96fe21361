#pragma once
// Every labeler with a kvstore configuration reports which security identities its node's
// endpoints use, under a key of its own on a lease of its own (key and value: in_use_report.h).
// The identity GC of whichever labeler leads never deletes an identity listed there. The
// agents' own value keys already say the same; this report is the second, independent witness
// the GC rules ask for (docs/cluster-duties.md). A labeler that dies takes its report with it
// when the lease expires.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"

namespace cn::labeler::cluster {

struct InUseReporterSettings {
  std::string cluster_name = "default";
  std::string node;  // this node's name: the key's last segment
  std::chrono::milliseconds interval{60'000};
  std::chrono::milliseconds call_timeout{5'000};
};

class InUseReporter {
 public:
  using OnReport = std::function<void(bool ok)>;  // after every report (metrics)

  InUseReporter(etcd::EtcdApi& etcd, cilium::CiliumApi& cilium, Clock& clock,
                InUseReporterSettings settings, std::shared_ptr<spdlog::logger> log,
                OnReport on_report = {});

  // Reports every interval until stop; then revokes its lease, which removes the report.
  void run(std::stop_token stop);
  // One report: list the endpoints, put the key. Public for tests.
  [[nodiscard]] Status report_once(std::stop_token stop);

 private:
  [[nodiscard]] Status ensure_lease(const Deadline& deadline);

  etcd::EtcdApi& etcd_;
  cilium::CiliumApi& cilium_;
  Clock& clock_;
  InUseReporterSettings settings_;
  std::shared_ptr<spdlog::logger> log_;
  OnReport on_report_;
  etcd::LeaseId lease_ = 0;  // only the run() thread touches it
};

}  // namespace cn::labeler::cluster
