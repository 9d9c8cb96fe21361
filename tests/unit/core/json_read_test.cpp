#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::json {
namespace {

using nlohmann::json;

TEST(JsonReadTest, ErrorsNameTheDocumentAndTheJsonPointer) {
  const auto doc = json::parse(R"({"Job":{"TaskGroups":[{"Name":7}]}})");
  JsonReader job(doc["Job"], JsonWhere("Allocation").key("Job"));
  const auto* groups = job.array("TaskGroups");
  ASSERT_NE(groups, nullptr);
  JsonReader group((*groups)[0], job.at("TaskGroups", 0));
  std::string name;
  group.read("Name", name);
  EXPECT_EQ(group.error(), "Allocation at /Job/TaskGroups/0/Name: expected a string, got number");
}

TEST(JsonReadTest, TheRootIsTheDocumentAlone) {
  const json null;
  JsonReader r(null, "Allocation");
  EXPECT_EQ(r.error(), "Allocation: expected an object, got null");
}

TEST(JsonReadTest, PointerEscapesTildeAndSlashAsRfc6901Says) {
  EXPECT_EQ(JsonWhere("doc").key("a/b").key("m~n").index(3).pointer(), "/a~1b/m~0n/3");
  EXPECT_EQ(JsonWhere("doc").describe(), "doc");
}

TEST(JsonReadTest, BoundedIntegersRefuseOutOfRangeFloatsAndStrings) {
  const auto doc = json::parse(R"({"ok":600000,"big":600001,"neg":-1,"float":5.0,"text":"5"})");
  int out = 7;
  JsonReader ok(doc, "conf");
  ok.read_int("ok", out, 0, 600'000);
  EXPECT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(out, 600'000);

  for (const auto& [key, reason] :
       {std::pair{"big", "expected an integer from 0 to 600000, got 600001"},
        {"neg", "expected an integer from 0 to 600000, got -1"},
        {"float", "expected an integer from 0 to 600000, got 5.0"},
        {"text", "expected an integer from 0 to 600000, got string"}}) {
    int v = 7;
    JsonReader r(doc, "conf");
    r.read_int(key, v, 0, 600'000);
    EXPECT_EQ(r.error(), std::string("conf at /") + key + ": " + reason);
    EXPECT_EQ(v, 7) << "a refused value leaves the field as it was";
  }
}

TEST(JsonReadTest, IntegersOfEveryWidthKeepTheirTypesRange) {
  const auto doc = json::parse(R"({"u64":18446744073709551615,"i64":-9223372036854775808,
                                   "over_i64":9223372036854775808,"over_int":2147483648})");
  JsonReader r(doc, "doc");
  std::uint64_t u = 0;
  std::int64_t i = 0;
  r.read("u64", u);
  r.read("i64", i);
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(u, UINT64_MAX);
  EXPECT_EQ(i, INT64_MIN);

  JsonReader over(doc, "doc");
  over.read("over_i64", i);
  EXPECT_NE(over.error().find("doc at /over_i64: expected an integer from"), std::string::npos);

  JsonReader narrow(doc, "doc");
  int n = 0;
  narrow.read_int("over_int", n);
  EXPECT_EQ(narrow.error(),
            "doc at /over_int: expected an integer from -2147483648 to 2147483647, got 2147483648");

  const auto minus_three = json::parse(R"({"n":-3})");
  JsonReader negative(minus_three, "doc");
  negative.read("n", u);
  EXPECT_FALSE(negative.ok());
}

TEST(JsonReadTest, MissingAndNullAreTheZeroValueUnlessRequired) {
  const auto doc = json::parse(R"({"null":null,"empty":""})");
  JsonReader r(doc, "frame");
  std::string s = "kept";
  std::int64_t i = 5;
  r.read("absent", s);
  r.read("null", s);
  r.read("absent", i);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(s, "kept");
  EXPECT_EQ(i, 5);
  EXPECT_FALSE(r.has("null"));
  EXPECT_TRUE(r.has("empty"));

  for (const char* key : {"absent", "null", "empty"}) {
    JsonReader required(doc, "frame");
    std::string v;
    required.read_required(key, v);
    EXPECT_EQ(required.error(), std::string("frame at /") + key + ": missing");
  }
}

TEST(JsonReadTest, IntegersAsDecimalStringsAreRangeCheckedToo) {
  const auto doc = json::parse(
      R"({"rev":"-12","bad":"12x","big":"9223372036854775808","index":"42","neg":"-1"})");
  JsonReader r(doc, "range");
  std::int64_t rev = 0;
  r.read_int_text("rev", rev);
  EXPECT_EQ(rev, -12);
  r.read_int_text("bad", rev);
  EXPECT_EQ(r.error(),
            "range at /bad: expected an integer from -9223372036854775808 to 9223372036854775807 "
            "as a decimal string");
  JsonReader big(doc, "range");
  big.read_int_text("big", rev);
  EXPECT_FALSE(big.ok());
  EXPECT_EQ(rev, -12);

  JsonReader u(doc, "annotations");
  std::uint64_t index = 0;
  u.read_int_text("index", index);
  EXPECT_EQ(index, 42U);
  u.read_int_text("neg", index);
  EXPECT_FALSE(u.ok()) << "stoull would have wrapped -1 to 2^64-1";
  EXPECT_EQ(index, 42U);
}

TEST(JsonReadTest, TheFirstErrorIsKept) {
  const auto doc = json::parse(R"({"a":1,"b":true})");
  JsonReader r(doc, "doc");
  std::string a;
  std::string b;
  r.read("a", a);
  r.read("b", b);
  EXPECT_EQ(r.error(), "doc at /a: expected a string, got number");
}

TEST(JsonReadTest, BareValuesUseTheSameRangeCheck) {
  EXPECT_EQ(integer_in_range(json(42), 0, 100).value(), 42);
  EXPECT_EQ(integer_in_range(json(101), 0, 100).error(),
            "expected an integer from 0 to 100, got 101");
  EXPECT_FALSE(unsigned_in_range(json(-1), 0, 100));
  EXPECT_FALSE(unsigned_in_range(json("1"), 0, 100));
  EXPECT_EQ(unsigned_in_range(json(UINT64_MAX), 0, UINT64_MAX).value(), UINT64_MAX);
}

}  // namespace
}  // namespace cn::json
