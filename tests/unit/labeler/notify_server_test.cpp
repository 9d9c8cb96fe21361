// The notification socket's accept loop on a manual clock that never moves unless the test says
// so: nothing here can pass by waiting out a budget in real time.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "common/notify/notify_client.h"
#include "common/notify/unix_line_socket.h"
#include "labeler/serve/notify_server.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

constexpr const char* kAlloc = "4b1f6c2e-8d3a-4f57-9c2b-7e0a5d9c3f11";

class NotifyServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text_));
    log_->set_level(spdlog::level::debug);
    server_ = std::make_unique<NotifyServer>(
        NotifyServer::Options{socket_path(), {0, static_cast<unsigned>(::getuid())}}, clock_,
        metrics_, log_);
    ASSERT_TRUE(server_->listen());
    // Answers every request at once, the way a labeled allocation is answered.
    server_->start([this](const notify::Request& r) {
      {
        std::lock_guard lock(mu_);
        ++handled_;
      }
      cv_.notify_all();
      server_->reply(r.alloc_id, notify::Reply{notify::ReplyStatus::kLabeled, 7, 300, {}, ""});
    });
  }
  void TearDown() override { server_->stop(); }

  std::string socket_path() const { return dir_.file("run/labeler.sock"); }

  // A client that connects and says nothing; real clock: only the client side waits here.
  notify::UniqueFd connect_silent() {
    auto fd = notify::connect_unix(socket_path(), system_clock(), system_clock().now() + 5s);
    EXPECT_TRUE(fd) << (fd ? "" : fd.error().message);
    return fd ? std::move(*fd) : notify::UniqueFd{};
  }

  Result<std::optional<notify::Reply>> request(int wait_ms) {
    notify::Request r;
    r.op = notify::Op::kAdd;
    r.alloc_id = kAlloc;
    r.ifname = "eth0";
    r.ips = {"10.200.3.17"};
    r.wait_ms = wait_ms;
    return notify::send_request(socket_path(), r, system_clock(), system_clock().now() + 10s);
  }

  bool wait_handled(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return handled_ >= n; });
  }

  // Whether the peer closed `fd`, looking at least once and for at most `timeout` of real time.
  static bool closed_by_peer(int fd, std::chrono::milliseconds timeout) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char c;
    return ::recv(fd, &c, 1, MSG_DONTWAIT) == 0;
  }

  cn::testing::TempDir dir_;
  ManualClock clock_;
  Metrics metrics_;
  std::ostringstream log_text_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<NotifyServer> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  int handled_ = 0;
};

// Expected: a client that connected first and never writes does not hold up the plugin behind
// it; the plugin is answered while the manual clock stands still (no read budget ran out).
TEST_F(NotifyServerTest, SilentClientConnectedFirstDoesNotDelayTheNextRequest) {
  auto silent = connect_silent();
  auto reply = request(2000);
  // Unblocks a server that does wait on the silent client, so a failing run ends.
  if (!reply) silent.reset();
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_TRUE(reply->has_value());
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled);
  EXPECT_FALSE(closed_by_peer(silent.get(), 0ms)) << "the silent client still has its budget";
  EXPECT_EQ(metrics_.notifications(std::nullopt, NotifyOutcome::unreadable).Value(), 0);
}

// Expected: many silent clients at once still cost the real request nothing.
TEST_F(NotifyServerTest, ManySilentClientsDoNotDelayTheNextRequest) {
  std::vector<notify::UniqueFd> silent;
  for (int i = 0; i < 20; ++i) silent.push_back(connect_silent());
  auto reply = request(2000);
  if (!reply) silent.clear();
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_TRUE(reply->has_value());
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled);
}

