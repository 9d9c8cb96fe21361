#include "cni-plugin/plugin_log_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include <spdlog/common.h>
#include <spdlog/details/log_msg.h>

#include "common/util/clock.h"
#include "common/util/control_chars.h"

namespace cn::plugin {
namespace {

// The plugin runs as root: a link planted at the log path must not make it append to another
// file (O_NOFOLLOW), a FIFO there must not block it (O_NONBLOCK, then refused below), and the
// log, which names every workload, is not for everyone to read (0640).
int open_for_append(const std::string& path) {
  return ::open(path.c_str(),
                O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
                0640);
}

int open_with_parents(const std::string& path) {
  int fd = open_for_append(path);
  if (fd < 0 && errno == ENOENT) {
    // Only a missing directory costs more than the open: the common case is one system call.
    const auto parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    fd = open_for_append(path);
  }
  return fd;
}

}  // namespace

Result<std::shared_ptr<PluginLogSink>> PluginLogSink::append_to(const std::string& path) {
  int fd = open_with_parents(path);
  if (fd < 0) return fail_errno("cannot open " + path + ": " + errno_text(errno), errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("cannot open " + path + ": not a regular file");
  }
  if (st.st_size >= kMaxLogBytes) {
    // Full: the file becomes `<path>.1` (replacing the one before) and a new one starts. A plugin
    // that opened the old file just before writes its line there, which is still kept.
    const std::string rotated = path + ".1";
    if (::rename(path.c_str(), rotated.c_str()) == 0) {
      ::close(fd);
      fd = open_with_parents(path);
      if (fd < 0) return fail_errno("cannot open " + path + ": " + errno_text(errno), errno);
    }
  }
  return std::shared_ptr<PluginLogSink>(new PluginLogSink(fd));
}

PluginLogSink::~PluginLogSink() {
  if (fd_ >= 0) ::close(fd_);
}

void PluginLogSink::log(const spdlog::details::log_msg& msg) {
  if (!should_log(msg.level)) return;
  if (pid_ == 0) pid_ = ::getpid();
  const spdlog::string_view_t level = spdlog::level::to_string_view(msg.level);
  std::string line = rfc3339(msg.time);
  line += ' ';
  line.append(level.data(), level.size());
  line += " cilium-nomad-cni pid=";
  line += std::to_string(pid_);
  line += ' ';
  line += escape_control_chars(std::string_view(msg.payload.data(), msg.payload.size()));
  line += '\n';
  if (captured_ != nullptr) {
    captured_->append(line);
    return;
  }
  // One write per line: with O_APPEND, lines of concurrent plugin processes do not interleave.
  for (std::size_t done = 0; done < line.size();) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    // The logger hands this to its error handler, as it did spdlog's file sink's failures.
    if (n <= 0) throw spdlog::spdlog_ex("cannot write the log-file", errno);
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace cn::plugin
