#include "tests/support/peak_rss.h"

#include <malloc.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>

namespace cn::testing {
namespace {

// VmRSS or VmHWM of this process in KiB.
long status_kb(const std::string& key) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with(key + ":")) return std::stol(line.substr(key.size() + 1));
  }
  throw std::runtime_error("no " + key + " in /proc/self/status");
}

}  // namespace

PeakRssGrowth measure_peak_rss_growth(const std::function<void()>& work) {
  ::malloc_trim(0);
  {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.flush();
    if (!clear) throw std::runtime_error("cannot reset VmHWM through /proc/self/clear_refs");
  }
  const long before = status_kb("VmRSS");
  const auto start = std::chrono::steady_clock::now();
  work();
  const auto end = std::chrono::steady_clock::now();
  return {std::chrono::duration<double, std::milli>(end - start).count(),
          status_kb("VmHWM") - before};
}

}  // namespace cn::testing
