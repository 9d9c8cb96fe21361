#pragma once
// One labeler per node. Two labelers on one state file would each label every endpoint with
// what it derives, so a second one started with other flags silently changes running
// workloads' identities. `run` takes this lock before anything else and keeps it for the
// process's lifetime.
//
// The lock is flock(2) on a file beside the state file: the kernel drops it when the process
// ends however it ends, so a crashed labeler never leaves a stale lock. The file is never
// removed: a second process could lock the unlinked inode while a third creates a new file,
// and both would hold "the" lock. The holder writes its PID into it so that the next one can
// name it (as the holder's PID namespace sees it).
#include <chrono>
#include <string>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::labeler {

class NodeLock {
 public:
  enum class Outcome {
    locked,   // this process holds it now
    held,     // another process still held it at the deadline
    stopped,  // the deadline's stop was requested first
  };

  // How often a waiting labeler tries again: flock(2) cannot notify, and a takeover after a
  // restart should not wait long.
  static constexpr std::chrono::milliseconds kRetry{250};

  // `<state file>.labeler.lock`. Not `<state file>.lock`: that one the plugin and the labeler
  // take around every single state access.
  static std::string path_for(const std::string& state_file);

  explicit NodeLock(std::string path);
  ~NodeLock();  // closing the descriptor releases the lock
  NodeLock(const NodeLock&) = delete;
  NodeLock& operator=(const NodeLock&) = delete;

  // One attempt: true when this process holds the lock, false when another does (holder_pid()
  // then names it). Fails only when the file cannot be created, opened or locked for another
  // reason (a symlink in its place, a read-only directory).
  [[nodiscard]] Result<bool> try_lock();
  // Tries every `retry` until the lock is taken, deadline.at passes or deadline.stop is
  // requested; waits on the clock, so a stop ends the wait at once.
  [[nodiscard]] Result<Outcome> wait(Clock& clock, const Deadline& deadline,
                                     std::chrono::milliseconds retry = kRetry);

  // The PID the holder wrote, read at the last attempt that found the lock held; 0 when the
  // file named none (a holder between its flock and its write).
  long holder_pid() const { return holder_pid_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool locked_ = false;
  long holder_pid_ = 0;
};

}  // namespace cn::labeler
