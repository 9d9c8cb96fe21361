#pragma once
// The one way tests, benchmarks and fakes start a program (over Boost.Process). The child's
// environment is always given explicitly: a test must never depend on what the shell running
// ctest happened to export. Product code (common/, cni-plugin/, labeler/) never links this.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cn::testing {

using Environment = std::map<std::string, std::string>;

// The calling process's environment, for a caller that means to pass it on (a delegating fake,
// a benchmark that wants the sanitizer options through).
Environment current_environment();
// `env` plus ASAN_OPTIONS/UBSAN_OPTIONS from the current environment, so a sanitized child
// reports the way the test runner asked.
Environment with_sanitizer_options(Environment env);

// How a child ended. `exit_code` is -1 unless it exited; `signal` is 0 unless a signal ended it.
struct ExitStatus {
  int exit_code = -1;
  int signal = 0;
  bool exited() const { return exit_code >= 0; }
};

struct ProcessResult {
  int exit_code = -1;  // -1: killed (at the deadline or by a signal) or failed to start
  int signal = 0;      // the terminating signal, if any
  bool timed_out = false;
  bool started = false;
  std::string out;
  std::string err;  // the child's stderr; on a failure to start, why
};

// Who the child runs as; set before exec.
struct Credentials {
  uid_t uid;
  gid_t gid;
};

// Runs `argv` (argv[0]: a path, or a bare name looked up in the calling process's PATH) to the
// end: `stdin_data` fed in full (an empty string: EOF at once), stdout and stderr captured,
// killed (SIGKILL) and reaped when `timeout` passes.
ProcessResult run_process(const std::vector<std::string>& argv, const Environment& env,
                          const std::string& stdin_data,
                          std::chrono::milliseconds timeout = std::chrono::seconds{30},
                          std::optional<Credentials> as = std::nullopt);

// A long-running child: stdin is /dev/null, stdout and stderr go to one file (so a failed run
// can be read afterwards). The destructor kills (SIGKILL) and reaps it if it still runs.
class ChildProcess {
 public:
  enum class LogMode { kTruncate, kAppend };
  struct Options {
    std::string log_path;  // empty: /dev/null
    LogMode log_mode = LogMode::kTruncate;
    std::optional<Credentials> as;
  };

  ChildProcess(const std::vector<std::string>& argv, const Environment& env, Options options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const;
  const std::string& start_error() const { return start_error_; }
  pid_t pid() const;
  bool running();
  // Sends `sig` (no-op once reaped). False when the process is gone or the signal failed.
  bool signal(int sig);
  // Waits until the child exits or `timeout` passes; nullopt: still running.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // Sends `sig`, waits up to `timeout`; past it SIGKILLs and reaps. nullopt: it had to be killed.
  std::optional<ExitStatus> stop(int sig, std::chrono::milliseconds timeout);
  // The exit status once reaped.
  std::optional<ExitStatus> status() const { return status_; }

  const std::string& log_path() const { return log_path_; }
  std::string log() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string log_path_;
  std::string start_error_;
  std::optional<ExitStatus> status_;
};

// Sends `sig` to `pid`; for a process the caller did not start through ChildProcess.
bool send_signal(pid_t pid, int sig);

}  // namespace cn::testing
