// Security properties (docs/threat-model.md) that need the real binaries: the Nomad token never
// leaves the HTTP header, the notify socket refuses non-root peers (two locks: a root-only
// directory, then SO_PEERCRED), meta and CNI_ARGS cannot forge labels, and no shell command is ever
// built. Unit-level companions: NomadClientTest.TokenIsSentAsHeaderAndNeverLoggedOrInErrors,
// DaemonTest.NonRootPeersAreRefused,
// DeriveLabelsTest.NeverProducesForeignSourceOrReservedOrForgedKeys,
// TlsTest.SkipVerifyIsOffByDefaultAndAcceptsAnythingWhenSet.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "common/labels/derive_labels.h"
#include "common/labels/label.h"
#include "common/labels/label_text.h"
#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/in_process_labeler.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;

constexpr const char* kToken = "9f3e1c2d-7b6a-4c5d-8e9f-0a1b2c3d4e5f";

std::string all_files_under(const std::string& dir) {
  std::string out;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (f.is_regular_file()) out += testing::read_file(f.path().string());
  }
  return out;
}

// Expected: the labeler authenticates with NOMAD_TOKEN (ACLs on: labeling works only because
// the header was sent), and the token appears in no log line, at debug level, in no error
// message (403s, 500s whose body echoes it), in no file of the state directory and not in
// `cilium-nomad-labeler state` output.
TEST(Security, NomadTokenNeverAppearsInLogsErrorsOrState) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the labeler binary, which needs root for its socket";
  FakeNode node;
  node.nomad().set_acl_enabled(true);
  fakes::TokenSpec token;
  token.secret = kToken;
  node.nomad().add_token(token);
  // Every notification asks Nomad (no watch to fill the allocation cache, no CNI_ARGS first), so
  // the refused allocation GETs below are certain to happen; the resync's node listing meets the
  // echoing 500s.
  BackgroundProcess labeler(
      node.labeler_argv({"--watch", "none", "--resync-interval", "1", "--cni-args-first=false"},
                        "debug"),
      node.labeler_env({{"NOMAD_TOKEN", kToken}}), node.dir().file("labeler.log"));
  ASSERT_TRUE(labeler.wait_for_log("ready: node=")) << labeler.log();

  std::string alloc = node.running_alloc("10.200.90.1");
  auto add = node.plugin_add(alloc, "10.200.90.1", 3000);
  ASSERT_NE(add.err.find("labeler=labeled"), std::string::npos) << add.err << labeler.log();
  // Error paths: refused calls and an answer that echoes the token back.
  node.nomad().fail_next(4, 403, "/v1/allocation");
  node.nomad().fail_next(8, 500, "/v1/node/", std::string("rejected token ") + kToken);
  std::string second = node.running_alloc("10.200.90.2");
  node.plugin_add(second, "10.200.90.2", 1000);
  ASSERT_TRUE(labeler.wait_for_log("Permission denied")) << labeler.log();
  ASSERT_TRUE(labeler.wait_for_log("rejected token")) << labeler.log();
  ASSERT_TRUE(node.wait_labeled(second, kWebLabels)) << labeler.log();

  auto state_cmd = testing::run_process(
      {testing::bin_dir() + "/cilium-nomad-labeler", "state", "--state-file", node.state_file()},
      {}, "");
  EXPECT_EQ(state_cmd.exit_code, 0) << state_cmd.err;
  labeler.kill_and_wait(SIGTERM);
  for (const auto& [where, text] :
       {std::pair{"labeler log", labeler.log()}, std::pair{"plugin stderr", add.err},
        std::pair{"state directory", all_files_under(node.dir().file("run"))},
        std::pair{"state command", state_cmd.out + state_cmd.err}}) {
    EXPECT_EQ(text.find(kToken), std::string::npos) << where << " shows the token";
  }
  EXPECT_NE(labeler.log().find("rejected token <redacted>"), std::string::npos);
  EXPECT_NE(labeler.log().find("token=set"), std::string::npos)
      << "startup says a token is configured";
  EXPECT_EQ(sanitizer_report(labeler.log()), "");
}

// Runs the plugin binary as uid/gid 65534 (nobody); its stderr is written to `err_path`.
int plugin_add_as_nobody(const FakeNode& node, const std::string& alloc, const std::string& ip,
                         const std::string& err_path) {
  const std::string conf = node.plugin_conf(ip, 2000, "").dump();
  const testing::Environment env =
      testing::with_sanitizer_options({{"CNI_COMMAND", "ADD"},
                                       {"CNI_CONTAINERID", alloc},
                                       {"CNI_IFNAME", "eth0"},
                                       {"CNI_NETNS", "/var/run/netns/x"},
                                       {"CNI_PATH", "/opt/cni/bin"}});
  auto r = testing::run_process({testing::bin_dir() + "/cilium-nomad-cni"}, env, conf,
                                std::chrono::seconds{30}, testing::Credentials{65534, 65534});
  std::ofstream(err_path, std::ios::trunc) << r.err;
  return r.exit_code;
}

