#pragma once
// A long-running program (the real labeler daemon) started in the background with an explicit
// environment, its stdout and stderr appended to a log file the test can search, and killed the
// way an operator or the kernel would: SIGTERM, or SIGKILL with no chance to clean up.
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace cn::reliability {

class BackgroundProcess {
 public:
  BackgroundProcess(std::vector<std::string> argv, std::map<std::string, std::string> env, std::string log_path);
  ~BackgroundProcess();  // SIGKILL if still running
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  bool started() const { return pid_ > 0; }
  int pid() const { return pid_; }
  // Sends `sig` and reaps the process (bounded). Returns the wait status, or -1.
  int kill_and_wait(int sig, std::chrono::milliseconds timeout = std::chrono::seconds{20});
  // Reaps a process that exits by itself. Returns its exit code, or -1 (signal, still running).
  int wait_exit(std::chrono::milliseconds timeout);
  bool running();

  std::string log() const;
  // Waits (bounded) until the log holds `needle` at least `times` times.
  bool wait_for_log(const std::string& needle, std::chrono::milliseconds timeout = std::chrono::seconds{20},
                    int times = 1) const;

 private:
  int pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  std::string log_path_;
};

int count_occurrences(const std::string& haystack, const std::string& needle);

}  // namespace cn::reliability
