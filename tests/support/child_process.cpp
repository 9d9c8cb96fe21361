#include "tests/support/child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/posix.hpp>
#include <boost/process/search_path.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

extern char** environ;

namespace bp = boost::process;

namespace cn::testing {

Environment current_environment() {
  Environment out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    out.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return out;
}

Environment with_sanitizer_options(Environment env) {
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return env;
}

bool send_signal(pid_t pid, int sig) {
  return pid > 0 && ::kill(pid, sig) == 0;
}

namespace {

// An fd closed when it goes out of scope.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

bool make_pipe(Fd& read_end, Fd& write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  read_end.fd = p[0];
  write_end.fd = p[1];
  return true;
}

// Runs in the forked child before exec: wires the three standard fds (all opened O_CLOEXEC by
// the parent, so nothing else leaks into the child) and drops privileges when asked. Only
// async-signal-safe calls here: the parent may have other threads.
struct ChildSetup : bp::extend::handler {
  int in = -1, out = -1, err = -1;
  std::optional<Credentials> as;
  sigset_t mask{};
  char** envp = nullptr;

  // The environment goes in as a ready envp rather than a bp::environment: filling the latter
  // key by key reads past its buffers in this Boost version (AddressSanitizer sees it).
  template <class Executor>
  void on_setup(Executor& exec) const {
    exec.env = envp;
  }

  template <class Executor>
  void on_exec_setup(Executor&) const {
    // The parent blocks SIGPIPE while it writes stdin; the program must start with the mask
    // the test runner had.
    ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(126);
    if (as && (::setgroups(0, nullptr) != 0 || ::setgid(as->gid) != 0 || ::setuid(as->uid) != 0))
      ::_exit(125);
  }
};

// argv[0] as given when it holds a slash, else the first match in PATH (as a shell finds it).
std::string resolve(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  auto found = bp::search_path(name);
  return found.empty() ? name : found.string();
}

ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) s.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
}

bp::child spawn(const std::vector<std::string>& argv, const Environment& env, ChildSetup setup,
                std::error_code& ec) {
  // Exactly `env`: nothing is inherited by accident.
  std::vector<std::string> entries;
  for (const auto& [k, v] : env) entries.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  setup.envp = envp.data();
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  // fork copies the page tables of the whole (sanitized, many-threaded) test process, which
  // makes tests that start hundreds of plugins too slow; vfork does not. Not with credentials:
  // glibc's setuid signals every thread of the process, and a vfork child shares the parent's.
  if (setup.as) return bp::child(bp::exe = resolve(argv[0]), bp::args = rest, setup, ec);
  return bp::child(bp::exe = resolve(argv[0]), bp::args = rest, setup, bp::posix::use_vfork, ec);
}

// Waits for the child to exit, bounded. bp::child::wait_for is not used: in this Boost version
// it is unreliable with other threads around, so this polls waitpid(WNOHANG) with a short,
// growing pause.
bool wait_until(bp::child& child, std::chrono::steady_clock::time_point deadline) {
  auto pause = std::chrono::microseconds{200};
  for (;;) {
    std::error_code ec;
    if (!child.running(ec)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds{5000});
  }
}

