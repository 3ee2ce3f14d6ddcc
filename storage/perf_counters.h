// storage/perf_counters — RocksDB's per-thread PerfContext counts, without including RocksDB.
//
// For tests and diagnostics: how much internal work (entries skipped because they were deleted
// or overwritten, memtable seeks and steps, block reads) the calling thread's storage calls did.
// Counting costs a few percent of CPU while enabled, so it is off unless a PerfScope is alive.
//
// Threads: the counts are the calling thread's own (thread_local in RocksDB). A PerfScope must
// be created and destroyed on the same thread; it does not see work done by other threads.
//
// RocksDB counts by default (kEnableCount) on every thread: each key comparison of a memtable
// insert or lookup then bumps a thread_local counter, which from a shared library costs a
// __tls_get_addr call — about a fifth of the instructions of a SET. Storage therefore turns
// counting off on each thread the first time it enters the store (QuietPerfCounting), unless a
// PerfScope already decided the level of that thread.
#pragma once

#include <cstdint>

namespace rockcache::storage {

struct PerfCounts {
  uint64_t internal_key_skipped = 0;     // entries stepped over: overwritten or out of snapshot
  uint64_t internal_delete_skipped = 0;  // deletion tombstones stepped over
  uint64_t internal_range_del_reseek = 0;
  uint64_t seek_on_memtable = 0;
  uint64_t next_on_memtable = 0;
  uint64_t prev_on_memtable = 0;
  uint64_t block_read = 0;        // blocks read from files (not the block cache): data, index,
                                  // filter
  uint64_t block_read_bytes = 0;  // their bytes
  uint64_t get_from_memtable = 0;
  uint64_t user_key_comparison = 0;  // comparator calls: a memtable insert's skiplist search too

  // The iteration work that deletion history can inflate: tombstones and hidden versions.
  uint64_t Skipped() const { return internal_key_skipped + internal_delete_skipped; }
};

// Enables counting (RocksDB's kEnableCount) on this thread from construction to destruction and
// restores the previous perf level afterwards. Not nestable in a meaningful way: Reset() clears
// the thread's counts.
// Turns RocksDB's counting off on the calling thread, once per thread; does nothing when a
// PerfScope was created on this thread before. Cheap after the first call (one thread_local
// read).
void QuietPerfCounting();

class PerfScope {
 public:
  PerfScope();
  ~PerfScope();
  PerfScope(const PerfScope&) = delete;
  PerfScope& operator=(const PerfScope&) = delete;

  // Zeroes this thread's counts.
  void Reset();
  // The counts since construction or the last Reset().
  PerfCounts Read() const;

 private:
  int previous_level_;
};

}  // namespace rockcache::storage
