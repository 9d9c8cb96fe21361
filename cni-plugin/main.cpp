// Thin main: the real environment, stdin and stdout/stderr, handed to plugin_main; arguments
// (only a person passes any) to answer_command_line.
#include <unistd.h>

#include <span>
#include <string>
#include <string_view>

#include "cni-plugin/command_line.h"
#include "cni-plugin/plugin_main.h"
#include "common/cni/plugin_conf.h"

namespace {

std::string read_stdin() {
  // Read one chunk past the limit so that an oversized input is reported, not truncated.
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > cn::cni::kMaxStdinBytes) break;
  }
  return data;
}

void write_fd(int fd, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cn::plugin::PluginIo io{read_stdin, [](std::string_view d) { write_fd(STDOUT_FILENO, d); },
                          [](std::string_view d) { write_fd(STDERR_FILENO, d); }};
  const std::span<const char* const> args(argv + 1, argc > 0 ? argc - 1 : 0);
  if (auto code = cn::plugin::answer_command_line(args, environ, io)) return *code;
  cn::plugin::PluginContext ctx{cn::system_clock()};
  return cn::plugin::plugin_main(environ, io, ctx);
}
