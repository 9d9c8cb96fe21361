// The plugin <-> labeler protocol: what the labeler accepts from its socket is always safe to use
// (valid alloc ID and ifname, bounded fields) and re-encodes to the same request.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/cni/ifname.h"
#include "common/notify/protocol.h"
#include "common/util/alloc_id.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  if (auto req = cn::notify::decode_request(line)) {
    if (!cn::is_valid_alloc_id(req->alloc_id) || !cn::cni::is_valid_ifname(req->ifname))
      std::abort();
    if (req->wait_ms < 0 || req->wait_ms > 600000 || req->ips.size() > 16) std::abort();
    auto again = cn::notify::decode_request(cn::notify::encode(*req));
    if (!again) std::abort();
    // Strings with invalid UTF-8 are replaced on encode; compare the rest.
    if (again->alloc_id != req->alloc_id || again->op != req->op || again->wait_ms != req->wait_ms)
      std::abort();
  }
  if (auto reply = cn::notify::decode_reply(line)) {
    auto again = cn::notify::decode_reply(cn::notify::encode(*reply));
    if (!again || again->status != reply->status) std::abort();
  }
  (void)cn::notify::peek_version(line);
  return 0;
}
