#include "common/labels/parent_job.h"

#include <algorithm>

namespace cn::labels {

namespace {

constexpr std::string_view kPeriodic = "periodic-";
constexpr std::string_view kDispatch = "dispatch-";

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  return std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
}

bool all_hex(std::string_view s) {
  return std::ranges::all_of(s, [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

bool is_child_suffix(std::string_view suffix) {
  if (suffix.starts_with(kPeriodic)) return all_digits(suffix.substr(kPeriodic.size()));
  if (suffix.starts_with(kDispatch)) {
    std::string_view rest = suffix.substr(kDispatch.size());
    auto dash = rest.find('-');
    if (dash == std::string_view::npos) return false;
    std::string_view token = rest.substr(dash + 1);
    return all_digits(rest.substr(0, dash)) && token.size() == 8 && all_hex(token);
  }
  return false;
}

}  // namespace

std::string parent_job_of(std::string_view job_id) {
  auto slash = job_id.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::string(job_id);
  if (!is_child_suffix(job_id.substr(slash + 1))) return std::string(job_id);
  return std::string(job_id.substr(0, slash));
}

}  // namespace cn::labels
