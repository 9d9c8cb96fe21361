#pragma once
// Runs a program with a given environment and stdin, collecting stdout and stderr, with a
// deadline. Used by fake-cilium-cni to delegate to `ptp` and by tests to run CNI plugins the
// way a runtime does.
#include <chrono>
#include <string>
#include <vector>

#include "common/util/result.h"

namespace cn::fakes {

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

// `env` entries are "KEY=VALUE"; the child gets exactly these. On timeout the child is killed
// (SIGKILL) and reaped, and an error is returned.
Result<ProcessResult> run_process(const std::string& path, const std::vector<std::string>& args,
                                  const std::vector<std::string>& env, const std::string& input,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(30));

// The current process environment as "KEY=VALUE" entries.
std::vector<std::string> current_environment();

}  // namespace cn::fakes
