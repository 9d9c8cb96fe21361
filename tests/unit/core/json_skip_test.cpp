// The byte scanner behind parse_json_text(text, what, fields) (json_field_filter.h): members no
// field lists are stepped over without being decoded, and must still be refused when malformed,
// as nlohmann refuses them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/nomad/model/allocation.h"
#include "common/util/json_read.h"
#include "tests/unit/core/nomad_model_test_support.h"

namespace cn::json {
namespace {

const Fields kKeepIdMetaGroupNames = {{"id", {}}, {"meta", {}}, {"groups", {{"name", {}}}}};

bool nlohmann_accepts(const std::string& text) {
  return nlohmann::json::accept(text);
}

TEST(JsonSkipTest, QuotesEscapesAndBracketsInsideSkippedStringsAreText) {
  const std::string text =
      R"({"skip":"a\"]}[{\\","more":["\"{", "\\\"", "\u005d\ud83d\ude00\/\b\f\n\r\t"],)"
      R"("id":"x", "tail": {"k": "}]\"["}})";
  ASSERT_TRUE(nlohmann_accepts(text));
  auto doc = parse_json_text(text, "doc", kKeepIdMetaGroupNames);
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(*doc, nlohmann::json::parse(R"({"id":"x"})"));
}

TEST(JsonSkipTest, KeptValuesEqualWhatNlohmannBuilds) {
  const std::string text =
      R"( { "id" : "caf\u00e9 \"q\"" , "meta" : {"n": -12, "f": 1.5e3, "big": 18446744073709551615,)"
      R"( "huge": 123456789012345678901234, "z": 0, "t": true, "nil": null, "s": "é", "a": []},)"
      R"( "groups": [{"name": "g", "x": [1, {"y": 2}]}, {"name": null}, 3, "s"] } )";
  auto doc = parse_json_text(text, "doc", kKeepIdMetaGroupNames);
  ASSERT_TRUE(doc) << doc.error().message;
  auto whole = nlohmann::json::parse(text);
  EXPECT_EQ((*doc)["id"], whole["id"]);
  EXPECT_EQ((*doc)["meta"], whole["meta"]);
  EXPECT_EQ((*doc)["groups"], nlohmann::json::parse(R"([{"name":"g"},{"name":null},3,"s"])"));
}

TEST(JsonSkipTest, EscapedKeysAreMatchedDecoded) {
  auto doc = parse_json_text(R"({"\u0069d":"a","i\u0064x":1})", "doc", kKeepIdMetaGroupNames);
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(*doc, nlohmann::json::parse(R"({"id":"a"})"));
}

// Every malformed body is refused, as nlohmann refuses it, wherever the fault sits: in a skipped
// member, a kept one, or around the document.
TEST(JsonSkipTest, MalformedInputIsRefusedWithTheReason) {
  struct Case {
    std::string text;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {R"({"skip":"abc)", "unterminated string"},
      {R"({"skip":"abc\)", "unterminated string"},
      {R"({"skip":"\u12)", "unterminated string"},
      {R"({"skip":"\q"})", "invalid escape"},
      {R"({"skip":"\u12g4"})", "invalid \\u escape"},
      {"{\"skip\":\"a\nb\"}", "control character"},
      {R"({"skip":[1,]})", "unexpected character"},
      {R"({"skip":[1 2]})", "expected ',' or ']'"},
      {R"({"skip":[}])", "unexpected character"},
      {R"({"skip":{]})", "expected a key"},
      {R"({"skip":{"a"}})", "expected ':'"},
      {R"({"skip":{"a":1,}})", "expected a key"},
      {R"({"skip":{"a":1]})", "expected ',' or '}'"},
      {R"({"skip":{1:2}})", "expected a key"},
      {R"({"skip":tru})", "invalid literal"},
      {R"({"skip":nul)", "unexpected end of input"},
      {R"({"skip":01})", "expected ',' or '}'"},
      {R"({"skip":1.})", "invalid number"},
      {R"({"skip":-})", "invalid number"},
      {R"({"skip":1e})", "invalid number"},
      {R"({"skip":+1})", "unexpected character"},
      {R"({"skip":'a'})", "unexpected character"},
      {R"({"skip" 1})", "expected ':'"},
      {R"({"id":"a",})", "expected a key"},
      {R"({"id":"a" "meta":{}})", "expected ',' or '}'"},
      {R"({"id":"a","skip":[1,2)", "unexpected end of input"},
      {R"({"id":"a"} x)", "unexpected data after the document"},
      {R"({"id":"a"}{})", "unexpected data after the document"},
      {R"({"id":"a"]})", "expected ',' or '}'"},
      {R"({"id":"\x"})", "invalid escape"},
      {R"({"meta":{"k":[}})", "unexpected character"},
      {"", "unexpected end of input"},
      {"   ", "unexpected end of input"},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(nlohmann_accepts(c.text)) << "not a malformed case: " << c.text;
    auto doc = parse_json_text(c.text, "doc", kKeepIdMetaGroupNames);
    ASSERT_FALSE(doc) << c.text;
    EXPECT_NE(doc.error().message.find("doc: invalid JSON: " + c.reason), std::string::npos)
        << c.text << " -> " << doc.error().message;
  }
}

