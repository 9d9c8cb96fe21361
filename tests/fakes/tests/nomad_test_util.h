#pragma once
// Helpers for the fake-Nomad tests: in-process requests without sockets, a stream writer that
// records what a stream sends, the reference scenario, and a key-order-aware JSON comparator.
#include <strings.h>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fakes/http/http_server.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/nomad/http_util.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes::nomad_testing {

inline std::string read_testdata(const std::string& name) {
  auto path = std::filesystem::path(CN_DEFAULT_SOURCE_DIR) / "tests" / "fakes" / "nomad" /
              "testdata" / name;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A request as the HTTP server would hand it over (query split and percent-decoded).
inline HttpRequest make_request(
    const std::string& method, const std::string& target,
    const std::vector<std::pair<std::string, std::string>>& headers = {}, std::string body = {}) {
  HttpRequest r;
  r.method = method;
  r.target = target;
  auto q = target.find('?');
  r.raw_path = target.substr(0, q);
  r.path = percent_decode(r.raw_path);
  if (q != std::string::npos) {
    std::string rest = target.substr(q + 1);
    std::size_t start = 0;
    while (start <= rest.size()) {
      auto amp = rest.find('&', start);
      std::string kv =
          rest.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
      if (!kv.empty()) {
        auto eq = kv.find('=');
        std::string k = percent_decode(kv.substr(0, eq));
        std::string v = eq == std::string::npos ? "" : percent_decode(kv.substr(eq + 1));
        r.query.emplace(k, v);
      }
      if (amp == std::string::npos) break;
      start = amp + 1;
    }
  }
  for (const auto& [k, v] : headers) r.headers[k] = v;
  r.body = std::move(body);
  return r;
}

inline HttpResponse get(FakeNomad& fake, const std::string& target,
                        const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  return fake.handle(make_request("GET", target, headers));
}

inline std::string header(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  }
  return "";
}

// Records a stream's writes; lines() splits the NDJSON.
class RecordingWriter final : public StreamWriter {
 public:
  bool write(const std::string& data) override {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    data_ += data;
    ++writes_;
    cv_.notify_all();
    return true;
  }
  bool stopping() const override { return false; }
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  std::string data() const {
    std::lock_guard lock(mu_);
    return data_;
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::string d = data();
    std::size_t start = 0;
    for (auto nl = d.find('\n'); nl != std::string::npos; nl = d.find('\n', start)) {
      out.push_back(d.substr(start, nl - start));
      start = nl + 1;
    }
    return out;
  }
  bool wait_lines(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds{5}) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      return static_cast<std::size_t>(std::count(data_.begin(), data_.end(), '\n')) >= n;
    });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string data_;
  int writes_ = 0;
  bool closed_ = false;
};

// Runs a stream handler on its own thread, as the server's connection thread would.
class StreamRun {
 public:
  StreamRun(FakeNomad& fake, const std::string& target,
            const std::vector<std::pair<std::string, std::string>>& headers = {})
      : fake_(fake), response_(get(fake, target, headers)) {
    if (response_.stream) {
      thread_ = std::thread([this] {
        response_.stream(writer_);
        std::lock_guard lock(mu_);
        done_ = true;
        cv_.notify_all();
      });
    }
  }
  // A stream waiting for its next heartbeat on a ManualClock would never notice a closed writer.
  ~StreamRun() {
    writer_.close();
    if (thread_.joinable()) fake_.drop_streams();
    if (thread_.joinable()) thread_.join();
  }
  const HttpResponse& response() const { return response_; }
  RecordingWriter& writer() { return writer_; }
  bool wait_done(std::chrono::milliseconds timeout = std::chrono::seconds{5}) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return done_; });
  }

 private:
  FakeNomad& fake_;
  HttpResponse response_;
  RecordingWriter writer_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// Values that are run-specific in the reference itself (its task-event times and the
// StartedAt/DeploymentStatus timestamps are not even mutually consistent), so only their type
// and format are compared.
inline bool is_time_path(const std::string& path) {
  auto ends = [&](const std::string& s) {
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".Time") || ends(".StartedAt") || ends("DeploymentStatus.Timestamp");
}