void kill_and_reap(bp::child& child) {
  std::error_code ec;
  child.terminate(ec);  // SIGKILL, then a blocking waitpid
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const Environment& env,
                          const std::string& stdin_data, std::chrono::milliseconds timeout,
                          std::optional<Credentials> as) {
  ProcessResult result;
  if (argv.empty()) {
    result.err = "run_process: empty argv";
    return result;
  }
  Fd in_r, in_w, out_r, out_w, err_r, err_w;
  if (!make_pipe(in_r, in_w) || !make_pipe(out_r, out_w) || !make_pipe(err_r, err_w)) {
    result.err = std::string("pipe: ") + std::strerror(errno);
    return result;
  }

  // A child that exits without reading its stdin must not kill us with SIGPIPE: block it in
  // this thread while we write, and drop any pending one afterwards.
  sigset_t pipe_set, old_mask;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  struct MaskRestore {
    sigset_t pipe_set, old_mask;
    ~MaskRestore() {
      timespec zero{0, 0};
      while (::sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
      }
      ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    }
  } restore{pipe_set, old_mask};

  ChildSetup setup;
  setup.in = in_r.fd;
  setup.out = out_w.fd;
  setup.err = err_w.fd;
  setup.as = as;
  setup.mask = old_mask;
  std::error_code ec;
  bp::child child = spawn(argv, env, setup, ec);
  in_r.reset();
  out_w.reset();
  err_w.reset();
  if (ec) {
    result.err = "cannot start " + argv[0] + ": " + ec.message();
    return result;
  }
  result.started = true;

  ::fcntl(in_w.fd, F_SETFL, O_NONBLOCK);
  std::size_t written = 0;
  if (stdin_data.empty()) in_w.reset();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3] = {{out_r.fd, POLLIN, 0}, {err_r.fd, POLLIN, 0}, {in_w.fd, POLLOUT, 0}};
    const int ready = ::poll(fds, 3, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        (i == 0 ? out_r : err_r).reset();
      }
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = ::write(in_w.fd, stdin_data.data() + written, stdin_data.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == stdin_data.size())
        in_w.reset();
    }
  }
  in_w.reset();
  // Both pipes closed but the child may still be finishing; it gets what is left of the deadline.
  if (!result.timed_out && !wait_until(child, deadline)) result.timed_out = true;
  if (result.timed_out) {
    kill_and_reap(child);
    return result;
  }
  const ExitStatus status = decode(child.native_exit_code());
  result.exit_code = status.exit_code;
  result.signal = status.signal;
  return result;
}

struct ChildProcess::Impl {
  bp::child child;
};

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const Environment& env,
                           Options options)
    : log_path_(std::move(options.log_path)) {
  if (argv.empty()) {
    start_error_ = "empty argv";
    return;
  }
  Fd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int flags =
      O_WRONLY | O_CREAT | O_CLOEXEC | (options.log_mode == LogMode::kAppend ? O_APPEND : O_TRUNC);
  Fd log(log_path_.empty() ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                           : ::open(log_path_.c_str(), flags, 0600));
  if (null_in.fd < 0 || log.fd < 0) {
    start_error_ = "cannot open " + (log_path_.empty() ? std::string("/dev/null") : log_path_) +
                   ": " + std::strerror(errno);
    return;
  }
  ChildSetup setup;
  setup.in = null_in.fd;
  setup.out = log.fd;
  setup.err = log.fd;
  setup.as = options.as;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &setup.mask);
  std::error_code ec;
  auto child = spawn(argv, env, setup, ec);
  if (ec) {
    start_error_ = "cannot start " + argv[0] + ": " + ec.message();
    return;
  }
  impl_ = std::make_unique<Impl>(Impl{std::move(child)});
}

ChildProcess::~ChildProcess() {
  if (impl_ && !status_) kill_and_reap(impl_->child);
}

bool ChildProcess::started() const {
  return impl_ != nullptr;
}

pid_t ChildProcess::pid() const {
  return impl_ ? impl_->child.id() : -1;
}

bool ChildProcess::running() {
  if (!impl_ || status_) return false;
  std::error_code ec;
  if (impl_->child.running(ec)) return true;
  status_ = decode(impl_->child.native_exit_code());
  return false;
}

bool ChildProcess::signal(int sig) {
  return running() && send_signal(pid(), sig);
}

std::optional<ExitStatus> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  if (!impl_) return std::nullopt;
  if (status_) return status_;
  if (!wait_until(impl_->child, std::chrono::steady_clock::now() + timeout)) return std::nullopt;
  status_ = decode(impl_->child.native_exit_code());
  return status_;
}

std::optional<ExitStatus> ChildProcess::stop(int sig, std::chrono::milliseconds timeout) {
  if (!impl_) return std::nullopt;
  if (status_) return status_;
  signal(sig);
  if (auto s = wait_for(timeout)) return s;
  kill_and_reap(impl_->child);
  status_ = ExitStatus{-1, SIGKILL};
  return std::nullopt;
}

std::string ChildProcess::log() const {
  if (log_path_.empty()) return "";
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace cn::testing
