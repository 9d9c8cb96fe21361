#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/policy/policy_document.h"
#include "labeler/policy/policy_directory.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler::policy {
namespace {

using cn::testing::TempDir;
using cn::testing::write_file;

// A file as the distributor writes it: JSON with the annotations that say where it came from.
std::string annotated(const std::string& path, const std::string& index) {
  return R"({"kind":"CiliumClusterwideNetworkPolicy","metadata":{"name":"web","annotations":{")" +
         std::string(cn::policy::kAnnotationNamespace) + R"(":"default",")" +
         std::string(cn::policy::kAnnotationPath) + R"(":")" + path + R"(",")" +
         std::string(cn::policy::kAnnotationModifyIndex) + R"(":")" + index + R"("}}})";
}

std::string annotated(const std::string& path, int index) {
  return annotated(path, std::to_string(index));
}

class PolicyDirectoryTest : public ::testing::Test {
 protected:
  PolicyDirectoryTest() { std::filesystem::create_directory(dir_.file("p")); }
  std::string file(const std::string& name) const { return dir_.file("p/nomad-" + name + ".yaml"); }

  TempDir dir_;
  PolicyDirectory directory_{dir_.file("p")};
};

// owned_files() remembers what it read; whatever happens to a file between two calls must still
// be seen, or a pass would decide on a stale source.
TEST_F(PolicyDirectoryTest, AFileReplacedByRenameIsReadAgain) {
  bool changed = false;
  ASSERT_TRUE(directory_.write("web", annotated("cilium/policies/web", 7), changed));
  auto first = directory_.owned_files();
  ASSERT_TRUE(first);
  ASSERT_TRUE(first->at("web").source);
  EXPECT_EQ(first->at("web").source->modify_index, 7u);
  ASSERT_TRUE(directory_.write("web", annotated("cilium/policies/web", 8), changed));
  auto second = directory_.owned_files();
  ASSERT_TRUE(second);
  ASSERT_TRUE(second->at("web").source);
  EXPECT_EQ(second->at("web").source->modify_index, 8u);
}

TEST_F(PolicyDirectoryTest, AFileEditedInPlaceToTheSameSizeIsReadAgain) {
  write_file(file("web"), annotated("cilium/policies/web", 7));
  auto first = directory_.owned_files();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->at("web").source->modify_index, 7u);
  {
    // Same inode, same size: only the times move.
    std::fstream out(file("web"), std::ios::in | std::ios::out | std::ios::binary);
    const std::string text = annotated("cilium/policies/web", 9);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  std::filesystem::last_write_time(
      file("web"), std::filesystem::last_write_time(file("web")) + std::chrono::seconds{1});
  auto second = directory_.owned_files();
  ASSERT_TRUE(second);
  ASSERT_TRUE(second->at("web").source);
  EXPECT_EQ(second->at("web").source->modify_index, 9u);
}

TEST_F(PolicyDirectoryTest, ARemovedFileIsGoneAndAnUnannotatedOneHasNoSource) {
  write_file(file("web"), annotated("cilium/policies/web", 7));
  write_file(file("hand"), R"({"kind":"CiliumNetworkPolicy"})");
  ASSERT_TRUE(directory_.owned_files());
  std::filesystem::remove(file("web"));
  auto files = directory_.owned_files();
  ASSERT_TRUE(files);
  EXPECT_FALSE(files->contains("web"));
  ASSERT_TRUE(files->contains("hand"));
  EXPECT_FALSE(files->at("hand").source);
}

// The modify index is an outsider's text like any other: a sign, trailing text or a number past
// 64 bits leave the file without a source (kept, never deleted on a guess) instead of wrapping
// or being cut short.
TEST_F(PolicyDirectoryTest, AModifyIndexThatIsNotADecimalUint64GivesNoSource) {
  for (const std::string index : {"-1", "12abc", " 12", "18446744073709551616", "1e3"}) {
    write_file(file("web"), annotated("cilium/policies/web", index));
    std::filesystem::last_write_time(
        file("web"), std::filesystem::last_write_time(file("web")) + std::chrono::seconds{1});
    auto files = directory_.owned_files();
    ASSERT_TRUE(files);
    ASSERT_TRUE(files->contains("web"));
    EXPECT_FALSE(files->at("web").source) << index;
  }
  write_file(file("web"), annotated("cilium/policies/web", "18446744073709551615"));
  std::filesystem::last_write_time(
      file("web"), std::filesystem::last_write_time(file("web")) + std::chrono::seconds{2});
  auto files = directory_.owned_files();
  ASSERT_TRUE(files);
  ASSERT_TRUE(files->at("web").source);
  EXPECT_EQ(files->at("web").source->modify_index, UINT64_MAX);
}

}  // namespace
}  // namespace cn::labeler::policy
