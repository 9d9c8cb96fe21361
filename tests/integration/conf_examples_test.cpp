// The deployment kit in conf-examples/ against the code it configures: the conflist entry is
// run through the real plugin the way Nomad would run it, every labeler option the job files
// and the systemd unit pass must exist in the labeler's CLI, and paths and label keys must
// agree with the code's defaults. Operators copy these files verbatim, so drift here is a
// broken deployment, not a cosmetic problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/cni/plugin_conf.h"
#include "common/labels/derive_labels.h"
#include "common/policy/policy_document.h"
#include "labeler/serve/metrics.h"
#include "tests/support/cni_chain.h"
#include "tests/support/netns.h"
#include "tests/support/process.h"
#include "tests/support/stub_labeler.h"
#include "tests/support/temp_dir.h"

namespace cn::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Files that pass options to `cilium-nomad-labeler run`.
const std::vector<std::string> kLabelerCallers = {"cilium-nomad-labeler.nomad.hcl",
                                                  "cilium-nomad-labeler.raw_exec.nomad.hcl",
                                                  "cilium-nomad-labeler.service"};

std::string examples_dir() {
  return source_dir() + "/conf-examples";
}
std::string example(const std::string& name) {
  return examples_dir() + "/" + name;
}

json load_json(const std::string& path) {
  return json::parse(read_file(path), nullptr, false);
}

bool executable(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

// A cilium-cni result for a docker task, shaped as cni.md section 5 describes it: host veth
// first, the container interface last with its sandbox, one /32 pointing at it.
json cilium_cni_result() {
  return json::parse(R"({
    "cniVersion": "1.0.0",
    "interfaces": [
      {"name": "lxc5b2f3c9d1e0a", "mac": "9a:0c:51:7e:2b:44"},
      {"name": "eth0", "mac": "e6:3d:8f:10:aa:07", "sandbox": "/var/run/docker/netns/8e1f0c2a7b3d"}
    ],
    "ips": [{"interface": 1, "address": "10.200.3.17/32", "gateway": "10.200.3.1"}],
    "routes": [{"dst": "10.200.3.1/32"}, {"dst": "0.0.0.0/0", "gw": "10.200.3.1"}]
  })");
}

// Text without whole-line `#` comments (HCL and systemd both use them).
std::string strip_comment_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '#') continue;
    out += line + "\n";
  }
  return out;
}

// The part of a file that invokes the labeler: the task's `args = [...]` list in a job file,
// the (continued) `ExecStart=` line in a unit. Elsewhere `--x` may belong to other tools
// (`systemctl enable --now`).
std::string labeler_invocation(const std::string& file_name, const std::string& text) {
  if (file_name.ends_with(".hcl")) {
    std::smatch m;
    static const std::regex args("\\bargs\\s*=\\s*\\[[^\\]]*\\]");
    return std::regex_search(text, m, args) ? m.str() : std::string();
  }
  std::istringstream in(text);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && !line.starts_with("ExecStart=")) continue;
    inside = true;
    out += line + "\n";
    if (!line.ends_with("\\")) break;
  }
  return out;
}

// Every `--option` token in an invocation, commented entries included: even a commented-out
// example must name a real option, or an operator who uncomments it gets a labeler that
// refuses to start.
std::set<std::string> options_named_in(const std::string& text) {
  static const std::regex re("--[a-z][a-z0-9-]*");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out.insert(it->str());
  }
  return out;
}

// Option -> value as actually passed (comments removed). HCL args lists hold
// `"--opt", "value"`; a systemd ExecStart holds `--opt value` across `\` continuations.
std::map<std::string, std::string> options_passed_in(const std::string& file_name,
                                                     const std::string& text) {
  std::string live = strip_comment_lines(text);
  std::map<std::string, std::string> out;
  if (file_name.ends_with(".hcl")) {
    static const std::regex pair("\"(--[a-z][a-z0-9-]*)\"\\s*,\\s*\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(live.begin(), live.end(), pair);
         it != std::sregex_iterator(); ++it) {
      out[(*it)[1]] = (*it)[2];
    }
  } else {
    std::string joined = std::regex_replace(live, std::regex("\\\\\n"), " ");
    static const std::regex pair("(--[a-z][a-z0-9-]*)[ \t]+([^ \t\n-][^ \t\n]*)");
    for (auto it = std::sregex_iterator(joined.begin(), joined.end(), pair);
         it != std::sregex_iterator(); ++it) {
      out[(*it)[1]] = (*it)[2];
    }
  }
  return out;
}

// Whether CLI11's help lists `option` as a whole word (so `--socket` does not pass because
// of `--cilium-socket`).
bool help_lists(const std::string& help, const std::string& option) {
  std::regex re("(^|[\\s,])" + option + "([^a-z0-9-]|$)");
  return std::regex_search(help, re);
}

