#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "common/cilium/model/endpoint.h"
#include "common/cilium/model/endpoint_ref.h"
#include "common/cni/ifname.h"
#include "tests/support/alloc_ids.h"
#include "tests/unit/core/nomad_model_test_support.h"

namespace cn::cilium {
namespace {

using Strings = std::vector<std::string>;
using cn::testing::kAllocId;

Endpoint load(const std::string& name) {
  auto ep = parse_endpoint_text(testdata::read_data("cilium/" + name));
  EXPECT_TRUE(ep.has_value()) << (ep ? "" : ep.error().message);
  return ep.value_or(Endpoint{});
}

TEST(CiliumEndpointTest, ParsesLabeledReferenceEndpoint) {
  Endpoint ep = load("endpoint_labeled.json");
  EXPECT_EQ(ep.id, 1734);
  EXPECT_EQ(ep.state, "ready");
  EXPECT_EQ(ep.identity_id, 48213);
  Strings ours{"nomad:group=app", "nomad:job=web", "nomad:namespace=default"};
  EXPECT_EQ(ep.identity_labels, ours);
  EXPECT_EQ(ep.realized_user_labels, ours);
  EXPECT_EQ(ep.spec_user_labels, ours);
  EXPECT_TRUE(ep.security_relevant_labels.empty());
  EXPECT_EQ(ep.cni_attachment_id, std::string(kAllocId) + ":eth0");
  EXPECT_EQ(ep.container_id, kAllocId);
  ASSERT_EQ(ep.addressing.size(), 1U);
  EXPECT_EQ(ep.addressing[0].ipv4, "10.200.3.17");
  EXPECT_EQ(ep.addressing[0].ipv6, "");
  EXPECT_EQ(ep.health, "OK");
  EXPECT_FALSE(is_init(ep));
  EXPECT_FALSE(is_reserved_only(ep));
  EXPECT_EQ(user_labels(ep).to_strings(), ours);
  EXPECT_EQ(identity_labels(ep).to_strings(), ours);
  EXPECT_EQ(attachment_of(ep), (Attachment{kAllocId, "eth0"}));
}

TEST(CiliumEndpointTest, ParsesFreshInitEndpoint) {
  Endpoint ep = load("endpoint_init.json");
  EXPECT_EQ(ep.identity_id, kIdentityInit);
  EXPECT_EQ(ep.security_relevant_labels, (Strings{"reserved:init"}));
  EXPECT_TRUE(ep.spec_user_labels.empty());
  EXPECT_TRUE(is_init(ep));
  EXPECT_FALSE(is_reserved_only(ep));
  EXPECT_TRUE(user_labels(ep).empty());
  EXPECT_EQ(ep.realized_policy_revision, 7) << "status.policy.realized.policy-revision";
}

TEST(CiliumEndpointTest, InitPlusUserLabelsIsStillInit) {
  Endpoint ep = load("endpoint_labeled.json");
  ep.identity_id = 51000;  // mixed set gets a global identity, not 5
  ep.identity_labels.push_back("reserved:init");
  EXPECT_TRUE(is_init(ep));
}

TEST(CiliumEndpointTest, ListSeparatesAgentEndpoints) {
  auto list = parse_endpoint_list(testdata::read_data("cilium/endpoint_list.json"));
  ASSERT_TRUE(list.has_value()) << list.error().message;
  ASSERT_EQ(list->endpoints.size(), 3U);
  EXPECT_TRUE(list->rejected.empty());
  const auto& host = list->endpoints[0];
  const auto& health = list->endpoints[1];
  const auto& init = list->endpoints[2];
  EXPECT_TRUE(is_reserved_only(host));
  EXPECT_FALSE(attachment_of(host).has_value());
  EXPECT_TRUE(is_reserved_only(health));
  EXPECT_FALSE(attachment_of(health).has_value());
  EXPECT_FALSE(is_reserved_only(init));
  EXPECT_EQ(attachment_of(init), (Attachment{kAllocId, "eth0"}));
}

TEST(CiliumEndpointTest, ReservedOnlyByLabelsWhenIdentityNumberDiffers) {
  Endpoint ep;
  ep.identity_id = 7;
  ep.identity_labels = {"reserved:kube-apiserver", "reserved:host"};
  EXPECT_TRUE(is_reserved_only(ep));
  ep.identity_labels = {"reserved:host", "nomad:nomad.job=x"};
  EXPECT_FALSE(is_reserved_only(ep));
  EXPECT_FALSE(is_reserved_only(Endpoint{}));
}

TEST(CiliumEndpointTest, ListBodyShapes) {
  for (const char* empty : {"", "  \n", "null", "[]"}) {
    auto list = parse_endpoint_list(empty);
    ASSERT_TRUE(list.has_value()) << empty;
    EXPECT_TRUE(list->endpoints.empty());
  }
  EXPECT_FALSE(parse_endpoint_list("{}").has_value());
  EXPECT_FALSE(parse_endpoint_list("\"rate limited\"").has_value());
  auto mixed = parse_endpoint_list(R"([{"id":1},{"id":"x"},3,{"status":{"identity":[]}}])");
  ASSERT_TRUE(mixed.has_value());
  EXPECT_EQ(mixed->endpoints.size(), 1U);
  ASSERT_EQ(mixed->rejected.size(), 3U);
  EXPECT_NE(mixed->rejected[2].message.find("endpoint list at /3/status/identity"),
            std::string::npos)
      << mixed->rejected[2].message;
}

TEST(CiliumEndpointTest, HostileShapes) {
  EXPECT_TRUE(parse_endpoint_text(R"({"id":null,"spec":null,"status":null})").has_value());
  EXPECT_TRUE(parse_endpoint_text(R"({"status":{"labels":{"realized":null}}})").has_value());
  EXPECT_FALSE(parse_endpoint_text(R"({"id":1.5})").has_value());
  EXPECT_FALSE(parse_endpoint_text(R"({"id":18446744073709551615})").has_value());
  EXPECT_FALSE(parse_endpoint_text(R"({"status":{"identity":{"labels":[1]}}})").has_value());
  EXPECT_FALSE(parse_endpoint_text(R"({"status":{"networking":{"addressing":{}}}})").has_value());
  EXPECT_FALSE(parse_endpoint_text(std::string(10000, '[')).has_value());
  EXPECT_FALSE(parse_endpoint_text("[]").has_value());
  auto negative = parse_endpoint_text(R"({"id":-3})");
  ASSERT_TRUE(negative.has_value());
  EXPECT_EQ(negative->id, -3);
}

struct AttachmentCase {
  std::string text;
  bool ok;
};

class AttachmentIdTest : public ::testing::TestWithParam<AttachmentCase> {};

TEST_P(AttachmentIdTest, NeedsAllocAndInterface) {
  EXPECT_EQ(parse_attachment_id(GetParam().text).has_value(), GetParam().ok) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(Table, AttachmentIdTest,
                         ::testing::Values(AttachmentCase{std::string(kAllocId) + ":eth0", true},
                                           AttachmentCase{std::string(kAllocId) + ":", false},
                                           AttachmentCase{kAllocId, false},
                                           AttachmentCase{"0123abcd:eth0", false},
                                           AttachmentCase{"health:eth0", false},
                                           AttachmentCase{"", false}));

TEST(EndpointRefTest, Forms) {
  auto cni = EndpointRef::cni_attachment(kAllocId, "eth0");
  ASSERT_TRUE(cni.has_value());
  EXPECT_EQ(cni->to_string(), std::string("cni-attachment-id:") + kAllocId + ":eth0");
  EXPECT_EQ(cni->to_path_segment(), cni->to_string());
  EXPECT_EQ(cni->kind(), EndpointIdKind::cni_attachment);

  auto cid = EndpointRef::container_id(kAllocId);
  ASSERT_TRUE(cid.has_value());
  EXPECT_EQ(cid->to_string(), std::string("container-id:") + kAllocId);

  auto v4 = EndpointRef::ipv4("10.200.3.17");
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->to_path_segment(), "ipv4:10.200.3.17");

  auto v6 = EndpointRef::ipv6("fd00::1");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->to_path_segment(), "ipv6:fd00::1");

