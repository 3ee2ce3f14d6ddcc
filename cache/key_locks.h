// cache::KeyLocks — key-stripe mutexes: the coherence fence between RocksDB and the cache.
//
// A key maps to stripe rotr(HashKey(key), 48) % stripes (other bits than the cache shard
// uses). A worker holds the stripes of a command's keys across its RocksDB read and the cache
// fill, or across its RocksDB write and the cache update, so a fill can never install a value
// older than a write that finished meanwhile (the full argument is in cache/cache.h). The same
// stripes make storage's read-modify-write commands atomic per key.
//
// Threads: workers only. Lock() BLOCKS until the stripes are free — possibly for a RocksDB read
// or write of another worker — so a network thread must never call it. A thread must not hold
// two Guards of one KeyLocks at a time (lock all of a command's keys with one Lock(keys) call):
// two guards taken one after the other can deadlock against another thread's multi-key Lock,
// and relocking a held stripe deadlocks at once.
//
// Deadlock freedom: Lock(keys) takes the distinct stripes of the keys in ascending order, so any
// two multi-key commands acquire their common stripes in the same order. The server's group
// commit locks every stripe of a whole group of commands with one Lock(keys) call.
//
// Write sequence (a seqlock per stripe, beside its mutex on the same cache line): a thread that
// holds a stripe and is about to change cache entries of its keys opens a WriteWindow (sequence
// becomes odd) and closes it (even again) once the write is in RocksDB: a group commit keeps
// its segment's written stripes odd until the segment's commit (server/group_commit.cc). Only
// the stripe's holder writes it, so both are a relaxed load and a plain store: no atomic
// read-modify-write, nothing shared between stripes.
// Readers that never lock take it too: multi-key cache reads in the network thread take WriteSeq
// of each key before their lookups and check it is unchanged after (server/executor.h has the
// argument), and a network thread's fill from storage takes a FillTicket (below).
//
// Not annotated for clang's thread-safety analysis (config/thread_annotations.h): a stripe guards
// no member here but a key's RocksDB data and cache entry, which the analysis cannot name, and a
// Guard is a set of stripes chosen at run time and returned by value, which it cannot follow. The
// order of the stripes against the other mutexes is checked at run time instead, by TSan's
// deadlock detector (next paragraph).
//
// Under ThreadSanitizer (`make tsan`, deadlock detector on) a stripe is not a std::mutex: TSan's
// deadlock detector aborts once a thread holds more than 64 mutexes, and LockAll holds every
// stripe, a group commit hundreds. There each stripe is an atomic flag TSan does not count as a
// mutex, and the detector sees the stripes as one reader-writer lock ("key stripes": a guard of
// Lock/TryLockStripe holds it shared, LockAll exclusive), so it still checks the order of the
// stripes against every other mutex. key_locks.cc ("TSan") has the details. Other builds are
// unchanged: a stripe is a std::mutex.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#define ROCKCACHE_KEY_LOCKS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ROCKCACHE_KEY_LOCKS_TSAN 1
#endif
#endif

namespace rockcache::cache {

class KeyLocks {
 public:
  // REQUIRES: stripes >= 1 (0 is treated as 1). A power of two is not required.
  explicit KeyLocks(size_t stripes = 4096);
  ~KeyLocks();
  KeyLocks(const KeyLocks&) = delete;
  KeyLocks& operator=(const KeyLocks&) = delete;

  // Holds a set of stripes; releases them on destruction or Unlock(). Movable, not copyable.
  // REQUIRES: destroyed or unlocked on the thread that locked it (std::mutex rule), before its
  // KeyLocks is destroyed.
  class [[nodiscard]] Guard {
   public:
    Guard() = default;
    Guard(Guard&& other) noexcept;
    Guard& operator=(Guard&& other) noexcept;
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() { Unlock(); }

    // Releases every stripe now (in descending order); idempotent.
    void Unlock();
    bool owns_lock() const { return owner_ != nullptr; }
    // The stripes held, ascending.
    const std::vector<uint32_t>& stripes() const { return stripes_; }

   private:
    friend class KeyLocks;
    KeyLocks* owner_ = nullptr;
    std::vector<uint32_t> stripes_;
#ifdef ROCKCACHE_KEY_LOCKS_TSAN
    bool all_ = false;  // taken by LockAll: "key stripes" held exclusive (see top)
#endif
  };

  // BLOCKS until key's stripe is free, then holds it.
  Guard Lock(std::string_view key);
  // BLOCKS until every distinct stripe of `keys` is held (ascending order, duplicates
  // collapsed). An empty list returns an empty guard at once.
  Guard Lock(const std::vector<std::string_view>& keys);
  // Never blocks: holds `stripe` and returns a guard that owns it, or an empty guard when another
  // thread holds it (or this one: stripes are not reentrant). Any order is deadlock-free since it
  // never waits. Used to take one more key while holding others (serving a blocked BLMOVE).
  Guard TryLockStripe(uint32_t stripe);
  // Every stripe, in ascending order (FLUSHALL: nothing else may fill or write meanwhile).
  // Blocking; as costly as `stripe_count()` lock acquisitions.
  Guard LockAll();

