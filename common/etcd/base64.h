#pragma once
// Standard base64 (RFC 4648, '+' '/' and '=' padding), as etcd's JSON gateway writes the bytes
// fields of its protobuf messages (keys, values). Decoding is strict: a gateway answer with a
// stray character or bad padding is a broken answer, not something to guess at.
#include <optional>
#include <string>
#include <string_view>

namespace cn::etcd {

std::string base64_encode(std::string_view bytes);
// nullopt when `text` is not canonical padded base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace cn::etcd