  EXPECT_EQ(EndpointRef::local(1734)->to_string(), "1734");
  EXPECT_EQ(EndpointRef::local(1)->to_path_segment(), "1");
  EXPECT_EQ(EndpointRef::local(65535)->to_string(), "65535");
}

TEST(EndpointRefTest, RefusesInputsThatCouldAddressSomethingElse) {
  EXPECT_FALSE(EndpointRef::cni_attachment("../../config", "eth0").has_value());
  EXPECT_FALSE(EndpointRef::cni_attachment(kAllocId, "").has_value());
  EXPECT_FALSE(EndpointRef::cni_attachment(kAllocId, "eth0/../x").has_value());
  EXPECT_FALSE(EndpointRef::cni_attachment(kAllocId, "a:b").has_value());
  EXPECT_FALSE(EndpointRef::cni_attachment(kAllocId, "0123456789abcdef").has_value());
  EXPECT_FALSE(EndpointRef::cni_attachment(kAllocId, "..").has_value());
  EXPECT_FALSE(EndpointRef::cni_attachment(kAllocId, "et h0").has_value());
  EXPECT_TRUE(EndpointRef::cni_attachment(kAllocId, "0123456789abcde").has_value());
  EXPECT_FALSE(EndpointRef::container_id("abc").has_value());
  EXPECT_FALSE(EndpointRef::ipv4("10.0.0.256").has_value());
  EXPECT_FALSE(EndpointRef::ipv4("fd00::1").has_value());
  EXPECT_FALSE(EndpointRef::ipv4(std::string("10.0.0.1\0/x", 11)).has_value());
  EXPECT_FALSE(EndpointRef::ipv6("10.0.0.1").has_value());
  EXPECT_FALSE(EndpointRef::ipv6("fd00::1/64").has_value());
  EXPECT_FALSE(EndpointRef::ipv6("").has_value());
}

TEST(EndpointRefTest, IfnameRules) {
  EXPECT_TRUE(cni::is_valid_ifname("eth0"));
  EXPECT_TRUE(cni::is_valid_ifname("lxc3c9b7e1a52f0"));
  EXPECT_FALSE(cni::is_valid_ifname("."));
  EXPECT_FALSE(cni::is_valid_ifname("a\tb"));
  EXPECT_FALSE(cni::is_valid_ifname(std::string("a\0b", 3)));
}

}  // namespace
}  // namespace cn::cilium

