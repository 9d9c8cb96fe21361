// The labeler's command line as a script or an operator meets it, through the real binary: every
// subcommand's --help exits 0; every usage error (an unknown flag, a flag without its value, a
// malformed value, a bad combination) exits 2 with exactly one stderr line
//   cilium-nomad-labeler: <subcommand>: <what is wrong>; see --help
// and nothing on stdout; a runtime failure (a file that is not there, a peer that does not
// answer) exits 1. The flags are read from each subcommand's own --help, so a new flag is covered
// without editing this file.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::testing {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kSubcommands = {
    "",        "run",     "state",          "policy",  "policy status", "policy validate",
    "explain", "cluster", "cluster status", "version", "services"};

std::vector<std::string> split(const std::string& words) {
  std::vector<std::string> out;
  std::istringstream in(words);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class LabelerCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(labeler().c_str(), X_OK) != 0) GTEST_SKIP() << labeler() << " is not built";
    write_file(dir_.file("not-a-dir"), "a regular file where a directory should be");
    write_file(dir_.file("etcd.yaml"), "endpoints:\n- http://127.0.0.1:1\n");
    std::filesystem::create_directories(dir_.file("ok"));
    write_file(dir_.file("ok/policy-status.json"),
               R"({"namespace":"default","prefix":"cilium/policies","directory":"/p",)"
               R"("updated_unix_ms":0,"policies":[]})");
  }

  static std::string labeler() { return bin_dir() + "/cilium-nomad-labeler"; }

  ProcessResult run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {labeler()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, with_sanitizer_options({}), "", 20s);
  }

  // What each subcommand needs before any option, so that the option under test is what fails.
  std::vector<std::string> base(const std::string& command) const {
    auto args = split(command);
    if (command == "explain") args.push_back("4b1f6c2e");
    if (command == "policy validate") args.push_back(dir_.file("policy.yaml"));
    if (command == "cluster status") {
      args.push_back("--kvstore-config");
      args.push_back(dir_.file("etcd.yaml"));
    }
    if (command == "run") {
      // Were a usage error accepted, `run` fails at once on its node lock (1), never runs.
      args.push_back("--state-file");
      args.push_back(dir_.file("not-a-dir/state.json"));
    }
    return args;
  }

  // The options a subcommand's --help lists: name -> whether it takes a value.
  std::map<std::string, bool> options_of(const std::string& command) const {
    auto args = split(command);
    args.push_back("--help");
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    static const std::regex kOption(R"(^  (?:-\w,)?(--[a-z0-9-]+)( [A-Z]+)?)");
    std::map<std::string, bool> out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_search(line, m, kOption) && m[1] != "--help" && m[1] != "--help-all" &&
          m[1] != "--version")
        out[m[1]] = m[2].matched;
    }
    return out;
  }

  static void expect_usage_error(const ProcessResult& r, const std::string& command,
                                 const std::string& what) {
    SCOPED_TRACE(command + ": " + what);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    const std::string prefix = "cilium-nomad-labeler: " + (command.empty() ? "" : command + ": ");
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
    EXPECT_TRUE(r.err.ends_with("; see --help\n")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }

  // `lines`: explain says what is missing on the node first, one line each.
  static void expect_runtime_failure(const ProcessResult& r, const std::string& command,
                                     const std::string& what, int lines = 1) {
    SCOPED_TRACE(command + ": " + what);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.err.rfind("cilium-nomad-labeler: " + command + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("see --help"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), lines) << r.err;
    std::istringstream each(r.err);
    for (std::string line; std::getline(each, line);)
      EXPECT_EQ(line.rfind("cilium-nomad-labeler: " + command + ": ", 0), 0u) << line;
  }

  TempDir dir_;
};

// Expected: --help of every subcommand, the program's own included, exits 0 on stdout.
TEST_F(LabelerCli, HelpOfEverySubcommandExitsZero) {
  for (const auto& command : kSubcommands) {
    auto args = split(command);
    args.push_back("--help");
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << command << ": " << r.out;
    EXPECT_EQ(r.err, "") << command;
  }
}

