#include "bench/support/child_process.h"

#include <signal.h>

#include <stdexcept>

namespace cn::bench {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, std::string log_path)
    : testing::ChildProcess(argv, testing::current_environment(),
                            {std::move(log_path), LogMode::kTruncate, {}}) {
  if (!started()) throw std::runtime_error(start_error());
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  auto status = testing::ChildProcess::stop(SIGTERM, grace);
  return status ? status->exit_code : -1;
}

std::string ChildProcess::log_tail(std::size_t bytes) const {
  std::string all = log();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

}  // namespace cn::bench
