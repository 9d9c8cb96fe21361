// InMemoryNomad's node list, which node reaping's unit tests stand on: what they set is what
// nodes() answers, and it fails when told to.
#include <gtest/gtest.h>

#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::testing {
namespace {

using namespace std::chrono_literals;

Deadline soon() {
  return system_clock().now() + 1s;
}

TEST(InMemoryNomadNodes, StartsAsAClusterOfOneReadyNode) {
  InMemoryNomad nomad;
  auto nodes = nomad.nodes(soon());
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 1U);
  EXPECT_EQ((*nodes)[0].id, nomad.node_id);
  EXPECT_EQ((*nodes)[0].status, "ready");
}

TEST(InMemoryNomadNodes, SetStatusAndRemove) {
  InMemoryNomad nomad;
  nomad.set_nodes({{"n1", "worker-1", "ready"}, {"n2", "worker-2", "ready"}});
  nomad.set_node_status("n2", "down");
  nomad.set_node_status("n3", "initializing");
  nomad.remove_node("n1");
  auto nodes = nomad.nodes(soon());
  ASSERT_TRUE(nodes);
  ASSERT_EQ(nodes->size(), 2U);
  EXPECT_EQ((*nodes)[0].name, "worker-2");
  EXPECT_EQ((*nodes)[0].status, "down");
  EXPECT_EQ((*nodes)[1].id, "n3");
  EXPECT_EQ((*nodes)[1].name, "n3");
  EXPECT_EQ((*nodes)[1].status, "initializing");
}

TEST(InMemoryNomadNodes, FailsWhenTold) {
  InMemoryNomad nomad;
  nomad.fail_call(NomadCall::nodes, 1, 403, "Permission denied");
  auto denied = nomad.nodes(soon());
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().kind, ErrorKind::permission);
  nomad.fail_next(1, 0);
  auto refused = nomad.nodes(soon());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::transport);
  EXPECT_TRUE(nomad.nodes(soon()));
  EXPECT_EQ(nomad.calls(NomadCall::nodes), 3);
}

}  // namespace
}  // namespace cn::testing
