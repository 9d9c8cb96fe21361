#include "labeler/services/registration_store.h"

namespace cn::labeler {

namespace {

constexpr std::string_view kUpsert = "ServiceRegistration";

}  // namespace

void RegistrationStore::replace(std::vector<nomad::ServiceRegistration> all, std::uint64_t index) {
  by_key_.clear();
  for (auto& r : all) {
    auto key = std::make_pair(r.nomad_namespace, r.id);
    by_key_.insert_or_assign(std::move(key), std::move(r));
  }
  index_ = index;
}

bool RegistrationStore::apply(const nomad::EventFrame& frame) {
  bool changed = false;
  for (const auto& event : frame.events) {
    if (event.topic != "Service" || !event.service) continue;
    const std::uint64_t at = event.index != 0 ? event.index : frame.index;
    if (at <= index_) continue;
    const nomad::ServiceRegistration& r = *event.service;
    auto key = std::make_pair(r.nomad_namespace, r.id);
    if (event.type == kUpsert) {
      auto it = by_key_.find(key);
      if (it != by_key_.end() && it->second.modify_index > r.modify_index) continue;
      if (it != by_key_.end() && it->second == r) continue;
      by_key_.insert_or_assign(std::move(key), r);
      changed = true;
    } else {
      changed = by_key_.erase(key) > 0 || changed;
    }
  }
  if (frame.index > index_) index_ = frame.index;
  return changed;
}

std::vector<nomad::ServiceRegistration> RegistrationStore::all() const {
  std::vector<nomad::ServiceRegistration> out;
  out.reserve(by_key_.size());
  for (const auto& [key, r] : by_key_) out.push_back(r);
  return out;
}

std::set<ServiceId> service_ids(const std::vector<nomad::ServiceRegistration>& registrations) {
  std::set<ServiceId> out;
  for (const auto& r : registrations) out.emplace(r.nomad_namespace, r.service_name);
  return out;
}

}  // namespace cn::labeler