// Expected: a plugin run by a non-root user cannot notify the labeler. First lock: the socket's
// directory is root-only (connect fails). Second lock, with the directory opened up on
// purpose: SO_PEERCRED refuses the peer (logged with its uid). The plugin still exits 0 (fails
// open) and nothing is labeled on that user's word.
TEST(Security, NonRootPluginIsRefusedByDirectoryModeThenByPeerCredentials) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  FakeNode node;
  BackgroundProcess labeler(node.labeler_argv({"--watch", "none", "--resync-interval", "0"}),
                            node.labeler_env(), node.dir().file("labeler.log"));
  ASSERT_TRUE(labeler.wait_for_log("ready: node=")) << labeler.log();
  struct stat st {};
  ASSERT_EQ(::stat(node.dir().file("run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(node.labeler_socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::string alloc = node.running_alloc("10.200.91.1");
  ::chmod(node.dir().path().c_str(), 0755);  // the test's own temp dir, so nobody can reach run/
  const std::string err1 = node.dir().file("nobody1.err"), err2 = node.dir().file("nobody2.err");
  int first = plugin_add_as_nobody(node, alloc, "10.200.91.1", err1);
  if (first == 98)
    GTEST_SKIP() << "uid 65534 cannot execute " << testing::bin_dir() << "/cilium-nomad-cni";
  EXPECT_EQ(first, 0);
  EXPECT_NE(testing::read_file(err1).find("labeler=unreachable"), std::string::npos)
      << testing::read_file(err1);

  ::chmod(node.dir().file("run").c_str(), 0755);
  ::chmod(node.labeler_socket().c_str(), 0666);
  EXPECT_EQ(plugin_add_as_nobody(node, alloc, "10.200.91.1", err2), 0);
  ASSERT_TRUE(labeler.wait_for_log("notification refused: uid=65534")) << labeler.log();
  EXPECT_EQ(node.label_writes(alloc), 0) << "nothing labeled on a non-root peer's word";
  EXPECT_FALSE(node.labeled(alloc, kWebLabels));
  EXPECT_EQ(sanitizer_report(labeler.log() + testing::read_file(err1) + testing::read_file(err2)),
            "");
}

// Expected: the labeler refuses to start when told to turn a `nomad.` meta key or an invalid
// key into a label (exit 2, the reason on stderr), so a job's meta can never forge its identity.
TEST(Security, MetaLabelsNamingReservedOrInvalidKeysAreRefusedAtStartup) {
  FakeNode node;
  for (const std::string keys : {"team,nomad.job", "reserved:init", "k8s:app", "a=b"}) {
    auto r = testing::run_process(node.labeler_argv({"--meta-labels", keys}), node.labeler_env(),
                                  "", 10s);
    EXPECT_EQ(r.exit_code, 2) << keys << "\n" << r.err;
    EXPECT_NE(r.err.find("cilium-nomad-labeler: run: --meta-labels: "), std::string::npos) << r.err;
  }
}

// Expected: with Nomad away, labels come from CNI_ARGS; values shaped like reserved or foreign
// labels there become sanitised nomad: values, never labels of another source.
TEST(Security, HostileCniArgsValuesCannotForgeReservedOrForeignLabels) {
  FakeNode node;
  InProcessLabeler labeler(node, InProcessLabeler::config_for(node));
  ASSERT_TRUE(labeler.start());
  std::string alloc = node.running_alloc("10.200.92.1");
  node.nomad().fail_next(1'000, 500);
  cni::NomadWorkload hint;
  hint.namespace_ = "reserved:host";
  hint.job_id = "web;k8s:app=db";
  hint.group = "app nomad:nomad.job=evil";
  hint.alloc_id = alloc;  // Nomad built these CNI_ARGS for this allocation: trusted, as given
  auto reply = labeler.notify_add(alloc, "10.200.92.1", 5000, hint);
  ASSERT_TRUE(reply && *reply) << labeler.logs();
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled) << (*reply)->message;
  auto got = node.identity_labels(alloc);
  std::set<std::string> keys;
  for (const auto& text : got) {
    auto label = labels::parse_label(text);
    // Only our own labels: the nomad: ones and the two k8s: compat keys, nothing the hint forged.
    EXPECT_TRUE(labels::is_ours(label)) << text;
    EXPECT_TRUE(labels::is_valid_label_value(label.value)) << text;
    keys.insert(label.key);
  }
  EXPECT_EQ(keys, (std::set<std::string>{std::string(labels::kKeyK8sCluster),
                                         std::string(labels::kKeyK8sNamespace), "nomad.group",
                                         "nomad.job", "nomad.namespace"}))
      << ::testing::PrintToString(got);
  EXPECT_TRUE(std::find(got.begin(), got.end(),
                        "nomad:nomad.job=" + labels::sanitize_label_value(hint.job_id)) !=
              got.end())
      << ::testing::PrintToString(got);
  node.nomad().clear_faults();
}

// Expected: no product source calls a shell or runs a program (system, popen, exec*, spawn),
// so no outside data can ever reach a command line.
TEST(Security, NoProductCodeRunsAShellOrAProgram) {
  static const std::regex call(
      R"(\b(system|popen|execl|execlp|execle|execv|execvp|execvpe|execve|posix_spawnp?|fork|vfork)\s*\()");
  int files = 0;
  for (const char* dir : {"common", "cni-plugin", "labeler"}) {
    for (const auto& f :
         std::filesystem::recursive_directory_iterator(testing::source_dir() + "/" + dir)) {
      auto ext = f.path().extension();
      if (ext != ".cpp" && ext != ".h") continue;
      ++files;
      std::ifstream in(f.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        EXPECT_FALSE(std::regex_search(line, call))
            << f.path().string() << ":" << n << ": " << line;
      }
    }
  }
  EXPECT_GT(files, 50);
}

}  // namespace
}  // namespace cn::reliability
