#include "common/http/http_types.h"

namespace cn::http {

std::string_view to_string(Method m) {
  switch (m) {
    case Method::get: return "GET";
    case Method::put: return "PUT";
    case Method::post: return "POST";
    case Method::patch: return "PATCH";
    case Method::del: return "DELETE";
  }
  return "GET";
}

std::string_view to_string(FailureKind k) {
  switch (k) {
    case FailureKind::connect: return "connect";
    case FailureKind::timeout: return "timeout";
    case FailureKind::tls: return "tls";
    case FailureKind::aborted: return "aborted";
    case FailureKind::too_large: return "too_large";
    case FailureKind::other: return "other";
  }
  return "other";
}

}  // namespace cn::http