  size_t StripeOf(std::string_view key) const;
  // The distinct stripes of `keys`, ascending.
  std::vector<uint32_t> StripesOf(const std::vector<std::string_view>& keys) const;
  // The same, into *out (replacing what it held; its capacity is reused).
  void StripesOf(const std::vector<std::string_view>& keys, std::vector<uint32_t>* out) const;

  // A write window: the write sequence of a set of stripes held odd from construction until
  // Close() or destruction (see the top). The only way to mark stripes written, so a window can
  // not be left open by an early return. Movable, not copyable; an empty (default) window marks
  // nothing.
  // REQUIRES: the caller holds every stripe of the window, they are distinct, and it keeps
  // holding them until the window closes (destroy the window before the Guard).
  class [[nodiscard]] WriteWindow {
   public:
    WriteWindow() = default;
    // Opens over *stripes, which the window borrows: *stripes must outlive it unchanged.
    WriteWindow(KeyLocks& locks, const std::vector<uint32_t>* stripes);
    // Opens over stripes it owns.
    WriteWindow(KeyLocks& locks, std::vector<uint32_t>&& stripes);
    WriteWindow(WriteWindow&& other) noexcept;
    WriteWindow& operator=(WriteWindow&& other) noexcept;
    WriteWindow(const WriteWindow&) = delete;
    WriteWindow& operator=(const WriteWindow&) = delete;
    ~WriteWindow() { Close(); }

    // Ends the write (sequences even again); idempotent.
    void Close();
    bool open() const { return locks_ != nullptr; }

   private:
    const std::vector<uint32_t>& stripes() const {
      return borrowed_ != nullptr ? *borrowed_ : owned_;
    }
    KeyLocks* locks_ = nullptr;
    const std::vector<uint32_t>* borrowed_ = nullptr;
    std::vector<uint32_t> owned_;
  };
  // Any thread, never blocks: the write sequence of key's stripe (acquire). Odd while a write is
  // in progress.
  uint64_t WriteSeq(std::string_view key) const {
    return stripes_[StripeOf(key)].seq.load(std::memory_order_acquire);
  }
  // A fill's ticket: the write sequence of one key's stripe, taken before the fill reads
  // storage without holding the stripe (a network thread: server/executor.h,
  // TryAnswerFromMemory). Cache::Put given the ticket installs only while Unchanged(), checked
  // under the shard lock, so no write of the key can have begun between the ticket and the
  // install (the argument is in cache/cache.h, "Fills without the stripe").
  class FillTicket {
   public:
    // False when a write of the stripe was in progress as the ticket was taken: do not fill.
    bool usable() const { return (seen_ & 1) == 0; }
    // True when no write of the stripe has begun since the ticket was taken (acquire).
    bool Unchanged() const { return seq_->load(std::memory_order_acquire) == seen_; }

   private:
    friend class KeyLocks;
    FillTicket(const std::atomic<uint64_t>* seq, uint64_t seen) : seq_(seq), seen_(seen) {}
    const std::atomic<uint64_t>* seq_;
    uint64_t seen_;
  };
  // Any thread, never blocks.
  FillTicket TicketFor(std::string_view key) const {
    const std::atomic<uint64_t>& seq = stripes_[StripeOf(key)].seq;
    return FillTicket(&seq, seq.load(std::memory_order_acquire));
  }
  size_t stripe_count() const { return count_; }
  // How many stripe acquisitions found the stripe taken and had to wait (monotonic; INFO and
  // tests). Counted only on the slow path, after a failed try_lock.
  uint64_t contended() const { return contended_.load(std::memory_order_relaxed); }

 private:
#ifdef ROCKCACHE_KEY_LOCKS_TSAN
  // A lock TSan sees only through its atomic (key_locks.cc, "TSan"). Same contract as std::mutex.
  class StripeMutex {
   public:
    bool try_lock();
    void lock();
    void unlock();

   private:
    std::atomic<bool> held_{false};
  };
#else
  using StripeMutex = std::mutex;
#endif
  struct alignas(64) Stripe {  // one cache line each: neighbours do not false-share
    StripeMutex mu;
    std::atomic<uint64_t> seq{0};  // written only by the holder of mu (see top)
  };
  void LockStripe(uint32_t index);
  // Write sequence (WriteWindow). REQUIRES: the caller holds every stripe in `stripes`, and
  // they are distinct.
  void BeginWrite(const std::vector<uint32_t>& stripes);
  void EndWrite(const std::vector<uint32_t>& stripes);
  // What TSan's deadlock detector is told (key_locks.cc, "TSan"); empty in other builds.
  void AnnotateBeforeLock(bool all, bool try_lock);
  void AnnotateAfterLock(const Guard& guard, bool all, bool try_lock);
  void AnnotateBeforeUnlock(const Guard& guard);
  void AnnotateAfterUnlock(bool all);

  const size_t count_;
  std::unique_ptr<Stripe[]> stripes_;
  std::atomic<uint64_t> contended_{0};
};

}  // namespace rockcache::cache
