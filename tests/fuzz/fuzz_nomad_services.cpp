// Nomad's service registrations, service lists, check results and Service-topic events, and
// what other labelers publish (node reports, VIP table entries): every parser of the services
// feature gets bytes it never expected. Checks that what parses also round-trips.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/nomad/model/alloc_checks.h"
#include "common/nomad/model/event_frame.h"
#include "common/nomad/model/service_registration.h"
#include "labeler/services/node_report.h"
#include "labeler/services/service_catalog.h"
#include "labeler/services/vip_table.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto regs = cn::nomad::parse_service_registrations_text(text)) {
    cn::labeler::CatalogInput input;
    input.registrations = *regs;
    for (const auto& r : *regs) {
      input.vips[cn::labeler::vip_service_key(r.nomad_namespace, r.service_name)] =
          *cn::parse_ip_address("10.96.0.1");
      (void)cn::labeler::port_label_of(r);
    }
    auto catalog = cn::labeler::build_catalog(input);
    for (const auto& s : catalog.services) check(!s.ports.empty());
  }
  (void)cn::nomad::parse_service_list_text(text);
  (void)cn::nomad::parse_alloc_checks_text(text);
  (void)cn::nomad::parse_event_frame(text);

  // What another node wrote: one item of a node report, one VIP table entry.
  const std::map<std::string, std::string> items = {{"a1", std::string(text)}};
  auto report = cn::labeler::decode_node_report(items);
  if (!report.empty())
    check(cn::labeler::decode_node_report(cn::labeler::encode_node_report(report)) == report);
  if (auto entry = cn::labeler::parse_vip_entry(text)) {
    auto again = cn::labeler::parse_vip_entry(cn::labeler::format_vip_entry(*entry));
    check(again && again->service == entry->service && again->released_at == entry->released_at);
  }
  return 0;
}
