#pragma once
// A long-running child (the labeler, the fake binaries) for the benchmarks: started with
// posix_spawn, output to a file so a failed run can be read afterwards, stopped with SIGTERM
// and, past a deadline, SIGKILL. Short runs that need stdin and captured output use
// tests/support/process.h instead.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace cn::bench {

class ChildProcess {
 public:
  // argv[0] is a path or a name found in PATH; the child inherits the environment and gets stdout+stderr in `log_path`.
  ChildProcess(std::vector<std::string> argv, std::string log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status (-1: killed or unknown).
  int stop(std::chrono::milliseconds grace = std::chrono::seconds{5});
  const std::string& log_path() const { return log_path_; }
  // The last `bytes` of the child's output, for error messages.
  std::string log_tail(std::size_t bytes = 2000) const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
  std::string log_path_;
};

}  // namespace cn::bench
