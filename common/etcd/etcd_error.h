#pragma once
// etcd's error answers: the gateway sends a non-2xx status with
// {"error": text, "code": gRPC code, "message": text}. The kind follows the gRPC code, since the
// HTTP status is only the gateway's translation of it:
//   7 PERMISSION_DENIED, 16 UNAUTHENTICATED  -> permission
//   3 INVALID_ARGUMENT                       -> invalid, except etcd's auth failures
//                                               ("authentication failed", "user name is empty"),
//                                               which etcd also sends as 3: permission
//   5 NOT_FOUND (lease not found)            -> not_found
//   14 UNAVAILABLE (no leader, stopping)     -> transport (another endpoint may serve)
//   4 DEADLINE_EXCEEDED                      -> timeout
//   11 OUT_OF_RANGE (compacted or future revision) and every other code -> http
// The message is etcd's text; status is the HTTP status. A body that is not this shape becomes
// an error of the kind its HTTP status names.
#include <string_view>

#include "common/util/result.h"

namespace cn::etcd {

Error etcd_error(int http_status, std::string_view body);

// etcd refused the auth token (expired or from before a restart of a simple-token server):
// authenticating again may help.
bool is_invalid_token(const Error& error);

}  // namespace cn::etcd
