#pragma once
// A scratch directory on tmpfs (/dev/shm, else /tmp), as /run/cilium-nomad is on a node, removed
// with everything in it on destruction.
#include <string>

namespace cn::bench {

class BenchDir {
 public:
  BenchDir();
  ~BenchDir();
  BenchDir(const BenchDir&) = delete;
  BenchDir& operator=(const BenchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace cn::bench
