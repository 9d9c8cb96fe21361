#pragma once
// Validators for the labeler's flags, so that every malformed value is refused while the command
// line is parsed (exit 2, the flag named) instead of when the daemon gets to use it.
#include <chrono>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "common/util/result.h"

namespace cn::labeler::cli {

// Exactly one of the words (any case), nothing else; add it with transform(), not check(), which
// would drop the conversion to the enum's number: CLI11's CheckedTransformer also takes the
// enum's number ("--watch 1"), which no document names.
CLI::Validator one_of_words(const std::map<std::string, int>& words);

template <class Enum>
CLI::Validator one_of(const std::map<std::string, Enum>& words) {
  std::map<std::string, int> numbers;
  for (const auto& [word, value] : words) numbers[word] = static_cast<int>(value);
  return one_of_words(numbers);
}

// `true` or `false` (any case; a transform, like one_of): what the README and the examples write.
// CLI11 alone also takes 1/0, yes/no, on/off, enable/disable and +/-.
CLI::Validator boolean_word();

// HOST:PORT with a numeric port (HOST may be empty, a name, an IPv4 or a bracketed IPv6
// address), or empty for off.
CLI::Validator listen_address();

// A Go duration such as 500ms, 2s, 15m.
CLI::Validator go_duration();

// NAME=true|false for --agent-option: NAME one of the agent options the labeler knows
// (common/cilium/model/agent_options.h).
CLI::Validator agent_option_assignment();

// A --meta-labels list that parse_label_policy accepts.
CLI::Validator meta_label_keys();

// A flag's Go duration ("500ms", "15m"), at least `min`; the error names the flag and the text.
[[nodiscard]] Status read_duration(const char* flag, const std::string& text,
                                   std::chrono::milliseconds min, std::chrono::milliseconds& out);

}  // namespace cn::labeler::cli
