#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "common/util/read_whole_file.h"
#include "tests/support/temp_dir.h"

namespace cn {
namespace {

using cn::testing::TempDir;
using cn::testing::write_file;

TEST(ReadWholeFile, AFileOfExactlyTheBoundIsReadAndOneByteMoreIsRefused) {
  TempDir dir;
  write_file(dir.file("at"), std::string(100'000, 'a'));
  write_file(dir.file("over"), std::string(100'001, 'b'));
  auto at = read_whole_file(dir.file("at"), 100'000);
  ASSERT_TRUE(at) << at.error().message;
  EXPECT_EQ(*at, std::string(100'000, 'a'));
  auto over = read_whole_file(dir.file("over"), 100'000);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().kind, ErrorKind::invalid);
}

// A caller keeps thousands of these (the policy directory's files): a small file must not cost
// the bound's worth of memory each.
TEST(ReadWholeFile, ASmallFileCostsItsSizeNotTheBound) {
  TempDir dir;
  write_file(dir.file("small"), std::string(600, 'x'));
  auto text = read_whole_file(dir.file("small"), std::size_t{256} << 10);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text->size(), 600u);
  EXPECT_LT(text->capacity(), 4096u);
}

TEST(ReadWholeFile, AMissingFileIsAnIoErrorWithItsErrno) {
  TempDir dir;
  auto text = read_whole_file(dir.file("absent"), 10);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().kind, ErrorKind::io);
  EXPECT_EQ(text.error().sys_errno, ENOENT);
}

}  // namespace
}  // namespace cn
