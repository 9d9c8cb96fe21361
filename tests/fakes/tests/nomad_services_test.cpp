// Native service registrations in the fake Nomad: the object, its ID and address, the table
// index, the /v1/service(s) routes with their errors, blocking and ACL
// (/work/shared/reference/nomad-services.md sections 1-4 and 8).
#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <future>

#include <gtest/gtest.h>

#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/tests/nomad_services_util.h"
#include "tests/fakes/tests/nomad_test_util.h"
#include "tests/support/eventually.h"

namespace cn::fakes {
namespace {

using namespace nomad_testing;
using nlohmann::json;
using namespace std::chrono_literals;

class NomadServices : public ServicesFixture {};

class NomadServices205 : public ServicesFixture {
 protected:
  NomadServices205() : ServicesFixture("2.0.5") {}
};

// The rendezvous hash as the fact sheet spells it, computed here independently of the fake.
std::string rendezvous_hash(const json& reg, const std::string& key, const EVP_MD* md) {
  std::string data;
  const auto port = reg["Port"].get<std::uint64_t>();
  for (int shift = 56; shift >= 0; shift -= 8) data += static_cast<char>((port >> shift) & 0xff);
  for (const char* field : {"AllocID", "ID", "Namespace", "Address", "ServiceName"}) {
    data += reg[field].get<std::string>();
  }
  for (const auto& tag : reg["Tags"]) data += tag.get<std::string>();
  data += key;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, md, nullptr);
  std::string out;
  char hex[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    out += hex;
  }
  return out;
}

// The first four IDs by hash, in hash order, as ?choose=4|<key> must answer them.
void expect_choose(FakeNomad& fake, const EVP_MD* md) {
  auto all = json::parse(get(fake, "/v1/service/api").body);
  ASSERT_EQ(all.size(), 5u);
  std::vector<std::pair<std::string, std::string>> ranked;
  for (const auto& r : all) {
    ranked.emplace_back(rendezvous_hash(r, "client-a", md), r["ID"].get<std::string>());
  }
  std::sort(ranked.begin(), ranked.end());
  auto chosen = json::parse(get(fake, "/v1/service/api?choose=4%7Cclient-a").body);
  ASSERT_EQ(chosen.size(), 4u);
  for (std::size_t i = 0; i < chosen.size(); ++i) EXPECT_EQ(chosen[i]["ID"], ranked[i].second);
  EXPECT_EQ(json::parse(get(fake, "/v1/service/api?choose=9%7Cclient-a").body).size(), 5u);
}

// nomad/structs/service_registration.go: no omitempty, 12 keys in go-msgpack's sorted order.
TEST_F(NomadServices, RegistrationHasTwelveSortedKeys) {
  play_reference(fake, clock);
  ASSERT_TRUE(fake.register_services(kRefAlloc));
  auto r = get(fake, "/v1/service/web");
  ASSERT_EQ(r.status, 200);
  auto list = nlohmann::ordered_json::parse(r.body);
  ASSERT_EQ(list.size(), 1u);
  std::vector<std::string> keys;
  for (const auto& [k, v] : list[0].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"Address", "AllocID", "CreateIndex", "Datacenter", "ID",
                                            "JobID", "ModifyIndex", "Namespace", "NodeID", "Port",
                                            "ServiceName", "Tags"}));
  EXPECT_EQ(list[0]["ID"], std::string("_nomad-task-") + kRefAlloc + "-group-app-web-http");
  EXPECT_EQ(list[0]["Address"], "10.200.3.17");
  EXPECT_EQ(list[0]["Port"], 8080);
  EXPECT_EQ(list[0]["Tags"], json::array({"http"}));
  EXPECT_EQ(list[0]["NodeID"], kRefNode);
  EXPECT_EQ(list[0]["Datacenter"], "dc1");
  EXPECT_EQ(list[0]["CreateIndex"], list[0]["ModifyIndex"]);
}

// nsd.go generateNomadServiceRegistration writes Tags as [] and never null.
TEST_F(NomadServices, EmptyTagsAreAnEmptyArray) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  auto r = get(fake, "/v1/service/api-bare");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("\"Tags\":[]"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"Port\":0"), std::string::npos) << r.body;
}