TEST(JsonSkipTest, KeptValuesAreCheckedFullyIncludingUtf8) {
  // The scanner does not decode a skipped string, so invalid UTF-8 passes there (documented in
  // json_field_filter.h); a kept one goes through nlohmann, which refuses it.
  auto kept = parse_json_text("{\"id\":\"\xff\"}", "doc", kKeepIdMetaGroupNames);
  ASSERT_FALSE(kept);
  EXPECT_NE(kept.error().message.find("doc: invalid JSON"), std::string::npos);
  auto skipped = parse_json_text("{\"skip\":\"\xff\",\"id\":\"a\"}", "doc", kKeepIdMetaGroupNames);
  ASSERT_TRUE(skipped) << skipped.error().message;
  EXPECT_EQ(*skipped, nlohmann::json::parse(R"({"id":"a"})"));
}

TEST(JsonSkipTest, DepthLimitCountsSkippedContainers) {
  auto nested = [](int levels) {
    return R"({"id":"a","skip":)" + std::string(levels, '[') + std::string(levels, ']') + "}";
  };
  // The root object plus 127 arrays: 128 containers, the limit.
  auto at_limit = parse_json_text(nested(127), "doc", kKeepIdMetaGroupNames);
  EXPECT_TRUE(at_limit) << at_limit.error().message;
  auto beyond = parse_json_text(nested(128), "doc", kKeepIdMetaGroupNames);
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().message.find("doc: JSON nested deeper than 128"), std::string::npos)
      << beyond.error().message;
  // A deep value never runs the scanner out of stack: it keeps its own, bounded by the limit.
  auto huge =
      parse_json_text(R"({"skip":)" + std::string(100'000, '['), "doc", kKeepIdMetaGroupNames);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("deeper"), std::string::npos);
  auto objects = parse_json_text(
      R"({"skip":)" + std::string(200, '[') + "{\"a\":" + std::string(200, ']') + "}", "doc",
      kKeepIdMetaGroupNames);
  ASSERT_FALSE(objects);
  EXPECT_NE(objects.error().message.find("deeper"), std::string::npos);
}

// A body cut anywhere (a dropped connection, a proxy's limit) is refused, never read as a
// shorter list.
TEST(JsonSkipTest, EveryTruncationOfANodeListIsRefused) {
  const std::string alloc = testdata::read_data("nomad/alloc_get.json");
  const std::string body = "[" + alloc + "," + alloc + "]";
  ASSERT_TRUE(nomad::parse_allocation_list(body));
  auto select_none = [](std::string_view, std::uint64_t) { return false; };
  // Every cut in the first and last 150 bytes, and one in 53 between (ASan is slow).
  for (std::size_t n = 0; n < body.size(); n += (n < 150 || n + 150 > body.size()) ? 1 : 53) {
    const std::string cut = body.substr(0, n);
    ASSERT_FALSE(nomad::parse_allocation_list(cut)) << "accepted a cut at byte " << n;
    ASSERT_FALSE(nomad::parse_allocation_list(cut, select_none)) << "accepted a cut at byte " << n;
  }
}

TEST(JsonSkipTest, ListBodyElementByElementWithADeferredMember) {
  std::vector<nlohmann::json> elements;
  std::vector<std::string> deferred;
  auto status = parse_json_list(
      R"([{"id":"a","Job":{"x":[1,"]"]},"n":1},{"Job":null,"id":"b"},{"id":"c"},7])", "list",
      kKeepIdMetaGroupNames, "Job", [&](nlohmann::json&& element, std::string_view text) {
        elements.push_back(std::move(element));
        deferred.emplace_back(text);
      });
  ASSERT_TRUE(status) << status.error().message;
  ASSERT_EQ(elements.size(), 4U);
  EXPECT_EQ(elements[0], nlohmann::json::parse(R"({"id":"a"})"));
  EXPECT_EQ(deferred, (std::vector<std::string>{R"({"x":[1,"]"]})", "", "", ""}));
  EXPECT_EQ(elements[3], 7);
  EXPECT_TRUE(
      parse_json_list("null", "list", kKeepIdMetaGroupNames, "Job", [](auto&&, auto) { FAIL(); }));
  auto object = parse_json_list("{}", "list", kKeepIdMetaGroupNames, "Job", [](auto&&, auto) {});
  ASSERT_FALSE(object);
  EXPECT_NE(object.error().message.find("list: invalid JSON: expected an array"),
            std::string::npos);
  EXPECT_FALSE(parse_json_list(R"([{"Job":{"x":[}}])", "list", kKeepIdMetaGroupNames, "Job",
                               [](auto&&, auto) {}));
}

}  // namespace
}  // namespace cn::json
