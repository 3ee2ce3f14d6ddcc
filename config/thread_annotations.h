// Thread-safety annotations: macros over clang's capability attributes, so that `make lint`'s
// `clang++ -Wthread-safety` pass (the `tsa` step) checks at compile time which mutex guards which
// member and which functions expect a lock to be held or free.
//
// Any module may include this (config/ is the bottom layer). With a compiler other than clang
// (g++ builds the server and the tests) every macro expands to nothing: the annotations cost no
// instruction and change no layout. They only describe; the wrappers in config/mutex.h are the
// capabilities they name (std::mutex itself carries no annotation in libstdc++).
//
// How they read (clang's "Thread Safety Analysis" documentation has the full rules):
//   int hits_ GUARDED_BY(mu_);          reading needs mu_ held (shared or exclusive), writing
//                                       needs it exclusive.
//   Node* head_ PT_GUARDED_BY(mu_);     the same for what the pointer points to.
//   void Evict() REQUIRES(mu_);         callers must hold mu_ exclusively (REQUIRES_SHARED: at
//                                       least shared).
//   void Flush() EXCLUDES(mu_);         callers must not hold mu_ (the function takes it).
//   void Lock() ACQUIRE();              on a capability type: takes it (RELEASE gives it back;
//                                       the *_SHARED forms for reader locks).
//   bool TryLock() TRY_ACQUIRE(true);   takes it when the return value is true.
//   void AssertHeld() ASSERT_CAPABILITY(this);  from here on the analysis assumes it held.
//   class CAPABILITY("mutex") Mutex;    the type is a lock; SCOPED_CAPABILITY: an RAII holder.
//   NO_THREAD_SAFETY_ANALYSIS           on a function the analysis cannot follow (say why).
#pragma once

#if defined(__clang__)
#define ROCKCACHE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ROCKCACHE_THREAD_ANNOTATION(x)  // g++: no such attributes; nothing to check
#endif

#define CAPABILITY(x) ROCKCACHE_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY ROCKCACHE_THREAD_ANNOTATION(scoped_lockable)

#define GUARDED_BY(x) ROCKCACHE_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) ROCKCACHE_THREAD_ANNOTATION(pt_guarded_by(x))

#define ACQUIRED_BEFORE(...) ROCKCACHE_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) ROCKCACHE_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

#define REQUIRES(...) ROCKCACHE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) ROCKCACHE_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) ROCKCACHE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

#define ACQUIRE(...) ROCKCACHE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) ROCKCACHE_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) ROCKCACHE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) ROCKCACHE_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) ROCKCACHE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) \
  ROCKCACHE_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))

#define ASSERT_CAPABILITY(x) ROCKCACHE_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) ROCKCACHE_THREAD_ANNOTATION(assert_shared_capability(x))
#define RETURN_CAPABILITY(x) ROCKCACHE_THREAD_ANNOTATION(lock_returned(x))

#define NO_THREAD_SAFETY_ANALYSIS ROCKCACHE_THREAD_ANNOTATION(no_thread_safety_analysis)