// client/serviceregistration/id.go: the workload is the task name or group-<group>.
TEST_F(NomadServices, IdsNameTheTaskOrTheGroup) {
  std::string alloc = place_api();
  auto group = fake.register_services(alloc);
  ASSERT_TRUE(group);
  auto task = fake.register_services(alloc, RegisterServicesOptions{"server", false, ""});
  ASSERT_TRUE(task);
  EXPECT_EQ(group->front(), "_nomad-task-" + alloc + "-group-app-api-http");
  ASSERT_EQ(task->size(), 1u);
  EXPECT_EQ(task->front(), "_nomad-task-" + alloc + "-server-api-task-http");
  EXPECT_NE(
      std::find(group->begin(), group->end(), "_nomad-task-" + alloc + "-group-app-api-bare-"),
      group->end());
}

// client/serviceregistration/address.go GetAddress for a cni/* alloc: auto is the host IP and
// host port; alloc is NetworkStatus.Address and To, or the host port when To is 0.
TEST_F(NomadServices, AddressModesOnACniAlloc) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  std::map<std::string, std::pair<std::string, int>> got;
  for (const auto& r : fake.service_registrations()) got[r.service_name] = {r.address, r.port};
  EXPECT_EQ(got["api"], std::make_pair(std::string("10.0.1.15"), 25431));
  EXPECT_EQ(got["api-alloc"], std::make_pair(std::string("10.200.3.17"), 8080));
  EXPECT_EQ(got["api-alloc-noto"], std::make_pair(std::string("10.200.3.17"), 25432));
}

// nomad/structs/services.go: address_mode alloc needs the alloc's network status.
TEST_F(NomadServices, AllocModeWithoutNetworkStatusFails) {
  PlaceRequest p;
  p.job_id = "api";
  p.port_values = {{"http", 25431}, {"admin", 25432}};
  auto alloc = fake.place_alloc(p);
  ASSERT_TRUE(alloc);
  auto ids = fake.register_services(*alloc);
  ASSERT_FALSE(ids);
  EXPECT_NE(ids.error().message.find("no allocation network status reported"), std::string::npos);
  EXPECT_TRUE(fake.service_registrations().empty());
}

// nomad/structs/service_registration.go Validate: an unspecified address fails the Upsert.
TEST_F(NomadServices, UnspecifiedAddressIsRefused) {
  NodeRecord any;
  any.id = "0a0a0a0a-0000-4000-8000-0000000000aa";
  any.name = "worker-any";
  any.ip = "0.0.0.0";
  fake.add_node(any);
  PlaceRequest p;
  p.job_id = "api";
  p.node_id = any.id;
  p.port_values = {{"http", 25431}, {"admin", 25432}};
  auto alloc = fake.place_alloc(p);
  ASSERT_TRUE(alloc);
  ASSERT_TRUE(fake.set_network_status(*alloc, NetworkStatusSpec{"10.200.3.18", "", "eth0"}));
  const std::uint64_t before = fake.current_index();
  auto ids = fake.register_services(*alloc);
  ASSERT_FALSE(ids);
  EXPECT_EQ(ids.error().message, "invalid service registration address");
  EXPECT_TRUE(fake.service_registrations().empty());
  EXPECT_EQ(fake.current_index(), before);
}

// nomad/state/state_store_service_registration.go: an equal upsert leaves the table and its
// index alone (nomad/service_registration_endpoint.go still applies it through Raft, so the
// Raft index moves); a changed row keeps CreateIndex and moves ModifyIndex and the table index.
TEST_F(NomadServices, IdenticalUpsertIsANoOpAndChangesKeepCreateIndex) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  const std::uint64_t first = fake.service_registrations_index();
  const std::uint64_t raft = fake.current_index();
  ASSERT_TRUE(fake.register_services(alloc));
  EXPECT_EQ(fake.service_registrations_index(), first);
  EXPECT_EQ(fake.current_index(), raft + 1);

  ASSERT_TRUE(fake.register_services(alloc, RegisterServicesOptions{"", true, ""}));  // canary
  EXPECT_GT(fake.service_registrations_index(), first);
  auto rows = fake.service_registrations();
  auto api =
      std::find_if(rows.begin(), rows.end(), [](auto& r) { return r.service_name == "api"; });
  ASSERT_NE(api, rows.end());
  EXPECT_EQ(api->tags, (std::vector<std::string>{"canary"}));
  EXPECT_EQ(api->create_index, first);
  EXPECT_EQ(api->modify_index, fake.service_registrations_index());
}

