#include "bench/support/sax_field_filter.h"

namespace cn::bench {

namespace {

// A listed member without members of its own is kept whole: no filtering below it.
const Fields* governing(const Fields* fields) {
  return fields && !fields->members.empty() ? fields : nullptr;
}

}  // namespace

nlohmann::json* FieldFilter::slot(const Fields*& fields) {
  if (open_.empty()) {
    fields = governing(root_);
    return &result_;
  }
  Open& parent = open_.back();
  if (parent.value == nullptr) {
    fields = nullptr;
    return nullptr;
  }
  if (parent.array) {
    fields = parent.fields;  // an array's elements share its fields
    parent.value->push_back(nullptr);
    return &parent.value->back();
  }
  if (!member_kept_) return nullptr;
  fields = member_fields_;
  // The open containers below this one live in std::map nodes or in the last element of their
  // parent's array, which does not grow while they are open: these pointers stay valid.
  return &(*parent.value)[member_key_];
}

bool FieldFilter::key(std::string& k) {
  const Open& owner = open_.back();
  if (owner.value == nullptr) {
    member_kept_ = false;
    return true;
  }
  const Fields* member = owner.fields ? owner.fields->find(k) : nullptr;
  member_kept_ = owner.fields == nullptr || member != nullptr;
  member_fields_ = owner.fields ? governing(member) : nullptr;
  member_key_ = std::move(k);
  return true;
}

bool FieldFilter::open(bool array) {
  if (static_cast<int>(open_.size()) >= max_depth_) {
    too_deep_ = true;
    return false;
  }
  const Fields* fields = nullptr;
  nlohmann::json* at = slot(fields);
  if (at != nullptr) *at = array ? nlohmann::json::array() : nlohmann::json::object();
  open_.push_back({at, fields, array});
  return true;
}

bool FieldFilter::close() {
  open_.pop_back();
  return true;
}

bool FieldFilter::parse_error(std::size_t, const std::string&,
                              const nlohmann::detail::exception& e) {
  error_ = e.what();
  return false;
}

Result<nomad::AllocationList> sax_parse_allocation_list(std::string_view body) {
  FieldFilter filter(nomad::allocation_fields(), 128);
  if (!nlohmann::json::sax_parse(body.begin(), body.end(), &filter))
    return fail("allocation list: invalid JSON: " + filter.error());
  nlohmann::json& doc = filter.result();
  nomad::AllocationList list;
  if (doc.is_null()) return list;
  if (!doc.is_array()) return fail("allocation list: expected an array");
  list.allocations.reserve(doc.size());
  for (std::size_t i = 0; i < doc.size(); ++i) {
    auto alloc = nomad::parse_allocation(doc[i], "Allocation[" + std::to_string(i) + "]");
    if (alloc) {
      list.allocations.push_back(std::move(*alloc));
    } else {
      list.rejected.push_back(std::move(alloc.error()));
    }
  }
  return list;
}

}  // namespace cn::bench
