// Without libFuzzer (g++ builds, including the ASan+UBSan CI run) each fuzz target is replayed
// over its seed corpus and the crashes it has found: a regression test for every parser.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

TEST(FuzzCorpus, EveryInputRunsCleanly) {
  std::filesystem::path dir = CN_FUZZ_CORPUS_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int inputs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().string());
    EXPECT_EQ(
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
        0);
    ++inputs;
  }
  EXPECT_GT(inputs, 0);
  // Edge cases no corpus keeps: empty input and one byte of everything.
  EXPECT_EQ(LLVMFuzzerTestOneInput(nullptr, 0), 0);
  for (int b = 0; b < 256; ++b) {
    auto byte = static_cast<std::uint8_t>(b);
    EXPECT_EQ(LLVMFuzzerTestOneInput(&byte, 1), 0);
  }
}
