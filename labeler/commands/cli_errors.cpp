#include "labeler/commands/cli_errors.h"

namespace cn::labeler::cli {

namespace {

constexpr std::string_view kProgram = "cilium-nomad-labeler";

std::string prefix(std::string_view command) {
  std::string out(kProgram);
  out += ": ";
  if (!command.empty()) {
    out += command;
    out += ": ";
  }
  return out;
}

}  // namespace

std::string command_path(const CLI::App& app) {
  std::string path;
  const CLI::App* at = &app;
  while (true) {
    const auto subs = at->get_subcommands();
    if (subs.empty()) break;
    at = subs.back();
    path += (path.empty() ? "" : " ") + at->get_name();
  }
  return path;
}

std::string usage_message(std::string_view command, std::string_view what) {
  return prefix(command) + std::string(what) + "; see --help";
}

std::string failure_message(std::string_view command, std::string_view what) {
  return prefix(command) + std::string(what);
}

int usage_error(std::ostream& err, std::string_view command, std::string_view what) {
  err << usage_message(command, what) << "\n";
  return kExitUsage;
}

int runtime_failure(std::ostream& err, std::string_view command, std::string_view what) {
  err << failure_message(command, what) << "\n";
  return kExitFailure;
}

int parse_error(const CLI::App& app, const CLI::ParseError& e, std::ostream& out,
                std::ostream& err) {
  // --help (of the subcommand it follows), --help-all, --version.
  if (e.get_exit_code() == 0) return app.exit(e, out, err);
  return usage_error(err, command_path(app), e.what());
}

}  // namespace cn::labeler::cli
