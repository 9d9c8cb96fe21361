#include "labeler/commands/cli_checks.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/cilium/model/agent_options.h"
#include "common/labels/label_policy.h"
#include "common/util/go_duration.h"

namespace cn::labeler::cli {

namespace {

std::string lower(std::string text) {
  std::ranges::transform(text, text.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

CLI::Validator one_of_words(const std::map<std::string, int>& words) {
  std::string names;
  for (const auto& [word, value] : words) names += (names.empty() ? "" : ", ") + word;
  return {[words, names](std::string& input) -> std::string {
            auto it = words.find(lower(input));
            if (it == words.end()) return input + " is not one of " + names;
            // CLI11 reads an enum from its number once validation has passed.
            input = std::to_string(it->second);
            return {};
          },
          "one of " + names};
}

CLI::Validator boolean_word() {
  return {[](std::string& input) -> std::string {
            const std::string word = lower(input);
            if (word != "true" && word != "false") return input + " is not true or false";
            input = word;
            return {};
          },
          "true or false"};
}

CLI::Validator listen_address() {
  return {[](std::string& input) -> std::string {
            if (input.empty()) return {};
            const auto colon = input.rfind(':');
            if (colon == std::string::npos) return input + " is not HOST:PORT";
            const std::string host = input.substr(0, colon);
            const std::string port_text = input.substr(colon + 1);
            int port = -1;
            const auto* end = port_text.data() + port_text.size();
            auto [at, ec] = std::from_chars(port_text.data(), end, port);
            if (port_text.empty() || ec != std::errc{} || at != end || port < 0 || port > 65535)
              return input + " has no port (0-65535)";
            const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
            if (!bracketed && host.find_first_of(":[] ") != std::string::npos)
              return input + " is not HOST:PORT (write an IPv6 address as [ADDRESS]:PORT)";
            return {};
          },
          "HOST:PORT"};
}

CLI::Validator go_duration() {
  return {[](std::string& input) -> std::string {
            if (!parse_go_duration(input))
              return input + " is not a duration such as 500ms, 2s, 15m";
            return {};
          },
          "DURATION"};
}

CLI::Validator agent_option_assignment() {
  return {[](std::string& input) -> std::string {
            auto parsed = cilium::parse_agent_option_assignment(input);
            if (!parsed) return parsed.error().message;
            return {};
          },
          "NAME=true|false"};
}

CLI::Validator meta_label_keys() {
  return {[](std::string& input) -> std::string {
            auto policy = labels::parse_label_policy(input);
            if (!policy) return policy.error().message;
            return {};
          },
          "KEY,..."};
}

Status read_duration(const char* flag, const std::string& text, std::chrono::milliseconds min,
                     std::chrono::milliseconds& out) {
  auto d = parse_go_duration(text);
  if (!d) return fail(std::string(flag) + " " + text + ": not a duration such as 500ms, 2s, 15m");
  if (*d < min) return fail(std::string(flag) + " " + text + ": below " + format_go_duration(min));
  out = *d;
  return {};
}

}  // namespace cn::labeler::cli
