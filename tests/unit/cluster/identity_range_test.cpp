// This cluster's identity range against upstream's formula, cilium/cilium
// pkg/clustermesh/types/types.go (ClusterInfo.GetClusterIDShift, MinimalAllocationIdentity,
// MaximumAllocationIdentity): shift = 24 - log2(max-connected-clusters + 1); min = ID << shift
// (256 for ID 0, below which the IDs are reserved); max = ((ID + 1) << shift) - 1.
#include "labeler/cluster/identity_range.h"

#include <gtest/gtest.h>

namespace cn::testing {
namespace {

using labeler::cluster::identity_range;
using labeler::cluster::IdentityRangeSources;
using labeler::cluster::resolve_identity_range;

TEST(IdentityRange, MatchesUpstreamFor255And511) {
  struct Case {
    std::uint32_t id, max;
    std::uint64_t min_id, max_id;
  };
  for (const Case& c : {
           Case{0, 255, 256, 65535},            // the default: 2^16 - 1
           Case{1, 255, 65536, 131071},         // 1 << 16 .. (2 << 16) - 1
           Case{7, 255, 458752, 524287},        // 7 << 16
           Case{255, 255, 16711680, 16777215},  // the last block of 24 bits
           Case{0, 511, 256, 32767},            // 2^15 - 1
           Case{1, 511, 32768, 65535},          // cluster 1 of 511 holds cluster 0's top half
           Case{300, 511, 9830400, 9863167},    // 300 << 15
           Case{511, 511, 16744448, 16777215},
       }) {
    auto r = identity_range(c.id, c.max);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->min, c.min_id) << c.id << "/" << c.max;
    EXPECT_EQ(r->max, c.max_id) << c.id << "/" << c.max;
    EXPECT_EQ(r->size(), c.max_id - c.min_id + 1);
  }
}

TEST(IdentityRange, NeighbouringBlocksNeverOverlap) {
  for (std::uint32_t max : {255U, 511U}) {
    for (std::uint32_t id = 0; id < max; ++id) {
      auto a = identity_range(id, max);
      auto b = identity_range(id + 1, max);
      ASSERT_TRUE(a && b);
      EXPECT_EQ(a->max + 1, b->min) << id << "/" << max;
    }
  }
}

TEST(IdentityRange, UnsupportedValuesAreRefused) {
  EXPECT_FALSE(identity_range(0, 256).has_value());
  EXPECT_FALSE(identity_range(0, 0).has_value());
  EXPECT_FALSE(identity_range(256, 255).has_value());
  EXPECT_FALSE(identity_range(512, 511).has_value());
}

TEST(IdentityRange, FlagsWinOnlyWhereTheAgentIsSilentAndAContradictionIsRefused) {
  EXPECT_FALSE(resolve_identity_range({}).has_value());
  EXPECT_FALSE(resolve_identity_range({3, std::nullopt, std::nullopt, std::nullopt}));
  auto from_flags = resolve_identity_range({3, 511, std::nullopt, std::nullopt});
  ASSERT_TRUE(from_flags.has_value());
  EXPECT_EQ(from_flags->min, 3U << 15);
  auto mixed = resolve_identity_range({3, std::nullopt, std::nullopt, 255});
  ASSERT_TRUE(mixed.has_value());
  EXPECT_EQ(mixed->min, 3U << 16);
  auto from_agent = resolve_identity_range({std::nullopt, std::nullopt, 0, 255});
  ASSERT_TRUE(from_agent.has_value());
  EXPECT_EQ(from_agent->min, 256U);
  auto agreeing = resolve_identity_range({4, 255, 4, 255});
  EXPECT_TRUE(agreeing.has_value());
  auto contradicting = resolve_identity_range({4, 255, 5, 255});
  ASSERT_FALSE(contradicting.has_value());
  EXPECT_NE(contradicting.error().message.find("the agent runs with 5"), std::string::npos);
  EXPECT_FALSE(resolve_identity_range({0, 511, 0, 255}).has_value());
}

}  // namespace
}  // namespace cn::testing