// Field-by-field comparison in key order. Returns human-readable differences (empty: equal).
inline void compare_json(const nlohmann::ordered_json& want, const nlohmann::ordered_json& got,
                         const std::string& path, std::vector<std::string>& diffs) {
  using J = nlohmann::ordered_json;
  auto kind = [](const J& j) {
    if (j.is_number_integer()) return std::string("integer");  // signed and unsigned alike
    return std::string(j.type_name());
  };
  if (kind(want) != kind(got)) {
    diffs.push_back(path + ": type " + kind(want) + " expected, got " + kind(got));
    return;
  }
  if (want.is_object()) {
    std::vector<std::string> wk, gk;
    for (const auto& [k, v] : want.items()) wk.push_back(k);
    for (const auto& [k, v] : got.items()) gk.push_back(k);
    if (wk != gk) {
      std::string w, g;
      for (const auto& k : wk) w += k + ",";
      for (const auto& k : gk) g += k + ",";
      diffs.push_back(path + ": keys [" + w + "] expected, got [" + g + "]");
    }
    for (const auto& [k, v] : want.items()) {
      if (got.contains(k)) compare_json(v, got.at(k), path + "." + k, diffs);
    }
    return;
  }
  if (want.is_array()) {
    if (want.size() != got.size()) {
      diffs.push_back(path + ": " + std::to_string(want.size()) + " elements expected, got " +
                      std::to_string(got.size()));
      return;
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      compare_json(want[i], got[i], path + "[" + std::to_string(i) + "]", diffs);
    }
    return;
  }
  if (is_time_path(path)) {
    if (want.is_number_integer() && got.get<std::int64_t>() <= (std::int64_t{1} << 53)) {
      diffs.push_back(path + ": UnixNano expected above 2^53, got " + got.dump());
    }
    if (want.is_string() &&
        (got.get<std::string>().size() < 20 || got.get<std::string>().back() != 'Z')) {
      diffs.push_back(path + ": RFC3339 UTC time expected, got " + got.dump());
    }
    return;
  }
  if (want != got) diffs.push_back(path + ": " + want.dump() + " expected, got " + got.dump());
}

inline std::vector<std::string> json_diffs(const nlohmann::ordered_json& want,
                                           const nlohmann::ordered_json& got) {
  std::vector<std::string> diffs;
  compare_json(want, got, "$", diffs);
  return diffs;
}

inline std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

constexpr const char* kRefNode = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";
constexpr const char* kRefAlloc = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";

constexpr std::int64_t kRefStart = 1755781200000000000;  // the job's SubmitTime

inline WallTime wall_at(std::int64_t unix_nanos) {
  return WallTime{
      std::chrono::duration_cast<WallTime::duration>(std::chrono::nanoseconds{unix_nanos})};
}

inline JobSpec reference_job() {
  JobSpec job;
  job.id = "web";
  job.meta = {{"team", "payments"}};
  GroupSpec g;
  g.name = "app";
  g.meta = {{"tier", "frontend"}};
  g.network_mode = "cni/cilium";
  g.cni_args = {{"example", "value"}};
  g.ports = {PortSpec{"http", 8080, std::nullopt}};
  ServiceSpec web;
  web.name = "web";
  web.port_label = "http";
  web.tags = {"http"};
  web.meta = {{"svc", "web"}};
  web.address_mode = "alloc";  // the reference job's service block says so
  g.services = {web};
  TaskSpec t;
  t.name = "server";
  t.driver = "docker";
  t.config = {{"image", "nginx:1.27"}, {"ports", {"http"}}};
  t.meta = {{"role", "server"}};
  g.tasks = {t};
  job.groups = {g};
  return job;
}

// Replays the reference story (nomad/README.md): job web registered at 1180, status touched at
// 1185, alloc placed at 1201, client report with the CNI address at 1240, on the reference's
// wall-clock times.
inline void play_reference(FakeNomad& fake, ManualClock& clock, bool with_network = true) {
  auto at = [&](std::int64_t unix_nanos) {
    auto d = wall_at(unix_nanos) - clock.wall_now();
    if (d.count() < 0) throw std::runtime_error("the clock must start at kRefStart");
    clock.advance(d);
  };
  at(1755781200000000000);
  fake.skip_to_index(1180);
  if (!fake.register_job(reference_job())) throw std::runtime_error("register");
  fake.skip_to_index(1185);
  if (!fake.set_job_status("default", "web", "pending")) throw std::runtime_error("status");
  at(1755781234567890123);
  fake.skip_to_index(1201);
  PlaceRequest p;
  p.job_id = "web";
  p.alloc_id = kRefAlloc;
  p.eval_id = "9a4d7e12-6c0b-4b8e-a3f5-2e1d0c9b8a77";
  p.deployment_id = "0c5e2a71-3b9d-4f21-8e6a-5d7c9b1a2f30";
  p.signing_key_id = "7d0c2b9e-1f4a-4c3d-9e8b-6a5f4e3d2c1b";
  p.port_values = {{"http", 25431}};
  if (!fake.place_alloc(p)) throw std::runtime_error("place");
  if (!with_network) return;
  at(1755781245123456789);
  fake.skip_to_index(1240);
  if (!fake.set_network_status(kRefAlloc, NetworkStatusSpec{"10.200.3.17", "", "eth0"})) {
    throw std::runtime_error("network");
  }
}

inline FakeNomadConfig reference_config(Clock* clock) {
  FakeNomadConfig cfg;
  cfg.clock = clock;
  cfg.node_id = kRefNode;
  cfg.node_name = "worker-1";
  cfg.node_ip = "10.0.1.15";
  cfg.blocking_jitter = false;
  return cfg;
}

}  // namespace cn::fakes::nomad_testing
