// Malformed input gets the CNI error JSON on stdout, exit 1, and leaves the state file untouched.
#include <filesystem>

#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

using nlohmann::json;

class BadInputTest : public PluginTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(invoke("ADD", conf()).exit_code, 0);
    before_ = state_text();
  }

  // Asserts an error result with `code` and an unchanged state file.
  void expect_error(const Outcome& out, int code) {
    EXPECT_EQ(out.exit_code, 1);
    json j = json::parse(out.stdout_data, nullptr, false);
    ASSERT_TRUE(j.is_object()) << out.stdout_data;
    EXPECT_EQ(j["code"], code) << out.stdout_data;
    EXPECT_TRUE(j["msg"].is_string() && !j["msg"].get<std::string>().empty());
    EXPECT_TRUE(j.contains("cniVersion"));
    EXPECT_EQ(state_text(), before_);
  }

  std::string before_;
};

TEST_F(BadInputTest, MalformedJson) {
  expect_error(invoke(env("ADD"), "{\"cniVersion\":"), 6);
}
TEST_F(BadInputTest, NotAnObject) {
  expect_error(invoke(env("ADD"), "[1,2]"), 6);
}
TEST_F(BadInputTest, EmptyStdin) {
  expect_error(invoke(env("ADD"), ""), 6);
}

TEST_F(BadInputTest, InvalidUtf8) {
  expect_error(invoke(env("ADD"), "{\"cniVersion\":\"1.0.0\",\"name\":\"\xff\xfe\"}"), 6);
}

TEST_F(BadInputTest, TenMegabyteStdin) {
  std::string huge =
      "{\"cniVersion\":\"1.0.0\",\"pad\":\"" + std::string(10 * 1024 * 1024, 'a') + "\"}";
  expect_error(invoke(env("ADD"), huge), 6);
}

TEST_F(BadInputTest, MissingPrevResult) {
  auto c = conf();
  c.erase("prevResult");
  expect_error(invoke("ADD", c), 7);
}

TEST_F(BadInputTest, PrevResultOfTheWrongType) {
  auto c = conf();
  c["prevResult"] = "nope";
  expect_error(invoke("ADD", c), 7);
  c["prevResult"] = cilium_result();
  c["prevResult"]["ips"] = 5;
  expect_error(invoke("ADD", c), 7);
  c["prevResult"] = cilium_result();
  c["prevResult"]["ips"][0]["address"] = 10;
  expect_error(invoke("ADD", c), 7);
}

TEST_F(BadInputTest, WrongTypesInOurKeys) {
  for (auto [key, value] : {std::pair<std::string, json>{"wait-for-labels-ms", "3000"},
                            {"wait-for-labels-ms", -1},
                            {"wait-for-labels-ms", 1.5},
                            {"state-file", 3},
                            {"labeler-socket", json::array()},
                            {"log-file", json::object()},
                            {"cniVersion", 1}}) {
    auto c = conf();
    c[key] = value;
    SCOPED_TRACE(key + "=" + value.dump());
    auto out = invoke("ADD", c);
    EXPECT_EQ(out.exit_code, 1);
    EXPECT_EQ(json::parse(out.stdout_data)["code"], 7);
    EXPECT_EQ(state_text(), before_);
  }
}

TEST_F(BadInputTest, UnsupportedCniVersion) {
  auto c = conf();
  c["cniVersion"] = "2.0.0";
  expect_error(invoke("ADD", c), 1);
}

TEST_F(BadInputTest, MissingCniVersion) {
  auto c = conf();
  c.erase("cniVersion");
  expect_error(invoke("ADD", c), 7);
}

TEST_F(BadInputTest, MissingOrInvalidContainerId) {
  for (std::string id :
       {"", "not-a-uuid", "../../etc/passwd", "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f1"}) {
    SCOPED_TRACE(id);
    auto e = env("ADD");
    e["CNI_CONTAINERID"] = id;
    expect_error(invoke(e, conf().dump()), 4);
  }
  auto e = env("ADD");
  e.erase("CNI_CONTAINERID");
  expect_error(invoke(e, conf().dump()), 4);
}

TEST_F(BadInputTest, MissingOrInvalidIfname) {
  for (std::string ifname : {"", "eth/0", "averyveryverylongname", "eth 0"}) {
    SCOPED_TRACE(ifname);
    auto e = env("ADD");
    e["CNI_IFNAME"] = ifname;
    expect_error(invoke(e, conf().dump()), 4);
  }
}

TEST_F(BadInputTest, UnknownCommand) {
  expect_error(invoke(env("FROB"), conf().dump()), 4);
}

TEST_F(BadInputTest, DelWithMalformedInputIsAnErrorButTouchesNothing) {
  expect_error(invoke(env("DEL"), "garbage"), 6);
}

}  // namespace
}  // namespace cn::plugin
