// The field tables (common/policy/fields/cilium-<release>.txt) against the walker: every object
// the walker checks reads exactly the members the newest table lists, older tables know no
// member the newest does not, and each member that only newer releases know has a decision.
// Unknown members are refused with a suggestion.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/policy/policy_document.h"
#include "common/policy/policy_fields.h"
#include "common/policy/policy_object.h"
#include "common/policy/policy_walker.h"
#include "tests/support/process.h"

namespace cn::policy {
namespace {

// One valid document per kind that, between them, reach every object of the rule schema.
const char* const kEveryObjectDocuments[] = {
    R"({"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
        "metadata": {"name": "all"}, "status": {},
        "spec": {
          "description": "every object", "log": {"value": "x"},
          "enableDefaultDeny": {"ingress": true, "egress": false},
          "labels": [{"key": "a", "source": "b", "value": "c"}],
          "endpointSelector": {"matchLabels": {"nomad:nomad.job": "web"},
                               "matchExpressions": [{"key": "nomad:nomad.group", "operator": "Exists"}]},
          "ingress": [
            {"fromEndpoints": [{}], "authentication": {"mode": "disabled"},
             "toPorts": [{"ports": [{"port": "80", "protocol": "TCP"}],
                          "rules": {"http": [{"path": "/", "method": "GET", "host": "a", "headers": ["X"],
                                              "headerMatches": [{"name": "h", "value": "v", "mismatch": "LOG",
                                                                 "secret": {"name": "s", "namespace": "n"}}]}]}}]},
            {"fromCIDRSet": [{"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}]},
            {"fromGroups": [{"aws": {"region": "r"}}]},
            {"icmps": [{"fields": [{"type": 8, "family": "IPv4"}]}]},
            {"toPorts": [{"ports": [{"port": "9092", "protocol": "TCP"}],
                          "rules": {"kafka": [{"topic": "t", "role": "produce"}]}}]}
          ],
          "ingressDeny": [{"fromCIDR": ["10.0.0.0/8"], "toPorts": [{"ports": [{"port": "22"}]}]}],
          "egress": [
            {"toServices": []},
            {"toFQDNs": [{"matchName": "a.com"}]},
            {"toPorts": [{"ports": [{"port": "53", "protocol": "UDP"}],
                          "rules": {"dns": [{"matchPattern": "*"}]}}]},
            {"toPorts": [{"ports": [{"port": "443", "protocol": "TCP"}], "serverNames": ["a.com"],
                          "terminatingTLS": {"secret": {"name": "t"}},
                          "originatingTLS": {"secret": {"name": "o"}, "trustedCA": "ca.crt"}}]},
            {"toPorts": [{"ports": [{"port": "8080", "protocol": "TCP"}],
                          "listener": {"name": "l", "envoyConfig": {"name": "c", "kind": "CiliumEnvoyConfig"}}}]},
            {"toPorts": [{"ports": [{"port": "80", "protocol": "TCP"}],
                          "rules": {"l7proto": "p", "l7": [{"a": "b"}]}}]}
          ],
          "egressDeny": [{"toEndpoints": [{}]}, {"icmps": [{"fields": [{"type": 0}]}]}]
        }})",
};

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FieldTables, OnePerSupportedReleaseOldestFirstAndWellFormed) {
  std::vector<std::string> releases;
  for (const auto& t : fields::tables()) {
    releases.push_back(t.release());
    EXPECT_TRUE(t.problems().empty()) << t.release() << ": " << t.problems().front();
    std::set<std::string> objects;
    for (const auto& o : t.objects()) objects.insert(o);
    for (const auto& f : t.fields()) {
      // Every object a member points to has its own entries (metadata and status are loose).
      std::string type = f.type;
      if (type.starts_with("list:")) type.erase(0, 5);
      if (type.starts_with("obj:") && type != "obj:metadata" && type != "obj:status") {
        EXPECT_TRUE(objects.contains(type.substr(4)))
            << t.release() << " " << f.object << "." << f.name << ": " << f.type;
      }
    }
  }
  EXPECT_EQ(releases, (std::vector<std::string>{"1.16", "1.17", "1.18", "1.19"}));
  EXPECT_EQ(&fields::newest(), &fields::tables().back());
}

// A member an older release lacks is either refused (an older agent would mis-read the rule)
// or accepted (an older agent just ignores it); a new table with another such member fails here
// until that decision is made in policy_rules.cpp and recorded below.
TEST(FieldTables, OlderReleasesKnowNoMoreThanTheNewestAndEachDifferenceIsDecided) {
  const std::map<std::string, std::string> decided = {
      {"cidrRule.cidrGroupSelector", "1.16"},  // refused: a 1.16 agent drops it, the rule empties
      {"rule.log", "1.17"},                    // accepted: 1.16 and 1.17 agents ignore it
  };
  std::map<std::string, std::string> newest_only;  // member -> newest release lacking it
  for (const auto& t : fields::tables()) {
    for (const auto& f : t.fields()) {
      const auto& newest = fields::newest().members(f.object);
      EXPECT_NE(std::find(newest.begin(), newest.end(), f.name), newest.end())
          << t.release() << " knows " << f.object << "." << f.name << ", the newest does not";
    }
    for (const auto& object : fields::newest().objects()) {
      const auto& mine = t.members(object);
      if (mine.empty()) continue;  // an object new in the newest release (reached by a new member)
      for (auto name : fields::newest().members(object)) {
        if (std::find(mine.begin(), mine.end(), name) == mine.end()) {
          newest_only[object + "." + std::string(name)] = t.release();
        }
      }
    }
  }
  EXPECT_EQ(newest_only, decided);
}

TEST(FieldTables, TheWalkerReadsExactlyTheNewestTablesMembersOfEveryObject) {
  walk::FieldLog log;
  walk::set_field_log(&log);
  for (const char* doc : kEveryObjectDocuments) {
    auto r = validate_policy_object(nlohmann::json::parse(doc));
    EXPECT_TRUE(r) << r.error().message;
    log.forget_document();
  }
  auto dir = std::filesystem::path(testing::source_dir()) / "tests/data/policies/good";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_TRUE(validate_policy_document(read_text(e.path()))) << e.path();
    log.forget_document();
  }
  walk::set_field_log(nullptr);

