// --log-format json: each field of a log line in its own key (labeler/daemon/log_line.h), and never
// invalid JSON whatever the bytes of a value.
#include "labeler/daemon/log_line.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>

#include "labeler/daemon/logging.h"

namespace cn::labeler {
namespace {

nlohmann::json members(std::string_view line) {
  return nlohmann::json::parse("{" + log_line_json_members(line) + "}");
}

TEST(LogLine, EachFieldInItsOwnKeyNumbersAsNumbers) {
  auto j = members(
      "labeled: alloc=5b4c2d1e-0000-4000-8000-000000000001 source=notify endpoint=1734 "
      "identity=48213 wrote=true degraded=false ms=4");
  EXPECT_EQ(j["msg"], "labeled");
  EXPECT_EQ(j["alloc"], "5b4c2d1e-0000-4000-8000-000000000001");
  EXPECT_EQ(j["source"], "notify");
  EXPECT_EQ(j["endpoint"], 1734);
  EXPECT_EQ(j["identity"], 48213);
  EXPECT_EQ(j["wrote"], true);
  EXPECT_EQ(j["degraded"], false);
  EXPECT_EQ(j["ms"], 4);
}

TEST(LogLine, QuotedValuesLoseTheirQuotesAndKeepInnerQuotes) {
  auto j = members(
      R"(not labeled: alloc=a1 source=watch outcome=pending reason="Nomad: 403 "Permission denied"" attempt=2 retry=resync fix="NOMAD_TOKEN lacks x=1")");
  EXPECT_EQ(j["msg"], "not labeled");
  EXPECT_EQ(j["reason"], R"(Nomad: 403 "Permission denied")");
  EXPECT_EQ(j["attempt"], 2);
  EXPECT_EQ(j["retry"], "resync");
  EXPECT_EQ(j["fix"], "NOMAD_TOKEN lacks x=1");
}

TEST(LogLine, MessageWithoutColonFractionalMsAndEmptyValue) {
  auto j =
      members("policy refused path=cilium/policies/web modify_index=7 kept_file=true reason=\"\"");
  EXPECT_EQ(j["msg"], "policy refused");
  EXPECT_EQ(j["modify_index"], 7);
  EXPECT_EQ(j["kept_file"], true);
  EXPECT_EQ(j["reason"], "");
  EXPECT_EQ(members("reconcile done: endpoints=3 ms=12.5")["ms"], 12.5);
  EXPECT_EQ(members("x: meta_labels= cluster=default")["meta_labels"], "");
}

TEST(LogLine, GroupBecomesAnObject) {
  auto j = members(
      R"(starting cilium-nomad-labeler v0.1.0: nomad={address="unix:///run/nomad.sock" token=set skip_verify=false connect_timeout_ms=5000} cilium={socket="/var/run/cilium/cilium.sock" retry_max_attempts=3} cluster=default)");
  EXPECT_EQ(j["msg"], "starting cilium-nomad-labeler v0.1.0");
  EXPECT_EQ(j["nomad"]["address"], "unix:///run/nomad.sock");
  EXPECT_EQ(j["nomad"]["token"], "set");
  EXPECT_EQ(j["nomad"]["skip_verify"], false);
  EXPECT_EQ(j["nomad"]["connect_timeout_ms"], 5000);
  EXPECT_EQ(j["cilium"]["retry_max_attempts"], 3);
  EXPECT_EQ(j["cluster"], "default");
}

TEST(LogLine, NumericKeyWithTextStaysAString) {
  EXPECT_EQ(members("cilium endpoint deleted with errors endpoint=container-id:abc")["endpoint"],
            "container-id:abc");
}

TEST(LogLine, LineOffTheConventionIsKeptWholeInMsg) {
  for (std::string_view line : {"=x", "a=1", "msg: level=3", "x: alloc=1 alloc=2",
                                R"(x: reason="unterminated)", "x: a={b=1"}) {
    auto j = members(line);
    EXPECT_EQ(j["msg"], line);
    EXPECT_EQ(j.size(), 1u) << j.dump();
  }
  EXPECT_EQ(members("agent refuses PATCH /v1/endpoint/{id}; using PATCH")["msg"],
            "agent refuses PATCH /v1/endpoint/{id}; using PATCH");
}

// Lines built from known fields (values without `" key=`) come back field by field.
TEST(LogLine, RoundTripOfGeneratedLines) {
  std::mt19937 rng(14);
  const std::vector<std::string> pieces{"a", "Z",    " ",  "\"", "\\",   "=",        "{",  "}",
                                        ":", "\x01", "\n", "\t", "\x7f", "\xc3\xa9", "x=", "\"\""};
  auto random_text = [&](std::size_t max) {
    std::string s;
    for (std::size_t n = rng() % (max + 1); n > 0; --n) s += pieces[rng() % pieces.size()];
    return s;
  };
  for (int i = 0; i < 3000; ++i) {
    std::string line = "event " + std::to_string(i) + ":";
    std::vector<std::pair<std::string, std::string>> fields;
    for (int f = 0, n = static_cast<int>(rng() % 5); f < n; ++f) {
      std::string key = "k" + std::to_string(f);
      std::string value = random_text(8);
      // What the convention cannot carry: a quoted value with `" key=` inside, or ending in a
      // quote before " key=" (only `"` followed by " x=" can end it).
      if (value.find("\" ") != std::string::npos || value.find("\"}") != std::string::npos) {
        continue;
      }
      line += " " + key + "=\"" + value + "\"";
      fields.emplace_back(key, value);
    }
    auto parsed = parse_log_line(line);
    ASSERT_TRUE(parsed) << line;
    ASSERT_EQ(parsed->fields.size(), fields.size()) << line;
    for (std::size_t f = 0; f < fields.size(); ++f) {
      EXPECT_EQ(parsed->fields[f].key, fields[f].first) << line;
      EXPECT_EQ(parsed->fields[f].value, fields[f].second) << line;
    }
    auto j = members(line);  // throws on invalid JSON
    for (const auto& [key, value] : fields) {
      if (value.find_first_of("\x80\xff") == std::string::npos) {
        EXPECT_EQ(j[key], value) << line;
      }
    }
  }
}

// Any bytes at all, through the real formatter: one valid JSON object per line.
TEST(LogLine, FuzzedPayloadsAlwaysGiveValidJson) {
  std::ostringstream out;
  auto logger =
      std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  auto formatter = make_log_formatter("json");
  ASSERT_TRUE(formatter);
  logger->set_formatter(std::move(*formatter));
  std::mt19937 rng(6);
  const std::vector<std::string> pieces{"a",
                                        " ",
                                        "\"",
                                        "\\",
                                        "=",
                                        "{",
                                        "}",
                                        ":",
                                        "\n",
                                        "\r",
                                        std::string(1, '\0'),
                                        "\x1f",
                                        "\x80",
                                        "\xff",
                                        "\xe2\x82",
                                        "\xed\xa0\x80",
                                        "alloc=",
                                        "ms=",
                                        "msg=",
                                        "level=",
                                        " error=\"",
                                        "\u00e9"};
  int lines = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string payload;
    for (std::size_t n = rng() % 24; n > 0; --n) payload += pieces[rng() % pieces.size()];
    out.str("");
    logger->info("{}", payload);
    std::string text = out.str();
    ASSERT_TRUE(text.ends_with("\n")) << text;
    text.pop_back();
    ASSERT_EQ(text.find('\n'), std::string::npos) << "one line per event: " << text;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(text)) << text;
    ASSERT_TRUE(j.is_object());
    ASSERT_TRUE(j["msg"].is_string()) << text;
    EXPECT_EQ(j["level"], "info");
    ++lines;
  }
  EXPECT_EQ(lines, 5000);
}

TEST(LogFormat, TextFormatPrintsTheLineAsWritten) {
  std::ostringstream out;
  auto logger =
      std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  auto formatter = make_log_formatter("text");
  ASSERT_TRUE(formatter);
  logger->set_formatter(std::move(*formatter));
  const std::string line = R"(not labeled: alloc=a source=watch reason="x "y" \z" attempt=1)";
  logger->warn("{}", line);
  EXPECT_TRUE(std::regex_match(
      out.str(),
      std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z warning )" +
                 std::regex_replace(line, std::regex(R"([\\^$.|?*+()\[\]{}])"), R"(\$&)") + "\n")))
      << out.str();
  EXPECT_FALSE(make_log_formatter("yaml"));
}

}  // namespace
}  // namespace cn::labeler
