#include "bench/support/proc_stats.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace cn::bench {
namespace {

long status_field(const std::string& status, const std::string& key) {
  auto at = status.find("\n" + key + ":");
  if (at == std::string::npos) return 0;
  return std::stol(status.substr(at + key.size() + 2));
}

}  // namespace

std::optional<ProcSample> sample_process(pid_t pid) {
  std::string base = "/proc/" + std::to_string(pid);
  std::ifstream status_in(base + "/status");
  std::ifstream stat_in(base + "/stat");
  if (!status_in || !stat_in) return std::nullopt;
  std::stringstream ss;
  ss << status_in.rdbuf();
  std::string status = "\n" + ss.str();
  std::string stat((std::istreambuf_iterator<char>(stat_in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces; fields are counted from the last ')'.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  // After ')': field 3 (state) is index 0, so utime (14) is index 11 and stime (15) index 12.
  for (int i = 0; i <= 12 && fields >> f; ++i) {
    if (i == 11) utime = std::stoull(f);
    if (i == 12) stime = std::stoull(f);
  }
  ProcSample s;
  s.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  s.rss_kb = status_field(status, "VmRSS");
  s.hwm_kb = status_field(status, "VmHWM");
  s.threads = status_field(status, "Threads");
  return s;
}

}  // namespace cn::bench
