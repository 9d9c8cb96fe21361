#pragma once
// A fake server's failure: the HTTP status it will answer and the text of the body. The product
// code branches on the kind that cn::http_error derives from the status; the fakes answer with
// the status itself.
#include <string>
#include <utility>

#include "common/util/result.h"

namespace cn {

inline std::unexpected<Error> http_fail(std::string body, int status) {
  return std::unexpected<Error>(http_error(status, std::move(body)));
}

}  // namespace cn