// One subcommand per test, so that each stays well inside ctest's time limit.
class LabelerCliFlags : public LabelerCli, public ::testing::WithParamInterface<std::string> {};

// Expected: every option of the subcommand, given without its value (or a flag given a value it
// cannot take), and an unknown flag, is a usage error in the one style.
TEST_P(LabelerCliFlags, EveryFlagMisusedIsAUsageErrorInOneStyle) {
  const std::string& command = GetParam();
  const auto options = options_of(command);
  for (const auto& [option, takes_value] : options) {
    auto args = base(command);
    args.push_back(takes_value ? option : option + "=maybe");
    expect_usage_error(run(args), command, option);
  }
  auto args = base(command);
  args.push_back("--no-such-flag");
  expect_usage_error(run(args), command, "--no-such-flag");
  if (command == "run") {
    EXPECT_GT(options.size(), 30u) << "the options were not read from --help";
  }
}

INSTANTIATE_TEST_SUITE_P(EverySubcommand, LabelerCliFlags, ::testing::ValuesIn(kSubcommands),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name =
                               param_info.param.empty() ? "program" : param_info.param;
                           std::ranges::replace(name, ' ', '_');
                           return name;
                         });

// Expected: a malformed value of any validated flag is refused while parsing, naming the flag.
TEST_F(LabelerCli, MalformedValuesAreUsageErrors) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"run", {"--watch", "1"}},  // an enum's number is not one of its words
      {"run", {"--watch", "sometimes"}},
      {"run", {"--metrics-addr", "bogus"}},
      {"run", {"--metrics-addr", "localhost"}},
      {"run", {"--metrics-addr", "127.0.0.1:http"}},
      {"run", {"--metrics-addr", "::1:9810"}},
      {"run", {"--k8s-compat-labels", "yes"}},
      {"run", {"--k8s-compat-labels", "1"}},
      {"run", {"--cni-args-first", "on"}},
      {"run", {"--heartbeat", "0"}},
      {"run", {"--identity-gc", "no"}},
      {"run", {"--lock-gc", "disable"}},
      {"run", {"--node-reaping", "+"}},
      {"run", {"--cilium-node-name", "1"}},
      {"run", {"--lock-wait", "soon"}},
      {"run", {"--leader-lease-ttl", "1s"}},
      {"run", {"--leader-lease-ttl", "2500ms"}},
      {"run", {"--heartbeat-interval", "often"}},
      {"run", {"--identity-gc-interval", "15"}},
      {"run", {"--lock-gc-interval", "x"}},
      {"run", {"--node-reap-grace", "-1m"}},
      {"run", {"--workers", "0"}},
      {"run", {"--resync-interval", "-1"}},
      {"run", {"--unhealthy-after", "0"}},
      {"run", {"--policy-max-count", "0"}},
      {"run", {"--identity-gc-rate-limit", "-1"}},
      {"run", {"--log-format", "xml"}},
      {"run", {"--log-level", "loud"}},
      {"run", {"--meta-labels", "nomad.job"}},
      {"run", {"--cluster-name", "a/b"}},
      {"run", {"--node-name", "a/b"}},
      {"run", {"--cluster-duties"}},  // needs --kvstore-config
      {"run", {"--nomad-addr", "nomad.service.consul:4646"}},
      {"explain", {"--meta-labels", "k8s:app"}},
      {"explain", {"--k8s-compat-labels", "yes"}},
      {"", {"no-such-subcommand"}},
      {"policy", {}},
      {"cluster", {}},
  };
  for (const auto& [command, extra] : cases) {
    auto args = base(command);
    args.insert(args.end(), extra.begin(), extra.end());
    expect_usage_error(run(args), command, extra.empty() ? "(nothing)" : extra.front());
  }
  // A required positional or option left out.
  expect_usage_error(run({"explain"}), "explain", "no alloc");
  expect_usage_error(run({"policy", "validate"}), "policy validate", "no files");
  expect_usage_error(run({"cluster", "status"}), "cluster status", "no --kvstore-config");
}

