#pragma once
// Results at module boundaries: std::expected with one error type, so failures carry a
// message (and, where it means something, a code such as an HTTP status or CNI error code).
#include <expected>
#include <string>
#include <utility>

namespace cn {

struct Error {
  std::string message;
  int code = 0;
};

template <class T>
using Result = std::expected<T, Error>;

using Status = std::expected<void, Error>;

inline std::unexpected<Error> fail(std::string message, int code = 0) {
  return std::unexpected<Error>(Error{std::move(message), code});
}

}  // namespace cn
