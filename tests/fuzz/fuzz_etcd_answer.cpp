// etcd's gateway answers (common/etcd/etcd_json.h, etcd_error.h). Byte 0 picks the decoder, the
// rest is the body. Decoding never crashes or throws, a refusal is bad_answer (http for a lease
// grant's own error field), and what a range decodes survives encoding its keys again. An error
// body of any shape becomes an Error that keeps the HTTP status.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/etcd/base64.h"
#include "common/etcd/etcd_error.h"
#include "common/etcd/etcd_json.h"

namespace {

template <class T>
void check_refusal(const cn::Result<T>& decoded) {
  if (!decoded && decoded.error().kind != cn::ErrorKind::bad_answer) std::abort();
}

void check_page(const cn::etcd::RangePage& page) {
  for (const auto& kv : page.kvs) {
    if (cn::etcd::base64_decode(cn::etcd::base64_encode(kv.key)) != kv.key) std::abort();
    if (cn::etcd::base64_decode(cn::etcd::base64_encode(kv.value)) != kv.value) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 8) {
    case 0: {
      auto page = cn::etcd::decode_range(body);
      check_refusal(page);
      if (page) check_page(*page);
      break;
    }
    case 1: {
      auto txn = cn::etcd::decode_txn(body);
      check_refusal(txn);
      if (txn) {
        if (txn->ranges.size() != txn->deleted.size()) std::abort();
        for (const auto& page : txn->ranges) check_page(page);
      }
      break;
    }
    case 2:
      check_refusal(cn::etcd::decode_put(body));
      break;
    case 3: {
      auto lease = cn::etcd::decode_lease_grant(body);
      if (!lease && lease.error().kind != cn::ErrorKind::bad_answer &&
          lease.error().kind != cn::ErrorKind::http) {
        std::abort();
      }
      if (lease && (lease->id == 0 || lease->ttl.count() <= 0)) std::abort();
      break;
    }
    case 4: {
      auto ttl = cn::etcd::decode_keep_alive(body);
      check_refusal(ttl);
      if (ttl && ttl->count() < 0) std::abort();
      break;
    }
    case 5: {
      auto token = cn::etcd::decode_authenticate(body);
      check_refusal(token);
      if (token && token->empty()) std::abort();
      break;
    }
    case 6: {
      auto base = cn::etcd::base64_decode(body);
      if (base && cn::etcd::base64_encode(*base) != body) std::abort();
      break;
    }
    default: {
      const int status = 400 + static_cast<int>(size % 200);
      const cn::Error error = cn::etcd::etcd_error(status, body);
      if (error.status != status || error.message.empty()) std::abort();
      break;
    }
  }
  return 0;
}
