// Hostile answers from the Cilium agent's socket, through the real curl client and the daemon:
// bodies that are not JSON, JSON of the wrong shape, statuses the API never documents, dropped
// connections and a socket that accepts a request and then never answers.
//
// Expected for each: no crash, a log line naming the problem, and the endpoint labeled in the
// end with at most one extra write. Transient trouble (bad body, 5xx, drop, stall) is retried
// by the worker; a 4xx the agent would not change by itself is given up on and left to the
// next resync, which labels it. A stalled socket costs at most the call's deadline (a GET: one
// call's timeout; a PATCH: the item's budget, as a write may wait out the agent's limiter).
#include <gtest/gtest.h>

#include "tests/reliability/support/in_process_labeler.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;
using fakes::FaultRule;

enum class HealedBy { kRetry, kResync };

struct HostileAnswer {
  std::string name;
  FaultRule fault;
  std::string logged;  // what the labeler's log must say about it
  HealedBy healed_by;
};

FaultRule with_type(FaultRule rule, std::string content_type) {
  rule.content_type = std::move(content_type);
  return rule;
}

std::ostream& operator<<(std::ostream& os, const HostileAnswer& a) {
  return os << a.name;
}

constexpr auto kCallTimeout = 400ms;
constexpr auto kItemBudget = 2s;
// A label write may wait out the agent's PATCH rate limiter, so it has its own budget above
// one call's: short here, to keep a stalled PATCH cheap.
constexpr auto kWriteBudget = 3s;

class CiliumHostileAnswers : public ::testing::TestWithParam<HostileAnswer> {};

TEST_P(CiliumHostileAnswers, NoCrashClearLogLineAndTheEndpointEndsLabeled) {
  const HostileAnswer& hostile = GetParam();
  FakeNode node;
  auto config = InProcessLabeler::config_for(node);
  config.call_timeout = kCallTimeout;
  config.item_budget = kItemBudget;
  config.write_budget = kWriteBudget;
  // Only the path under test may heal the endpoint: retries never wait for a resync.
  config.resync_interval = hostile.healed_by == HealedBy::kResync ? 1s : 0s;
  InProcessLabeler labeler(node, config);
  ASSERT_TRUE(labeler.start());

  const std::string ip = "10.200.30.1";
  std::string alloc = node.running_alloc(ip);
  node.agent().inject_fault(hostile.fault);
  auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(labeler.notify_add(alloc, ip, 0));

  ASSERT_TRUE(node.wait_labeled(alloc, kWebLabels, 20s)) << labeler.logs();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  sent);
  EXPECT_TRUE(
      eventually([&] { return labeler.logs().find(hostile.logged) != std::string::npos; }, 5s))
      << labeler.logs();
  EXPECT_LE(node.label_writes(alloc), 2);
  if (hostile.fault.action == FaultRule::Action::stall) {
    const auto bound =
        hostile.fault.method == "PATCH" ? std::chrono::milliseconds{kWriteBudget} : kCallTimeout;
    EXPECT_GE(ms, kCallTimeout) << "the stalled call waited out its deadline";
    EXPECT_LT(ms, bound + 3s) << "and no longer\n" << labeler.logs();
  }
  if (hostile.healed_by == HealedBy::kResync) {
    EXPECT_NE(labeler.logs().find("retry=resync"), std::string::npos)
        << "given up until the resync";
  }
  std::printf("%s: labeled after %lld ms\n", hostile.name.c_str(),
              static_cast<long long>(ms.count()));
}

INSTANTIATE_TEST_SUITE_P(
    Faults, CiliumHostileAnswers,
    ::testing::Values(
        HostileAnswer{"NonJsonBodyWithStatus200",
                      with_type(FaultRule::fail("GET", "/endpoint/{id}", 200, 1,
                                                "<html>agent says hi</html>"),
                                "text/html"),
                      "invalid JSON", HealedBy::kRetry},
        HostileAnswer{
            "WrongShapeJson",
            FaultRule::fail("GET", "/endpoint/{id}", 200, 1, R"({"id":"seven","status":[1,2]})"),
            "Endpoint", HealedBy::kRetry},
        HostileAnswer{"NullBody", FaultRule::fail("GET", "/endpoint/{id}", 200, 1, "null"),
                      "Endpoint", HealedBy::kRetry},
        HostileAnswer{
            "HtmlBadGatewayEveryClientRetry",
            with_type(FaultRule::fail("GET", "/endpoint/{id}", 502, 4, "<html>Bad Gateway</html>"),
                      "text/html"),
            "Bad Gateway", HealedBy::kRetry},
        HostileAnswer{"UndocumentedStatus418",
                      with_type(FaultRule::fail("GET", "/endpoint/{id}", 418, 1, "I'm a teapot"),
                                "text/plain"),
                      "I'm a teapot", HealedBy::kRetry},
        HostileAnswer{"RedirectWithEmptyBody", FaultRule::fail("GET", "/endpoint/{id}", 302, 1, ""),
                      "HTTP 302", HealedBy::kRetry},
        HostileAnswer{"PatchAnsweredWithServerErrors",
                      FaultRule::fail("PATCH", "/endpoint/{id}", 500, 4, "\"kvstore unreachable\""),
                      "kvstore unreachable", HealedBy::kRetry},
        HostileAnswer{"PatchConnectionDropped", FaultRule::drop("PATCH", "/endpoint/{id}", 2),
                      "Empty reply from server", HealedBy::kRetry},
        HostileAnswer{"GetAcceptedThenStalled", FaultRule::stall("GET", "/endpoint/{id}", 1),
                      "not labeled", HealedBy::kRetry},
        HostileAnswer{"PatchAcceptedThenStalled", FaultRule::stall("PATCH", "/endpoint/{id}", 1),
                      "not labeled", HealedBy::kRetry}),
    [](const auto& param_info) { return param_info.param.name; });

// Expected: a hostile endpoint list at startup fails the first reconcile with a clear log line;
// the daemon retries it and becomes ready, and the endpoint that existed before is labeled.
TEST(CiliumHostileStartup, NonJsonEndpointListAtStartupIsRetriedUntilTheFirstReconcileSucceeds) {
  FakeNode node;
  std::string alloc = node.running_alloc("10.200.31.1");
  node.agent().inject_fault(
      with_type(FaultRule::fail("GET", "/endpoint", 200, 2, "}{ not json"), "text/plain"));
  InProcessLabeler labeler(node, InProcessLabeler::config_for(node));
  ASSERT_TRUE(labeler.start());
  EXPECT_TRUE(labeler.daemon().ready());
  EXPECT_NE(labeler.logs().find("startup reconcile failed, retrying"), std::string::npos)
      << labeler.logs();
  EXPECT_NE(labeler.logs().find("endpoint list: invalid JSON"), std::string::npos)
      << labeler.logs();
  ASSERT_TRUE(node.wait_labeled(alloc, kWebLabels)) << labeler.logs();
}

}  // namespace
}  // namespace cn::reliability
