#include "tests/support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

extern char** environ;

namespace cn::testing {

std::string bin_dir() {
  const char* dir = std::getenv("CN_BIN_DIR");
  return dir ? dir : CN_DEFAULT_BIN_DIR;
}

std::string source_dir() {
  const char* dir = std::getenv("CN_SOURCE_DIR");
  return dir ? dir : CN_DEFAULT_SOURCE_DIR;
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, const std::string& stdin_data,
                          std::chrono::milliseconds timeout) {
  ProcessResult result;
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC)) {
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);

  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    result.err = "spawn failed";
    return result;
  }

  ::fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
  std::size_t written = 0;
  int in_fd = in_pipe[1];
  if (stdin_data.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  int out_fd = out_pipe[0], err_fd = err_pipe[0];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (out_fd >= 0 || err_fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    int idx_in = -1, idx_out = -1, idx_err = -1;
    if (in_fd >= 0) { idx_in = n; fds[n++] = {in_fd, POLLOUT, 0}; }
    if (out_fd >= 0) { idx_out = n; fds[n++] = {out_fd, POLLIN, 0}; }
    if (err_fd >= 0) { idx_err = n; fds[n++] = {err_fd, POLLIN, 0}; }
    int ready = ::poll(fds, static_cast<nfds_t>(n), static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (idx_in >= 0 && fds[idx_in].revents) {
      ssize_t w = ::write(in_fd, stdin_data.data() + written, stdin_data.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if (w < 0 && errno != EAGAIN) written = stdin_data.size();
      if (written >= stdin_data.size()) { ::close(in_fd); in_fd = -1; }
    }
    auto drain = [&](int& fd, int idx, std::string& sink) {
      if (idx < 0 || !fds[idx].revents) return;
      ssize_t r = ::read(fd, buf, sizeof buf);
      if (r > 0) sink.append(buf, static_cast<std::size_t>(r));
      else { ::close(fd); fd = -1; }
    };
    drain(out_fd, idx_out, result.out);
    drain(err_fd, idx_err, result.err);
  }
  for (int fd : {in_fd, out_fd, err_fd}) if (fd >= 0) ::close(fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!result.timed_out) {
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return result;
}

}  // namespace cn::testing
