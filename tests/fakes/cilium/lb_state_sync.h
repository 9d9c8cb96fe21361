#pragma once
// The agent's file reflector job (cilium/cilium pkg/loadbalancer/reflectors/file.go): read the
// state file once at start (a missing file is only logged), then watch the PARENT directory
// with inotify ("." for a relative path). Only events naming the file's base name count and
// removals are ignored; every other event restarts a settle timer of --lb-state-file-interval on
// the agent clock, and the file is read when it fires. A read replaces the whole table (up to
// 1.19.4 except stale shared backends, cilium/cilium#46493), or on any error leaves the
// previous table and logs "Failed to synchronize".
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "common/util/clock.h"
#include "tests/fakes/cilium/clock_scheduler.h"
#include "tests/fakes/cilium/fsnotify_watch.h"
#include "tests/fakes/cilium/lb_state_file.h"
#include "tests/fakes/cilium/lb_table.h"

namespace cn::fakes::cilium {

struct LbStateSyncOptions {
  std::string path;
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  LbEmulation emulation;
  // One agent log line ("level=info msg=..."), in order.
  std::function<void(const std::string&)> log;
};

class LbStateSync {
 public:
  LbStateSync(LbStateSyncOptions options, Clock& clock);
  ~LbStateSync();
  LbStateSync(const LbStateSync&) = delete;
  LbStateSync& operator=(const LbStateSync&) = delete;

  // The suffix check is the agent's start-up error; everything after it only logs.
  Status start();
  void stop();

  LbTable snapshot() const;
  // Events that named the file and restarted the timer, and reads attempted (tests wait on them).
  std::uint64_t events() const;
  std::uint64_t reads() const;
  // Waits (real time) until the settle timer has nothing due at the clock's current time.
  bool wait_idle(std::chrono::milliseconds real_timeout = std::chrono::seconds(5));

 private:
  void sync();
  bool on_event(const inotify_event& event);
  void log(const std::string& line);

  LbStateSyncOptions options_;
  LbFileFormat format_ = LbFileFormat::json_file;
  std::string dir_;
  std::string base_;
  ClockScheduler scheduler_;
  mutable std::mutex mu_;
  LbTable table_;
  std::map<std::string, std::uint32_t> ids_;  // frontend key -> ID, kept while it exists
  // Backend address -> the services holding it, ordered by service name as the agent's
  // backend instances are; what survives a read on releases with cilium/cilium#46493.
  std::map<std::string, std::map<std::string, LbBackend>> instances_;
  void carry_stale_backends(LbTable& table);
  std::uint32_t next_id_ = 1;
  std::uint64_t generation_ = 0;  // the timer that fires reads only if no event came after it
  std::uint64_t events_ = 0;
  std::uint64_t reads_ = 0;
  FsnotifyWatch watch_;  // last: stopped before the members its thread uses go
};

}  // namespace cn::fakes::cilium
