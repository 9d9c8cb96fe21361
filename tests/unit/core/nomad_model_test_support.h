#pragma once
// Locating tests/data: CN_SOURCE_DIR when set, else the source tree the test was built from, so the
// tests never depend on the working directory.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cn::testdata {

inline std::filesystem::path source_dir() {
  if (const char* env = std::getenv("CN_SOURCE_DIR"); env != nullptr && *env != '\0') return env;
  return CN_DEFAULT_SOURCE_DIR;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline std::string read_data(const std::string& relative) {
  return read_file(source_dir() / "tests" / "data" / relative);
}

}  // namespace cn::testdata
