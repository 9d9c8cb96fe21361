// The key shapes the duties act on; anything else is skipped, never deleted.
#include "labeler/cluster/kvstore_layout.h"

#include <gtest/gtest.h>

#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/ip_key.h"

namespace cn::labeler::cluster {
namespace {

using namespace kvstore;

TEST(KvstoreLayout, MasterKeysAreCanonicalDecimalIds) {
  EXPECT_EQ(parse_master_key("cilium/state/identities/v1/id/256"), 256U);
  EXPECT_EQ(parse_master_key("cilium/state/identities/v1/id/0"), 0U);
  EXPECT_EQ(parse_master_key(master_key(65535)), 65535U);
  for (const char* key :
       {"cilium/state/identities/v1/id/", "cilium/state/identities/v1/id/0256",
        "cilium/state/identities/v1/id/+256", "cilium/state/identities/v1/id/-1",
        "cilium/state/identities/v1/id/256/x", "cilium/state/identities/v1/id/25a",
        "cilium/state/identities/v1/id/99999999999999999999999",
        "cilium/state/identities/v2/id/256", "cilium/state/identities/v1/value/256"}) {
    EXPECT_FALSE(parse_master_key(key)) << key;
  }
  EXPECT_TRUE(is_label_string("k8s:app=foo;k8s:io.kubernetes.pod.namespace=default;"));
  EXPECT_FALSE(is_label_string(""));
  EXPECT_FALSE(is_label_string("k8s:app=foo"));
}

TEST(KvstoreLayout, ValueKeysSplitAtTheLastSlash) {
  auto key = parse_value_key(
      "cilium/state/identities/v1/value/k8s:app.kubernetes.io/name=web;k8s:a=b;/10.0.0.5");
  ASSERT_TRUE(key);
  EXPECT_EQ(key->labels, "k8s:app.kubernetes.io/name=web;k8s:a=b;");
  EXPECT_EQ(key->node, "10.0.0.5");
  EXPECT_EQ(value_key_prefix("k8s:a=b;"), "cilium/state/identities/v1/value/k8s:a=b;/");
  for (const char* bad :
       {"cilium/state/identities/v1/value/k8s:a=b;", "cilium/state/identities/v1/value//10.0.0.5",
        "cilium/state/identities/v1/value/k8s:a=b;/"}) {
    EXPECT_FALSE(parse_value_key(bad)) << bad;
  }
}

TEST(KvstoreLayout, LockPathsAndNodeKeys) {
  EXPECT_EQ(lock_path("cilium/state/identities/v1/locks/id/256/694d7a1b00000003"),
            "cilium/state/identities/v1/locks/id/256");
  EXPECT_EQ(node_prefix("default"), "cilium/state/nodes/v1/default/");
  EXPECT_EQ(parse_node_key("cilium/state/nodes/v1/default/web-1", "default"), "web-1");
  EXPECT_FALSE(parse_node_key("cilium/state/nodes/v1/default2/web-1", "default"));
  EXPECT_FALSE(parse_node_key("cilium/state/nodes/v1/default/", "default"));
  EXPECT_FALSE(parse_node_key("cilium/state/nodes/v1/default/a/b", "default"));
  EXPECT_FALSE(parse_node_key("cilium/state/nodes/v1/default", "default"));
}

TEST(KvstoreLayout, NodeValuesNeedAName) {
  auto entry = parse_node_value(R"({"Name":"web-1","Cluster":"default","IPAddresses":[]})");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->name, "web-1");
  EXPECT_EQ(entry->cluster, "default");
  EXPECT_TRUE(entry->ips.empty());
  entry =
      parse_node_value(R"({"Name":"web-1","IPAddresses":[{"Type":"InternalIP","IP":"192.168.0.2"},)"
                       R"({"Type":"CiliumInternalIP","IP":"10.200.0.1"},{"Type":"x"},7]})");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->ips, (std::vector<std::string>{"192.168.0.2", "10.200.0.1"}));
  for (const char* bad : {"", "null", "[]", R"({"Cluster":"default"})", R"({"Name":7})", "{"}) {
    EXPECT_FALSE(parse_node_value(bad)) << bad;
  }
}