// The default CLI11 prints for `option` (`--socket TEXT=/run/...`), or empty.
std::string help_default(const std::string& help, const std::string& option) {
  std::regex re("(^|[\\s,])" + option + " [^\\s=]*=(\\S*)");
  std::smatch m;
  return std::regex_search(help, m, re) ? m[2].str() : std::string();
}

json* our_plugin(json& conflist) {
  for (auto& p : conflist["plugins"]) {
    if (p.value("type", "") == "cilium-nomad-cni") return &p;
  }
  return nullptr;
}

class ConfExamplesTest : public ::testing::Test {
 protected:
  std::string plugin_bin() const { return bin_dir() + "/cilium-nomad-cni"; }
  std::string labeler_bin() const { return bin_dir() + "/cilium-nomad-labeler"; }

  // `cilium-nomad-labeler run --help`. A missing binary is a skip (checked by the caller); a
  // built one whose help fails is a failure.
  void read_labeler_help(std::string& help) const {
    auto r = run_process({labeler_bin(), "run", "--help"}, {}, "");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    help = r.out + r.err;
  }

  json conflist() const { return load_json(example("cilium.conflist")); }
};

TEST_F(ConfExamplesTest, EveryJsonFileParses) {
  ASSERT_TRUE(fs::is_directory(examples_dir())) << examples_dir();
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(examples_dir())) {
    auto ext = entry.path().extension().string();
    if (ext != ".json" && ext != ".conflist") continue;
    ++seen;
    SCOPED_TRACE(entry.path().string());
    EXPECT_FALSE(load_json(entry.path().string()).is_discarded()) << "not valid JSON";
  }
  EXPECT_GE(seen, 2) << "expected at least cilium.conflist and policy-web.json";
}

TEST_F(ConfExamplesTest, ConflistChainsOurPluginAfterCiliumCniWithAllDefaults) {
  json c = conflist();
  ASSERT_TRUE(c.is_object());
  // 1.0.0: with 1.1.0 Nomad >= 1.9.5 sends STATUS first and skips DEL when any plugin fails it.
  EXPECT_EQ(c.value("cniVersion", ""), "1.0.0");
  // cilium-cni takes any other name that comes with a prevResult for a chaining mode.
  EXPECT_EQ(c.value("name", ""), "cilium");
  ASSERT_TRUE(c["plugins"].is_array());
  ASSERT_EQ(c["plugins"].size(), 2u);
  EXPECT_EQ(c["plugins"][0].value("type", ""), "cilium-cni");
  EXPECT_EQ(c["plugins"][0].value("enable-debug", true), false);
  EXPECT_EQ(c["plugins"][0].value("log-file", ""), "/var/run/cilium/cilium-cni.log");

  const json& ours = c["plugins"][1];
  EXPECT_EQ(ours.value("type", ""), "cilium-nomad-cni");
  // Every key written out, at the default the code uses when it is absent.
  cni::PluginConf defaults;
  std::set<std::string> keys;
  for (const auto& [k, v] : ours.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"type", "labeler-socket", "state-file",
                                         "wait-for-labels-ms", "log-file"}));
  EXPECT_EQ(ours.value("labeler-socket", ""), defaults.labeler_socket);
  EXPECT_EQ(ours.value("state-file", ""), defaults.state_file);
  EXPECT_EQ(ours.value("wait-for-labels-ms", -1), defaults.wait_for_labels_ms);
  EXPECT_EQ(ours.value("log-file", "?"), defaults.log_file);

  // And the plugin's own parser accepts it as the runtime would hand it over.
  CniChain chain(c, "", {});
  auto parsed = cni::parse_plugin_conf(chain.plugin_stdin(1, nullptr).dump());
  ASSERT_TRUE(parsed.has_value()) << parsed.error().msg << ": " << parsed.error().details;
  EXPECT_EQ(parsed->labeler_socket, defaults.labeler_socket);
}