namespace cn::cilium {
namespace {

// The agent's API types endpoint IDs as int64; a narrowing cast once turned 65537 into endpoint 1.
TEST(EndpointRefLocal, RefusesIdsOutsideTheAgentsRangeInsteadOfNarrowing) {
  for (std::int64_t bad :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{65536}, std::int64_t{65537},
        std::int64_t{4294967297}, std::numeric_limits<std::int64_t>::min(),
        std::numeric_limits<std::int64_t>::max()}) {
    auto ref = EndpointRef::local(bad);
    ASSERT_FALSE(ref) << bad << " became " << ref->to_string();
    EXPECT_EQ(ref.error().kind, ErrorKind::bad_answer);
  }
}

TEST(CiliumEndpointTest, EndpointRefsForAnAllocationInTheAgentsOrder) {
  const std::string alloc = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
  std::vector<std::string> forms;
  for (const auto& r : endpoint_refs_for(alloc, "eth0", {"10.200.3.17/32", "fd00::5", "bad"})) {
    forms.push_back(r.to_string());
  }
  EXPECT_EQ(forms,
            (std::vector<std::string>{"cni-attachment-id:" + alloc + ":eth0",
                                      "container-id:" + alloc, "ipv4:10.200.3.17", "ipv6:fd00::5"}))
      << "a prefix length is dropped, an unusable address left out";
  EXPECT_EQ(endpoint_refs_for(alloc, "", {}).size(), 1U) << "no ifname: no attachment ID";
}

}  // namespace
}  // namespace cn::cilium
