// How noisy the machine is while the benchmarks run: how late a thread wakes from a 1 ms sleep
// (2,000 times). Every hop of the labeling path (plugin, labeler threads, fakes) is such a
// wake-up, so on a shared machine this is what stretches the latency tails. Prints one line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "bench/bench_stats.h"

int main() {
  std::vector<double> late;
  for (int i = 0; i < 2000; ++i) {
    auto due = std::chrono::steady_clock::now() + std::chrono::milliseconds{1};
    std::this_thread::sleep_until(due);
    late.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - due).count());
  }
  auto s = cn::bench::summarize(late);
  std::printf("wake-up lateness after a 1 ms sleep p50 %s ms, p99 %s ms, max %s ms\n",
              cn::bench::fmt_ms(s.p50_ms).c_str(), cn::bench::fmt_ms(s.p99_ms).c_str(),
              cn::bench::fmt_ms(s.max_ms).c_str());
  return 0;
}
