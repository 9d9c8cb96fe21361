#pragma once
// Reads every key under a prefix a page at a time, every page at one etcd revision, so that a
// pass sees one snapshot of the store while holding one page at a time (a pass over 50,000
// identities never holds the whole range answer).
#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string_view>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "common/util/result.h"
#include "labeler/cluster/duty_pass.h"

namespace cn::labeler::cluster {

struct ScanSettings {
  std::int64_t page_size = 1000;
  std::chrono::milliseconds call_timeout{10'000};
};

struct ScanCounters {
  std::int64_t pages = 0;     // answers read
  std::int64_t requests = 0;  // range calls made, failed ones included
};

// `revision` 0: the first answer's revision pins this scan and is written back, so the caller's
// next scans read the same snapshot. Any failure (an etcd error, a revision compacted meanwhile,
// an answer that does not advance, the stop token) ends the scan with an error: the caller must
// treat what it saw as partial.
// How a pass ends when its scan failed: `stopped` on our own stop, else `read_failed`.
inline PassEnd scan_stop(const Error& error) {
  return error.kind == ErrorKind::cancelled ? PassEnd::stopped : PassEnd::read_failed;
}

[[nodiscard]] Status scan_prefix(etcd::EtcdApi& etcd, Clock& clock, const ScanSettings& settings,
                                 std::string_view prefix, etcd::Revision& revision,
                                 ScanCounters& counters, std::stop_token stop,
                                 const std::function<void(const etcd::KeyValue&)>& on_key);

}  // namespace cn::labeler::cluster