TEST_F(ConfExamplesTest, PluginRunsTheConflistEntryForAddAndDelAsNomadWould) {
  if (!executable(plugin_bin())) GTEST_SKIP() << plugin_bin() << " is not built";
  TempDir dir;
  json c = conflist();
  ASSERT_TRUE(c.is_object());
  ASSERT_NE(our_plugin(c), nullptr) << "no cilium-nomad-cni entry";
  json& ours = *our_plugin(c);
  // Only the paths move into the sandbox; wait-for-labels-ms and everything else stay as written.
  ours["state-file"] = dir.file("run/state.json");
  ours["labeler-socket"] = dir.file("labeler.sock");
  ours["log-file"] = dir.file("plugin.log");
  const std::size_t index = 1;
  StubLabeler labeler(dir.file("labeler.sock"), StubLabeler::Mode::kConfirm);

  const std::string alloc = random_alloc_id();
  const std::string netns = "/var/run/docker/netns/8e1f0c2a7b3d";
  const json prev = cilium_cni_result();
  CniChain chain(c, "", {});
  const std::string input = chain.plugin_stdin(index, &prev).dump();

  // ADD: Nomad 1.9.4+ environment (alloc ID as container ID, eth0, NOMAD_* in CNI_ARGS).
  auto add = run_process({plugin_bin()}, nomad_cni_env("ADD", alloc, netns, {bin_dir()}), input);
  ASSERT_EQ(add.exit_code, 0) << add.out << add.err << read_file(dir.file("plugin.log"));
  json out = json::parse(add.out, nullptr, false);
  EXPECT_EQ(out, prev) << "a chained plugin must pass prevResult on unchanged; got: " << add.out;

  ASSERT_TRUE(labeler.wait_for_requests(1));
  auto req = labeler.requests().at(0);
  EXPECT_EQ(req.op, notify::Op::kAdd);
  EXPECT_EQ(req.alloc_id, alloc);
  EXPECT_EQ(req.ifname, "eth0");
  EXPECT_EQ(req.netns, netns);
  EXPECT_EQ(req.ips, (std::vector<std::string>{"10.200.3.17"}));
  EXPECT_EQ(req.nomad.namespace_, "default");
  EXPECT_EQ(req.nomad.job_id, "web");
  EXPECT_EQ(req.nomad.group, "app");
  EXPECT_EQ(req.wait_ms, c["plugins"][index]["wait-for-labels-ms"].get<int>());

  json state = load_json(dir.file("run/state.json"));
  ASSERT_TRUE(state.is_object()) << read_file(dir.file("run/state.json"));
  EXPECT_TRUE(state["allocations"].contains(alloc));

  // DEL: Nomad sends no CNI_ARGS on teardown; libcni passes the cached ADD result.
  auto del_env = nomad_cni_env("DEL", alloc, netns, {bin_dir()});
  del_env.erase("CNI_ARGS");
  auto del = run_process({plugin_bin()}, del_env, input);
  EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_EQ(del.out, "");
  ASSERT_TRUE(labeler.wait_for_requests(2));
  EXPECT_EQ(labeler.requests().at(1).op, notify::Op::kDel);
  state = load_json(dir.file("run/state.json"));
  // What stays is a tombstone, so that labeling still in flight never brings the entry back.
  EXPECT_EQ(state["allocations"][alloc].size(), 1U) << state.dump();
  EXPECT_TRUE(state["allocations"][alloc].contains("deleted_unix_ms")) << state.dump();

  // A repeated DEL (Nomad retries teardown) is still success.
  auto again = run_process({plugin_bin()}, del_env, input);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
}