// Expected: what fails at run time exits 1 with one line, and never blames the command line.
TEST_F(LabelerCli, RuntimeFailuresExitOneInOneStyle) {
  expect_runtime_failure(run({"state", "--state-file", dir_.file("none.json")}), "state",
                         "no such file: " + dir_.file("none.json"));
  expect_runtime_failure(run({"policy", "status", "--state-file", dir_.file("none/state.json")}),
                         "policy status", "cannot read " + dir_.file("none/policy-status.json"));
  expect_runtime_failure(run({"services", "--state-file", dir_.file("none/state.json")}),
                         "services",
                         "no services status file " + dir_.file("none/services-status.json") +
                             ": the services feature is off");
  std::filesystem::create_directories(dir_.file("bad"));
  write_file(dir_.file("bad/services-status.json"),
             R"({"version":1,"lb_api":"rest","services":[{"state":7}]})");
  expect_runtime_failure(
      run({"services", "--state-file", dir_.file("bad/state.json")}), "services",
      dir_.file("bad/services-status.json") + ": services status at /services/0/state");
  expect_runtime_failure(run({"cluster", "status", "--kvstore-config", dir_.file("none.yaml")}),
                         "cluster status", dir_.file("none.yaml"));
  expect_runtime_failure(
      run({"explain", "ffff", "--state-file", dir_.file("none.json"), "--cilium-socket",
           dir_.file("none.sock"), "--socket", dir_.file("labeler.sock")}),
      "explain", "no allocation on this node starts with \"ffff\"", 3);
  // `run` fails to start with its one log line, after the flags were all accepted.
  auto r = run(base("run"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot start: error="), std::string::npos) << r.err;
}

// Expected: `services` shows the status file beside the given state file: a row per service, the
// backends taking no connections, and the file itself with --json.
TEST_F(LabelerCli, ServicesShowsTheStatusFileBesideTheStateFile) {
  write_file(dir_.file("ok/services-status.json"), R"({
    "version": 1, "updated_unix_ms": 1796000000000, "lb_api": "state-file",
    "lb_target": "/var/run/cilium/lb-state.json", "vip_ranges": ["10.96.0.0/16"],
    "last_pass_ok": true, "last_pass_error": "",
    "services": [{"namespace": "prod", "name": "api", "vip": "10.96.0.7", "vip_reason": "",
      "ports": [{"label": "http", "port": 8080, "protocol": "TCP"}],
      "address_modes": {"alloc": 2}, "state": "served", "reason": "",
      "backends": [
        {"alloc_id": "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11", "node": "", "address": "10.200.3.17",
         "ports": [{"label": "http", "port": 8080, "protocol": "TCP"}], "state": "ready",
         "reason": ""},
        {"alloc_id": "9c2e1d3f-0000-4000-8000-00000000000b", "node": "", "address": "10.200.4.9",
         "ports": [{"label": "http", "port": 8080, "protocol": "TCP"}], "state": "not-ready",
         "reason": "check web-alive: failure"}]}]})");
  auto table = run({"services", "--state-file", dir_.file("ok/state.json")});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.err, "");
  EXPECT_NE(table.out.find("prod/api  10.96.0.7  http:8080  alloc  1/2       served"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("9c2e1d3f  10.200.4.9  not-ready: check web-alive: failure"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("agent fed through its state file /var/run/cilium/lb-state.json"),
            std::string::npos)
      << table.out;

  auto as_json = run({"services", "--state-file", dir_.file("ok/state.json"), "--json"});
  EXPECT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_NE(as_json.out.find("\"lb_api\": \"state-file\""), std::string::npos) << as_json.out;
  EXPECT_NE(as_json.out.find("\"reason\": \"check web-alive: failure\""), std::string::npos)
      << as_json.out;
}

// Expected: `cluster status` against an etcd that does not answer says so once, in the one
// style: no client warning in another log format before it, no endpoint named twice in a row.
TEST_F(LabelerCli, ClusterStatusSaysItsFailureOnce) {
  auto r = run(base("cluster status"));
  expect_runtime_failure(r, "cluster status", "127.0.0.1:1");
  EXPECT_EQ(r.err.find("[warning]"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("etcd http://127.0.0.1:1: etcd http://127.0.0.1:1"), std::string::npos)
      << r.err;
}

// Expected: a flag given twice is not an error; the later value wins (here: the file read, and
// the log format of `run`'s one failure line).
TEST_F(LabelerCli, AFlagGivenTwiceTakesTheLaterValue) {
  auto state = run({"policy", "status", "--state-file", dir_.file("none/state.json"),
                    "--state-file", dir_.file("ok/state.json"), "--json", "--json"});
  EXPECT_EQ(state.exit_code, 0) << state.err;
  EXPECT_NE(state.out.find("\"prefix\": \"cilium/policies\""), std::string::npos) << state.out;

  auto args = base("run");
  for (const char* more : {"--log-format",
                           "text",
                           "--log-format",
                           "json",
                           "--workers",
                           "2",
                           "--workers",
                           "3",
                           "--watch",
                           "none",
                           "--watch",
                           "EVENTS",
                           "--cilium-node-name",
                           "name",
                           "--cilium-node-name",
                           "Short-Name",
                           "--k8s-compat-labels",
                           "TRUE",
                           "--k8s-compat-labels",
                           "false",
                           "--heartbeat",
                           "false",
                           "--metrics-addr",
                           "[::1]:0"})
    args.push_back(more);
  auto r = run(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("{", 0), 0u) << "the later --log-format (json) was not used:\n" << r.err;
  EXPECT_NE(r.err.find("\"msg\":\"cannot start\""), std::string::npos) << r.err;

  // The one list: policy files add up.
  write_file(dir_.file("a.yaml"), "not: [a policy");
  auto validate = run({"policy", "validate", dir_.file("a.yaml"), dir_.file("b.yaml")});
  EXPECT_EQ(validate.exit_code, 1);
  EXPECT_NE(validate.out.find("a.yaml") + validate.err.find("a.yaml"), 2 * std::string::npos);
  EXPECT_NE((validate.out + validate.err).find("b.yaml"), std::string::npos) << validate.err;
}

// Expected: SIGTERM as soon as `run` can take signals at all, while it is still reading its
// flags, is a clean stop (0), never death by the signal (143).
TEST_F(LabelerCli, SigtermWhileStartingIsACleanStop) {
  auto sigterm_blocked = [](pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("SigBlk:", 0) == 0) {
        const auto mask = std::stoull(line.substr(7), nullptr, 16);
        return (mask & (1ULL << (SIGTERM - 1))) != 0;
      }
    }
    return false;
  };
  for (int i = 0; i < 5; ++i) {
    ChildProcess p({labeler(), "run", "--state-file", dir_.file("s" + std::to_string(i) + ".json"),
                    "--socket", dir_.file("l" + std::to_string(i) + ".sock"), "--cilium-socket",
                    dir_.file("none.sock"), "--node-id", "n1", "--metrics-addr", ""},
                   with_sanitizer_options({}), {});
    ASSERT_TRUE(p.started()) << p.start_error();
    // Checked before main has parsed anything: the mask is set by main's first statement.
    ASSERT_TRUE(eventually([&] { return sigterm_blocked(p.pid()) || !p.running(); }, 10s, 0ms));
    ASSERT_TRUE(p.signal(SIGTERM));
    auto status = p.wait_for(10s);
    ASSERT_TRUE(status.has_value()) << "still running after SIGTERM";
    EXPECT_EQ(status->signal, 0) << "killed by signal " << status->signal;
    EXPECT_EQ(status->exit_code, 0);
  }
}

}  // namespace
}  // namespace cn::testing
