#include "bench/support/bench_dir.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace cn::bench {

BenchDir::BenchDir() {
  std::string base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string tmpl = base + "/cn-bench-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed under " + base);
  path_ = tmpl;
}

BenchDir::~BenchDir() {
  // CN_BENCH_KEEP=1 keeps the logs and state files of every stack for a post-mortem.
  if (const char* keep = std::getenv("CN_BENCH_KEEP"); keep && *keep == '1') return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace cn::bench
