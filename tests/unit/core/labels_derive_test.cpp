#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/labels/derive_labels.h"
#include "common/labels/label_policy.h"
#include "common/labels/label_text.h"
#include "common/labels/parent_job.h"

namespace cn::labels {
namespace {

using Strings = std::vector<std::string>;

AllocationIdentity web() {
  AllocationIdentity id;
  id.nomad_namespace = "default";
  id.job_id = "web";
  id.task_group = "app";
  id.job_meta = {{"team", "payments"}, {"tier", "job-tier"}, {"deployed_at", "1755781200"}};
  id.group_meta = {{"tier", "frontend"}};
  return id;
}

LabelPolicy policy(std::string_view text) {
  auto p = parse_label_policy(text);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return p.value_or(LabelPolicy{});
}

TEST(DeriveLabelsTest, CoreLabelsAndTheK8sCompatLabelsWithoutPolicy) {
  EXPECT_EQ(derive_labels(web(), {}).to_strings(),
            (Strings{"k8s:io.cilium.k8s.policy.cluster=default",
                     "k8s:io.kubernetes.pod.namespace=default", "nomad:nomad.group=app",
                     "nomad:nomad.job=web", "nomad:nomad.namespace=default"}));
}

TEST(DeriveLabelsTest, K8sCompatLabelsFollowTheNamespaceAndClusterOrAreOff) {
  auto id = web();
  id.nomad_namespace = "payments";
  LabelPolicy p;
  p.cluster_name = "eu-west";
  auto set = derive_labels(id, p);
  EXPECT_EQ(set.find(kKeyK8sNamespace)->to_string(), "k8s:io.kubernetes.pod.namespace=payments");
  EXPECT_EQ(set.find(kKeyK8sCluster)->to_string(), "k8s:io.cilium.k8s.policy.cluster=eu-west");
  p.k8s_compat = false;
  EXPECT_EQ(
      derive_labels(id, p).to_strings(),
      (Strings{"nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=payments"}));
}

TEST(DeriveLabelsTest, OursAreTheNomadLabelsAndTheTwoCompatKeys) {
  EXPECT_TRUE(is_ours(parse_label("nomad:anything=x")));
  EXPECT_TRUE(is_ours(parse_label("k8s:io.kubernetes.pod.namespace=a")));
  EXPECT_TRUE(is_ours(parse_label("k8s:io.cilium.k8s.policy.cluster=a")));
  EXPECT_FALSE(is_ours(parse_label("k8s:app=a")));
  EXPECT_FALSE(is_ours(parse_label("reserved:init")));
  EXPECT_FALSE(is_ours(parse_label("any:io.kubernetes.pod.namespace=a")));
}

TEST(DeriveLabelsTest, AllowListedMetaGroupWins) {
  auto p = policy("team,tier,absent");
  p.k8s_compat = false;
  EXPECT_EQ(
      derive_labels(web(), p).to_strings(),
      (Strings{"nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default",
               "nomad:team=payments", "nomad:tier=frontend"}));
}

TEST(DeriveLabelsTest, MetaNotAllowListedNeverAppears) {
  auto set = derive_labels(web(), policy("team"));
  EXPECT_EQ(set.find("deployed_at"), nullptr);
  EXPECT_EQ(set.find("tier"), nullptr);
}

struct ParentCase {
  std::string job_id;
  std::string parent_id;
  std::string expected_job_label;
};

class DeriveJobLabelTest : public ::testing::TestWithParam<ParentCase> {};

TEST_P(DeriveJobLabelTest, UsesParentIdWhenSet) {
  auto id = web();
  id.job_id = GetParam().job_id;
  id.parent_id = GetParam().parent_id;
  const LabelSet set = derive_labels(id, {});
  const Label* job = set.find(kKeyJob);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->value, GetParam().expected_job_label);
}

INSTANTIATE_TEST_SUITE_P(
    Table, DeriveJobLabelTest,
    ::testing::Values(ParentCase{"batch/periodic-1700000000", "batch", "batch"},
                      ParentCase{"proc/dispatch-1700000000-0a1b2c3d", "proc", "proc"},
                      // ParentID is authoritative; the pattern is not applied on top of it.
                      ParentCase{"x/periodic-1", "", sanitize_label_value("x/periodic-1")},
                      ParentCase{"web", "", "web"}));

TEST(DeriveLabelsTest, NeverProducesForeignSourceOrReservedOrForgedKeys) {
  auto id = web();
  id.job_meta = {{"nomad.job", "evil"}, {"reserved:init", "x"}, {"a=b", "c"}, {"k:x", "y"}};
  LabelPolicy forced;  // bypasses parse_label_policy on purpose
  forced.meta_keys = {"nomad.job", "reserved:init", "a=b", "k:x"};
  forced.k8s_compat = false;  // the two `k8s:` labels are ours, not the meta's
  auto set = derive_labels(id, forced);
  for (const auto& l : set) {
    EXPECT_EQ(l.source, "nomad");
    EXPECT_FALSE(l.is_reserved());
    EXPECT_EQ(parse_label(l.to_string()), l) << "text form must round-trip";
  }
  EXPECT_EQ(set.find(kKeyJob)->value, "web");
  EXPECT_EQ(set.size(), 3U);
}

TEST(DeriveLabelsTest, ValuesThatCouldChangeParsingAreSanitised) {
  auto id = web();
  id.nomad_namespace = "reserved:init";
  id.job_id = "a=b";
  auto set = derive_labels(id, {});
  for (const auto& l : set) {
    EXPECT_TRUE(is_valid_label_value(l.value)) << l.value;
    EXPECT_EQ(parse_label(l.to_string()), l);
  }
}

TEST(DeriveLabelsTest, IsDeterministic) {
  auto id = web();
  id.job_id = std::string(200, 'j') + "/\xe2\x9c\x93";
  EXPECT_EQ(derive_labels(id, policy("team")), derive_labels(id, policy("team")));
}

TEST(DeriveLabelsTest, EmptyValuesStayEmpty) {
  auto id = web();
  id.group_meta = {{"team", ""}};
  auto set = derive_labels(id, policy("team"));
  EXPECT_EQ(set.find("team")->value, "");
  EXPECT_EQ(set.find("team")->to_string(), "nomad:team");
}

TEST(DeriveLabelsTest, CompletenessNeedsNamespaceJobAndGroup) {
  EXPECT_TRUE(is_complete(web()));
  for (auto field : {&AllocationIdentity::nomad_namespace, &AllocationIdentity::job_id,
                     &AllocationIdentity::task_group}) {
    auto id = web();
    id.*field = "";
    EXPECT_FALSE(is_complete(id));
  }
}

struct SanitizeCase {
  std::string in;
  bool unchanged;
};

class SanitizeTest : public ::testing::TestWithParam<SanitizeCase> {};

TEST_P(SanitizeTest, ProducesValidValues) {
  const auto& c = GetParam();
  std::string out = sanitize_label_value(c.in);
  EXPECT_TRUE(is_valid_label_value(out)) << out;
  EXPECT_LE(out.size(), kMaxLabelText);
  if (c.unchanged) {
    EXPECT_EQ(out, c.in);
  } else {
    EXPECT_NE(out, c.in);
  }
  EXPECT_EQ(out, sanitize_label_value(c.in));
}

INSTANTIATE_TEST_SUITE_P(
    Table, SanitizeTest,
    ::testing::Values(SanitizeCase{"", true}, SanitizeCase{"web", true},
                      SanitizeCase{"a.b_c-d", true}, SanitizeCase{std::string(63, 'a'), true},
                      SanitizeCase{std::string(64, 'a'), false}, SanitizeCase{"-web", false},
                      SanitizeCase{"web-", false}, SanitizeCase{"a/b", false},
                      SanitizeCase{"a b", false}, SanitizeCase{"caf\xc3\xa9", false},
                      SanitizeCase{"\xe2\x9c\x93\xe2\x9c\x93", false},
                      SanitizeCase{std::string("a\0b", 3), false},
                      SanitizeCase{std::string(100, '-') + "abc", false},
                      SanitizeCase{std::string(100000, 'x'), false}, SanitizeCase{"_", false}));

TEST(SanitizeTest, KnownOutputs) {
  EXPECT_EQ(sanitize_label_value("batch/periodic-1700000000").substr(0, 26),
            "batch-periodic-1700000000-");
  EXPECT_EQ(sanitize_label_value("caf\xc3\xa9").substr(0, 4), "caf-");
  std::string only_hash = sanitize_label_value("\xe2\x9c\x93");
  EXPECT_EQ(only_hash.size(), 16U);
  std::string longer = sanitize_label_value(std::string(100, 'a'));
  EXPECT_EQ(longer.size(), 63U);
  EXPECT_EQ(longer.substr(0, 47), std::string(46, 'a') + "-");
}

TEST(SanitizeTest, DifferentLongValuesDoNotCollide) {
  std::string base(80, 'v');
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    seen.insert(sanitize_label_value(base + std::to_string(i)));
  }
  EXPECT_EQ(seen.size(), 1000U);
  EXPECT_NE(sanitize_label_value("a/b"), sanitize_label_value("a b"));
  EXPECT_NE(sanitize_label_value("a/b"), "a-b");
}

