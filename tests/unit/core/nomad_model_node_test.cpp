// parse_node_list_text: the body of GET /v1/nodes, as node reaping reads it.
#include <gtest/gtest.h>

#include <string>

#include "common/nomad/model/node.h"
#include "tests/unit/core/nomad_model_test_support.h"

namespace cn::nomad {
namespace {

Error refused(std::string_view body) {
  auto parsed = parse_node_list_text(body);
  EXPECT_FALSE(parsed) << body;
  return parsed ? Error{} : parsed.error();
}

TEST(NomadNodeListTest, ReadsIdNameAndStatusOfEveryStub) {
  // With ?os and ?resources: Attributes, NodeResources and ReservedResources come along.
  auto nodes = parse_node_list_text(testdata::read_data("nomad/nodes_list.json"));
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 3U);
  EXPECT_EQ((*nodes)[0].id, "0a0a0a0a-0000-4000-8000-000000000002");
  EXPECT_EQ((*nodes)[0].name, "worker-2");
  EXPECT_EQ((*nodes)[0].status, "down");
  EXPECT_EQ((*nodes)[1].name, "worker-3");
  EXPECT_EQ((*nodes)[1].status, "disconnected");
  EXPECT_EQ((*nodes)[2].id, "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b");
  EXPECT_EQ((*nodes)[2].name, "worker-1");
  EXPECT_EQ((*nodes)[2].status, "ready");
}

TEST(NomadNodeListTest, NullAndEmptyAreNoNodes) {
  for (const char* body : {"null", "[]", " [ ] "}) {
    auto nodes = parse_node_list_text(body);
    ASSERT_TRUE(nodes) << body << ": " << nodes.error().message;
    EXPECT_TRUE(nodes->empty()) << body;
  }
}

TEST(NomadNodeListTest, AStatusNomadMayAddIsKeptAsText) {
  auto nodes = parse_node_list_text(R"([{"ID":"n1","Name":"a","Status":"hibernating"}])");
  ASSERT_TRUE(nodes) << nodes.error().message;
  EXPECT_EQ((*nodes)[0].status, "hibernating");
  auto no_status = parse_node_list_text(R"([{"ID":"n1","Name":"a"}])");
  ASSERT_TRUE(no_status) << no_status.error().message;
  EXPECT_EQ((*no_status)[0].status, "");
}

// A node missing from the list reads as gone from Nomad: one bad element refuses the list, and
// the error names it.
TEST(NomadNodeListTest, AStubWithoutIdOrNameRefusesTheList) {
  const std::string good = R"({"ID":"n1","Name":"a","Status":"ready"})";
  struct Case {
    std::string second;
    std::string where;
  };
  for (const auto& c :
       std::vector<Case>{{R"({"Name":"b","Status":"down"})", "node list at /1/ID"},
                         {R"({"ID":"","Name":"b"})", "node list at /1/ID"},
                         {R"({"ID":null,"Name":"b"})", "node list at /1/ID"},
                         {R"({"ID":"n2","Status":"down"})", "node list at /1/Name"},
                         {R"({"ID":"n2","Name":""})", "node list at /1/Name"},
                         {R"({"ID":7,"Name":"b"})", "node list at /1/ID"},
                         {R"({"ID":"n2","Name":"b","Status":1})", "node list at /1/Status"},
                         {R"("n2")", "node list at /1"}}) {
    const std::string body = "[" + good + "," + c.second + "]";
    Error e = refused(body);
    EXPECT_EQ(e.kind, ErrorKind::invalid) << body;
    EXPECT_TRUE(e.message.starts_with(c.where)) << body << " -> " << e.message;
  }
}

TEST(NomadNodeListTest, NotAListIsRefused) {
  EXPECT_EQ(refused(R"({"ID":"n1","Name":"a"})").kind, ErrorKind::invalid);
  EXPECT_EQ(refused("").kind, ErrorKind::invalid);
  EXPECT_EQ(refused("[{\"ID\":\"n1\",").kind, ErrorKind::invalid);
}

// The members the model skips are not built, but they must still be JSON: a stub whose Drivers
// are broken is a broken answer, not a node.
TEST(NomadNodeListTest, SkippedMembersMustStillBeValidJson) {
  EXPECT_FALSE(parse_node_list_text(R"([{"ID":"n1","Name":"a","Drivers":{"docker":[1,}}])"));
  std::string deep = std::string(200, '[') + std::string(200, ']');
  EXPECT_FALSE(parse_node_list_text(R"([{"ID":"n1","Name":"a","Drivers":)" + deep + "}]"));
}

}  // namespace
}  // namespace cn::nomad
