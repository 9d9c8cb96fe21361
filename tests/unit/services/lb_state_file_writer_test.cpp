// The state file is written only when what is on disk differs from what the agent should serve.
#include "labeler/services/lb_state_file_writer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/util/read_whole_file.h"
#include "labeler/services/lb_state_document.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

TEST(LbStateFileWriterTest, WritesOnlyWhatDiffersFromTheFileOnDisk) {
  cn::testing::TempDir dir;
  const std::string path = dir.file("lb.json");
  LbStateFileWriter writer(path);
  const Deadline deadline{system_clock().now() + std::chrono::seconds{5}};
  auto first = writer.apply({}, deadline);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(*first);
  EXPECT_EQ(*read_whole_file(path, 1 << 20), render_lb_state_json({}));
  auto same = writer.apply({}, deadline);
  ASSERT_TRUE(same);
  EXPECT_FALSE(*same) << "an unchanged file is not rewritten";

  // Someone else replaced or removed it: the labeler's version comes back.
  cn::testing::write_file(path, "{\"services\":[{}]}");
  auto replaced = writer.apply({}, deadline);
  ASSERT_TRUE(replaced);
  EXPECT_TRUE(*replaced);
  std::filesystem::remove(path);
  auto removed = writer.apply({}, deadline);
  ASSERT_TRUE(removed);
  EXPECT_TRUE(*removed);
  EXPECT_EQ(*read_whole_file(path, 1 << 20), render_lb_state_json({}));
}

}  // namespace
}  // namespace cn::labeler
