#include "tests/reliability/support/background_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "tests/reliability/support/wait.h"
#include "tests/support/temp_dir.h"

namespace cn::reliability {

BackgroundProcess::BackgroundProcess(std::vector<std::string> argv, std::map<std::string, std::string> env,
                                     std::string log_path)
    : log_path_(std::move(log_path)) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // Appended, so a restarted daemon's lines follow the killed one's in the same file.
  posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);

  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : argv) args.push_back(s.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  if (::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data()) == 0) pid_ = pid;
  posix_spawn_file_actions_destroy(&actions);
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0 && !reaped_) kill_and_wait(SIGKILL);
}

bool BackgroundProcess::running() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
    return false;
  }
  return true;
}

int BackgroundProcess::kill_and_wait(int sig, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  if (!reaped_) ::kill(pid_, sig);
  if (!eventually([&] { return !running(); }, timeout, std::chrono::milliseconds{2})) return -1;
  return status_;
}

int BackgroundProcess::wait_exit(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  if (!eventually([&] { return !running(); }, timeout, std::chrono::milliseconds{2})) return -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

std::string BackgroundProcess::log() const { return testing::read_file(log_path_); }

bool BackgroundProcess::wait_for_log(const std::string& needle, std::chrono::milliseconds timeout, int times) const {
  return eventually([&] { return count_occurrences(log(), needle) >= times; }, timeout);
}

int count_occurrences(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace cn::reliability
