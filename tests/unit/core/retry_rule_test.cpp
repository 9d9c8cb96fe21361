// The one table from an error's kind to a retry decision, and the fix it names.
#include <gtest/gtest.h>

#include "common/util/retry_rule.h"

namespace cn {
namespace {

Error of(ErrorKind kind) {
  return Error{kind, "x", 0, 0};
}

TEST(RetryRule, PassingBlipsAreRetriedWithinTheCall) {
  EXPECT_EQ(retry_rule(of(ErrorKind::transport)), RetryRule::now);
  EXPECT_EQ(retry_rule(http_error(429, "slow down")), RetryRule::now);
  for (int s : {500, 502, 503, 504}) EXPECT_EQ(retry_rule(http_error(s, "")), RetryRule::now) << s;
}

TEST(RetryRule, TimeoutsClientErrorsAndBadAnswersWaitForTheItemBackoff) {
  EXPECT_EQ(retry_rule(of(ErrorKind::timeout)), RetryRule::later)
      << "the attempt already used its time";
  EXPECT_EQ(retry_rule(of(ErrorKind::io)), RetryRule::later);
  EXPECT_EQ(retry_rule(of(ErrorKind::bad_answer)), RetryRule::later);
  for (int s : {400, 409, 422}) EXPECT_EQ(retry_rule(http_error(s, "")), RetryRule::later) << s;
}

TEST(RetryRule, WhatAnOperatorMustFixWaitsForTheResyncAndSaysWhat) {
  for (auto e : {of(ErrorKind::tls), http_error(401, ""), http_error(403, "")}) {
    EXPECT_EQ(retry_rule(e), RetryRule::at_resync) << to_string(e.kind);
    EXPECT_FALSE(remedy(e, Peer::nomad).empty());
  }
  for (int status : {401, 403}) {
    const auto fix = remedy(http_error(status, ""), Peer::nomad);
    EXPECT_NE(fix.find("conf-examples/acl-policy.hcl"), std::string_view::npos) << status;
    EXPECT_NE(fix.find("NOMAD_TOKEN"), std::string_view::npos) << status;
  }
  EXPECT_NE(remedy(http_error(403, ""), Peer::cilium).find("--enable-cilium-api-server-access"),
            std::string_view::npos);
  EXPECT_NE(remedy(of(ErrorKind::tls), Peer::nomad).find("NOMAD_CACERT"), std::string_view::npos);
  EXPECT_TRUE(remedy(of(ErrorKind::transport), Peer::nomad).empty());
}

TEST(RetryRule, FinalAnswersAreNeverRetried) {
  EXPECT_EQ(retry_rule(http_error(404, "")), RetryRule::never);
  EXPECT_EQ(retry_rule(http_error(405, "")), RetryRule::never);
  EXPECT_EQ(retry_rule(http_error(501, "")), RetryRule::never);
  EXPECT_EQ(retry_rule(of(ErrorKind::invalid)), RetryRule::never);
  EXPECT_EQ(retry_rule(of(ErrorKind::cancelled)), RetryRule::never);
}

TEST(HttpError, KindFollowsTheStatus) {
  EXPECT_EQ(http_error(404, "").kind, ErrorKind::not_found);
  EXPECT_EQ(http_error(401, "").kind, ErrorKind::permission);
  EXPECT_EQ(http_error(403, "").kind, ErrorKind::permission);
  EXPECT_EQ(http_error(429, "").kind, ErrorKind::rate_limited);
  EXPECT_EQ(http_error(500, "").kind, ErrorKind::http);
  EXPECT_EQ(http_error(500, "").status, 500);
  EXPECT_EQ(fail_errno("x", ETIMEDOUT).error().kind, ErrorKind::timeout);
  EXPECT_EQ(fail_errno("x", ENOSPC).error().kind, ErrorKind::io);
}

}  // namespace
}  // namespace cn
