#include "cni-plugin/command_line.h"

#include <string>
#include <string_view>

#include "common/cni/cni_version.h"

namespace cn::plugin {
namespace {

bool cni_command_set(const char* const* envp) {
  for (const auto* e = envp; e && *e; ++e) {
    if (std::string_view(*e).starts_with("CNI_COMMAND=")) return true;
  }
  return false;
}

// help2man turns this into the man page (packaging/make-man-page.sh): the usage line becomes
// SYNOPSIS, the indented option lines OPTIONS. The protocol versions are --version's.
constexpr std::string_view kHelpText =
    "Usage: cilium-nomad-cni [--help | --version]\n"
    "Chained CNI plugin that gives Nomad allocations their Cilium identity.\n"
    "\n"
    "A container runtime (the Nomad client) runs it after cilium-cni, with the CNI\n"
    "parameters in CNI_COMMAND, CNI_CONTAINERID, CNI_IFNAME, CNI_NETNS, CNI_ARGS and\n"
    "CNI_PATH and the network configuration, with cilium-cni's prevResult, on stdin.\n"
    "ADD records the allocation in the node state file, notifies cilium-nomad-labeler\n"
    "and waits up to wait-for-labels-ms for the final labels; it fails open and prints\n"
    "prevResult unchanged. DEL, CHECK, GC, STATUS and VERSION are supported.\n"
    "Run with neither arguments nor CNI_COMMAND (Nomad's fingerprint), it prints its\n"
    "version on stderr.\n"
    "\n"
    "Options:\n"
    "  --help       print this help and exit\n"
    "  --version    print the plugin and CNI protocol versions and exit\n"
    "\n"
    "Network configuration keys (all optional): labeler-socket, state-file,\n"
    "wait-for-labels-ms, log-file.\n";

}  // namespace

std::optional<int> answer_command_line(std::span<const char* const> args, const char* const* envp,
                                       const PluginIo& io) {
  if (args.empty() || cni_command_set(envp)) return std::nullopt;
  const std::string_view arg = args.front() ? args.front() : "";
  if (args.size() == 1 && (arg == "--help" || arg == "-h")) {
    io.write_stdout(kHelpText);
    return 0;
  }
  if (args.size() == 1 && arg == "--version") {
    io.write_stdout(std::string("cilium-nomad-cni v") + CN_VERSION +
                    "\nCNI protocol versions supported: " + cni::supported_versions_text() + "\n");
    return 0;
  }
  io.write_stderr("cilium-nomad-cni: unexpected argument \"" + std::string(arg) +
                  "\"; a runtime passes none. Try --help.\n");
  return 2;
}

}  // namespace cn::plugin