  // Reached only through a non-empty toServices, which is refused whole before its items are
  // read (policy_rules.cpp, services_refused): no valid document holds one, and the walker
  // reads none of their members.
  const std::set<std::string> refused_whole = {"service", "k8sService", "k8sServiceSelector"};
  for (const auto& object : fields::newest().objects()) {
    SCOPED_TRACE(object);
    auto visited = log.read.find(object);
    if (refused_whole.contains(object)) {
      EXPECT_EQ(visited, log.read.end()) << "the walker reads a refused object's members";
      continue;
    }
    ASSERT_NE(visited, log.read.end()) << "no document reaches " << object;
    std::set<std::string> table;
    for (auto name : fields::newest().members(object)) table.emplace(name);
    EXPECT_EQ(visited->second, table);
  }
  for (const auto& [object, members] : log.read) {
    EXPECT_FALSE(fields::newest().members(object).empty()) << object << " is in no table";
  }
}

std::string ccnp_with_rule(const std::string& ingress_rule) {
  return R"({"apiVersion": "cilium.io/v2", "kind": "CiliumClusterwideNetworkPolicy",
    "metadata": {"name": "web"}, "spec": {"endpointSelector": {}, "ingress": [)" +
         ingress_rule + "]}}";
}

TEST(UnknownFields, AreRefusedWithTheNearestFieldNamed) {
  struct Case {
    const char* rule;
    const char* message;
  };
  for (const Case& c : {
           Case{R"({"toPortz": []})",
                "/spec/ingress/0/toPortz: unknown field, which the agent would ignore; did you "
                "mean \"toPorts\"?"},
           Case{R"({"fromEndpoint": [{}]})", "did you mean \"fromEndpoints\"?"},
           Case{R"({"fromEndpoints": [{"matchLabel": {}}]})",
                "/spec/ingress/0/fromEndpoints/0/matchLabel: unknown field, which the agent "
                "would ignore; did you mean \"matchLabels\"?"},
           Case{R"({"toPorts": [{"ports": [{"port": "80", "protocl": "TCP"}]}]})",
                "did you mean \"protocol\"?"},
           Case{R"({"comment": "x"})",
                "/spec/ingress/0/comment: unknown field, which the agent would ignore; the "
                "fields here are authentication, fromCIDR, "},
           // Known members at every level pass.
           Case{R"({"toPorts": [{"ports": [{"port": "80", "protocol": "TCP"}],
                                 "rules": {"http": [{"path": "/"}]}}]})",
                ""},
       }) {
    auto r = validate_policy_document(ccnp_with_rule(c.rule));
    if (std::string(c.message).empty()) {
      EXPECT_TRUE(r) << c.rule << ": " << r.error().message;
      continue;
    }
    ASSERT_FALSE(r) << c.rule;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
  // Only allow rules have authentication: in a deny rule the agent would drop it.
  auto deny = validate_policy_document(R"({"apiVersion": "cilium.io/v2",
    "kind": "CiliumClusterwideNetworkPolicy", "metadata": {"name": "web"},
    "spec": {"endpointSelector": {}, "ingressDeny": [{"authentication": {"mode": "required"}}]}})");
  ASSERT_FALSE(deny);
  EXPECT_TRUE(deny.error().message.starts_with(
      "/spec/ingressDeny/0/authentication: unknown field, which the agent would ignore"))
      << deny.error().message;
}

TEST(UnknownFields, CaseVariantsKeepTheirOwnMessageAndMetadataStaysOpen) {
  auto r = validate_policy_document(ccnp_with_rule(R"({"ToPorts": []})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "/spec/ingress/0/ToPorts: unknown field; the agent would read it as \"toPorts\": spell "
            "it exactly");
  // Top level: part of the CRD, so strict.
  auto top = validate_policy_document(R"({"apiVersion": "cilium.io/v2",
    "kind": "CiliumClusterwideNetworkPolicy", "metadata": {"name": "web"}, "x-team": "a",
    "spec": {"endpointSelector": {}, "egress": [{"toEntities": ["all"]}]}})");
  ASSERT_FALSE(top);
  EXPECT_TRUE(top.error().message.starts_with("/x-team: unknown field")) << top.error().message;
  // metadata is Kubernetes' ObjectMeta, which the agent decodes leniently; status is dropped.
  EXPECT_TRUE(validate_policy_document(R"({"apiVersion": "cilium.io/v2",
    "kind": "CiliumClusterwideNetworkPolicy",
    "metadata": {"name": "web", "uid": "u", "resourceVersion": "1", "somethingNew": {}},
    "status": {"conditions": []},
    "spec": {"endpointSelector": {}, "egress": [{"toEntities": ["all"]}]}})"));
}

}  // namespace
}  // namespace cn::policy