TEST(LabelHashTest, IsTheFirst64BitsOfSha256) {
  // FIPS 180-4 examples: SHA-256("") = e3b0c442 98fc1c14 ..., SHA-256("abc") = ba7816bf 8f01cfea
  // ...
  EXPECT_EQ(label_hash(""), "e3b0c44298fc1c14");
  EXPECT_EQ(label_hash("abc"), "ba7816bf8f01cfea");
  // Two blocks (448 bits), and a tail that needs a second padding block (56..63 bytes).
  EXPECT_EQ(label_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8");
  EXPECT_EQ(label_hash(std::string(1000000, 'a')), "cdc76e5c9914fb92");
}

TEST(SanitizeTest, ANameCannotBeWhatAnotherNameIsHashedTo) {
  // `admin/x` becomes `admin-x-<digits>`; a job literally named that must not share its label.
  const std::string hashed = sanitize_label_value("admin/x");
  ASSERT_EQ(hashed, "admin-x-" + label_hash("admin/x"));
  EXPECT_NE(sanitize_label_value(hashed), hashed);
  EXPECT_NE(sanitize_label_value(label_hash("admin/x")), label_hash("admin/x"));
  // Only the exact form is taken: other valid values still pass unchanged.
  EXPECT_EQ(sanitize_label_value("web-0123456789abcde"), "web-0123456789abcde");
  EXPECT_EQ(sanitize_label_value("web-0123456789ABCDEF"), "web-0123456789ABCDEF");
}

struct ParentJobCase {
  std::string in;
  std::string out;
};

class ParentJobTest : public ::testing::TestWithParam<ParentJobCase> {};

TEST_P(ParentJobTest, MapsChildIdsByPattern) {
  EXPECT_EQ(parent_job_of(GetParam().in), GetParam().out);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ParentJobTest,
    ::testing::Values(ParentJobCase{"batch/periodic-1700000000", "batch"},
                      ParentJobCase{"proc/dispatch-1700000000-0a1b2c3d", "proc"},
                      ParentJobCase{"team/proc/dispatch-1700000000-0A1B2C3D", "team/proc"},
                      ParentJobCase{"web", "web"}, ParentJobCase{"", ""},
                      ParentJobCase{"/periodic-1", "/periodic-1"},
                      ParentJobCase{"batch/periodic-", "batch/periodic-"},
                      ParentJobCase{"batch/periodic-12a", "batch/periodic-12a"},
                      ParentJobCase{"proc/dispatch-17-0a1b2c3", "proc/dispatch-17-0a1b2c3"},
                      ParentJobCase{"proc/dispatch-17-0a1b2c3g", "proc/dispatch-17-0a1b2c3g"},
                      ParentJobCase{"proc/dispatch--0a1b2c3d", "proc/dispatch--0a1b2c3d"},
                      ParentJobCase{"proc/dispatch-1700000000-0a1b2c3d/periodic-5",
                                    "proc/dispatch-1700000000-0a1b2c3d"}));

struct PolicyCase {
  std::string text;
  bool ok;
  std::vector<std::string> keys;
};

class LabelPolicyTest : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(LabelPolicyTest, ParsesCliList) {
  const auto& c = GetParam();
  auto p = parse_label_policy(c.text);
  ASSERT_EQ(p.has_value(), c.ok) << c.text;
  if (p) {
    EXPECT_EQ(p->meta_keys, c.keys);
  } else {
    EXPECT_FALSE(p.error().message.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, LabelPolicyTest,
    ::testing::Values(
        PolicyCase{"", true, {}}, PolicyCase{" , ,", true, {}}, PolicyCase{"team", true, {"team"}},
        PolicyCase{" tier ,team,tier,\tteam ", true, {"team", "tier"}},
        PolicyCase{"nomad.job", false, {}}, PolicyCase{"team,nomad.x", false, {}},
        PolicyCase{"a=b", false, {}}, PolicyCase{"a:b", false, {}}, PolicyCase{"a/b", false, {}},
        PolicyCase{"-a", false, {}}, PolicyCase{std::string(64, 'k'), false, {}},
        PolicyCase{"nomad", true, {"nomad"}}, PolicyCase{"x.nomad.y", true, {"x.nomad.y"}}));

}  // namespace
}  // namespace cn::labels
