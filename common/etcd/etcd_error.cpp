#include "common/etcd/etcd_error.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::etcd {
namespace {

// gRPC status codes (google.golang.org/grpc/codes).
constexpr std::int64_t kInvalidArgument = 3;
constexpr std::int64_t kDeadlineExceeded = 4;
constexpr std::int64_t kNotFound = 5;
constexpr std::int64_t kPermissionDenied = 7;
constexpr std::int64_t kUnavailable = 14;
constexpr std::int64_t kUnauthenticated = 16;

ErrorKind kind_of(std::int64_t code, std::string_view message) {
  switch (code) {
    case kPermissionDenied:
    case kUnauthenticated:
      return ErrorKind::permission;
    case kInvalidArgument:
      // etcd's server sends its auth refusals (api/v3rpc/rpctypes ErrAuthFailed,
      // ErrUserEmpty) as InvalidArgument.
      if (message.find("authentication failed") != std::string_view::npos ||
          message.find("user name is empty") != std::string_view::npos) {
        return ErrorKind::permission;
      }
      return ErrorKind::invalid;
    case kNotFound:
      return ErrorKind::not_found;
    case kUnavailable:
      return ErrorKind::transport;
    case kDeadlineExceeded:
      return ErrorKind::timeout;
    default:
      return ErrorKind::http;
  }
}

}  // namespace

Error etcd_error(int http_status, std::string_view body) {
  auto doc = json::parse_json_text(body, "etcd error answer");
  if (doc && doc->is_object()) {
    json::JsonReader reader(*doc, "error");
    std::int64_t code = 0;
    std::string message;
    std::string error;
    reader.read("code", code);
    reader.read("message", message);
    if (message.empty()) reader.read("error", error);
    if (message.empty()) message = error;
    if (reader.ok() && (code != 0 || !message.empty())) {
      Error out{kind_of(code, message), "etcd: " + message, http_status, 0};
      if (message.empty()) out.message += "gRPC code " + std::to_string(code);
      return out;
    }
  }
  return http_error(http_status,
                    "etcd: HTTP " + std::to_string(http_status) + " without an etcd error body");
}

bool is_invalid_token(const Error& error) {
  return error.kind == ErrorKind::permission &&
         error.message.find("invalid auth token") != std::string::npos;
}

}  // namespace cn::etcd