TEST_F(ConfExamplesTest, PluginAnswersStatusAndTheFingerprintTheJobConstrainsOn) {
  if (!executable(plugin_bin())) GTEST_SKIP() << plugin_bin() << " is not built";
  TempDir dir;
  json c = conflist();
  ASSERT_NE(our_plugin(c), nullptr);
  json& ours = *our_plugin(c);
  ours["state-file"] = dir.file("state.json");
  ours["labeler-socket"] = dir.file("labeler.sock");
  ours["log-file"] = dir.file("plugin.log");

  // What README.md promises for a switch to 1.1.0: STATUS succeeds (with no labeler running).
  c["cniVersion"] = "1.1.0";
  CniChain chain(c, "", {});
  auto status = run_process({plugin_bin()}, {{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", bin_dir()}},
                            chain.plugin_stdin(1, nullptr).dump());
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_EQ(status.out, "");

  // Nomad's fingerprint: no CNI_COMMAND, no stdin, first semver of stdout+stderr becomes
  // attr.plugins.cni.version.cilium-nomad-cni, which the job's constraint requires.
  auto probe = run_process({plugin_bin()}, {}, "");
  EXPECT_EQ(probe.exit_code, 0) << probe.out << probe.err;
  EXPECT_TRUE(std::regex_search(probe.out + probe.err, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+")))
      << probe.out << probe.err;
}

TEST_F(ConfExamplesTest, LabelerAcceptsEveryOptionTheJobsAndUnitPass) {
  if (!executable(labeler_bin())) GTEST_SKIP() << labeler_bin() << " is not built";
  std::string help;
  ASSERT_NO_FATAL_FAILURE(read_labeler_help(help));
  for (const auto& name : kLabelerCallers) {
    SCOPED_TRACE(name);
    std::string text = read_file(example(name));
    ASSERT_FALSE(text.empty()) << "missing " << example(name);
    std::string invocation = labeler_invocation(name, text);
    ASSERT_FALSE(invocation.empty()) << "no args list / ExecStart";
    auto named = options_named_in(invocation);
    EXPECT_GE(named.size(), 2u) << "expected the labeler's options in the file";
    for (const auto& option : named) {
      EXPECT_TRUE(help_lists(help, option))
          << option << " is not an option of `cilium-nomad-labeler run`";
    }
    // acl-policy.hcl grants no agent read, so every deployment must name the node itself
    // (otherwise the labeler asks GET /v1/agent/self and gets 403).
    auto passed = options_passed_in(name, invocation);
    EXPECT_TRUE(passed.contains("--node-id")) << "--node-id must be passed";
    EXPECT_TRUE(
        std::regex_search(strip_comment_lines(invocation), std::regex("(^|[\\s\"])run([\\s\"]|$)")))
        << "the `run` subcommand must be invoked";
  }
}

TEST_F(ConfExamplesTest, LabelerSocketAndStateFileAgreeWithTheConflist) {
  if (!executable(labeler_bin())) GTEST_SKIP() << labeler_bin() << " is not built";
  std::string help;
  ASSERT_NO_FATAL_FAILURE(read_labeler_help(help));
  json c = conflist();
  ASSERT_NE(our_plugin(c), nullptr);
  const json& ours = *our_plugin(c);
  const std::map<std::string, std::string> conflist_value = {
      {"--socket", ours.value("labeler-socket", "")},
      {"--state-file", ours.value("state-file", "")}};
  for (const auto& [option, expected] : conflist_value) {
    std::string fallback = help_default(help, option);
    ASSERT_FALSE(fallback.empty()) << "no default for " << option << " in:\n" << help;
    for (const auto& name : kLabelerCallers) {
      SCOPED_TRACE(name + " " + option);
      auto passed = options_passed_in(name, labeler_invocation(name, read_file(example(name))));
      std::string effective = passed.contains(option) ? passed[option] : fallback;
      EXPECT_EQ(effective, expected) << "the plugin and the labeler would not meet";
    }
  }
}

TEST_F(ConfExamplesTest, JobHealthCheckTargetsTheMetricsListener) {
  std::string text = read_file(example("cilium-nomad-labeler.nomad.hcl"));
  auto passed = options_passed_in("cilium-nomad-labeler.nomad.hcl",
                                  labeler_invocation("cilium-nomad-labeler.nomad.hcl", text));
  ASSERT_TRUE(passed.contains("--metrics-addr"));
  std::smatch m;
  std::string live = strip_comment_lines(text);
  ASSERT_TRUE(std::regex_search(live, m, std::regex("static\\s*=\\s*([0-9]+)")))
      << "no static port";
  EXPECT_EQ(passed["--metrics-addr"], "127.0.0.1:" + m[1].str());
  EXPECT_TRUE(std::regex_search(live, std::regex("address\\s*=\\s*\"127\\.0\\.0\\.1\"")));
  EXPECT_TRUE(std::regex_search(live, std::regex("path\\s*=\\s*\"/healthz\"")));
}

TEST_F(ConfExamplesTest, AclPolicyWritesOnlyItsOwnVariablesAndReadmeBindsItToTheJob) {
  std::string live = strip_comment_lines(read_file(example("acl-policy.hcl")));
  ASSERT_FALSE(live.empty());
  EXPECT_NE(live.find("namespace \"*\""), std::string::npos);
  EXPECT_TRUE(std::regex_search(live, std::regex("node\\s*\\{\\s*policy\\s*=\\s*\"read\"\\s*\\}")));
  // write and destroy only inside a variables path block of the services feature's own paths.
  static const std::regex path_block("path\\s*\"([^\"]*)\"\\s*\\{([^}]*)\\}");
  for (auto it = std::sregex_iterator(live.begin(), live.end(), path_block);
       it != std::sregex_iterator(); ++it) {
    const std::string path = (*it)[1];
    const std::string body = (*it)[2];
    if (body.find("write") != std::string::npos || body.find("destroy") != std::string::npos) {
      EXPECT_TRUE(path == "cilium-nomad/services/*" || path == "cilium-nomad/vip/*") << path;
    }
  }
  const std::string outside = std::regex_replace(live, path_block, "");
  EXPECT_EQ(outside.find("write"), std::string::npos) << outside;
  EXPECT_EQ(outside.find("destroy"), std::string::npos) << outside;
  const std::string reader = strip_comment_lines(read_file(example("vip-read-policy.hcl")));
  EXPECT_TRUE(std::regex_search(
      reader, std::regex("path\\s*\"cilium-nomad/vip/\\*\"\\s*\\{\\s*capabilities\\s*=\\s*"
                         "\\[\"read\"\\]\\s*\\}")))
      << reader;
  EXPECT_EQ(reader.find("write"), std::string::npos);
  EXPECT_EQ(live.find("agent"), std::string::npos) << "agent read is needed only without --node-id";
  EXPECT_NE(read_file(example("README.md"))
                .find("nomad acl policy apply -namespace default -job cilium-nomad-labeler "
                      "cilium-nomad-labeler acl-policy.hcl"),
            std::string::npos);
}

TEST_F(ConfExamplesTest, PolicySelectsNomadJobLabels) {
  json policy = load_json(example("policy-web.json"));
  ASSERT_TRUE(policy.is_array());
  ASSERT_EQ(policy.size(), 1u);
  const json& rule = policy[0];
  const std::string job_key = "nomad:" + std::string(labels::kKeyJob);
  const std::string ns_key = "nomad:" + std::string(labels::kKeyNamespace);
  const json& selected = rule["endpointSelector"]["matchLabels"];
  EXPECT_EQ(selected.value(job_key, ""), "web");
  EXPECT_EQ(selected.value(ns_key, ""), "default");
  const json& ingress = rule["ingress"].at(0);
  const json& from = ingress["fromEndpoints"].at(0)["matchLabels"];
  EXPECT_EQ(from.value(job_key, ""), "frontend");
  EXPECT_EQ(from.value(ns_key, ""), "default");
  const json& port = ingress["toPorts"].at(0)["ports"].at(0);
  EXPECT_EQ(port.value("port", ""), "8080");
  EXPECT_EQ(port.value("protocol", ""), "TCP");

  // Every `nomad:` key a selector uses must be one the labeler writes.
  const std::set<std::string> ours = {ns_key, job_key, "nomad:" + std::string(labels::kKeyGroup)};
  for (const json* labels_obj : {&selected, &from}) {
    for (const auto& [k, v] : labels_obj->items()) {
      if (k.starts_with("nomad:")) {
        EXPECT_TRUE(ours.contains(k)) << k;
      }
    }
  }
}

// What conf-examples tells operators to put into Nomad must pass the distributor's validator
// (README "Policies"), in each of the accepted forms.
TEST_F(ConfExamplesTest, SamplePoliciesPassTheDistributorsValidator) {
  for (const char* name : {"policy-web.ccnp.yaml", "policy-payments.cnp.yaml", "policy-web.json"}) {
    auto object = policy::policy_object_from_item(read_file(example(name)), "nomad-sample",
                                                  policy::PolicySource{"default", "x", 1});
    EXPECT_TRUE(object) << name << ": " << (object ? "" : object.error().message);
  }
}

// Examples are copied: a peer selector without a namespace would admit a job of that name from
// every namespace, which is more than any example means to allow.
TEST_F(ConfExamplesTest, EveryClusterwidePeerSelectorNamesItsNamespace) {
  for (const char* name : {"policy-web.ccnp.yaml", "policy-web.json"}) {
    const std::string text = read_file(example(name));
    auto object = policy::policy_object_from_item(text, "nomad-sample",
                                                  policy::PolicySource{"default", "x", 1});
    ASSERT_TRUE(object) << name;
    const std::string ns_key = "nomad:" + std::string(labels::kKeyNamespace);
    std::size_t peers = 0;
    std::function<void(const json&)> walk = [&](const json& v) {
      if (v.is_object()) {
        for (const auto& [k, child] : v.items()) {
          if (k == "fromEndpoints" || k == "toEndpoints") {
            for (const auto& selector : child) {
              ++peers;
              EXPECT_TRUE(selector.contains("matchLabels") &&
                          selector["matchLabels"].contains(ns_key))
                  << name << ": " << selector.dump();
            }
          }
          walk(child);
        }
      } else if (v.is_array()) {
        for (const auto& child : v) walk(child);
      }
    };
    walk(*object);
    EXPECT_GE(peers, 1u) << name;
  }
}

TEST_F(ConfExamplesTest, AclPolicyLetsTheLabelerListAndReadThePolicyVariablesOnly) {
  std::string live = strip_comment_lines(read_file(example("acl-policy.hcl")));
  EXPECT_TRUE(std::regex_search(
      live, std::regex("path\\s*\"cilium/policies/\\*\"\\s*\\{\\s*capabilities\\s*=\\s*"
                       "\\[\"list\",\\s*\"read\"\\]")))
      << live;
}

// The words after `run` as the labeler receives them: the live (uncommented) entries of a job's
// args list, or the unit's ExecStart split on whitespace (systemd's `${VAR}` stays one word).
std::vector<std::string> run_words(const std::string& file_name) {
  const std::string text = read_file(example(file_name));
  std::vector<std::string> words;
  if (file_name.ends_with(".hcl")) {
    std::string args = labeler_invocation(file_name, strip_comment_lines(text));
    static const std::regex quoted("\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(args.begin(), args.end(), quoted);
         it != std::sregex_iterator(); ++it) {
      words.push_back((*it)[1]);
    }
  } else {
    std::string exec =
        std::regex_replace(labeler_invocation(file_name, text), std::regex("\\\\\n"), " ");
    std::istringstream in(exec.substr(exec.find('=') + 1));
    for (std::string w; in >> w;) words.push_back(w);
  }
  auto run = std::find(words.begin(), words.end(), "run");
  return run == words.end() ? std::vector<std::string>{}
                            : std::vector<std::string>(run + 1, words.end());
}

// Option -> value from run_words(): `--x=v`, `--x v`, or a switch (`on`). An unbraced `$VAR`
// (systemd splits it into words of its own) is not the value of the option before it.
std::map<std::string, std::string> run_options(const std::vector<std::string>& words) {
  static const std::regex split_var("^\\$[A-Za-z_]+$");
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!w.starts_with("--")) continue;
    if (auto eq = w.find('='); eq != std::string::npos) {
      out[w.substr(0, eq)] = w.substr(eq + 1);
    } else if (i + 1 < words.size() && !words[i + 1].starts_with("--") &&
               !std::regex_match(words[i + 1], split_var)) {
      out[w] = words[++i];
    } else {
      out[w] = "on";
    }
  }
  return out;
}

// conf-examples/README.md, "The three ways to run": option -> {default, docker, raw_exec, unit}.
std::map<std::string, std::vector<std::string>> run_table(std::vector<std::string>& order) {
  std::istringstream in(read_file(example("README.md")));
  std::map<std::string, std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| `--")) continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) {
      auto b = cell.find_first_not_of(' ');
      auto e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    if (cells.size() != 5) continue;
    std::string option = cells[0].substr(1, cells[0].size() - 2);
    EXPECT_FALSE(rows.contains(option)) << option << " has two rows";
    order.push_back(option);
    rows[option] = {cells[1], cells[2], cells[3], cells[4]};
  }
  return rows;
}

// `X` for a cell that is exactly one code span, else nothing (prose such as "off", "— (...)").
std::optional<std::string> code_span(const std::string& cell) {
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`' &&
      cell.find('`', 1) == cell.size() - 1) {
    return cell.substr(1, cell.size() - 2);
  }
  return std::nullopt;
}

// Every option `run --help` lists, and its help entry (the option's line and its description).
std::map<std::string, std::string> help_entries(const std::string& help) {
  std::map<std::string, std::string> out;
  std::istringstream in(help);
  std::string current;
  static const std::regex option_line("^\\s+(--[a-z0-9-]+)\\b.*");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, option_line)) {
      current = m[1];
      out[current] = line;
    } else if (!current.empty() && !line.empty() && line.starts_with("  ")) {
      out[current] += " " + line;
    } else {
      current.clear();
    }
  }
  return out;
}

