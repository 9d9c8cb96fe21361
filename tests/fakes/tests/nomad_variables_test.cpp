// Conformance of the fake's Variables API with hashicorp/nomad:
//   command/agent/variable_endpoint.go  (HTTP codes, ?cas parsing, 204 on delete, 404 text)
//   nomad/variables_endpoint.go         (ACL checks, list filtering, blocking indexes)
//   nomad/structs/variables.go          (path regex, reserved "nomad/" tree, 64 KiB, empty)
//   nomad/state/state_store_variables.go (check-and-set semantics, zero-value conflicts)
//   nomad/state/paginator/               ("<namespace>.<path>" tokens)
//   acl/acl.go, acl/policy.go            (capabilities, read implies list, closest glob)
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <future>

#include <gtest/gtest.h>

#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/nomad/spec_json.h"
#include "tests/fakes/nomad/variables.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/child_process.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::json;
using namespace std::chrono_literals;

HttpResponse send(FakeNomad& fake, const std::string& method, const std::string& target,
                  const std::string& body = "", const std::string& token = "") {
  std::vector<std::pair<std::string, std::string>> headers;
  if (!token.empty()) headers.emplace_back("X-Nomad-Token", token);
  return fake.handle(make_request(method, target, headers, body));
}

std::string policy_body(const std::string& text) {
  return json{{"Items", {{"policy", text}}}}.dump();
}

class NomadVariables : public ::testing::Test {
 protected:
  std::future<HttpResponse> async_get(std::string target, std::string token = "") {
    return std::async(std::launch::async,
                      [this, target, token] { return send(fake, "GET", target, "", token); });
  }
  ManualClock clock{wall_at(kRefStart)};
  FakeNomad fake{reference_config(&clock)};
};

TEST_F(NomadVariables, PutAnswersTheVariableWithItemsAndTheWriteIndex) {
  auto r = send(fake, "PUT", "/v1/var/cilium/policies/web", policy_body("{}"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json v = json::parse(r.body);
  EXPECT_EQ(v["Path"], "cilium/policies/web");
  EXPECT_EQ(v["Namespace"], "default");
  EXPECT_EQ(v["Items"]["policy"], "{}");
  EXPECT_EQ(v["CreateIndex"], v["ModifyIndex"]);
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(v["ModifyIndex"].get<std::uint64_t>()));
  // Times are int64 UnixNano like every Nomad time on the wire.
  EXPECT_TRUE(v["CreateTime"].is_number_integer());
  EXPECT_GT(v["CreateTime"].get<std::int64_t>(), 1'000'000'000'000'000'000LL);
  // Keys sorted (go-msgpack); Lock is omitempty and absent.
  std::vector<std::string> keys;
  for (const auto& [k, val] : v.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"CreateIndex", "CreateTime", "Items", "ModifyIndex",
                                            "ModifyTime", "Namespace", "Path"}));
  EXPECT_NE(r.body.find("\"CreateIndex\""), std::string::npos);
  EXPECT_LT(r.body.find("\"CreateIndex\""), r.body.find("\"Path\""));

  // An update keeps CreateIndex/CreateTime and moves ModifyIndex, even for the same items.
  clock.advance(1s);
  auto again = send(fake, "PUT", "/v1/var/cilium/policies/web", policy_body("{}"));
  const json v2 = json::parse(again.body);
  EXPECT_EQ(v2["CreateIndex"], v["CreateIndex"]);
  EXPECT_EQ(v2["CreateTime"], v["CreateTime"]);
  EXPECT_GT(v2["ModifyIndex"].get<std::uint64_t>(), v["ModifyIndex"].get<std::uint64_t>());
  EXPECT_GT(v2["ModifyTime"].get<std::int64_t>(), v["ModifyTime"].get<std::int64_t>());
}

