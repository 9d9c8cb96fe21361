#include "bench/bench_stats.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>

namespace cn::bench {

Summary summarize(std::vector<double> s) {
  Summary out;
  out.n = s.size();
  if (s.empty()) return out;
  std::sort(s.begin(), s.end());
  auto at = [&](double q) {
    auto idx = static_cast<std::size_t>(q * static_cast<double>(s.size() - 1) + 0.5);
    return s[std::min(idx, s.size() - 1)];
  };
  out.p50_ms = at(0.50);
  out.p99_ms = at(0.99);
  out.max_ms = s.back();
  out.mean_ms = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  return out;
}

std::string MarkdownTable::str() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string l = "|";
    for (const auto& c : cells) l += " " + c + " |";
    return l + "\n";
  };
  std::string out = line(header_);
  std::vector<std::string> sep(header_.size(), "---");
  out += line(sep);
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 10 ? "%.3f" : "%.1f", ms);
  return buf;
}

std::string fmt_duration(double ms) {
  if (ms >= 1000) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000);
    return buf;
  }
  return fmt_ms(ms) + " ms";
}

std::string results_dir() {
  const char* dir_env = std::getenv("CN_BENCH_OUT");
  std::string dir = dir_env ? dir_env : "build/bench-results";
  std::filesystem::create_directories(dir);
  return dir;
}

void publish(const std::string& name, const std::string& text) {
  std::ofstream(results_dir() + "/" + name + ".md") << text;
  std::cout << text << std::flush;
}

}  // namespace cn::bench