// CLI11 prints a default as `=VALUE` after the option's type words (`--workers INT:INT in
// [1 - 64]=4`), before the description.
std::optional<std::string> help_printed_default(const std::string& entry,
                                                const std::string& option) {
  std::smatch m;
  std::regex re("^\\s+" + option + "((?: [^ =]+)*?)=(\\S+)");
  if (std::regex_search(entry, m, re)) return m[2].str();
  return std::nullopt;
}

const std::vector<std::string> kWaysToRun = {"cilium-nomad-labeler.nomad.hcl",
                                             "cilium-nomad-labeler.raw_exec.nomad.hcl",
                                             "cilium-nomad-labeler.service"};

TEST_F(ConfExamplesTest, RunTableListsEveryRunOptionWithItsDefault) {
  if (!executable(labeler_bin())) GTEST_SKIP() << labeler_bin() << " is not built";
  std::string help;
  ASSERT_NO_FATAL_FAILURE(read_labeler_help(help));
  auto entries = help_entries(help);
  ASSERT_GE(entries.size(), 30u) << help;
  std::vector<std::string> order;
  auto table = run_table(order);
  for (const auto& [option, entry] : entries) {
    if (option == "--help") continue;
    EXPECT_TRUE(table.contains(option)) << option << " is missing from the README's table";
  }
  for (const auto& [option, cells] : table) {
    SCOPED_TRACE(option);
    ASSERT_TRUE(entries.contains(option)) << "the README's table lists an option `run` lacks";
    auto documented = code_span(cells[0]);
    if (!documented) continue;  // prose: "off", "the hostname", ...
    if (auto printed = help_printed_default(entries[option], option)) {
      auto norm = [](std::string v) { return v == "1" ? std::string("true") : v; };
      EXPECT_EQ(norm(*documented), norm(*printed)) << entries[option];
    } else {
      EXPECT_NE(entries[option].find("default " + *documented), std::string::npos)
          << "the help does not say the default is " << *documented << ": " << entries[option];
    }
  }
}

