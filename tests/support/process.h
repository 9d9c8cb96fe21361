#pragma once
// Runs a program the way a CNI runtime does: explicit environment, stdin fed in full, stdout
// and stderr captured, and a hard deadline (the child is killed when it passes).
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace cn::testing {

struct ProcessResult {
  int exit_code = -1;  // -1: killed at the deadline or failed to start
  bool timed_out = false;
  std::string out;
  std::string err;
};

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, const std::string& stdin_data,
                          std::chrono::milliseconds timeout = std::chrono::seconds{30});

// CN_BIN_DIR (set by ctest) or the default build tree.
std::string bin_dir();
std::string source_dir();

}  // namespace cn::testing
