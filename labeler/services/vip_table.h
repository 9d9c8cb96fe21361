#pragma once
// The cluster's one table of service VIPs, kept in Nomad Variables and written only with
// check-and-set, so that two nodes never hand out one address and an address survives every
// restart. The table is split in buckets by address (bucket = the address's place in the range
// modulo kVipBuckets): a VIP lives in exactly one bucket, so one bucket's check-and-set is
// enough to claim it, and a bucket stays far below Nomad's 64 KiB per variable.
//
// Item of a bucket: "<vip>" -> "<namespace>/<service>", or "<namespace>/<service> released
// <unix seconds>" once no node lists the service any more. A released address is not handed
// to another service until the grace period has passed; the service it belonged to takes it
// back at once if it returns.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/nomad/client/nomad_services_api.h"
#include "common/util/clock.h"
#include "common/util/result.h"
#include "labeler/services/vip_range.h"

namespace cn::labeler {

inline constexpr std::uint64_t kVipBuckets = 64;

struct VipTableOptions {
  std::string nomad_namespace = "default";
  std::string prefix = "cilium-nomad/services/vips";
  // Longer than a node can go on serving an address after its service left (its resync
  // period, a restart): only then may the address go to another service.
  std::chrono::seconds release_grace{std::chrono::hours{1}};
  // Check-and-set conflicts one claim may meet before it gives up for this pass.
  int max_conflicts = 8;
};

struct VipEntry {
  std::string service;                      // "<namespace>/<name>"
  std::optional<std::int64_t> released_at;  // Unix seconds
};

class VipTable {
 public:
  VipTable(nomad::NomadApi& nomad, nomad::NomadServicesApi& writes, const VipRange& range,
           Clock& clock, VipTableOptions options = {});

  // Reads every bucket that changed since the last refresh.
  [[nodiscard]] Status refresh(const Deadline& deadline);

  // The service's VIP: the one it holds (taken back if released), else the first free choice
  // of its order, claimed with check-and-set. invalid: the range has no free address left.
  [[nodiscard]] Result<IpPrefix> claim(std::string_view nomad_namespace,
                                       std::string_view service_name, const Deadline& deadline);

  // Marks the VIPs of services not in `live` ("<namespace>/<name>") released, and removes
  // released entries older than the grace period. Also releases a second VIP a service holds
  // (two nodes that claimed at once with different views): its earliest choice stays.
  [[nodiscard]] Status release_absent(const std::set<std::string>& live, const Deadline& deadline);

  // An entry release_absent removed for good, in a write that landed: the moment its address
  // may go to another service, so whatever still names it for its old service must go too.
  struct Removed {
    std::string service;  // "<namespace>/<name>"
    IpPrefix vip;
  };
  // The entries removed since the last call, oldest first; the list is emptied.
  std::vector<Removed> take_removed();

  // Every held (not released) VIP inside the current range, by service: the one claim() would
  // return without a write.
  std::map<std::string, IpPrefix> assignments() const;
  // Every entry, by VIP text, released ones included.
  std::map<std::string, VipEntry> entries() const;
  // Each bucket variable as last read or written: path -> ModifyIndex.
  std::map<std::string, std::uint64_t> bucket_indexes() const;

 private:
  struct Bucket {
    std::uint64_t modify_index = 0;  // 0: the variable does not exist
    std::map<std::string, std::string> items;
  };

  std::string bucket_path(std::uint64_t bucket) const;
  std::optional<std::uint64_t> bucket_of(const IpPrefix& vip) const;
  // Writes `items` over bucket `b` with check-and-set on what this table last read; on a
  // conflict the bucket is re-read. True when written.
  [[nodiscard]] Result<bool> write_bucket(std::uint64_t b, std::map<std::string, std::string> items,
                                          const Deadline& deadline);
  [[nodiscard]] Status reread_bucket(std::uint64_t b, const Deadline& deadline);
  // The order number of `vip` in the service's choices (for the earliest-choice rule).
  std::uint64_t attempt_of(const std::string& service, const IpPrefix& vip) const;
  struct Choice {
    std::uint64_t attempt = 0;
    IpPrefix vip;
  };
  // Per service, its earliest choice among the addresses it holds in the range (released ones
  // too when `with_released`): claim, release and assignments all follow this one rule.
  std::map<std::string, Choice> earliest_choices(bool with_released) const;

  nomad::NomadApi& nomad_;
  nomad::NomadServicesApi& writes_;
  const VipRange& range_;
  Clock& clock_;
  VipTableOptions options_;
  std::map<std::uint64_t, Bucket> buckets_;
  std::vector<Removed> removed_;
};

// "<namespace>/<name>" and its reading back; the released form as the table writes it.
std::string vip_service_key(std::string_view nomad_namespace, std::string_view service_name);
std::optional<VipEntry> parse_vip_entry(std::string_view value);
std::string format_vip_entry(const VipEntry& entry);

}  // namespace cn::labeler
