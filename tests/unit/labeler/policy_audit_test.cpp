// Audit before enforce (docs/policies.md): the `mode` item, the decisions of plan_audit() and
// the auditor's passes against a small agent double that models PATCH /v1/endpoint/{id}/config.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "common/policy/policy_document.h"
#include "labeler/commands/policy_status_command.h"
#include "labeler/policy/policy_audit.h"
#include "labeler/policy/policy_auditor.h"
#include "labeler/policy/policy_mode.h"
#include "labeler/policy/policy_status.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler::policy {
namespace {

using cn::testing::TempDir;
using cn::testing::write_file;
using nlohmann::json;

json ccnp_selecting(const std::string& job, bool audit = true) {
  json object = {{"apiVersion", "cilium.io/v2"},
                 {"kind", "CiliumClusterwideNetworkPolicy"},
                 {"metadata", {{"name", "nomad-" + job}}},
                 {"spec", {{"endpointSelector", {{"matchLabels", {{"nomad:nomad.job", job}}}}}}}};
  mark_policy_mode(object, audit ? PolicyMode::audit : PolicyMode::enforce);
  return object;
}

AuditEndpoint endpoint_of(std::int64_t id, const std::string& job, bool in_audit = false,
                          const std::string& ns = "") {
  std::vector<std::string> labels = {"nomad:nomad.job=" + job};
  if (!ns.empty()) labels.push_back("k8s:io.kubernetes.pod.namespace=" + ns);
  return {id, "att-" + std::to_string(id), labels::LabelSet::from_strings(labels), in_audit};
}

TEST(PolicyModeItem, AbsentOrEnforceEnforcesAuditAuditsAnythingElseIsRefused) {
  EXPECT_EQ(parse_policy_mode({}), PolicyMode::enforce);
  EXPECT_EQ(parse_policy_mode({{"mode", "enforce"}}), PolicyMode::enforce);
  EXPECT_EQ(parse_policy_mode({{"mode", "audit"}}), PolicyMode::audit);
  auto bad = parse_policy_mode({{"mode", "Audit"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
  EXPECT_EQ(bad.error().message, "the mode item is \"Audit\"; it must be \"audit\" or \"enforce\"");
}

TEST(PolicyModeItem, OnlyTheItemDecidesNotTheDocumentsOwnAnnotation) {
  json object = ccnp_selecting("web", false);
  EXPECT_FALSE(object["metadata"].contains("annotations")) << "enforce files stay as before";
  object["metadata"]["annotations"][std::string(kAnnotationMode)] = "audit";  // from the item
  mark_policy_mode(object, PolicyMode::enforce);
  EXPECT_EQ(policy_mode_of(object), PolicyMode::enforce);
  mark_policy_mode(object, PolicyMode::audit);
  EXPECT_EQ(policy_mode_of(object), PolicyMode::audit);
}

TEST(PolicyAuditPlan, OverlappingPoliciesEnableOnceAndNameBoth) {
  const std::vector<AuditPolicy> policies = {{"p/web", ccnp_selecting("web")},
                                             {"p/all-web", ccnp_selecting("web")}};
  const auto plan =
      plan_audit(policies, {endpoint_of(1, "web"), endpoint_of(2, "db")}, {}, false, true);
  ASSERT_EQ(plan.enable.size(), 1u);
  EXPECT_EQ(plan.enable[0].id, 1);
  EXPECT_EQ(plan.enable[0].policies, (std::vector<std::string>{"p/all-web", "p/web"}));
  EXPECT_TRUE(plan.disable.empty());
}

TEST(PolicyAuditPlan, RemovedPolicyDisablesOnlyWhatWeClaimed) {
  const AuditClaim ours{1, "att-1", {"p/web"}};
  // Endpoint 2 is in audit too, by someone else's hand: never ours to switch off.
  const auto plan = plan_audit({}, {endpoint_of(1, "web", true), endpoint_of(2, "web", true)},
                               {ours}, false, true);
  ASSERT_EQ(plan.disable.size(), 1u);
  EXPECT_EQ(plan.disable[0], ours);
  EXPECT_TRUE(plan.enable.empty());
  EXPECT_TRUE(plan.keep.empty());
}

TEST(PolicyAuditPlan, ClaimSurvivesWhileAnotherAuditPolicyStillSelects) {
  const std::vector<AuditPolicy> policies = {{"p/other", ccnp_selecting("web")}};
  const auto plan = plan_audit(policies, {endpoint_of(1, "web", true)},
                               {{1, "att-1", {"p/other", "p/web"}}}, false, true);
  EXPECT_TRUE(plan.disable.empty());
  ASSERT_EQ(plan.keep.size(), 1u);
  EXPECT_EQ(plan.keep[0].policies, std::vector<std::string>{"p/other"});
}

TEST(PolicyAuditPlan, SelectedEndpointAlreadyInAuditIsForeignNotClaimed) {
  const auto plan = plan_audit({{"p/web", ccnp_selecting("web")}}, {endpoint_of(2, "web", true)},
                               {}, false, true);
  EXPECT_TRUE(plan.enable.empty());
  ASSERT_EQ(plan.foreign.size(), 1u);
  EXPECT_EQ(plan.foreign[0].id, 2);
}

TEST(PolicyAuditPlan, GlobalAuditModeTouchesNothingAndKeepsClaims) {
  const AuditClaim ours{1, "att-1", {"p/web"}};
  const auto plan =
      plan_audit({}, {endpoint_of(1, "web", true), endpoint_of(3, "web")}, {ours}, true, true);
  EXPECT_TRUE(plan.enable.empty());
  EXPECT_TRUE(plan.disable.empty());
  EXPECT_EQ(plan.keep, std::vector<AuditClaim>{ours});
}

TEST(PolicyAuditPlan, EndpointNumberReusedByAnotherAttachmentIsNotOurs) {
  AuditEndpoint reused = endpoint_of(1, "web", true);
  reused.attachment = "another-alloc";
  const auto plan = plan_audit({}, {reused}, {{1, "att-1", {"p/web"}}}, false, true);
  EXPECT_TRUE(plan.disable.empty());
  EXPECT_TRUE(plan.keep.empty()) << "the claim's endpoint is gone";
}

TEST(PolicyAuditPlan, IncompleteListKeepsClaimsOfUnlistedEndpoints) {
  const AuditClaim ours{7, "att-7", {"p/web"}};
  EXPECT_EQ(plan_audit({}, {}, {ours}, false, false).keep, std::vector<AuditClaim>{ours});
  EXPECT_TRUE(plan_audit({}, {}, {ours}, false, true).keep.empty());
}

TEST(PolicyAuditPlan, NamespacedPolicySelectsOnlyItsOwnNamespace) {
  json cnp = ccnp_selecting("web");
  cnp["kind"] = "CiliumNetworkPolicy";
  cnp["metadata"]["namespace"] = "team-a";
  const auto plan = plan_audit({{"p/a", cnp}},
                               {endpoint_of(1, "web", false, "team-a"),
                                endpoint_of(2, "web", false, "team-b"), endpoint_of(3, "web")},
                               {}, false, true);
  ASSERT_EQ(plan.enable.size(), 1u);
  EXPECT_EQ(plan.enable[0].id, 1);
}

TEST(PolicyAuditRecord, RoundTripsAndRefusesGarbage) {
  AuditRecord rec;
  rec.global_audit = true;
  rec.claims = {{1, "att-1", {"p/web"}}};
  rec.foreign = {{2, "att-2", {"p/web"}}};
  auto back = parse_audit_record(to_text(rec));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->claims, rec.claims);
  EXPECT_EQ(back->foreign, rec.foreign);
  EXPECT_TRUE(back->global_audit);
  EXPECT_FALSE(parse_audit_record(R"({"claims":[{"id":"x"}]})"));
}

// The agent as the auditor sees it: endpoints with labels and PolicyAuditMode, GET /v1/config's
// policy-audit-mode, and PATCH failures on demand.
class AuditAgentDouble : public cilium::CiliumApi {
 public:
  Status ready(Deadline) override { return {}; }
  Result<std::string> cluster_name(Deadline) override { return std::string("default"); }
  Result<cilium::ReportedAgentOptions> agent_options(Deadline) override {
    cilium::ReportedAgentOptions reported{};
    reported[static_cast<std::size_t>(cilium::AgentOption::policy_audit_mode)] = global_audit;
    return reported;
  }
  Result<cilium::Endpoint> endpoint(const cilium::EndpointRef&, Deadline) override {
    return fail(ErrorKind::not_found, "endpoint not found");
  }
  Result<cilium::EndpointList> endpoints(Deadline) override {
    cilium::EndpointList list;
    for (const auto& [id, ep] : endpoints_) list.endpoints.push_back(ep);
    return list;
  }
  Status replace_identity_labels(const cilium::EndpointRef&, const std::vector<std::string>&,
                                 Deadline) override {
    return {};
  }
  Status set_user_labels(const cilium::EndpointRef&, const std::vector<std::string>&,
                         Deadline) override {
    return {};
  }
  Status delete_endpoint(const cilium::EndpointRef&, Deadline) override { return {}; }
  Status set_endpoint_options(const cilium::EndpointRef& ref,
                              const std::map<std::string, std::string>& options,
                              Deadline) override {
    ++patches;
    if (failures_left > 0) {
      --failures_left;
      return fail(ErrorKind::http, "Failed");
    }
    for (auto& [id, ep] : endpoints_) {
      if (ep.cni_attachment_id == ref.value() || std::to_string(id) == ref.value()) {
        ep.policy_audit_mode = options.at("PolicyAuditMode");
        return {};
      }
    }
    return fail(ErrorKind::not_found, "endpoint not found");
  }

  void add(std::int64_t id, const std::string& job, const std::string& mode = "Disabled") {
    cilium::Endpoint ep;
    ep.id = id;
    ep.cni_attachment_id = "0b4c1a9e-3f2d-4e8b-9a7c-5d6e1f2a3b" + std::to_string(40 + id) + ":eth0";
    ep.identity_id = 1000 + id;
    ep.identity_labels = {"nomad:nomad.job=" + job};
    ep.policy_audit_mode = mode;
    endpoints_[id] = ep;
  }
  std::string mode(std::int64_t id) const { return endpoints_.at(id).policy_audit_mode; }

  bool global_audit = false;
  int failures_left = 0;
  int patches = 0;

 private:
  std::map<std::int64_t, cilium::Endpoint> endpoints_;
};

class PolicyAuditorTest : public ::testing::Test {
 protected:
  PolicyAuditorTest() {
    settings_.dir = dir_.path() + "/policies";
    std::filesystem::create_directory(settings_.dir);
    settings_.audit_file = dir_.file("policy-audit.json");
  }
  std::unique_ptr<PolicyAuditor> auditor() {
    return std::make_unique<PolicyAuditor>(settings_, agent_, clock_, metrics_, calls_, nullptr);
  }
  void write_policy(const std::string& name, bool audit) {
    json object = ccnp_selecting(name, audit);
    auto& annotations = object["metadata"]["annotations"];
    annotations[std::string(cn::policy::kAnnotationNamespace)] = "default";
    annotations[std::string(cn::policy::kAnnotationPath)] = "cilium/policies/" + name;
    annotations[std::string(cn::policy::kAnnotationModifyIndex)] = "7";
    write_file(settings_.dir + "/nomad-" + name + ".yaml", object.dump() + "\n");
  }
  void remove_policy(const std::string& name) {
    std::filesystem::remove(settings_.dir + "/nomad-" + name + ".yaml");
  }

  TempDir dir_;
  PolicySettings settings_;
  ManualClock clock_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
  AuditAgentDouble agent_;
};

TEST_F(PolicyAuditorTest, NothingIsAskedWhileNoPolicyAuditsAndNothingIsClaimed) {
  write_policy("web", false);
  agent_.add(1, "web");
  ASSERT_TRUE(auditor()->pass());
  EXPECT_EQ(agent_.patches, 0);
  EXPECT_EQ(agent_.mode(1), "Disabled");
}

TEST_F(PolicyAuditorTest, PatchFailingThenSucceedingClaimsOnceAndSurvivesARestart) {
  write_policy("web", true);
  agent_.add(1, "web");
  agent_.add(2, "db");
  agent_.failures_left = 1;
  auto a = auditor();
  EXPECT_FALSE(a->pass()) << "a failed PATCH leaves the pass incomplete";
  EXPECT_TRUE(a->record().claims.empty());
  ASSERT_TRUE(a->pass());
  EXPECT_EQ(agent_.mode(1), "Enabled");
  EXPECT_EQ(agent_.mode(2), "Disabled");
  ASSERT_EQ(a->record().claims.size(), 1u);
  EXPECT_EQ(a->record().claims[0].policies, std::vector<std::string>{"cilium/policies/web"});

  // A new labeler reads the claims back and still turns off what it turned on.
  a.reset();
  remove_policy("web");
  auto b = auditor();
  ASSERT_TRUE(b->pass());
  EXPECT_EQ(agent_.mode(1), "Disabled");
  EXPECT_TRUE(b->record().claims.empty());
  auto saved = read_audit_record(settings_.audit_file);
  ASSERT_TRUE(saved);
  EXPECT_TRUE(saved->claims.empty());
}

TEST_F(PolicyAuditorTest, AgentGlobalAuditModeLeavesEndpointsAlone) {
  write_policy("web", true);
  agent_.add(1, "web");
  agent_.global_audit = true;
  auto a = auditor();
  ASSERT_TRUE(a->pass());
  EXPECT_EQ(agent_.patches, 0);
  EXPECT_TRUE(a->record().global_audit);
}

TEST_F(PolicyAuditorTest, EndpointInAuditByAnotherHandIsNeverSwitchedOff) {
  write_policy("web", true);
  agent_.add(1, "web", "Enabled");
  auto a = auditor();
  ASSERT_TRUE(a->pass());
  ASSERT_EQ(a->record().foreign.size(), 1u);
  remove_policy("web");
  ASSERT_TRUE(a->pass());
  EXPECT_EQ(agent_.mode(1), "Enabled");
  EXPECT_EQ(agent_.patches, 0);
}

TEST_F(PolicyAuditorTest, PolicyStatusShowsTheModeAndTheEndpointsInAudit) {
  PolicyStatus status;
  PolicyRecord rec;
  rec.variable_path = "cilium/policies/web";
  rec.state = PolicyState::applied;
  rec.mode = "audit";
  status.policies[rec.variable_path] = rec;
  const std::string status_file = dir_.file("policy-status.json");
  write_file(status_file, to_text(status));
  write_policy("web", true);
  agent_.add(3, "web");
  ASSERT_TRUE(auditor()->pass());
  auto text = render_policy_status(status_file, StatusView::wide, clock_);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find("applied (audit)"), std::string::npos) << *text;
  EXPECT_NE(text->find("audit cilium/policies/web: endpoints 3"), std::string::npos) << *text;
}

}  // namespace
}  // namespace cn::labeler::policy