TEST_F(ConfExamplesTest, RunTableShowsWhatEachWayToRunPasses) {
  std::vector<std::string> order;
  auto table = run_table(order);
  ASSERT_GE(table.size(), 30u) << "no table in conf-examples/README.md, \"The three ways to run\"";
  for (std::size_t way = 0; way < kWaysToRun.size(); ++way) {
    SCOPED_TRACE(kWaysToRun[way]);
    auto passed = run_options(run_words(kWaysToRun[way]));
    ASSERT_GE(passed.size(), 3u);
    for (const auto& [option, value] : passed) {
      EXPECT_TRUE(table.contains(option)) << option << " is passed but not in the table";
    }
    for (const auto& [option, cells] : table) {
      const std::string& cell = cells[way + 1];
      if (passed.contains(option)) {
        EXPECT_EQ(cell, "`" + passed[option] + "`") << option;
      } else {
        EXPECT_TRUE(cell.starts_with("—")) << option << " is not passed, the table says " << cell;
      }
    }
  }
}

// The Docker job, the raw_exec job and the unit run the same labeler on the same host paths:
// every option has one effective value (passed, or the default) in all three. The exceptions
// are those conf-examples/README.md explains under the table.
TEST_F(ConfExamplesTest, TheThreeWaysToRunAgree) {
  std::vector<std::string> order;
  auto table = run_table(order);
  ASSERT_GE(table.size(), 30u);
  std::vector<std::map<std::string, std::string>> passed;
  for (const auto& way : kWaysToRun) passed.push_back(run_options(run_words(way)));
  // Each supervisor's own variable for this node; the unit leaves the etcd options to its
  // environment file, the two jobs must still agree on them.
  const std::set<std::string> jobs_only = {"--node-id", "--kvstore-config", "--node-name"};
  for (const auto& option : order) {
    const std::string fallback = code_span(table[option][0]).value_or("");
    std::vector<std::string> effective;
    for (const auto& p : passed) effective.push_back(p.contains(option) ? p.at(option) : fallback);
    const std::size_t compared = jobs_only.contains(option) ? 2 : 3;
    for (std::size_t i = 1; i < compared; ++i) {
      EXPECT_EQ(effective[i], effective[0])
          << option << ": " << kWaysToRun[0] << " runs with \"" << effective[0] << "\", "
          << kWaysToRun[i] << " with \"" << effective[i] << "\"";
    }
  }
  // The paths the plugin, the agent and the unit's sandbox depend on are set at all, not off.
  for (const char* option : {"--socket", "--state-file", "--policy-dir", "--metrics-addr"}) {
    EXPECT_TRUE(passed[2].contains(option)) << "the unit must pass " << option;
  }
}

