#pragma once
// What a process costs, read from /proc: resident memory (VmRSS, and its peak VmHWM) and CPU
// time (utime + stime). For the labeler footprint benchmark.
#include <sys/types.h>

#include <optional>

namespace cn::bench {

struct ProcSample {
  double cpu_seconds = 0;  // user + system since start
  long rss_kb = 0;
  long hwm_kb = 0;  // peak RSS
  long threads = 0;
};

std::optional<ProcSample> sample_process(pid_t pid);

}  // namespace cn::bench
