#include "tests/fakes/cilium/identity_allocator.h"

#include <openssl/evp.h>

#include <cstdio>

namespace cn::fakes::cilium {

std::string sha256_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  std::string out;
  char hex[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    out += hex;
  }
  return out;
}

std::optional<std::uint32_t> reserved_identity_for(const LabelMap& labels) {
  // Only a set made of exactly one reserved label maps to a fixed number; a mixed set such as
  // {reserved:init, nomad:job=web} gets a global identity (fact sheet 4.2).
  if (labels.size() != 1) return std::nullopt;
  const Label& l = labels.begin()->second;
  if (!l.is_reserved()) return std::nullopt;
  static const std::map<std::string, std::uint32_t> kReserved = {
      {"host", 1},       {"world", 2},       {"unmanaged", 3},      {"health", 4},
      {"init", 5},       {"remote-node", 6}, {"kube-apiserver", 7}, {"ingress", 8},
      {"world-ipv4", 9}, {"world-ipv6", 10},
  };
  const auto it = kReserved.find(l.key);
  if (it == kReserved.end()) return std::nullopt;
  return it->second;
}

IdentityAllocator::IdentityAllocator(std::uint64_t seed) : rng_(seed), seed_(seed) {}

Identity IdentityAllocator::resolve(const LabelMap& identity_labels) {
  Identity ident;
  ident.labels = labels_to_model(identity_labels);
  ident.labels_sha256 = sha256_hex(sorted_kv_list(identity_labels));
  if (const auto fixed = reserved_identity_for(identity_labels)) {
    ident.id = *fixed;
    return ident;
  }
  std::lock_guard lock(mu_);
  const std::string key = sorted_kv_list(identity_labels);
  if (const auto it = by_key_.find(key); it != by_key_.end()) return it->second;
  std::uniform_int_distribution<std::uint32_t> dist(kFirstGlobalIdentity, 65535);
  do {
    ident.id = dist(rng_);
  } while (used_.contains(ident.id));
  used_.insert(ident.id);
  by_key_[key] = ident;
  return ident;
}

std::optional<Identity> IdentityAllocator::lookup(std::uint32_t id) const {
  std::lock_guard lock(mu_);
  for (const auto& [k, ident] : by_key_) {
    if (ident.id == id) return ident;
  }
  return std::nullopt;
}

std::vector<Identity> IdentityAllocator::all() const {
  std::lock_guard lock(mu_);
  std::vector<Identity> out;
  for (const auto& [k, ident] : by_key_) out.push_back(ident);
  return out;
}

void IdentityAllocator::reset() {
  std::lock_guard lock(mu_);
  by_key_.clear();
  used_.clear();
  rng_.seed(seed_);
}

}  // namespace cn::fakes::cilium