TEST_F(NomadVariables, GetAnswersItemsAndTheVariablesModifyIndexOr404) {
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/web", {{"policy", "a"}}));
  const auto web_index = fake.variable("default", "cilium/policies/web")->modify_index;
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/db", {{"policy", "b"}}));

  auto r = get(fake, "/v1/var/cilium/policies/web");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["Items"]["policy"], "a");
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(web_index)) << "the variable's own index";

  auto missing = get(fake, "/v1/var/cilium/policies/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "variable not found");
  EXPECT_EQ(header(missing, "Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(header(missing, "X-Nomad-Index"), std::to_string(fake.variables_index()));

  // Another namespace is another variable.
  EXPECT_EQ(get(fake, "/v1/var/cilium/policies/web?namespace=prod").status, 404);
  // An escaped slash is the same path (Nomad reads the decoded URL path).
  EXPECT_EQ(get(fake, "/v1/var/cilium%2Fpolicies%2Fweb").status, 200);
  EXPECT_EQ(get(fake, "/v1/var/").status, 400);
}

TEST_F(NomadVariables, ListAnswersMetadataWithoutItemsUnderThePrefix) {
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/web", {{"policy", "a"}}));
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/db", {{"policy", "b"}}));
  ASSERT_TRUE(fake.put_variable("default", "other/thing", {{"k", "v"}}));
  ASSERT_TRUE(fake.put_variable("prod", "cilium/policies/api", {{"policy", "c"}}));

  auto r = get(fake, "/v1/vars?prefix=cilium/policies");
  ASSERT_EQ(r.status, 200);
  const json list = json::parse(r.body);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["Path"], "cilium/policies/db");  // ordered by path
  EXPECT_EQ(list[1]["Path"], "cilium/policies/web");
  for (const auto& m : list) {
    EXPECT_FALSE(m.contains("Items"));
    EXPECT_TRUE(m.contains("ModifyIndex"));
    EXPECT_TRUE(m.contains("CreateTime"));
  }
  // The index is the whole table's: the last write, which was in another namespace.
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(fake.variables_index()));
  EXPECT_EQ(fake.variables_index(), fake.variable("prod", "cilium/policies/api")->modify_index);

  auto all = json::parse(get(fake, "/v1/vars?namespace=*&prefix=cilium").body);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2]["Namespace"], "prod");
  EXPECT_EQ(get(fake, "/v1/vars?prefix=zzz").body, "[]");
  EXPECT_EQ(send(fake, "POST", "/v1/vars").status, 405);
}

TEST_F(NomadVariables, ListPaginatesWithNamespaceDotPathTokens) {
  for (const char* p : {"a/1", "a/2", "a/3", "a/4", "a/5"}) {
    ASSERT_TRUE(fake.put_variable("default", p, {{"k", "v"}}));
  }
  auto page1 = get(fake, "/v1/vars?per_page=2");
  EXPECT_EQ(json::parse(page1.body).size(), 2u);
  EXPECT_EQ(header(page1, "X-Nomad-Nexttoken"), "default.a/3");
  auto page2 = get(fake, "/v1/vars?per_page=2&next_token=default.a/3");
  const json p2 = json::parse(page2.body);
  ASSERT_EQ(p2.size(), 2u);
  EXPECT_EQ(p2[0]["Path"], "a/3");
  auto page3 = get(fake, "/v1/vars?per_page=2&next_token=" + header(page2, "X-Nomad-Nexttoken"));
  EXPECT_EQ(json::parse(page3.body).size(), 1u);
  EXPECT_EQ(header(page3, "X-Nomad-Nexttoken"), "");
  EXPECT_EQ(get(fake, "/v1/vars?per_page=x").status, 400);
}

TEST_F(NomadVariables, ListBlocksOnTheTableIndexAndWakesOnAnyVariableWrite) {
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/web", {{"policy", "a"}}));
  const std::uint64_t start = fake.variables_index();
  auto pending =
      async_get("/v1/vars?prefix=cilium/policies&index=" + std::to_string(start) + "&wait=60s");
  ASSERT_TRUE(fake.wait_for_blocked(1));
  // An alloc write moves the Raft index but not the variables table: still parked.
  JobSpec job;
  job.id = "web";
  ASSERT_TRUE(fake.register_job(job));
  ASSERT_TRUE(fake.wait_for_blocked(1));
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);
  // An unrelated variable (outside the prefix) wakes it: the index is the table's.
  ASSERT_TRUE(fake.put_variable("default", "unrelated", {{"k", "v"}}));
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  auto r = pending.get();
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(fake.variables_index()));
  EXPECT_GT(fake.variables_index(), start);
  EXPECT_EQ(json::parse(r.body).size(), 1u);
}

