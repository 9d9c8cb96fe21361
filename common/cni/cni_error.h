#pragma once
// The CNI error result. Runtimes parse it from stdout on a non-zero exit (libcni falls back to
// stderr only when stdout is empty), so it is always printed there.
#include <string>

namespace cn::cni {

// Well-known codes from the CNI spec ("Error" section); 0-99 are reserved by the spec.
enum class ErrorCode : int {
  kIncompatibleVersion = 1,
  kUnsupportedField = 2,
  kUnknownContainer = 3,
  kInvalidEnvironment = 4,
  kIoFailure = 5,
  kDecodeFailure = 6,
  kInvalidNetworkConfig = 7,
  kTryAgainLater = 11,
};

struct CniError {
  ErrorCode code;
  std::string msg;
  std::string details;

  // `cni_version` is the config's version when it could be read, else the newest we speak.
  std::string to_json(const std::string& cni_version) const;
};

}  // namespace cn::cni
