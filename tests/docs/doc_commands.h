#pragma once
// The commands of our two binaries that the documentation shows: lines of fenced code blocks in
// Markdown, `args = [...]` of Nomad job files and `ExecStart=` of systemd units. Placeholders in
// running text (`policy validate FILE...`) are not commands and are not collected.
#include <string>
#include <vector>

namespace cn::testing {

struct DocCommand {
  std::string where;              // file:line
  std::string binary;             // cilium-nomad-labeler or cilium-nomad-cni
  std::vector<std::string> args;  // after the binary, shell quotes removed
};

// Splits a shell line into words: quotes removed, a '#' starting a word ends the line.
std::vector<std::string> shell_words(const std::string& line);

std::vector<DocCommand> markdown_commands(const std::string& path, const std::string& text);
std::vector<DocCommand> job_file_commands(const std::string& path, const std::string& text);
std::vector<DocCommand> unit_file_commands(const std::string& path, const std::string& text);

}  // namespace cn::testing