// Every series name the labeler can expose: the `# TYPE` families its registry renders, with the
// cluster-duty series created (a labeler creates them only with the duties configured) and a
// leader holder set; a histogram's series are its _bucket, _sum and _count.
std::set<std::string> exported_metric_names() {
  labeler::Metrics metrics;
  metrics.init_cluster_duty_series();
  metrics.set_cluster_leader_holder("node-a");
  std::istringstream in(metrics.render());
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string hash, keyword, name, kind;
    if (!(words >> hash >> keyword >> name >> kind) || hash != "#" || keyword != "TYPE") continue;
    names.insert(name);
    if (kind == "histogram") {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(name + suffix);
    }
  }
  return names;
}

// (panel title, query) for every target of every panel, rows' nested panels included.
std::vector<std::pair<std::string, std::string>> dashboard_queries(const json& dashboard) {
  std::vector<std::pair<std::string, std::string>> out;
  std::function<void(const json&)> walk = [&](const json& panels) {
    for (const auto& panel : panels) {
      if (panel.contains("panels")) walk(panel["panels"]);
      for (const auto& target : panel.value("targets", json::array())) {
        out.emplace_back(panel.value("title", ""), target.value("expr", ""));
      }
    }
  };
  walk(dashboard.value("panels", json::array()));
  return out;
}

