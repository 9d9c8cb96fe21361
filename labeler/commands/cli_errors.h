#pragma once
// How every subcommand of cilium-nomad-labeler reports a failure to the person who typed it: one
// line on stderr, one style, one exit code per kind of failure (README, "Exit codes"). A script
// tells a typo (2: fixing the command line is the only remedy) from a runtime failure (1: waiting
// or fixing the node may help) without reading the text.
#include <ostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace cn::labeler::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
// `run` only: another labeler still held this node at the end of --lock-wait.
inline constexpr int kExitNodeHeld = 3;

// "policy status" for `cilium-nomad-labeler policy status ...`: the deepest subcommand the parser
// reached, also after it threw; empty when it reached none.
std::string command_path(const CLI::App& app);

// "cilium-nomad-labeler: <command>: <what>; see --help"
std::string usage_message(std::string_view command, std::string_view what);
// "cilium-nomad-labeler: <command>: <what>"
std::string failure_message(std::string_view command, std::string_view what);

// Write the line and return the exit code that goes with it.
int usage_error(std::ostream& err, std::string_view command, std::string_view what);
int runtime_failure(std::ostream& err, std::string_view command, std::string_view what);

// The outcome of CLI11's own parse errors: help and version print and exit 0, every other one
// is a usage error in the style above.
int parse_error(const CLI::App& app, const CLI::ParseError& e, std::ostream& out,
                std::ostream& err);

}  // namespace cn::labeler::cli
