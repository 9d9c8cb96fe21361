#include "cni-plugin/plugin_main.h"

#include <cstring>
#include <exception>
#include <optional>

#include "cni-plugin/fail_open.h"
#include "cni-plugin/plugin_logger.h"
#include "common/cni/cni_error.h"
#include "common/cni/cni_version.h"

namespace cn::plugin {
namespace {

constexpr std::string_view kCommandKey = "CNI_COMMAND=";

// Found without allocating: the last resort may run because allocation failed.
std::string_view find_command(const char* const* envp) noexcept {
  for (const auto* e = envp; e && *e; ++e) {
    if (std::strncmp(*e, kCommandKey.data(), kCommandKey.size()) == 0)
      return *e + kCommandKey.size();
  }
  return {};
}

std::map<std::string, std::string> cni_environment(const char* const* envp) {
  std::map<std::string, std::string> env;
  for (const auto* e = envp; e && *e; ++e) {
    std::string_view kv(*e);
    if (!kv.starts_with("CNI_")) continue;  // only ours; Nomad passes its whole environment
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

// The last resort must not throw itself; a writer that fails here has nowhere left to report to.
void write_quietly(const std::function<void(std::string_view)>& write,
                   std::string_view data) noexcept {
  try {
    write(data);
  } catch (...) {
  }
}

void log_last_resort(const PluginIo& io, std::string_view command, std::string_view what_failed,
                     const char* cause) noexcept {
  try {
    PluginLogger log;
    log.get().error("{} threw {}: error=\"{}\"",
                    command.empty() ? "plugin" : verb_log_name(command), what_failed, cause);
    write_quietly(io.write_stderr, log.captured_stderr());
  } catch (...) {
    write_quietly(io.write_stderr, "cilium-nomad-cni: an exception escaped the last resort\n");
  }
}

// Reached when no parsed config is at hand (or failing open with it threw as well): with no
// prevResult to pass on, ADD cannot succeed correctly, so it reports "try again later" (the
// spec's code for a transient condition). DEL, CHECK, GC and STATUS exit 0 as they do for any
// trouble of ours.
int fail_without_config(std::string_view command, const char* cause, const PluginIo& io) noexcept {
  log_last_resort(io, command, "outside the verb's fail-open handling", cause);
  if (exits_zero_on_our_trouble(command)) return 0;
  // The Nomad fingerprint probe (no command) reads a version from the output: print no JSON there.
  if (command.empty()) return 1;
  try {
    write_quietly(io.write_stdout,
                  cni::CniError{cni::ErrorCode::kTryAgainLater, "internal error", cause}.to_json(
                      std::string(cni::kNewestVersion)));
  } catch (...) {
    // Pieces that need no allocation to join.
    write_quietly(io.write_stdout, R"({"cniVersion":")");
    write_quietly(io.write_stdout, cni::kNewestVersion);
    write_quietly(io.write_stdout, R"(","code":11,"msg":"internal error"})");
  }
  return 1;
}

int after_exception(const char* const* envp, const PluginIo& io, std::optional<int> decided_exit,
                    const char* cause) noexcept {
  if (decided_exit) {
    // The outcome was complete and only writing it failed: the exit code still stands.
    log_last_resort(io, find_command(envp), "while writing its outcome", cause);
    return *decided_exit;
  }
  return fail_without_config(find_command(envp), cause, io);
}

}  // namespace

int plugin_main(const char* const* envp, const PluginIo& io, PluginContext& ctx) noexcept {
  std::optional<int> decided_exit;
  try {
    Invocation inv{cni_environment(envp), {}};
    // Without CNI_COMMAND this is Nomad's fingerprint probe, which may give no stdin at all.
    if (inv.env.contains("CNI_COMMAND")) inv.stdin_data = io.read_stdin();
    Outcome out = run_cni(inv, ctx);
    decided_exit = out.exit_code;
    io.write_stdout(out.stdout_data);
    io.write_stderr(out.stderr_data);
    return out.exit_code;
  } catch (const std::exception& e) {
    return after_exception(envp, io, decided_exit, e.what());
  } catch (...) {
    return after_exception(envp, io, decided_exit, "an exception not derived from std::exception");
  }
}

}  // namespace cn::plugin