TEST_F(NomadVariables, GetBlocksOnTheVariableAndAMissingOneAnswers404WhenTheTableMoves) {
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/web", {{"policy", "a"}}));
  const auto idx = fake.variable("default", "cilium/policies/web")->modify_index;
  auto pending = async_get("/v1/var/cilium/policies/web?index=" + std::to_string(idx));
  ASSERT_TRUE(fake.wait_for_blocked(1));
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/other", {{"policy", "b"}}));
  ASSERT_TRUE(fake.wait_for_blocked(1));
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout) << "only its own index counts";
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/web", {{"policy", "c"}}));
  ASSERT_EQ(pending.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(json::parse(pending.get().body)["Items"]["policy"], "c");

  auto gone = async_get(
      "/v1/var/cilium/policies/web?index=" + std::to_string(fake.variables_index()) + "&wait=60s");
  ASSERT_TRUE(fake.wait_for_blocked(1));
  fake.delete_variable("default", "cilium/policies/web");
  ASSERT_EQ(gone.wait_for(5s), std::future_status::ready);
  auto r = gone.get();
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "variable not found");
}

TEST_F(NomadVariables, RaftIndexIsSharedWithAllocationWrites) {
  JobSpec job;
  job.id = "web";
  ASSERT_TRUE(fake.register_job(job));
  const std::uint64_t after_job = fake.current_index();
  auto stored = fake.put_variable("default", "a", {{"k", "v"}});
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->modify_index, after_job + 1);
  PlaceRequest p;
  p.job_id = "web";
  ASSERT_TRUE(fake.place_alloc(p));
  auto again = fake.put_variable("default", "a", {{"k", "w"}});
  EXPECT_GT(again->modify_index, fake.alloc(fake.alloc_ids().front())->modify_index);
}