// nomad/server.go setReplyQueryMeta: the service_registrations table index, floored to 1, on
// every endpoint; deletes move it too.
TEST_F(NomadServices, EveryReadAnswersTheTableIndex) {
  auto empty = get(fake, "/v1/services");
  EXPECT_EQ(empty.status, 200);
  EXPECT_EQ(empty.body, "[]");
  EXPECT_EQ(header(empty, "X-Nomad-Index"), "1");
  EXPECT_EQ(get(fake, "/v1/service/nothing").body, "[]");

  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  const std::string idx = std::to_string(fake.service_registrations_index());
  const std::vector<std::string> targets = {
      "/v1/services", "/v1/service/api", "/v1/service/nothing",
      "/v1/allocation/" + alloc + "/services", "/v1/job/api/services"};
  for (const auto& target : targets) {
    EXPECT_EQ(header(get(fake, target), "X-Nomad-Index"), idx) << target;
  }
  ASSERT_TRUE(fake.deregister_services(alloc));
  EXPECT_EQ(header(get(fake, "/v1/service/nothing"), "X-Nomad-Index"),
            std::to_string(fake.current_index()));
}

// nomad/service_registration_endpoint.go List: one stub per namespace, the union of the tags of
// all instances of a name; namespace=* lists every namespace that has registrations.
TEST_F(NomadServices, ListUnitesTagsPerNamespace) {
  std::string a = place_api();
  std::string b = place_api();
  ASSERT_TRUE(fake.register_services(a));
  ASSERT_TRUE(fake.register_services(b, RegisterServicesOptions{"", true, ""}));
  std::string c = place_api("prod");
  ASSERT_TRUE(fake.register_services(c));

  auto list = json::parse(get(fake, "/v1/services").body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["Namespace"], "default");
  std::set<std::string> tags;
  for (const auto& s : list[0]["Services"]) {
    if (s["ServiceName"] == "api") tags = s["Tags"].get<std::set<std::string>>();
  }
  EXPECT_EQ(tags, (std::set<std::string>{"v1", "http", "canary"}));

  auto all = json::parse(get(fake, "/v1/services?namespace=*").body);
  std::set<std::string> spaces;
  for (const auto& e : all) spaces.insert(e["Namespace"].get<std::string>());
  EXPECT_EQ(spaces, (std::set<std::string>{"default", "prod"}));
  EXPECT_EQ(get(fake, "/v1/services?namespace=nowhere").body, "[]");
}

// Go map iteration: the list's order is random; the fake shuffles so clients cannot rely on it.
TEST_F(NomadServices, ListOrderIsShuffled) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  ASSERT_TRUE(fake.register_services(alloc, RegisterServicesOptions{"server", false, ""}));
  std::set<std::string> orders;
  for (int i = 0; i < 20; ++i) {
    std::string order;
    const json list = json::parse(get(fake, "/v1/services").body);
    for (const auto& s : list[0]["Services"]) {
      order += s["ServiceName"].get<std::string>() + ",";
    }
    orders.insert(order);
  }
  EXPECT_GT(orders.size(), 1u);
}

// GetServiceByName is a literal (namespace, name) lookup: "*" is a namespace nobody has.
TEST_F(NomadServices, OneNameIsAnExactNamespaceLookup) {
  std::string alloc = place_api("prod");
  ASSERT_TRUE(fake.register_services(alloc));
  EXPECT_EQ(get(fake, "/v1/service/api").body, "[]");
  EXPECT_EQ(get(fake, "/v1/service/api?namespace=*").body, "[]");
  EXPECT_EQ(json::parse(get(fake, "/v1/service/api?namespace=prod").body).size(), 1u);
}

// The memdb index iterates by primary key (Namespace, ID); go-bexpr filters and the
// paginator's "<namespace>.<ID>" tokens apply to that order (nomad/state/paginator/).
TEST_F(NomadServices, OneNameIsOrderedByIdWithFilterAndPages) {
  std::vector<std::string> allocs = {place_api(), place_api(), place_api()};
  for (const auto& a : allocs) ASSERT_TRUE(fake.register_services(a));
  auto list = json::parse(get(fake, "/v1/service/api").body);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_LT(list[0]["ID"].get<std::string>(), list[1]["ID"].get<std::string>());
  EXPECT_LT(list[1]["ID"].get<std::string>(), list[2]["ID"].get<std::string>());

  EXPECT_EQ(json::parse(get(fake, "/v1/service/api?filter=Tags%20contains%20%22v1%22").body).size(),
            3u);
  EXPECT_EQ(json::parse(get(fake, "/v1/service/api?filter=Tags%20contains%20%22x%22").body).size(),
            0u);
  EXPECT_EQ(json::parse(get(fake, std::string("/v1/service/api?filter=NodeID%20%3D%3D%20%22") +
                                      kRefNode + "%22%20and%20Datacenter%20%3D%3D%20%22dc1%22")
                            .body)
                .size(),
            3u);
  auto bad = get(fake, "/v1/service/api?filter=Tags%20%3D%3D");
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(
      bad.body.starts_with("failed to create result paginator: failed to read filter "
                           "expression: "))
      << bad.body;

  auto page = get(fake, "/v1/service/api?per_page=2");
  EXPECT_EQ(json::parse(page.body).size(), 2u);
  std::string token = header(page, "X-Nomad-Nexttoken");
  EXPECT_EQ(token, "default." + list[2]["ID"].get<std::string>());
  auto rest = get(fake, "/v1/service/api?per_page=2&next_token=" + token);
  ASSERT_EQ(json::parse(rest.body).size(), 1u);
  EXPECT_EQ(json::parse(rest.body)[0]["ID"], list[2]["ID"]);
  EXPECT_EQ(header(rest, "X-Nomad-Nexttoken"), "");
}

