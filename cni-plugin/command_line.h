#pragma once
// What the plugin does when a person runs it with arguments. A container runtime never passes
// any (CNI parameters come in the environment and on stdin), and Nomad's fingerprint runs the
// binary with none, so this is only for `--version`, `--help` and help2man.
#include <optional>
#include <span>

#include "cni-plugin/plugin_main.h"

namespace cn::plugin {

// `args` is argv without the program name. nullopt: not a command line (no arguments, or
// CNI_COMMAND is set in `envp`), so the caller runs the plugin. Otherwise the exit code after
// answering: 0 for --help/--version, 2 for anything else.
std::optional<int> answer_command_line(std::span<const char* const> args, const char* const* envp,
                                       const PluginIo& io);

}  // namespace cn::plugin
