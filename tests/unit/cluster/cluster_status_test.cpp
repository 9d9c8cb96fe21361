// `cluster status` shows the headroom of this cluster's identity range, and says why when the
// range is unknown rather than guessing one.
#include "labeler/commands/cluster_status_command.h"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

using labeler::cluster::identity_range;
using labeler::cluster::render_cluster_status;
using labeler::cluster::resolve_identity_range;

class ClusterStatusTest : public ClusterTest {
 protected:
  void SetUp() override {
    seed_identity(256, kFooLabels);
    seed_identity(257, kBarLabels);
    seed_identity(65536, kFooLabels);  // cluster 1's first with 255
    seed_identity(70000, kBarLabels);
  }
  nlohmann::json status_json(const Result<labeler::cluster::IdentityRange>& range) {
    std::ostringstream out, err;
    EXPECT_EQ(render_cluster_status(etcd, "default", range, true, clock, out, err), 0) << err.str();
    return nlohmann::json::parse(out.str());
  }
};

TEST_F(ClusterStatusTest, HeadroomCountsOnlyThisClustersRange) {
  auto zero = status_json(identity_range(0, 255))["identity_range"];
  EXPECT_EQ(zero["min"], 256);
  EXPECT_EQ(zero["max"], 65535);
  EXPECT_EQ(zero["size"], 65280);
  EXPECT_EQ(zero["used"], 2);
  EXPECT_EQ(zero["free"], 65278);
  auto one = status_json(identity_range(1, 255))["identity_range"];
  EXPECT_EQ(one["used"], 2);
  EXPECT_EQ(one["size"], 65536);
  // With 511 cluster 1 owns 32768-65535: only 65536 and 70000 fall outside it.
  auto one_of_511 = status_json(identity_range(1, 511))["identity_range"];
  EXPECT_EQ(one_of_511["used"], 0);
  EXPECT_EQ(one_of_511["size"], 32768);
}

TEST_F(ClusterStatusTest, UnknownRangeIsSaidNotGuessed) {
  auto doc = status_json(resolve_identity_range({}))["identity_range"];
  EXPECT_FALSE(doc.contains("used"));
  EXPECT_NE(doc["unknown"].get<std::string>().find("cluster-id unknown"), std::string::npos);
  std::ostringstream out, err;
  ASSERT_EQ(
      render_cluster_status(etcd, "default", resolve_identity_range({}), false, clock, out, err),
      0);
  EXPECT_NE(out.str().find("headroom: unknown"), std::string::npos) << out.str();
}

TEST_F(ClusterStatusTest, TextShowsFreeUsedAndShare) {
  std::ostringstream out, err;
  ASSERT_EQ(render_cluster_status(etcd, "default", identity_range(0, 255), false, clock, out, err),
            0);
  EXPECT_NE(out.str().find("headroom: 65278 of 65280 identities free in this cluster's range "
                           "256-65535 (cluster-id 0, max-connected-clusters 255), 2 used (0%)"),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace cn::testing