// nomad/service_registration_endpoint.go choose, nomad/structs/service_registration.go
// HashWith: MD5 up to 2.0.4; the parameter must be "<number>|<key>".
TEST_F(NomadServices, ChooseRanksByMd5) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(fake.register_services(place_api()));
  expect_choose(fake, EVP_md5());
  for (const std::string bad : {"2", "x%7Ck", "2%7C"}) {
    auto r = get(fake, "/v1/service/api?choose=" + bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(r.body,
              "failed to choose services: Parameter for choose must be in form '<number>|<key>'");
  }
}

// GH-28363 (2.0.5): SHA-256, so one key picks other instances after the upgrade.
TEST_F(NomadServices205, ChooseRanksBySha256) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(fake.register_services(place_api()));
  expect_choose(fake, EVP_sha256());
}

// command/agent/service_registration_endpoint.go: methods, empty segments and the 500 of a
// missing registration (state store error without a code).
TEST_F(NomadServices, RouteErrors) {
  auto req = [&](const std::string& m, const std::string& t) {
    return fake.handle(make_request(m, t));
  };
  EXPECT_EQ(req("POST", "/v1/services").status, 405);
  EXPECT_EQ(req("PUT", "/v1/service/api").status, 405);
  EXPECT_EQ(req("PUT", "/v1/service/api").body, "Invalid method");
  EXPECT_EQ(req("GET", "/v1/service/api/x").status, 405);
  EXPECT_EQ(req("GET", "/v1/service/").body, "missing service name");
  EXPECT_EQ(req("DELETE", "/v1/service/api/").body, "missing service id");
  EXPECT_EQ(req("DELETE", "/v1/service/api/x/y").body, "invalid URI");
  auto missing = req("DELETE", "/v1/service/api/nope");
  EXPECT_EQ(missing.status, 500);
  EXPECT_EQ(missing.body, "service registration not found");
  EXPECT_EQ(header(missing, "Content-Type"), "text/plain; charset=utf-8");
}

// DeleteByID ignores the name in the path and answers 200, no body, the delete's index.
TEST_F(NomadServices, DeleteByIdIgnoresTheName) {
  std::string alloc = place_api();
  auto ids = fake.register_services(alloc);
  ASSERT_TRUE(ids);
  auto r = fake.handle(make_request("DELETE", "/v1/service/whatever/" + ids->front()));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(fake.current_index()));
  EXPECT_EQ(fake.service_registrations().size(), ids->size() - 1);
  const std::uint64_t before = fake.current_index();
  EXPECT_EQ(fake.handle(make_request("DELETE", "/v1/service/whatever/" + ids->front())).status,
            500);
  EXPECT_EQ(fake.current_index(), before + 1);  // applied through Raft, then refused
}

// nomad/alloc_endpoint.go and nomad/job_endpoint.go GetServiceRegistrations.
TEST_F(NomadServices, AllocAndJobServices) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  auto by_alloc = get(fake, "/v1/allocation/" + alloc + "/services");
  EXPECT_EQ(json::parse(by_alloc.body).size(), 4u);
  auto wrong_ns = get(fake, "/v1/allocation/" + alloc + "/services?namespace=prod");
  EXPECT_EQ(wrong_ns.status, 404);
  EXPECT_EQ(wrong_ns.body, "alloc not found");
  EXPECT_EQ(json::parse(get(fake, "/v1/job/api/services").body).size(), 4u);
  auto no_job = get(fake, "/v1/job/nope/services");
  EXPECT_EQ(no_job.status, 404);
  EXPECT_EQ(no_job.body, "job not found");
  EXPECT_EQ(get(fake, "/v1/job/web/services").body, "[]");
}

