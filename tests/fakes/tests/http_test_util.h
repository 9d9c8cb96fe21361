#pragma once
// Helpers shared by the fake-server tests: a private temp dir and bounded real-time waits.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include "tests/support/eventually.h"

namespace cn::fakes::testing {

// The fake agent's executable in CN_BIN_DIR (ctest sets it); "" when the variable is unset.
inline std::string fake_agent_binary() {
  const char* d = std::getenv("CN_BIN_DIR");
  return d ? std::string(d) + "/fake-cilium-agent" : "";
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cnfk-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

using ::cn::testing::eventually;

}  // namespace cn::fakes::testing
