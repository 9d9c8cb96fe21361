#pragma once
// std::mutex and a scoped lock that clang's thread-safety analysis understands (see
// thread_annotations.h). Members a Mutex guards are declared GUARDED_BY it, and the analysis
// checks every access holds it.
//
// MutexLock also works with std::condition_variable_any, which unlocks and relocks it around the
// wait. The analysis does not look inside the wait, so the caller keeps holding the lock from
// its point of view, which is what the wait guarantees on return. A wait predicate is a lambda
// of its own to the analysis: give it REQUIRES(mu) so it may read what mu guards.
#include <mutex>

#include "common/util/thread_annotations.h"

namespace cn {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  std::mutex mu_;
};

// Holds a Mutex from construction to destruction, like std::lock_guard. lock() and unlock() exist
// for std::condition_variable_any::wait only; code that needs the lock for less than a scope
// ends the scope instead.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }

 private:
  Mutex& mu_;
};

}  // namespace cn
