#pragma once
// The whole plugin process as a function: environment in, stdin read through `io`, CNI JSON and
// log lines written through `io`, exit code out. main() passes the real process; tests pass
// strings, and readers or writers that throw.
#include <functional>
#include <string>
#include <string_view>

#include "cni-plugin/invocation.h"

namespace cn::plugin {

struct PluginIo {
  std::function<std::string()> read_stdin;  // called only when CNI_COMMAND is set
  std::function<void(std::string_view)> write_stdout;
  std::function<void(std::string_view)> write_stderr;
};

// `envp` is a null-terminated "KEY=value" array like environ; only CNI_* entries are read.
// Never throws: an exception that escapes run_cni's own fail-open handling (one before the config
// could be read) ends here, in a last resort that still follows the fail-open rules as far as
// correct CNI allows (see plugin_main.cpp).
int plugin_main(const char* const* envp, const PluginIo& io, PluginContext& ctx) noexcept;

}  // namespace cn::plugin
