#pragma once
// The exceptions the fail-open tests throw from inside the plugin: one from the allocator, one
// from the JSON library, one from a system call wrapper.
#include <new>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

namespace cn::plugin {

enum class Injected { kBadAlloc, kJson, kSystemError };

inline std::string injected_name(Injected kind) {
  switch (kind) {
    case Injected::kBadAlloc:
      return "bad_alloc";
    case Injected::kJson:
      return "json_exception";
    case Injected::kSystemError:
      return "system_error";
  }
  return "unknown";
}

// Part of what() that the plugin's log line must carry.
inline std::string injected_what(Injected kind) {
  switch (kind) {
    case Injected::kBadAlloc:
      return "std::bad_alloc";
    case Injected::kJson:
      return "[json.exception.parse_error.101]";
    case Injected::kSystemError:
      return "injected: No space left on device";
  }
  return "unknown";
}

[[noreturn]] inline void throw_injected(Injected kind) {
  switch (kind) {
    case Injected::kBadAlloc:
      throw std::bad_alloc();
    case Injected::kJson: {
      // A real one from the library rather than a hand-made copy.
      [[maybe_unused]] auto never_parsed = nlohmann::json::parse("{\"truncated\":");
      break;
    }
    case Injected::kSystemError:
      throw std::system_error(std::make_error_code(std::errc::no_space_on_device), "injected");
  }
  throw std::logic_error("throw_injected: no exception for this kind");
}

}  // namespace cn::plugin
