// storage/no_wait_files — a RocksDB FileSystem whose SST reads can refuse to wait (internal to
// storage/: includes RocksDB).
//
// A network thread answers a cache miss from RocksDB when it can do so without waiting
// (RocksStore::TryGetString). With SST files read through a memory mapping (rocksdb-mmap-reads),
// a block read is a memory access: it costs no system call when the file's pages are in the OS
// page cache, and a disk read in a page fault when they are not. Inside a NoWaitReads scope the
// files of this FileSystem answer a read only when every page it covers is resident (mincore(2),
// one system call), and fail it with IOStatus::Busy otherwise; RocksDB then fails the Get, and
// the caller hands the key to a worker, which reads it for real. Files read with pread (mmap
// off) fail every read inside the scope: a pread can always wait. Outside a scope, and on every
// other thread, reads pass straight through.
//
// A page resident when checked can be evicted before it is touched a microsecond later (the
// read then waits for the disk): a race with memory pressure, not a path a loaded server takes
// on every request.
//
// The residency memo (SetResidencyMemoMs, storage/store.h; rtc-storage-read-resident-ms). A
// mincore is a system call (1-1.5 us on a 2-core VM, about a tenth of a cold GET's CPU time), and
// a cold read's block usually lies in a stretch of file a read found resident a moment ago. So
// each mapped file remembers, per 64 KB stretch, when a read last found all of it resident (one
// mincore over the stretch costs about what one page does), and reads within the memo's period
// trust it without asking again; a stretch not wholly resident is not remembered, and its read is
// answered from the pages it covers. This widens the race above from microseconds to the period:
// a page the OS evicts within it costs the thread that touches it one disk read. The stamps live
// with the file (8 bytes per 64 KB), so they go when its mapping does; every thread shares
// them. 0 (the default here; the server sets its option's) = a mincore on every read.
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <memory>

namespace rockcache::storage {

// The calling thread's reads refuse to wait while one is alive (thread-local: other threads'
// reads are untouched). Nesting is harmless: the outer scope's state comes back.
class NoWaitReads {
 public:
  NoWaitReads() : previous_(active_) { active_ = true; }
  ~NoWaitReads() { active_ = previous_; }
  NoWaitReads(const NoWaitReads&) = delete;
  NoWaitReads& operator=(const NoWaitReads&) = delete;

  static bool active() { return active_; }

 private:
  static inline thread_local bool active_ = false;
  bool previous_;
};

// The process's Env whose file system is the default one with NoWaitReads honoured by its
// random-access (SST) files. Created on first use and never destroyed (as Env::Default()):
// every database opened with it, and reopened, shares it.
rocksdb::Env* NoWaitEnv();

// Whether every page of [data, data + size) is in memory (mincore). True for an empty range.
bool PagesResident(const char* data, size_t size);

}  // namespace rockcache::storage