// nomad/rpc.go blockingRPC: the answer is the table index, so a query whose ?index another
// service's change has passed returns at once, with its own content unchanged.
TEST_F(NomadServices, BlockingReturnsAtOnceWhenOtherServicesMovedTheIndex) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  auto before = get(fake, "/v1/service/api");
  const std::string asked = header(before, "X-Nomad-Index");
  std::string other = place_api("prod");
  ASSERT_TRUE(fake.register_services(other));
  auto again = get(fake, "/v1/service/api?index=" + asked + "&wait=5m");
  EXPECT_EQ(again.body, before.body);
  EXPECT_GT(std::stoull(header(again, "X-Nomad-Index")), std::stoull(asked));
}

// The watch set of GetService is that (namespace, name): a parked query sleeps through other
// names' changes and wakes for its own.
TEST_F(NomadServices, ParkedQueryWakesOnlyForItsName) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  const std::string asked = std::to_string(fake.service_registrations_index());
  auto pending = std::async(
      std::launch::async, [&] { return get(fake, "/v1/service/api?index=" + asked + "&wait=5m"); });
  ASSERT_TRUE(fake.wait_for_blocked_after(std::stoull(asked)));
  std::string other = place_api("prod");
  ASSERT_TRUE(fake.register_services(other));
  // Bounded: a wrongly woken query answers within microseconds.
  EXPECT_FALSE(cn::testing::eventually(
      [&] { return pending.wait_for(0s) == std::future_status::ready; }, 200ms));
  ASSERT_TRUE(fake.register_services(alloc, RegisterServicesOptions{"", true, ""}));
  auto r = pending.get();
  EXPECT_EQ(header(r, "X-Nomad-Index"), std::to_string(fake.service_registrations_index()));
  EXPECT_NE(r.body.find("canary"), std::string::npos);
}

// acl/acl.go: read-job in the namespace, 403 "Permission denied"; namespace=* keeps only the
// readable namespaces, silently.
TEST_F(NomadServices, ReadJobIsRequired) {
  std::string alloc = place_api();
  ASSERT_TRUE(fake.register_services(alloc));
  std::string other = place_api("prod");
  ASSERT_TRUE(fake.register_services(other));
  fake.set_acl_enabled(true);
  TokenSpec t;
  t.secret = "prod-reader";
  t.management = false;
  t.namespaces = {"prod"};
  fake.add_token(t);
  const std::vector<std::pair<std::string, std::string>> h = {{"X-Nomad-Token", "prod-reader"}};
  const std::vector<std::string> targets = {
      "/v1/service/api", "/v1/services", "/v1/allocation/" + alloc + "/services",
      "/v1/job/api/services", "/v1/client/allocation/" + alloc + "/checks"};
  for (const auto& target : targets) {
    auto r = get(fake, target, h);
    EXPECT_EQ(r.status, 403) << target;
    EXPECT_EQ(r.body, "Permission denied") << target;
  }
  EXPECT_EQ(get(fake, "/v1/services").status, 403);  // no token at all
  auto all = json::parse(get(fake, "/v1/services?namespace=*", h).body);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["Namespace"], "prod");
  EXPECT_EQ(get(fake, "/v1/service/api?namespace=prod", h).status, 200);
  auto del = fake.handle(make_request("DELETE", "/v1/service/api/x?namespace=prod",
                                      {{"X-Nomad-Token", "prod-reader"}}));
  EXPECT_EQ(del.status, 403);  // submit-job, not read-job
}

// nomad/service_registration_endpoint.go listAllServiceRegistrations: a token that reads no
// namespace gets [] from namespace=*, and the reply's index is never set, hence 0.
TEST_F(NomadServices, StarListForATokenReadingNothingHasIndexZero) {
  ASSERT_TRUE(fake.register_services(place_api()));
  fake.set_acl_enabled(true);
  TokenSpec t;
  t.secret = "nobody";
  t.management = false;
  t.namespaces = {"nowhere"};
  fake.add_token(t);
  auto r = get(fake, "/v1/services?namespace=*", {{"X-Nomad-Token", "nobody"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "[]");
  EXPECT_EQ(header(r, "X-Nomad-Index"), "0");
  t.secret = "reader";
  t.namespaces = {"default"};
  fake.add_token(t);
  EXPECT_EQ(
      header(get(fake, "/v1/services?namespace=*", {{"X-Nomad-Token", "reader"}}), "X-Nomad-Index"),
      std::to_string(fake.service_registrations_index()));
}

}  // namespace
}  // namespace cn::fakes
