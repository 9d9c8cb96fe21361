// A stray exception inside labeling (out of memory, a JSON library error, a system error) costs
// one item: the worker counts it, logs it with the allocation and takes the next item; the daemon
// keeps running and the item is labeled by its next notification.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <system_error>

#include <nlohmann/json.hpp>

#include "common/notify/notify_client.h"
#include "labeler/daemon/labeler_daemon.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::make_alloc;

constexpr const char* kFirst = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
constexpr const char* kSecond = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";

enum class Thrown { bad_alloc, json, system_error };

void throw_one(Thrown what) {
  switch (what) {
    case Thrown::bad_alloc:
      throw std::bad_alloc();
    case Thrown::json:
      throw nlohmann::json::parse_error::create(101, 1, "injected", nullptr);
    case Thrown::system_error:
      throw std::system_error(std::make_error_code(std::errc::no_space_on_device), "injected");
  }
}

class LabelerDaemonFaults : public ::testing::TestWithParam<std::tuple<LabelStep, Thrown>> {
 protected:
  std::optional<notify::Reply> notify(const std::string& alloc, const std::string& ip,
                                      int wait_ms = 5000) {
    notify::Request r;
    r.op = notify::Op::kAdd;
    r.alloc_id = alloc;
    r.ifname = "eth0";
    r.ips = {ip};
    r.wait_ms = wait_ms;
    auto& clock = system_clock();
    auto reply = notify::send_request(dir_.file("run/labeler.sock"), r, clock,
                                      clock.now() + std::chrono::milliseconds{wait_ms + 1000});
    return reply && *reply ? std::optional<notify::Reply>(**reply) : std::nullopt;
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
};

TEST_P(LabelerDaemonFaults, ExceptionAtEveryLabelingStepCostsOneItemNeverTheWorker) {
  const auto [step, thrown] = GetParam();
  nomad_.put(make_alloc(kFirst));
  nomad_.put(make_alloc(kSecond));
  std::atomic<int> throws_left{1};
  DaemonConfig config;
  config.socket_path = dir_.file("run/labeler.sock");
  config.state_file = dir_.file("run/state.json");
  config.resync_interval = std::chrono::seconds{0};
  config.watch = WatchMode::kNone;
  config.metrics_addr = "";
  config.workers = 1;  // one worker: if it died, nothing else would label
  config.allowed_uids = {0, static_cast<unsigned>(::getuid())};
  config.label_fault_hook = [&, s = step, t = thrown](LabelStep at) {
    if (at == s && throws_left.fetch_sub(1) > 0) throw_one(t);
  };
  LabelerDaemon daemon(config, nomad_, cilium_, system_clock(), nullptr);
  std::stop_source never;
  ASSERT_TRUE(daemon.start(never.get_token()));
  cilium_.add_init_endpoint(kFirst, "10.200.3.17");
  cilium_.add_init_endpoint(kSecond, "10.200.3.18");

  // Throws: nothing answers, the plugin hears "pending" at its (short) deadline.
  auto first = notify(kFirst, "10.200.3.17", 300);
  ASSERT_TRUE(first);
  EXPECT_NE(first->status, notify::ReplyStatus::kLabeled);
  ASSERT_TRUE(daemon.queue().wait_idle(std::chrono::seconds{10}));
  EXPECT_EQ(daemon.metrics().errors(ErrorKindLabel::exception).Value(), 1);

  auto second = notify(kSecond, "10.200.3.18");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, notify::ReplyStatus::kLabeled)
      << "the worker survived: " << second->message;
  auto again = notify(kFirst, "10.200.3.17");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, notify::ReplyStatus::kLabeled) << again->message;
  daemon.stop();
}

INSTANTIATE_TEST_SUITE_P(
    EveryStepAndException, LabelerDaemonFaults,
    ::testing::Combine(::testing::Values(LabelStep::resolve_identity, LabelStep::find_endpoint,
                                         LabelStep::write_labels, LabelStep::confirm,
                                         LabelStep::record),
                       ::testing::Values(Thrown::bad_alloc, Thrown::json, Thrown::system_error)));

}  // namespace
}  // namespace cn::labeler
