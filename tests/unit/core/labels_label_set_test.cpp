#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/labels/label.h"
#include "common/labels/label_set.h"

namespace cn::labels {
namespace {

struct ParseCase {
  std::string text;
  Label expected;
};

class LabelParseTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(LabelParseTest, FollowsCiliumSyntax) {
  EXPECT_EQ(parse_label(GetParam().text), GetParam().expected) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Table, LabelParseTest,
    ::testing::Values(ParseCase{"nomad:nomad.job=web", {"nomad", "nomad.job", "web"}},
                      ParseCase{"nomad:key", {"nomad", "key", ""}},
                      ParseCase{"nomad:key=", {"nomad", "key", ""}},
                      ParseCase{"k8s:a=b=c:d", {"k8s", "a", "b=c:d"}},
                      ParseCase{"app=web", {"unspec", "app", "web"}},
                      ParseCase{"reserved:init", {"reserved", "init", ""}},
                      ParseCase{"$host", {"reserved", "host", ""}},
                      ParseCase{"reserved.health", {"reserved", "health", ""}},
                      ParseCase{":x=y", {"unspec", "x", "y"}}, ParseCase{"", {"unspec", "", ""}}));

TEST(LabelTest, PrintsEmptyValueWithoutEquals) {
  EXPECT_EQ((Label{"nomad", "k", ""}).to_string(), "nomad:k");
  EXPECT_EQ((Label{"nomad", "k", "v"}).to_string(), "nomad:k=v");
}

TEST(LabelTest, RoundTripsThroughText) {
  for (const Label& l :
       {Label{"nomad", "nomad.job", "web"}, Label{"nomad", "team", ""}, Label{"k8s", "a", "b=c"}}) {
    EXPECT_EQ(parse_label(l.to_string()), l);
  }
}

TEST(LabelSetTest, KeepsOneLabelPerKeyLastWins) {
  LabelSet set;
  set.insert({"nomad", "job", "a"});
  set.insert({"other", "job", "b"});
  ASSERT_EQ(set.size(), 1U);
  EXPECT_EQ(*set.find("job"), (Label{"other", "job", "b"}));
}

TEST(LabelSetTest, FromStringsCollidesByKeyLikeTheAgent) {
  std::vector<std::string> texts{"nomad:job=a", "k8s:job=b", "nomad:group=g"};
  auto set = LabelSet::from_strings(texts);
  EXPECT_EQ(set.to_strings(), (std::vector<std::string>{"k8s:job=b", "nomad:group=g"}));
}

TEST(LabelSetTest, FromStringsHandlesLongListsWithDuplicates) {
  std::vector<std::string> texts;
  for (int i = 0; i < 100000; ++i)
    texts.push_back("a:k" + std::to_string(i % 5000) + "=" + std::to_string(i));
  auto set = LabelSet::from_strings(texts);
  ASSERT_EQ(set.size(), 5000U);
  EXPECT_EQ(set.find("k0")->value, "95000");
  EXPECT_EQ(set.find("k4999")->value, "99999");
}

TEST(LabelSetTest, SortsAndComparesIndependentOfInsertOrder) {
  LabelSet a, b;
  a.insert({"nomad", "z", "1"});
  a.insert({"nomad", "a", "2"});
  b.insert({"nomad", "a", "2"});
  b.insert({"nomad", "z", "1"});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.to_strings(), (std::vector<std::string>{"nomad:a=2", "nomad:z=1"}));
  b.insert({"nomad", "z", "other"});
  EXPECT_NE(a, b);
}

TEST(LabelSetTest, FiltersBySourceAndFinds) {
  std::vector<std::string> texts{"reserved:init", "nomad:nomad.job=web", "k8s:x=y"};
  auto set = LabelSet::from_strings(texts);
  EXPECT_TRUE(set.has_source("reserved"));
  EXPECT_TRUE(set.contains({"reserved", "init", ""}));
  EXPECT_FALSE(set.contains({"nomad", "init", ""}));
  auto ours = set.only_source("nomad");
  EXPECT_EQ(ours.to_strings(), (std::vector<std::string>{"nomad:nomad.job=web"}));
  EXPECT_TRUE(set.erase("init"));
  EXPECT_FALSE(set.erase("init"));
  EXPECT_EQ(set.find("init"), nullptr);
}

}  // namespace
}  // namespace cn::labels
