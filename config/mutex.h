// Mutex, SharedMutex, their scoped holders and CondVar: std::mutex, std::shared_mutex and
// std::condition_variable under names clang's thread-safety analysis understands
// (config/thread_annotations.h), so that `GUARDED_BY(mu_)` on a member is checked by
// `make lint`.
//
// Any module may include this. Every method is an inline forward to the standard type: after
// inlining a MutexLock is the same lock/unlock calls as a std::lock_guard<std::mutex>, and
// CondVar waits on the very std::condition_variable the code used before (no extra state, no
// extra branch). Same rules as the standard types: not recursive, unlock on the thread that
// locked, never destroy a held mutex.
//
// Waiting: CondVar::Wait*(&mu_) require mu_ held and return with it held again (the standard "wait
// in a loop on the predicate" applies: wakeups may be spurious). Predicates stay in the caller's
// `while` loop, where the analysis can see that the guarded members it reads are read under the
// lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "config/thread_annotations.h"

namespace rockcache {

class CondVar;

// An exclusive lock. Lock/Unlock/TryLock BLOCK as std::mutex does (TryLock never blocks).
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds this mutex (a path it cannot follow, such as a lock taken
  // by a caller through a reference it does not see). Checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// A reader-writer lock: Lock/Unlock exclusive, ReaderLock/ReaderUnlock shared.
class CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  void ReaderLock() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void ReaderUnlock() RELEASE_SHARED() { mu_.unlock_shared(); }
  void AssertHeld() const ASSERT_CAPABILITY(this) {}
  void AssertReaderHeld() const ASSERT_SHARED_CAPABILITY(this) {}

  // The SharedLockable names, for std::shared_lock<SharedMutex> (a shared hold that must move,
  // such as storage's per-method hold). The analysis does not follow a std::shared_lock: code that
  // holds one calls AssertReaderHeld() before touching what this mutex guards.
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  bool try_lock_shared() TRY_ACQUIRE_SHARED(true) { return mu_.try_lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a Mutex for its scope (std::lock_guard). Unlock()/Lock() on the mutex itself may open a
// window in the middle of the scope, as long as it is held again when the scope ends.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~WriterMutexLock() RELEASE() { mu_->Unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex* const mu_;
};

// Holds a SharedMutex shared for its scope.
class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex* mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_->ReaderLock(); }
  ~ReaderMutexLock() RELEASE() { mu_->ReaderUnlock(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex* const mu_;
};

// A std::condition_variable waited on with a Mutex. Signal/SignalAll may be called with or
// without the mutex held; the Wait* calls REQUIRE the mutex they are given and BLOCK. Every
// waiter of one CondVar must pass the same Mutex (the std::condition_variable rule).
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases *mu, sleeps until signalled (or spuriously woken), takes *mu again.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: it belongs to the caller's scope
  }
  // As Wait, also returning at `deadline`; true when the deadline has passed.
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex* mu, const std::chrono::time_point<Clock, Duration>& deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timed_out = cv_.wait_until(lock, deadline) == std::cv_status::timeout;
    lock.release();
    return timed_out;
  }
  // As Wait, also returning after `timeout`; true when it elapsed.
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, const std::chrono::duration<Rep, Period>& timeout) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timed_out = cv_.wait_for(lock, timeout) == std::cv_status::timeout;
    lock.release();
    return timed_out;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace rockcache
