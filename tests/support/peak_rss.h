#pragma once
// How much memory a piece of work needed at its worst, in this process: for tests that bound
// what a flood may cost, and for the benchmarks that report it.
#include <functional>

namespace cn::testing {

struct PeakRssGrowth {
  double wall_ms = 0;
  long peak_growth_kb = 0;
};

// Freed heap goes back to the kernel first (so the baseline is what is live), then the kernel's
// peak is reset to the current RSS ("5" to /proc/self/clear_refs, Linux 4.0+); after `work`, the
// new VmHWM minus the baseline VmRSS is what it needed at most at any instant, whatever it freed
// before returning. Throws std::runtime_error when the peak cannot be reset or read.
PeakRssGrowth measure_peak_rss_growth(const std::function<void()>& work);

}  // namespace cn::testing
