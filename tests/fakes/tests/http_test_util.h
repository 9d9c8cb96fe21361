#pragma once
// Helpers shared by the fake-server tests: a private temp dir and bounded real-time waits.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"

namespace cn::fakes::testing {

// The fake agent's executable in CN_BIN_DIR (ctest sets it); "" when the variable is unset.
inline std::string fake_agent_binary() {
  const char* d = std::getenv("CN_BIN_DIR");
  return d ? std::string(d) + "/fake-cilium-agent" : "";
}

using TempDir = ::cn::testing::TempDir;

using ::cn::testing::eventually;

}  // namespace cn::fakes::testing
