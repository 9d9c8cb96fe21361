#include "bench/support/sax_decoding_nomad.h"

#include "bench/support/sax_field_filter.h"
#include "tests/fakes/http/raw_http_client.h"

namespace cn::bench {

Result<nomad::Indexed<nomad::AllocationList>> SaxDecodingNomad::node_allocations(
    std::string_view node_id, std::uint64_t, std::chrono::seconds, MonoTime, std::stop_token,
    const nomad::AllocationSelector&) {
  auto r = fakes::http_request(fakes::HttpTarget::tcp("127.0.0.1", port_), "GET",
                               "/v1/node/" + std::string(node_id) + "/allocations", {}, {},
                               std::chrono::minutes{1});
  if (!r) return std::unexpected(r.error());
  auto list = sax_parse_allocation_list(r->body);
  if (!list) return std::unexpected(list.error());
  return nomad::Indexed<nomad::AllocationList>{
      std::move(*list), std::stoull(r->header("X-Nomad-Index").value_or("1"))};
}

}  // namespace cn::bench
