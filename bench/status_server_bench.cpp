// The status port under attack: /healthz latency while 200 slowloris connections each hold half a
// request line, beside the same probes on an idle server; and how much the process's peak RSS
// grows while one client streams a POST announcing a 300 MB body. The labeler's StatusServer in
// this process, driven over loopback by raw connections (tests/fakes/http/raw_http_client.h).
//   STATUS_PROBES=200  probes per case
//   STATUS_SLOW=200    slow connections held open during the second case
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "labeler/serve/status_server.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/support/peak_rss.h"

namespace {

using namespace cn;
using namespace cn::bench;
using fakes::RawConnection;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): no thread sets it
  return v && *v ? std::atoi(v) : fallback;
}

fakes::HttpTarget target(int port) {
  return fakes::HttpTarget::tcp("127.0.0.1", port);
}

// Reads until the server closes the connection; returns what it sent.
std::string read_to_close(RawConnection& conn) {
  std::string answer;
  char buf[4096];
  for (;;) {
    pollfd p{conn.fd(), POLLIN, 0};
    if (::poll(&p, 1, 10'000) != 1) return answer;
    const ssize_t n = ::recv(conn.fd(), buf, sizeof buf, 0);
    if (n <= 0) return answer;
    answer.append(buf, static_cast<std::size_t>(n));
  }
}

// Milliseconds from connect to the closed answer of each probe.
std::vector<double> probe_healthz(int port, int probes) {
  std::vector<double> ms;
  for (int i = 0; i < probes; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto conn = RawConnection::open(target(port));
    if (!conn || !conn->send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"))
      throw std::runtime_error("probe could not connect or send");
    const std::string answer = read_to_close(*conn);
    if (!answer.starts_with("HTTP/1.1 200 OK\r\n"))
      throw std::runtime_error("probe answered: " + answer);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  return ms;
}

}  // namespace

int main() {
  const int probes = env_int("STATUS_PROBES", 200);
  const int slow_count = env_int("STATUS_SLOW", 200);
  labeler::Metrics metrics;
  labeler::StatusServer server(metrics, [] { return std::pair<bool, std::string>{true, ""}; });
  if (auto ok = server.start("127.0.0.1:0"); !ok) {
    std::fprintf(stderr, "%s\n", ok.error().message.c_str());
    return 1;
  }
  const int port = server.port();

  MarkdownTable latency(
      {"/healthz probes", "p50 ms", "p99 ms", "max ms", "slow connections still open"});
  const Summary idle = summarize(probe_healthz(port, probes));
  latency.add({std::to_string(probes) + ", nothing else connected", fmt_ms(idle.p50_ms),
               fmt_ms(idle.p99_ms), fmt_ms(idle.max_ms), "-"});
  std::vector<RawConnection> slow;
  for (int i = 0; i < slow_count; ++i) {
    auto conn = RawConnection::open(target(port));
    if (!conn || !conn->send("GET /heal")) throw std::runtime_error("slow connection failed");
    slow.push_back(std::move(*conn));
  }
  const Summary loaded = summarize(probe_healthz(port, probes));
  int open = 0;
  for (auto& c : slow) open += c.peer_closed(std::chrono::milliseconds{0}) ? 0 : 1;
  latency.add({std::to_string(probes) + ", " + std::to_string(slow_count) +
                   " slowloris connections held open",
               fmt_ms(loaded.p50_ms), fmt_ms(loaded.p99_ms), fmt_ms(loaded.max_ms),
               std::to_string(open) + " of " + std::to_string(slow_count)});
  slow.clear();

  // The flood: the client streams until the server has answered and closed.
  constexpr std::size_t kBody = std::size_t{300} << 20;
  const std::string chunk(std::size_t{64} << 10, 'x');
  std::size_t sent = 0;
  std::string answer;
  const testing::PeakRssGrowth flood = testing::measure_peak_rss_growth([&] {
    auto conn = RawConnection::open(target(port));
    if (!conn || !conn->send("POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                             std::to_string(kBody) + "\r\n\r\n"))
      throw std::runtime_error("flood could not connect");
    while (sent < kBody && !conn->peer_closed(std::chrono::milliseconds{0})) {
      if (!conn->send(chunk)) break;
      sent += chunk.size();
    }
    answer = read_to_close(*conn);
  });
  const std::string status_line = answer.substr(0, answer.find("\r\n"));
  MarkdownTable memory({"POST announcing 300 MB", "answer", "body bytes sent before the close",
                        "until closed", "peak RSS growth of the process"});
  memory.add({"streamed at loopback speed", "`" + status_line + "`",
              std::to_string(sent / 1024) + " KiB", fmt_duration(flood.wall_ms),
              std::to_string(flood.peak_growth_kb) + " KiB"});
  server.stop();
  publish("status_server", latency.str() + "\n" + memory.str());
  return status_line.starts_with("HTTP/1.1 405") && open == slow_count ? 0 : 1;
}
