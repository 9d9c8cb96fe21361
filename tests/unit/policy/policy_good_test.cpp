// Documents that must pass: both kinds, YAML and JSON, netreap's rule array through
// policy_object_from_item, and the examples of Cilium's policy documentation rewritten with our
// labels (tests/data/policies/good/).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/policy/policy_document.h"
#include "tests/support/process.h"

namespace cn::policy {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path data_dir() {
  return std::filesystem::path(testing::source_dir()) / "tests/data/policies";
}

TEST(GoodPolicies, EveryFileInGoodPasses) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(data_dir() / "good")) {
    SCOPED_TRACE(e.path().string());
    auto r = validate_policy_document(read(e.path()));
    EXPECT_TRUE(r) << r.error().message;
    ++files;
  }
  EXPECT_GE(files, 8);
}

// Each bad file names, on its first line, the message prefix it must produce:
// "# expect: <pointer>: <reason part>".
TEST(BadPolicies, EveryFileInBadFailsWithItsStatedReason) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(data_dir() / "bad")) {
    SCOPED_TRACE(e.path().string());
    std::string text = read(e.path());
    auto marker = text.find("expect: ");
    ASSERT_NE(marker, std::string::npos);
    std::string expected = text.substr(marker + 8, text.find('\n', marker) - marker - 8);
    auto r = validate_policy_document(text);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find(expected), std::string::npos)
        << "got: " << r.error().message << "\nwant: " << expected;
    ++files;
  }
  EXPECT_GE(files, 5);
}

TEST(PolicyText, YamlScalarsKeepTheirTypes) {
  const char* base = R"(apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata: {name: x}
spec:
  endpointSelector: {}
  ingress:
  - toPorts:
    - ports:
      - port: PORT
)";
  auto with_port = [&](std::string port) {
    std::string text = base;
    text.replace(text.find("PORT"), 4, port);
    return validate_policy_document(text);
  };
  EXPECT_TRUE(with_port("\"80\""));
  EXPECT_TRUE(with_port("'80'"));
  EXPECT_TRUE(with_port("http"));
  auto unquoted = with_port("80");
  ASSERT_FALSE(unquoted);
  EXPECT_EQ(unquoted.error().message,
            "/spec/ingress/0/toPorts/0/ports/0/port: must be a string, not an integer (quote it)");
  auto octal = with_port("0755");
  ASSERT_FALSE(octal);
  EXPECT_NE(octal.error().message.find("quote it"), std::string::npos);
  auto yes = with_port("on");
  ASSERT_FALSE(yes);
  EXPECT_NE(yes.error().message.find("YAML 1.1"), std::string::npos) << yes.error().message;
  EXPECT_TRUE(with_port("!!str 80"));
}

TEST(PolicyText, RefusesWhatCouldBeReadTwoWays) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"a: &x 1\nb: *x\n", "/a: YAML anchors are not supported"},
      {"a: 1\n---\nb: 2\n", "/: more than one YAML document"},
      {"a: 1\na: 2\n", "/a: duplicate key"},
      {"a: {<<: {b: 1}}\n", "/a: YAML merge keys"},
      {"? [1]\n: x\n", "/: a mapping key must be a scalar"},
      {"a: !!binary aGk=\n", "/a: YAML tag"},
      {"", "/: empty document"},
      {"# nothing\n", "/: empty document"},
      {"a: [1\n", "/: not YAML or JSON: line"},
      {"a: .inf\n", "/a: \".inf\" reads differently"},
      {"a: 99999999999999999999999\n", "/a: number 99999999999999999999999 is out of range"},
      {"a: \"\xff\"\n", "/: not valid UTF-8"},
      {"a: \"\xed\xa0\x80\"\n", "/: not valid UTF-8"},
      {"a: tRUE\n", "/a: \"tRUE\" reads differently"},
      {"a: \"x\x01y\"\n", "/: control character U+0001 at byte 5"},
      {"{\"a\": \"x\x7fy\"}", "/: control character U+007F"},
      {"a: \"\xc2\x80\"\n", "/: control character U+0080"},
      {"a: ![1]\n", "/a: YAML tag ! is not supported"},
      {"a: {on: x}\n", "/a: \"on\" reads differently"},
      {"a: {1.0: x}\n", "/a: the key \"1.0\" is not a string"},
      {"a: {true: x}\n", "/a: the key \"true\" is not a string"},
      {"{\"a\": [1, 1e400]}", "/a/1: number 1e400 is out of range"},
      {"a: [1, 1e400]\n", "/a/1: number 1e400 is out of range"},
      {"[1, 2]", "/: the document must be one object, not an array"},
      {"\"text\"", "/: the document must be one object, not a string"},
  };
  for (const auto& c : cases) {
    auto r = validate_policy_document(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_TRUE(r.error().message.starts_with(c.error)) << c.text << " -> " << r.error().message;
  }
}

TEST(PolicyText, SizeIsCheckedBeforeParsing) {
  std::string text = "a: \"" + std::string(kMaxPolicyBytes, 'x') + "\"\n";
  auto r = validate_policy_document(text);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message.starts_with("/: ")) << r.error().message;
  EXPECT_NE(r.error().message.find("more than the 65536 allowed"), std::string::npos);
}

TEST(PolicyText, DeepNestingIsRefusedNotCrashed) {
  for (std::string open : {"[", "{\"a\":", "a:\n  "}) {
    std::string text;
    for (int i = 0; i < 20000 && text.size() < kMaxPolicyBytes - 8; ++i) text += open;
    auto r = validate_policy_document(text);
    EXPECT_FALSE(r);
  }
  std::string flow(30000, '[');
  EXPECT_FALSE(validate_policy_document(flow));
}

}  // namespace
}  // namespace cn::policy
