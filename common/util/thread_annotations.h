#pragma once
// Clang's thread-safety analysis (-Wthread-safety): which mutex guards which member, and which
// functions must or must not be called with it held, checked at compile time. The clang-tidy
// gate (scripts/check-tidy.sh, .clang-tidy) fails on any access the annotations do not allow;
// g++ ignores them. https://clang.llvm.org/docs/ThreadSafetyAnalysis.html describes the attributes.
//
// libstdc++'s std::mutex carries no annotations, so guarded members use cn::Mutex and
// cn::MutexLock (common/util/mutex.h).

#if defined(__clang__)
#define CN_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CN_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (cn::Mutex).
#define CAPABILITY(name) CN_THREAD_ANNOTATION(capability(name))
// A RAII type that holds a lock for its lifetime (cn::MutexLock).
#define SCOPED_CAPABILITY CN_THREAD_ANNOTATION(scoped_lockable)
// The member is read and written only with the lock held.
#define GUARDED_BY(lock) CN_THREAD_ANNOTATION(guarded_by(lock))
// What the pointer points to is accessed only with the lock held.
#define PT_GUARDED_BY(lock) CN_THREAD_ANNOTATION(pt_guarded_by(lock))
// The caller must hold the lock(s).
#define REQUIRES(...) CN_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// The caller must not hold the lock(s): the function takes them itself.
#define EXCLUDES(...) CN_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function takes (gives back) the lock(s), or the object's own lock when none is named.
#define ACQUIRE(...) CN_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) CN_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) CN_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The function returns a reference to the lock that guards the object's state.
#define RETURN_CAPABILITY(lock) CN_THREAD_ANNOTATION(lock_returned(lock))
// Escape hatch for what the analysis cannot follow; every use says why.
#define NO_THREAD_SAFETY_ANALYSIS CN_THREAD_ANNOTATION(no_thread_safety_analysis)
