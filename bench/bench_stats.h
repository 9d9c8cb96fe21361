#pragma once
// Percentiles over measured samples and a markdown table writer for the benchmark reports.
#include <chrono>
#include <string>
#include <vector>

namespace cn::bench {

struct Summary {
  std::size_t n = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  double mean_ms = 0;
};

Summary summarize(std::vector<double> samples_ms);

class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string fmt_ms(double ms);
// A duration with its unit, for cells that span microseconds to minutes: "0.412 ms", "92.1 s".
std::string fmt_duration(double ms);
// $CN_BENCH_OUT, default build/bench-results (created).
std::string results_dir();
// Writes `text` to $CN_BENCH_OUT/<name>.md (default build/bench-results) and stdout.
void publish(const std::string& name, const std::string& text);

}  // namespace cn::bench
