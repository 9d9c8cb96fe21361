// Cilium endpoint JSON (one endpoint or a list) -> the helpers the labeler runs on it. Checks
// that endpoint IDs built from agent data never contain a path separator and that a write plan
// of `none` really means nothing is missing or stale.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/cilium/model/endpoint.h"
#include "common/cilium/model/endpoint_ref.h"
#include "common/cilium/model/label_write_plan.h"
#include "common/util/alloc_id.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_segment(const cn::Result<cn::cilium::EndpointRef>& ref) {
  if (ref) check(ref->to_path_segment().find('/') == std::string::npos);
}

void exercise(const cn::cilium::Endpoint& ep) {
  static const std::vector<std::string> kDesired{"nomad:nomad.group=app", "nomad:nomad.job=web",
                                                 "nomad:nomad.namespace=default"};
  const auto desired = cn::labels::LabelSet::from_strings(kDesired);

  bool init = cn::cilium::is_init(ep);
  bool reserved = cn::cilium::is_reserved_only(ep);
  check(!(init && reserved && ep.identity_id != cn::cilium::kIdentityHost &&
          ep.identity_id != cn::cilium::kIdentityHealth));
  (void)cn::cilium::user_labels(ep).to_strings();

  auto plan = cn::cilium::plan_label_write(ep, desired);
  if (plan.action == cn::cilium::LabelWriteAction::none) {
    check(plan.missing.empty() && plan.stale.empty() && !init);
  }
  if (reserved) check(plan.action == cn::cilium::LabelWriteAction::skip_reserved);

  if (auto att = cn::cilium::attachment_of(ep)) {
    check(cn::is_valid_alloc_id(att->alloc_id));
    check_segment(cn::cilium::EndpointRef::cni_attachment(att->alloc_id, att->ifname));
    check_segment(cn::cilium::EndpointRef::container_id(att->alloc_id));
  }
  for (const auto& a : ep.addressing) {
    check_segment(cn::cilium::EndpointRef::ipv4(a.ipv4));
    check_segment(cn::cilium::EndpointRef::ipv6(a.ipv6));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  if (auto ep = cn::cilium::parse_endpoint_text(body)) exercise(*ep);
  if (auto list = cn::cilium::parse_endpoint_list(body)) {
    for (const auto& ep : list->endpoints) exercise(ep);
  }
  return 0;
}