TEST_F(NomadVariables, CheckAndSetConflictsAnswer409WithTheConflictingVariable) {
  // cas=0: create only if absent.
  auto created = send(fake, "PUT", "/v1/var/x?cas=0", policy_body("1"));
  ASSERT_EQ(created.status, 200);
  const auto idx = json::parse(created.body)["ModifyIndex"].get<std::uint64_t>();
  auto exists = send(fake, "PUT", "/v1/var/x?cas=0", policy_body("2"));
  EXPECT_EQ(exists.status, 409);
  EXPECT_EQ(json::parse(exists.body)["Items"]["policy"], "1");
  EXPECT_EQ(header(exists, "X-Nomad-Index"), std::to_string(idx));

  auto stale = send(fake, "PUT", "/v1/var/x?cas=" + std::to_string(idx - 1), policy_body("2"));
  EXPECT_EQ(stale.status, 409);
  auto fresh = send(fake, "PUT", "/v1/var/x?cas=" + std::to_string(idx), policy_body("2"));
  EXPECT_EQ(fresh.status, 200);

  // A CAS against a value that does not exist conflicts with a zero value: no Items, index 0.
  auto ghost = send(fake, "PUT", "/v1/var/ghost?cas=7", policy_body("1"));
  EXPECT_EQ(ghost.status, 409);
  const json zero = json::parse(ghost.body);
  EXPECT_EQ(zero["Path"], "ghost");
  EXPECT_EQ(zero["ModifyIndex"], 0);
  EXPECT_FALSE(zero.contains("Items"));

  // DELETE with cas.
  const auto cur = fake.variable("default", "x")->modify_index;
  EXPECT_EQ(send(fake, "DELETE", "/v1/var/x?cas=" + std::to_string(cur - 1)).status, 409);
  EXPECT_EQ(send(fake, "DELETE", "/v1/var/x?cas=0").status, 409) << "delete-if-absent, present";
  auto del = send(fake, "DELETE", "/v1/var/x?cas=" + std::to_string(cur));
  EXPECT_EQ(del.status, 204);
  EXPECT_TRUE(del.body.empty());
  EXPECT_EQ(header(del, "X-Nomad-Index"), std::to_string(fake.current_index()));
  EXPECT_EQ(send(fake, "DELETE", "/v1/var/x?cas=0").status, 204) << "absent: nothing to do";
  EXPECT_EQ(send(fake, "DELETE", "/v1/var/x").status, 204) << "a missing variable is no error";

  auto bad = send(fake, "PUT", "/v1/var/x?cas=abc", policy_body("1"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(bad.body.starts_with("can not parse cas")) << bad.body;
}

TEST_F(NomadVariables, WritesAreValidatedLikeNomad) {
  EXPECT_EQ(send(fake, "PUT", "/v1/var/x", R"({"Items":{}})").body,
            "variable missing required Items object");
  EXPECT_EQ(send(fake, "PUT", "/v1/var/x", R"({"Path":"x"})").status, 400);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/x", "not json").status, 400);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/x", R"({"Items":{"a":1}})").status, 400);

  auto bad_path = send(fake, "PUT", "/v1/var/has%20space", policy_body("1"));
  EXPECT_EQ(bad_path.status, 400);
  EXPECT_EQ(bad_path.body, "invalid path \"has space\"");
  EXPECT_EQ(send(fake, "PUT", "/v1/var/" + std::string(129, 'a'), policy_body("1")).status, 400);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/" + std::string(128, 'a'), policy_body("1")).status, 200);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/nomad", policy_body("1")).status, 400);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/nomad/other", policy_body("1")).status, 400);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/nomad/jobs/web", policy_body("1")).status, 200);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/nomad/job-templates/t", policy_body("1")).status, 200);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/nomad/job-templates/t/x", policy_body("1")).status, 400);

  // 64 KiB of key + value lengths, inclusive.
  const std::string key = "policy";
  EXPECT_EQ(
      send(fake, "PUT", "/v1/var/big", policy_body(std::string(65536 - key.size(), 'x'))).status,
      200);
  auto too_big =
      send(fake, "PUT", "/v1/var/big", policy_body(std::string(65536 - key.size() + 1, 'x')));
  EXPECT_EQ(too_big.status, 400);
  EXPECT_EQ(too_big.body, "variables are limited to 64KiB in total size");

  EXPECT_EQ(send(fake, "PUT", "/v1/var/x?namespace=*", policy_body("1")).body,
            "can not target wildcard (\"*\")namespace");
  // The body's Namespace wins over ?namespace=.
  auto ns = send(fake, "PUT", "/v1/var/y?namespace=a",
                 json{{"Namespace", "b"}, {"Items", {{"k", "v"}}}}.dump());
  EXPECT_EQ(json::parse(ns.body)["Namespace"], "b");
  EXPECT_EQ(send(fake, "PATCH", "/v1/var/y").status, 400);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/y?lock-acquire", policy_body("1")).status, 400);
}

TEST(NomadVariableAcl, CapabilitiesFollowNomadsExpansionAndClosestGlob) {
  std::vector<VariablePathRule> rules = {
      {"default", "cilium/policies/*", {"read"}},
      {"default", "cilium/policies/secret", {"deny"}},
      {"default", "cilium/*", {"list"}},
      {"*", "shared/*", {"write", "destroy"}},
  };
  // read brings list.
  EXPECT_TRUE(variable_allowed(rules, "default", "cilium/policies/web", "list"));
  EXPECT_TRUE(variable_allowed(rules, "default", "cilium/policies/web", "read"));
  EXPECT_FALSE(variable_allowed(rules, "default", "cilium/policies/web", "write"));
  // An exact rule beats every glob; deny stands alone.
  EXPECT_FALSE(variable_allowed(rules, "default", "cilium/policies/secret", "list"));
  // The closer glob ("cilium/policies/*") wins over "cilium/*" for paths under it; elsewhere
  // only "cilium/*" matches.
  EXPECT_TRUE(variable_allowed(rules, "default", "cilium/other", "list"));
  EXPECT_FALSE(variable_allowed(rules, "default", "cilium/other", "read"));
  // Namespace globs; '*' also crosses '/'.
  EXPECT_TRUE(variable_allowed(rules, "prod", "shared/a/b", "write"));
  EXPECT_FALSE(variable_allowed(rules, "prod", "cilium/policies/web", "read"));
  EXPECT_TRUE(nomad_glob_match("a*c*e", "abcde"));
  EXPECT_FALSE(nomad_glob_match("a*c*e", "abcdef"));
}

