#include "tests/reliability/support/background_process.h"

#include "tests/reliability/support/wait.h"

namespace cn::reliability {

bool BackgroundProcess::wait_for_log(const std::string& needle, std::chrono::milliseconds timeout,
                                     int times) const {
  return eventually([&] { return count_occurrences(log(), needle) >= times; }, timeout);
}

int count_occurrences(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size()))
    ++n;
  return n;
}

}  // namespace cn::reliability
