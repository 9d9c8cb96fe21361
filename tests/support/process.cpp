#include "tests/support/process.h"

#include <cstdlib>

namespace cn::testing {

std::string bin_dir() {
  const char* dir = std::getenv("CN_BIN_DIR");
  return dir ? dir : CN_DEFAULT_BIN_DIR;
}

std::string source_dir() {
  const char* dir = std::getenv("CN_SOURCE_DIR");
  return dir ? dir : CN_DEFAULT_SOURCE_DIR;
}

}  // namespace cn::testing
