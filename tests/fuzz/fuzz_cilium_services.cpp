// What the agent tells the services feature: byte 0 picks the decoder, the rest is the agent's
// answer. 0: GET /v1/service (1.16/1.17), 1: GET /v1/healthz (its release), 2: GET /v1/config
// (the pod CIDRs the VIP range must stay clear of). Checks that no answer crashes or throws, that
// refusals are named kinds, that a parsed service renders as a PUT body that is valid JSON, and
// that a release read from the status text orders consistently.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/cilium/model/agent_addressing.h"
#include "common/cilium/model/agent_service.h"
#include "common/cilium/model/agent_version.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_refusal(const cn::Error& e) {
  check(e.kind == cn::ErrorKind::invalid || e.kind == cn::ErrorKind::bad_answer);
}

void services(std::string_view body) {
  auto list = cn::cilium::parse_service_list(body);
  if (!list) return check_refusal(list.error());
  for (const auto& spec : *list) {
    const std::string put = cn::cilium::service_spec_json(spec);
    check(nlohmann::json::accept(put));
  }
}

void version(std::string_view body) {
  auto v = cn::cilium::parse_healthz_version(body);
  if (!v) return check_refusal(v.error());
  if (!*v) return;
  const auto& r = **v;
  // A release includes itself unless it is a pre-release, and never a later minor.
  check(r.at_least(r.major, r.minor, r.patch) == !r.prerelease);
  if (r.minor < 1'000'000) check(!r.at_least(r.major, r.minor + 1, 0));
}

void addressing(std::string_view body) {
  auto ranges = cn::cilium::parse_agent_alloc_ranges(body);
  if (!ranges) return check_refusal(ranges.error());
  check(ranges->size() <= 2);
  for (const auto& r : *ranges) check(r.bits <= r.address_bits());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0:
      services(body);
      break;
    case 1:
      version(body);
      break;
    default:
      addressing(body);
  }
  return 0;
}
