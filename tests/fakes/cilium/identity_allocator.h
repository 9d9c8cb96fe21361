#pragma once
// Security identities as the agent hands them out: fixed numbers for a lone reserved label
// (host 1, health 4, init 5, ...), otherwise one stable global identity per identity-label set.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/fakes/cilium/cilium_labels.h"

namespace cn::fakes::cilium {

inline constexpr std::uint32_t kIdentityHost = 1;
inline constexpr std::uint32_t kIdentityWorld = 2;
inline constexpr std::uint32_t kIdentityHealth = 4;
inline constexpr std::uint32_t kIdentityInit = 5;
inline constexpr std::uint32_t kFirstGlobalIdentity = 256;

struct Identity {
  std::uint32_t id = 0;
  std::vector<std::string> labels;  // sorted printed form
  std::string labels_sha256;        // hex
};

std::optional<std::uint32_t> reserved_identity_for(const LabelMap& labels);

class IdentityAllocator {
 public:
  // Global numbers are drawn pseudo-randomly from [256, 65535] (as CRD-mode allocation looks),
  // seeded so that runs are reproducible; a test that confuses endpoint IDs with identity
  // numbers then fails instead of passing by coincidence.
  explicit IdentityAllocator(std::uint64_t seed = 1);

  Identity resolve(const LabelMap& identity_labels);
  std::optional<Identity> lookup(std::uint32_t id) const;
  std::vector<Identity> all() const;
  void reset();

 private:
  mutable std::mutex mu_;
  std::mt19937_64 rng_;
  std::uint64_t seed_;
  std::map<std::string, Identity> by_key_;  // key: sorted_kv_list
  std::set<std::uint32_t> used_;
};

std::string sha256_hex(const std::string& data);

}  // namespace cn::fakes::cilium
