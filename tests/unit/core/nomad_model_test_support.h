#pragma once
// Locating tests/data: ctest sets CN_SOURCE_DIR; a binary run by hand falls back to the path of
// this file, so the tests never depend on the working directory.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cn::testdata {

inline std::filesystem::path source_dir() {
  if (const char* env = std::getenv("CN_SOURCE_DIR"); env != nullptr && *env != '\0') return env;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
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
