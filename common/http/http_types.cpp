#include "common/http/http_types.h"

namespace cn::http {

std::string_view to_string(Method m) {
  switch (m) {
    case Method::get:
      return "GET";
    case Method::put:
      return "PUT";
    case Method::post:
      return "POST";
    case Method::patch:
      return "PATCH";
    case Method::del:
      return "DELETE";
  }
  return "GET";
}

}  // namespace cn::http