// namespace=* (nomad/variables_endpoint.go listAllVariables in hashicorp/nomad): every
// namespace's variables under the prefix, each with its Namespace, in (namespace, path) order,
// paged with "<namespace>.<path>" tokens; the ones the token may not `list` are dropped silently
// (never a 403 for them); the index is the variables table's, so a write in any namespace wakes a
// blocked list, even one that then answers the same filtered list.
TEST_F(NomadVariables, WildcardListSpansNamespacesPagedAndFilteredByTheToken) {
  fake.set_acl_enabled(true);
  fake.add_token(TokenSpec{"root", true, {}, true, true, {}});
  TokenSpec team;
  team.secret = "team-a";
  team.management = false;
  team.variables = {{"team-a", "cilium/policies/*", {"read"}}};
  fake.add_token(team);
  ASSERT_TRUE(fake.put_variable("team-b", "cilium/policies/web", {{"policy", "b"}}));
  ASSERT_TRUE(fake.put_variable("default", "cilium/policies/ccnp", {{"policy", "o"}}));
  ASSERT_TRUE(fake.put_variable("team-a", "cilium/policies/web", {{"policy", "a"}}));
  ASSERT_TRUE(fake.put_variable("team-a", "other/x", {{"k", "v"}}));
  const std::string list = "/v1/vars?prefix=cilium/policies/&namespace=*";

  auto all = send(fake, "GET", list, "", "root");
  ASSERT_EQ(all.status, 200);
  const json every = json::parse(all.body);
  ASSERT_EQ(every.size(), 3u);
  EXPECT_EQ(every[0]["Namespace"], "default");
  EXPECT_EQ(every[1]["Namespace"], "team-a");
  EXPECT_EQ(every[2]["Namespace"], "team-b");
  EXPECT_EQ(every[2]["Path"], "cilium/policies/web");
  EXPECT_EQ(header(all, "X-Nomad-Index"), std::to_string(fake.variables_index()));

  auto mine = send(fake, "GET", list, "", "team-a");
  ASSERT_EQ(mine.status, 200) << "namespaces the token cannot list are filtered, not refused";
  const json own = json::parse(mine.body);
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own[0]["Namespace"], "team-a");

  auto page1 = send(fake, "GET", list + "&per_page=2", "", "root");
  EXPECT_EQ(json::parse(page1.body).size(), 2u);
  EXPECT_EQ(header(page1, "X-Nomad-Nexttoken"), "team-b.cilium/policies/web");
  auto page2 =
      send(fake, "GET", list + "&per_page=2&next_token=team-b.cilium/policies/web", "", "root");
  const json rest = json::parse(page2.body);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0]["Namespace"], "team-b");
  EXPECT_EQ(header(page2, "X-Nomad-Nexttoken"), "");

  const std::uint64_t start = fake.variables_index();
  auto pending = async_get(list + "&index=" + std::to_string(start) + "&wait=60s", "team-a");
  ASSERT_TRUE(fake.wait_for_blocked(1));
  ASSERT_TRUE(fake.put_variable("team-b", "cilium/policies/db", {{"policy", "b2"}}));
  ASSERT_EQ(pending.wait_for(30s), std::future_status::ready);
  auto woken = pending.get();
  EXPECT_EQ(header(woken, "X-Nomad-Index"), std::to_string(fake.variables_index()));
  EXPECT_GT(fake.variables_index(), start);
  EXPECT_EQ(json::parse(woken.body), own) << "woken by another namespace, same filtered list";
}

