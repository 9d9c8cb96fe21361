#pragma once
// Where the build's binaries and the source tree are; running them is child_process.h.
#include <string>

#include "tests/support/child_process.h"

namespace cn::testing {

// CN_BIN_DIR (set by ctest) or the default build tree.
std::string bin_dir();
std::string source_dir();

}  // namespace cn::testing
