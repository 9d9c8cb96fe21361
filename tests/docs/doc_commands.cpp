#include "tests/docs/doc_commands.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <sstream>

namespace cn::testing {
namespace {

constexpr const char* kBinaries[] = {"cilium-nomad-labeler", "cilium-nomad-cni"};

// The binary a word names (a bare name or a path ending in it), or empty.
std::string binary_of(const std::string& word) {
  for (const char* b : kBinaries) {
    std::string name = b;
    if (word == name || word.ends_with("/" + name)) return name;
  }
  return "";
}

// A command from shell words: the first word naming a binary of ours, after any prefix such as
// `$`, `sudo` or `VAR=value`; nullopt when the line runs something else.
std::optional<DocCommand> command_from(const std::vector<std::string>& words, std::string where) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "$" || w == "sudo" || w.find('=') != std::string::npos) continue;
    std::string binary = binary_of(w);
    if (binary.empty()) return std::nullopt;
    DocCommand c{std::move(where), binary, {}};
    for (std::size_t j = i + 1; j < words.size(); ++j) {
      // A pipe or list ends the command.
      if (words[j] == "|" || words[j] == "&&" || words[j] == ";" || words[j] == "||") break;
      c.args.push_back(words[j]);
    }
    return c;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::vector<DocCommand> markdown_commands(const std::string& path, const std::string& text) {
  std::vector<DocCommand> out;
  std::istringstream in(text);
  std::string line;
  bool in_block = false;
  std::string pending;
  int number = 0;
  int start = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string trimmed = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (trimmed.starts_with("```")) {
      in_block = !in_block;
      pending.clear();
      continue;
    }
    if (!in_block) continue;
    if (pending.empty()) start = number;
    if (trimmed.ends_with("\\")) {
      pending += trimmed.substr(0, trimmed.size() - 1) + " ";
      continue;
    }
    pending += trimmed;
    if (auto c = command_from(shell_words(pending), path + ":" + std::to_string(start))) {
      out.push_back(std::move(*c));
    }
    pending.clear();
  }
  return out;
}

std::vector<DocCommand> job_file_commands(const std::string& path, const std::string& text) {
  // Our job files run only the labeler (the docker image's entrypoint, or `command`), so every
  // `args = [...]` is its command line. Quoted flags in commented-out lines count too: an
  // operator uncomments them.
  std::vector<DocCommand> out;
  static const std::regex args_re(R"re(args\s*=\s*\[([^\]]*)\])re");
  static const std::regex string_re(R"re("((?:[^"\\]|\\.)*)")re");
  for (std::sregex_iterator it(text.begin(), text.end(), args_re), end; it != end; ++it) {
    auto line = 1 + std::count(text.begin(), text.begin() + it->position(), '\n');
    DocCommand c{path + ":" + std::to_string(line), "cilium-nomad-labeler", {}};
    std::string list = (*it)[1];
    for (std::sregex_iterator s(list.begin(), list.end(), string_re), e; s != e; ++s) {
      c.args.push_back((*s)[1]);
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<DocCommand> unit_file_commands(const std::string& path, const std::string& text) {
  std::vector<DocCommand> out;
  std::istringstream in(text);
  std::string line;
  std::string pending;
  int number = 0;
  int start = 0;
  while (std::getline(in, line)) {
    ++number;
    if (pending.empty()) {
      if (!line.starts_with("ExecStart=")) continue;
      start = number;
      line = line.substr(std::string("ExecStart=").size());
    }
    if (line.ends_with("\\")) {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    pending += line;
    if (auto c = command_from(shell_words(pending), path + ":" + std::to_string(start))) {
      out.push_back(std::move(*c));
    }
    pending.clear();
  }
  return out;
}

}  // namespace cn::testing