class NomadVariablesAcl : public NomadVariables {
 protected:
  NomadVariablesAcl() {
    fake.set_acl_enabled(true);
    fake.add_token(TokenSpec{"root", true, {}, true, true, {}});
    TokenSpec reader;
    reader.secret = "reader";
    reader.management = false;
    reader.variables = {{"default", "cilium/policies/*", {"list", "read"}}};
    fake.add_token(reader);
    TokenSpec lister;
    lister.secret = "lister";
    lister.management = false;
    lister.variables = {{"default", "cilium/policies/*", {"list"}}};
    fake.add_token(lister);
    for (const char* p : {"cilium/policies/web", "cilium/policies/db", "cilium/other"}) {
      EXPECT_TRUE(fake.put_variable("default", p, {{"k", "v"}}));
    }
    EXPECT_TRUE(fake.put_variable("prod", "cilium/policies/api", {{"k", "v"}}));
  }
};

TEST_F(NomadVariablesAcl, AMissingOrUnknownTokenIs403) {
  EXPECT_EQ(send(fake, "GET", "/v1/vars").status, 403);
  EXPECT_EQ(send(fake, "GET", "/v1/vars", "", "bogus").body, "Permission denied");
  EXPECT_EQ(send(fake, "GET", "/v1/var/cilium/policies/web", "", "bogus").status, 403);
}

TEST_F(NomadVariablesAcl, ListIsFilteredToWhatTheTokenMayList) {
  auto r = send(fake, "GET", "/v1/vars?prefix=cilium", "", "lister");
  ASSERT_EQ(r.status, 200);
  const json list = json::parse(r.body);
  ASSERT_EQ(list.size(), 2u) << "cilium/other is dropped silently";
  EXPECT_EQ(list[0]["Path"], "cilium/policies/db");
  // A namespace the token has nothing in: an empty list, not a 403; the index still moves.
  auto prod = send(fake, "GET", "/v1/vars?namespace=prod", "", "lister");
  EXPECT_EQ(prod.status, 200);
  EXPECT_EQ(prod.body, "[]");
  EXPECT_EQ(header(prod, "X-Nomad-Index"), std::to_string(fake.variables_index()));
  auto star = json::parse(send(fake, "GET", "/v1/vars?namespace=*", "", "lister").body);
  EXPECT_EQ(star.size(), 2u);
  EXPECT_EQ(json::parse(send(fake, "GET", "/v1/vars?namespace=*", "", "root").body).size(), 4u);
}

TEST_F(NomadVariablesAcl, ReadNeedsReadAndWritesNeedWriteOrDestroy) {
  EXPECT_EQ(send(fake, "GET", "/v1/var/cilium/policies/web", "", "reader").status, 200);
  auto no_read = send(fake, "GET", "/v1/var/cilium/policies/web", "", "lister");
  EXPECT_EQ(no_read.status, 403);
  EXPECT_EQ(no_read.body, "Permission denied");
  // 403 comes before the lookup: a missing variable outside the rules is 403, not 404.
  EXPECT_EQ(send(fake, "GET", "/v1/var/elsewhere", "", "reader").status, 403);
  EXPECT_EQ(send(fake, "GET", "/v1/var/cilium/policies/none", "", "reader").status, 404);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/cilium/policies/web", policy_body("1"), "reader").status,
            403);
  EXPECT_EQ(send(fake, "DELETE", "/v1/var/cilium/policies/web", "", "reader").status, 403);
  EXPECT_EQ(send(fake, "DELETE", "/v1/var/cilium/policies/web", "", "root").status, 204);
}

TEST_F(NomadVariablesAcl, AConflictHidesItemsFromACallerWhoCannotRead) {
  TokenSpec writer;
  writer.secret = "writer";
  writer.management = false;
  writer.variables = {{"default", "cilium/policies/*", {"write"}}};
  fake.add_token(writer);
  auto r = send(fake, "PUT", "/v1/var/cilium/policies/web?cas=1", policy_body("1"), "writer");
  EXPECT_EQ(r.status, 409);
  const json conflict = json::parse(r.body);
  EXPECT_EQ(conflict["Path"], "cilium/policies/web");
  EXPECT_FALSE(conflict.contains("Items"));
}

