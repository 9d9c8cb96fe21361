// A misspelled setting in our netconf would be ignored in silence and its default used: the plugin
// says so in one warning line on stderr, and otherwise behaves as without the key (fail-open,
// stdout CNI JSON only).
#include "common/cni/netconf_keys.h"

#include <algorithm>

#include "tests/unit/plugin/plugin_test_fixture.h"

namespace cn::plugin {
namespace {

using nlohmann::json;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(NetconfKeys, NearestKnownKey) {
  EXPECT_EQ(cni::nearest_netconf_key("wait-for-label-ms"), "wait-for-labels-ms");
  EXPECT_EQ(cni::nearest_netconf_key("labeler_socket"), "labeler-socket");
  EXPECT_EQ(cni::nearest_netconf_key("statefile"), "state-file");
  EXPECT_EQ(cni::nearest_netconf_key("logfile"), "log-file");
  EXPECT_EQ(cni::nearest_netconf_key("LogFile"), "log-file");
  EXPECT_EQ(cni::nearest_netconf_key("cniversion"), "cniVersion");
  EXPECT_EQ(cni::nearest_netconf_key("something-else-entirely"), "");
}

TEST(NetconfKeys, SpecAndRuntimeKeysAreKnown) {
  json netconf = {{"cniVersion", "1.1.0"},
                  {"name", "cilium"},
                  {"type", "cilium-nomad-cni"},
                  {"labeler-socket", "/s"},
                  {"state-file", "/f"},
                  {"wait-for-labels-ms", 1},
                  {"log-file", ""},
                  {"prevResult", json::object()},
                  {"runtimeConfig", json::object()},
                  {"capabilities", json::object()},
                  {"args", json::object()},
                  {"ipam", json::object()},
                  {"dns", json::object()},
                  {"ipMasq", false},
                  {"cni.dev/valid-attachments", json::array()},
                  {"cni.dev/attachments", json::array()}};
  EXPECT_TRUE(cni::unknown_netconf_keys(netconf).empty());
  netconf["wait_for_labels"] = 5;
  EXPECT_EQ(cni::unknown_netconf_keys(netconf), std::vector<std::string>{"wait_for_labels"});
}

TEST(NetconfKeys, DescriptionStaysOneShortLine) {
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) keys.push_back("k" + std::to_string(i) + "\n\"x");
  keys.push_back(std::string(500, 'a'));
  const auto text = cni::describe_unknown_keys(keys);
  EXPECT_EQ(text.find_first_of("\n\r\""), std::string::npos) << text;
  EXPECT_LT(text.size(), 400u) << text;
  EXPECT_NE(text.find("and 13 more"), std::string::npos) << text;
}

class NetconfKeysPluginTest : public PluginTest {};

TEST_F(NetconfKeysPluginTest, MisspelledKeysGiveOneWarningLineAndAddStillSucceeds) {
  json c = conf();
  c.erase("wait-for-labels-ms");
  c["wait-for-label-ms"] = 0;
  c["labeler_socket"] = "/nowhere.sock";
  auto out = invoke("ADD", c);
  EXPECT_EQ(out.exit_code, 0) << out.stderr_data;
  EXPECT_EQ(json::parse(out.stdout_data), c["prevResult"]) << "stdout is the CNI result only";
  EXPECT_EQ(count(out.stderr_data, "netconf keys ignored"), 1u) << out.stderr_data;
  EXPECT_NE(out.stderr_data.find("wait-for-label-ms (did you mean wait-for-labels-ms?)"),
            std::string::npos)
      << out.stderr_data;
  EXPECT_NE(out.stderr_data.find("labeler_socket (did you mean labeler-socket?)"),
            std::string::npos)
      << out.stderr_data;
  const auto line_start = out.stderr_data.rfind('\n', out.stderr_data.find("netconf keys"));
  EXPECT_NE(out.stderr_data.substr(line_start + 1, 40).find(" warning "), std::string::npos)
      << out.stderr_data;
}

TEST_F(NetconfKeysPluginTest, WarningStaysOnStderrWhenALogFileIsSet) {
  json c = conf();
  c["log-file"] = dir_.file("plugin.log");
  c["wait-for-lables-ms"] = 0;
  auto out = invoke("ADD", c);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(count(out.stderr_data, "netconf keys ignored"), 1u) << out.stderr_data;
}

TEST_F(NetconfKeysPluginTest, ACleanNetconfGivesNoWarning) {
  auto out = invoke("ADD", conf());
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.stderr_data.find("netconf keys ignored"), std::string::npos) << out.stderr_data;
}

}  // namespace
}  // namespace cn::plugin