TEST_F(ConfExamplesTest, GrafanaDashboardQueriesOnlyMetricsTheLabelerExports) {
  json dashboard = load_json(example("grafana-dashboard.json"));
  ASSERT_TRUE(dashboard.is_object()) << "not JSON";
  const auto exported = exported_metric_names();
  ASSERT_GE(exported.size(), 30u);

  // Importable anywhere: the data source is a variable of type prometheus, and every panel and
  // target uses it.
  const json variables = dashboard["templating"].value("list", json::array());
  bool datasource_variable = false;
  for (const auto& v : variables) {
    if (v.value("type", "") == "datasource" && v.value("query", "") == "prometheus" &&
        v.value("name", "") == "datasource") {
      datasource_variable = true;
    }
  }
  EXPECT_TRUE(datasource_variable) << "no Prometheus data source variable named datasource";
  std::set<int> ids;
  std::function<void(const json&)> check_panels = [&](const json& panels) {
    for (const auto& panel : panels) {
      SCOPED_TRACE(panel.value("title", ""));
      EXPECT_TRUE(ids.insert(panel.value("id", -1)).second) << "panel id used twice";
      EXPECT_TRUE(panel.contains("gridPos"));
      if (panel.contains("panels")) check_panels(panel["panels"]);
      if (panel.value("type", "") == "row") continue;
      EXPECT_EQ(panel["datasource"].value("uid", ""), "${datasource}");
      ASSERT_FALSE(panel.value("targets", json::array()).empty()) << "a panel without a query";
      for (const auto& target : panel["targets"]) {
        EXPECT_EQ(target["datasource"].value("uid", ""), "${datasource}");
      }
    }
  };
  check_panels(dashboard["panels"]);

  auto queries = dashboard_queries(dashboard);
  for (const auto& v : variables) {
    if (v.value("type", "") == "query") {
      queries.emplace_back("variable " + v.value("name", ""), v.value("definition", ""));
    }
  }
  ASSERT_GE(queries.size(), 20u);
  static const std::regex metric("cilium_nomad_[a-z_]+");
  std::set<std::string> used;
  for (const auto& [title, query] : queries) {
    SCOPED_TRACE(title);
    int named = 0;
    for (auto it = std::sregex_iterator(query.begin(), query.end(), metric);
         it != std::sregex_iterator(); ++it) {
      ++named;
      used.insert(it->str());
      EXPECT_TRUE(exported.contains(it->str()))
          << it->str() << " in `" << query << "` is not a metric the labeler exports";
    }
    EXPECT_GE(named, 1) << "`" << query << "` names no metric of the labeler";
  }
  // What conf-examples/README.md says the dashboard shows.
  for (const char* shown :
       {"cilium_nomad_add_to_labeled_seconds_bucket", "cilium_nomad_endpoints_labeled_total",
        "cilium_nomad_label_failures_total", "cilium_nomad_unlabeled_allocations",
        "cilium_nomad_policies_applied", "cilium_nomad_policies_invalid",
        "cilium_nomad_policy_errors_total", "cilium_nomad_cluster_duty_passes_total",
        "cilium_nomad_cluster_duty_deletions_total", "cilium_nomad_api_calls_total",
        "cilium_nomad_errors_total"}) {
    EXPECT_TRUE(used.contains(shown)) << "no panel shows " << shown;
  }
}

// Each panel query is PromQL that Prometheus parses: written as recording rules, with Grafana's
// variables replaced by what Grafana would send, for `promtool check rules`.
TEST_F(ConfExamplesTest, GrafanaDashboardQueriesParseAsPromQL) {
  const std::string promtool = "/usr/bin/promtool";
  if (!fs::exists(promtool)) {
    GTEST_SKIP() << promtool
                 << " is absent: install Debian's `prometheus` package (scripts/install-deps.sh)";
  }
  json dashboard = load_json(example("grafana-dashboard.json"));
  ASSERT_TRUE(dashboard.is_object());
  auto queries = dashboard_queries(dashboard);
  ASSERT_FALSE(queries.empty());
  std::string rules = "groups:\n  - name: grafana-dashboard\n    rules:\n";
  for (std::size_t i = 0; i < queries.size(); ++i) {
    std::string query =
        std::regex_replace(queries[i].second, std::regex("\\$__rate_interval"), "5m");
    query = std::regex_replace(query, std::regex("\\$instance"), ".*");
    rules += "      - record: dashboard:query_" + std::to_string(i) +
             "\n        expr: " + json(query).dump() + "\n";
  }
  TempDir dir;
  const std::string file = dir.file("dashboard.rules.yml");
  write_file(file, rules);
  auto check = run_process({promtool, "check", "rules", file}, {}, "");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err << rules;
}

}  // namespace
}  // namespace cn::testing
