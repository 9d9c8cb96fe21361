// The regexes of L7 rules, compiled as the agent's Go regexp compiles them (RE2 syntax): what Go
// refuses is refused with RE2's reason, what Go takes passes.
#include <gtest/gtest.h>

#include <string>

#include "common/policy/policy_document.h"
#include "common/policy/policy_regex.h"

namespace cn::policy {
namespace {

TEST(GoRegexp, AcceptsWhatGoCompiles) {
  for (const char* ok : {"/api/v1/.*", "GET|POST", "^/users/[0-9]+$", R"(\d+\b(?i)get)", R"(\pL+)",
                         "(?P<id>[a-f0-9]{8})", R"(\Q[literal]\E)", R"(\z)", "[[:alpha:]]+",
                         "(?U)a+", "x{1000}", ""}) {
    EXPECT_EQ(go_regexp_problem(ok), std::nullopt) << ok;
  }
}

TEST(GoRegexp, RefusesWhatGoRefusesWithRe2sReason) {
  struct Case {
    const char* pattern;
    const char* reason;
  };
  for (const Case& c :
       {Case{"/[", "missing ]"}, Case{"(", "missing )"}, Case{"a**", "**"}, Case{"a++", "++"},
        Case{"x{1001}", "{1001}"}, Case{R"(\Z)", R"(\Z)"}, Case{R"(\1)", "invalid escape"},
        Case{"(?=a)", "(?="}, Case{R"(a\C)", R"(\C)"}}) {
    auto why = go_regexp_problem(c.pattern);
    ASSERT_TRUE(why.has_value()) << c.pattern;
    EXPECT_NE(why->find(c.reason), std::string::npos) << c.pattern << ": " << *why;
  }
  // An escaped backslash followed by C is a literal backslash and a C, which Go accepts.
  EXPECT_EQ(go_regexp_problem(R"(a\\C)"), std::nullopt);
}

std::string http_policy(const std::string& member) {
  return R"({"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
    "metadata": {"name": "web"},
    "spec": {"endpointSelector": {}, "ingress": [{"toPorts": [{
      "ports": [{"port": "80", "protocol": "TCP"}],
      "rules": {"http": [{)" +
         member + R"(}]}}]}]}})";
}

TEST(GoRegexp, HttpPathAndMethodAreCheckedHostAndHeadersAreNot) {
  auto path = validate_policy_document(http_policy(R"("path": "/[")"));
  ASSERT_FALSE(path);
  EXPECT_EQ(path.error().message,
            "/spec/ingress/0/toPorts/0/rules/http/0/path: \"/[\" is not a regular expression the "
            "agent compiles (Go regexp, RE2 syntax): missing ]: [");
  auto method = validate_policy_document(http_policy(R"("method": "GET(")"));
  ASSERT_FALSE(method);
  EXPECT_TRUE(method.error().message.starts_with("/spec/ingress/0/toPorts/0/rules/http/0/method: "))
      << method.error().message;
  // http.go's Sanitize compiles neither host nor header values: the agent loads these.
  EXPECT_TRUE(validate_policy_document(http_policy(R"("host": "a[")")));
  EXPECT_TRUE(validate_policy_document(
      http_policy(R"("headers": ["X-A: ["], "headerMatches": [{"name": "x", "value": "["}])")));
  EXPECT_TRUE(validate_policy_document(http_policy(R"("path": "/api/v[12]/.*", "method": "GET")")));
}

}  // namespace
}  // namespace cn::policy