TEST_F(NomadVariables, ControlApiScenarioFaultsAndRequestLog) {
  auto put = fake.handle(make_request("POST", "/_fake/variables", {},
                                      R"({"path":"cilium/policies/web","items":{"policy":"x"}})"));
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(json::parse(put.body)["index"], fake.variables_index());
  auto listed = json::parse(fake.handle(make_request("GET", "/_fake/variables")).body);
  EXPECT_EQ(listed["variables"][0]["Items"]["policy"], "x");
  auto del = fake.handle(
      make_request("DELETE", "/_fake/variables", {}, R"({"path":"cilium/policies/web"})"));
  EXPECT_EQ(del.status, 200);
  EXPECT_FALSE(fake.variable("default", "cilium/policies/web"));

  auto scenario = json::parse(R"({
    "acl_enabled": true,
    "tokens": [{"secret": "r", "variables": [
      {"namespace": "default", "path": "cilium/policies/*", "capabilities": ["read"]}]}],
    "variables": [{"path": "cilium/policies/a", "items": {"policy": "p"}}]})");
  ASSERT_TRUE(fake.load_scenario(scenario));
  EXPECT_EQ(send(fake, "GET", "/v1/var/cilium/policies/a", "", "r").status, 200);
  EXPECT_EQ(send(fake, "PUT", "/v1/var/cilium/policies/a", policy_body("1"), "r").status, 403)
      << "a variables token is not a management token";

  // The usual faults apply to the variables endpoints by path prefix.
  fake.fail_next(1, 500, "/v1/var");
  EXPECT_EQ(send(fake, "GET", "/v1/vars", "", "r").status, 500);
  EXPECT_EQ(send(fake, "GET", "/v1/vars", "", "r").status, 200);
  EXPECT_EQ(fake.request_count("variables"), 2);
  EXPECT_EQ(fake.request_count("variable"), 2);
}

// The fake-nomad binary: --acl-variables-token builds a token from SECRET=NS:PATH:CAPS rules.
TEST(NomadVariablesExecutable, VariablesTokenFlag) {
  const char* bin_dir = std::getenv("CN_BIN_DIR");
  if (!bin_dir) GTEST_SKIP() << "CN_BIN_DIR not set (run through ctest)";
  const std::string bin = std::string(bin_dir) + "/fake-nomad";
  ASSERT_EQ(access(bin.c_str(), X_OK), 0) << bin;
  testing::TempDir dir;
  const std::string scenario = dir.file("scenario.json");
  std::ofstream(scenario) << json{{"variables",
                                   {{{"path", "cilium/policies/web"}, {"items", {{"p", "1"}}}},
                                    {{"path", "other/x"}, {"items", {{"p", "2"}}}}}}}
                                 .dump();
  const std::string port_file = dir.file("port");
  cn::testing::ChildProcess nomad(
      {bin, "--port-file", port_file, "--scenario", scenario, "--acl-token", "root",
       "--acl-variables-token", "policy-reader=default:cilium/policies/*:list,read"},
      cn::testing::current_environment(),
      {dir.file("fake-nomad.log"), cn::testing::ChildProcess::LogMode::kTruncate, {}});
  ASSERT_TRUE(nomad.started()) << nomad.start_error();
  int port = 0;
  ASSERT_TRUE(testing::eventually(
      [&] {
        std::ifstream in(port_file);
        return static_cast<bool>(in >> port) && port > 0;
      },
      10s));
  const auto target = HttpTarget::tcp("127.0.0.1", port);
  auto list = http_request(target, "GET", "/v1/vars", {}, {{"X-Nomad-Token", "policy-reader"}});
  ASSERT_TRUE(list);
  EXPECT_EQ(json::parse(list->body).size(), 1u);
  EXPECT_EQ(http_request(target, "GET", "/v1/var/other/x", {}, {{"X-Nomad-Token", "policy-reader"}})
                ->status,
            403);
  EXPECT_EQ(
      http_request(target, "GET", "/v1/var/cilium/policies/web", {}, {{"X-Nomad-Token", "root"}})
          ->status,
      200);
  auto status = nomad.stop(SIGTERM, 10s);
  ASSERT_TRUE(status) << nomad.log();
  EXPECT_EQ(status->exit_code, 0) << nomad.log();
}

}  // namespace
}  // namespace cn::fakes