TEST(InUseReport, RoundTripsAndIsStrict) {
  EXPECT_EQ(in_use_key("default", "web-1"), "cilium-nomad/default/in-use/web-1");
  const std::string json = in_use_report_json("web-1", {256, 300}, WallTime{});
  EXPECT_EQ(json, R"({"at":"1970-01-01T00:00:00.000Z","identities":[256,300],"node":"web-1"})");
  auto report = parse_in_use_report(json);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->identities, (std::vector<std::uint64_t>{256, 300}));
  EXPECT_TRUE(parse_in_use_report(R"({"node":"n","identities":[],"at":"t"})"));
  for (const char* bad :
       {R"({"node":"n","at":"t"})", R"({"node":"n","identities":null,"at":"t"})",
        R"({"identities":[1],"at":"t"})", R"({"node":"n","identities":[1]})",
        R"({"node":"n","identities":[1.5],"at":"t"})", R"({"node":"n","identities":{},"at":"t"})",
        R"({"node":"n","identities":[-3],"at":"t"})"}) {
    EXPECT_FALSE(parse_in_use_report(bad)) << bad;
  }
}

TEST(InUseReport, EndpointIpsAreOptionalForOlderLabelers) {
  EXPECT_FALSE(parse_in_use_report(R"({"node":"n","identities":[],"at":"t"})")->ips);
  const std::string json =
      in_use_report_json("web-1", {256}, std::vector<std::string>{"10.0.0.5", "fd00::5"}, {});
  EXPECT_EQ(json, R"({"at":"1970-01-01T00:00:00.000Z","identities":[256],)"
                  R"("ips":["10.0.0.5","fd00::5"],"node":"web-1"})");
  auto report = parse_in_use_report(json);
  ASSERT_TRUE(report && report->ips);
  EXPECT_EQ(*report->ips, (std::vector<std::string>{"10.0.0.5", "fd00::5"}));
  EXPECT_TRUE(parse_in_use_report(R"({"node":"n","identities":[],"ips":[],"at":"t"})")->ips);
  EXPECT_FALSE(parse_in_use_report(R"({"node":"n","identities":[],"ips":[5],"at":"t"})"));
  EXPECT_FALSE(parse_in_use_report(R"({"node":"n","identities":[],"ips":"x","at":"t"})"));
}

TEST(KvstoreLayout, IpcacheEntriesAsTheAgentWritesThem) {
  EXPECT_EQ(ip_key("10.0.0.5"), "cilium/state/ip/v1/default/10.0.0.5");
  EXPECT_EQ(parse_ip_key("cilium/state/ip/v1/default/fd00::5"), "fd00::5");
  for (const char* bad : {"cilium/state/ip/v1/default/", "cilium/state/ip/v1/default/10.0.0.0/8",
                          "cilium/state/ip/v1/other/10.0.0.5", "cilium/state/ip/v1/default"})
    EXPECT_FALSE(parse_ip_key(bad)) << bad;
  auto entry = parse_ip_value(
      R"({"IP":"10.0.0.5","Mask":null,"HostIP":"192.168.0.2","ID":300,"Key":0,"Metadata":"",)"
      R"("K8sNamespace":"default","K8sPodName":"web","NamedPorts":[{"Name":"http","Port":80,)"
      R"("Protocol":"TCP"}]})");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->ip, "10.0.0.5");
  EXPECT_EQ(entry->host_ip, "192.168.0.2");
  EXPECT_EQ(entry->id, 300U);
  auto old = parse_ip_value(R"({"IP":"10.0.0.5","Mask":null,"HostIP":null,"ID":300})");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->host_ip, "");
  for (const char* bad : {"", "[]", R"({"HostIP":"h","ID":1})", R"({"IP":"a","ID":-1})",
                          R"({"IP":"a","HostIP":5,"ID":1})", R"({"IP":"a"})"})
    EXPECT_FALSE(parse_ip_value(bad)) << bad;
}

}  // namespace
}  // namespace cn::labeler::cluster