// Expected: once its 1 s budget has passed on the labeler's clock, a silent client is closed and
// counted as unreadable, once.
TEST_F(NotifyServerTest, SilentClientIsClosedAndCountedOnceItsReadBudgetPasses) {
  auto silent = connect_silent();
  ASSERT_TRUE(request(0));  // served after the silent one was accepted: the loop holds it now
  ASSERT_TRUE(wait_handled(1));
  clock_.advance(999ms);
  ASSERT_TRUE(request(0));  // wakes the loop, which finds the budget not yet spent
  ASSERT_TRUE(wait_handled(2));
  EXPECT_FALSE(closed_by_peer(silent.get(), 0ms));
  clock_.advance(2ms);
  ASSERT_TRUE(request(0));
  EXPECT_TRUE(closed_by_peer(silent.get(), 10s));
  EXPECT_EQ(metrics_.notifications(std::nullopt, NotifyOutcome::unreadable).Value(), 1);
}

// Expected: a connection closed without a byte (how a second labeler checks whether this one is
// alive) is neither counted nor logged as an unreadable notification.
TEST_F(NotifyServerTest, LivenessProbeIsNotAnUnreadableNotification) {
  { auto probe = connect_silent(); }  // connect, then close without writing
  // The probe's end is seen no later than this request, which was accepted after it.
  ASSERT_TRUE(request(0));
  ASSERT_TRUE(wait_handled(1));
  server_->stop();
  EXPECT_EQ(metrics_.notifications(std::nullopt, NotifyOutcome::unreadable).Value(), 0);
  EXPECT_EQ(log_text_.str().find("unreadable"), std::string::npos) << log_text_.str();
  EXPECT_NE(log_text_.str().find("liveness probe"), std::string::npos) << log_text_.str();
}

// Expected: a client that sends half a line and hangs up is still reported as unreadable.
TEST_F(NotifyServerTest, HalfALineThenCloseIsUnreadable) {
  {
    auto fd = connect_silent();
    ASSERT_TRUE(notify::send_all(fd.get(), "{\"v\":1,", system_clock(), system_clock().now() + 5s));
  }
  ASSERT_TRUE(request(0));
  ASSERT_TRUE(wait_handled(1));
  server_->stop();
  EXPECT_EQ(metrics_.notifications(std::nullopt, NotifyOutcome::unreadable).Value(), 1);
}

// The socket's directory: only what the labeler creates gets its mode; an existing directory
// (with `--socket /run/x.sock`, /run itself) keeps its own, and one others can write is refused.
class SocketDirectoryTest : public ::testing::Test {
 protected:
  Status listen_at(const std::string& socket) {
    NotifyServer server(NotifyServer::Options{socket, {0, static_cast<unsigned>(::getuid())}},
                        clock_, metrics_, nullptr);
    auto ok = server.listen();
    server.stop();
    return ok;
  }
  static unsigned mode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }

  cn::testing::TempDir dir_;
  ManualClock clock_;
  Metrics metrics_;
};

TEST_F(SocketDirectoryTest, CreatedDirectoriesAreOwnerOnly) {
  ASSERT_TRUE(listen_at(dir_.file("a/b/labeler.sock")));
  EXPECT_EQ(mode_of(dir_.file("a")), 0700U);
  EXPECT_EQ(mode_of(dir_.file("a/b")), 0700U);
}

TEST_F(SocketDirectoryTest, AnExistingDirectoryKeepsItsMode) {
  const std::string shared = dir_.file("run");
  ASSERT_EQ(::mkdir(shared.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0755), 0);
  ASSERT_TRUE(listen_at(shared + "/labeler.sock"));
  EXPECT_EQ(mode_of(shared), 0755U) << "not ours to change";
}

TEST_F(SocketDirectoryTest, ADirectoryOthersCanWriteIsRefused) {
  const std::string open_dir = dir_.file("tmp");
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  for (unsigned mode : {01777U, 0770U}) {
    ASSERT_EQ(::chmod(open_dir.c_str(), mode), 0);
    auto ok = listen_at(open_dir + "/labeler.sock");
    ASSERT_FALSE(ok) << std::oct << mode;
    EXPECT_NE(ok.error().message.find("lets others replace the socket"), std::string::npos)
        << ok.error().message;
    EXPECT_EQ(mode_of(open_dir), mode) << "left as it was";
  }
}

}  // namespace
}  // namespace cn::labeler
