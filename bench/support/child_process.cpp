#include "bench/support/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace cn::bench {

ChildProcess::ChildProcess(std::vector<std::string> argv, std::string log_path) : log_path_(std::move(log_path)) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
}

ChildProcess::~ChildProcess() { stop(std::chrono::seconds{2}); }

bool ChildProcess::running() {
  if (reaped_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return false;
  }
  return true;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (reaped_ || pid_ <= 0) return status_;
  ::kill(pid_, SIGTERM);
  // waitpid has no timeout; a child that ignores SIGTERM is found by polling WNOHANG until
  // the grace period ends, then killed.
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      reaped_ = true;
      status_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return status_;
}

std::string ChildProcess::log_tail(std::size_t bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

}  // namespace cn::bench
