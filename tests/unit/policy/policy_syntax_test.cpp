// The small grammars under the validator, each against the upstream rule it follows.
#include <gtest/gtest.h>

#include "common/policy/policy_syntax.h"

namespace cn::policy {
namespace {

TEST(PolicySyntax, Dns1123Subdomain) {
  for (const char* ok : {"a", "web", "team.web", "a-1.b2", "0", "nomad-x.y.yaml"}) {
    EXPECT_TRUE(is_dns1123_subdomain(ok)) << ok;
  }
  for (const char* bad : {"", "Web", "a_b", "-a", "a-", "a..b", ".a", "a.", "a/b", "a b"}) {
    EXPECT_FALSE(is_dns1123_subdomain(bad)) << bad;
  }
  EXPECT_TRUE(is_dns1123_subdomain(std::string(253, 'a')));
  EXPECT_FALSE(is_dns1123_subdomain(std::string(254, 'a')));
}

TEST(PolicySyntax, NomadNamespace) {
  EXPECT_TRUE(is_nomad_namespace("default"));
  EXPECT_TRUE(is_nomad_namespace("Team-A"));
  EXPECT_FALSE(is_nomad_namespace(""));
  EXPECT_FALSE(is_nomad_namespace("a_b"));
  EXPECT_FALSE(is_nomad_namespace("a.b"));
  EXPECT_TRUE(is_nomad_namespace(std::string(128, 'a')));
  EXPECT_FALSE(is_nomad_namespace(std::string(129, 'a')));
}

TEST(PolicySyntax, SelectorKeysFollowTheAgentsExtension) {
  for (const char* ok :
       {"nomad:nomad.job", "k8s:io.kubernetes.pod.namespace", "k8s:app.kubernetes.io/name", "app",
        "$host", "reserved.host", ":x", "any:app"}) {
    EXPECT_FALSE(selector_key_problem(ok)) << ok << ": " << selector_key_problem(ok).value_or("");
  }
  for (const char* bad :
       {"", "nomad:", "nomad:job name", "a:b:c", "k8s:Bad_Prefix/name", "k8s:a/", "nomad:x-"}) {
    EXPECT_TRUE(selector_key_problem(bad)) << bad;
  }
  // What is checked is the extended key: "nomad.-x" starts with a letter, so "nomad:-x" passes.
  EXPECT_FALSE(selector_key_problem("nomad:-x"));
  // The 63-character limit counts the "<source>." the agent puts in front.
  EXPECT_FALSE(selector_key_problem("nomad:" + std::string(57, 'a')));  // "nomad." + 57 = 63
  EXPECT_TRUE(selector_key_problem("nomad:" + std::string(58, 'a')));
}

TEST(PolicySyntax, LabelValues) {
  EXPECT_FALSE(label_value_problem(""));
  EXPECT_FALSE(label_value_problem("web-1.x_y"));
  EXPECT_TRUE(label_value_problem("-web"));
  EXPECT_TRUE(label_value_problem("a b"));
  EXPECT_TRUE(label_value_problem(std::string(64, 'a')));
}

TEST(PolicySyntax, Ports) {
  EXPECT_EQ(parse_port_number("0"), 0u);
  EXPECT_EQ(parse_port_number("65535"), 65535u);
  EXPECT_FALSE(parse_port_number("65536"));
  EXPECT_FALSE(parse_port_number("080"));
  EXPECT_FALSE(parse_port_number("0x50"));
  EXPECT_FALSE(parse_port_number(""));
  EXPECT_FALSE(parse_port_number("-1"));
  for (const char* ok : {"http", "dns-tcp", "h2c", "a1", "0x50", "abcdefghijklmno"}) {
    EXPECT_TRUE(is_port_name(ok)) << ok;
  }
  for (const char* bad : {"", "80", "-http", "http-", "dns--tcp", "abcdefghijklmnop", "a_b"}) {
    EXPECT_FALSE(is_port_name(bad)) << bad;
  }
}

}  // namespace
}  // namespace cn::policy
