// Thin main: read the real environment and stdin, run the verb, write the outcome.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cni-plugin/invocation.h"
#include "common/cni/plugin_conf.h"

extern char** environ;

namespace {

void write_fd(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

int main() {
  cn::plugin::Invocation inv;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    if (kv.rfind("CNI_", 0) != 0) continue;  // only ours; Nomad passes its whole environment
    auto eq = kv.find('=');
    if (eq != std::string::npos) inv.env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  // Without CNI_COMMAND this is Nomad's fingerprint probe, which may give no stdin at all.
  if (inv.env.contains("CNI_COMMAND")) {
    // Read one chunk past the limit so that an oversized input is reported, not truncated.
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n <= 0) break;
      inv.stdin_data.append(buf, static_cast<std::size_t>(n));
      if (inv.stdin_data.size() > cn::cni::kMaxStdinBytes) break;
    }
  }
  cn::plugin::PluginContext ctx{cn::system_clock()};
  cn::plugin::Outcome out = cn::plugin::run_cni(inv, ctx);
  write_fd(STDOUT_FILENO, out.stdout_data);
  write_fd(STDERR_FILENO, out.stderr_data);
  return out.exit_code;
}
