// storage/huge_page_chunks — bump allocation from 2 MB chunks that the kernel may back with
// transparent huge pages (internal to storage/: the memory of a memtable's skip list nodes).
//
// Why: a memtable of spread keys is a skip list over ~16 MB whose search steps land on random
// nodes. With 4 KB pages every step is also a likely TLB miss (16 MB is 4,096 pages, more than
// the second-level TLB holds), and every new node first touches fresh memory: RocksDB's arena
// takes its blocks from malloc, which returns them to the kernel after each flush, so the next
// memtable page-faults them in again, one 4 KB page per ~40 nodes (perf, hot LPUSH at pipeline
// 16: ~7% of the workers' samples in the node allocation, most of it first touches and faults).
// A chunk here is 2 MB, 2 MB-aligned and madvise(MADV_HUGEPAGE)d, so where transparent huge
// pages are enabled (`always` or `madvise` in /sys/kernel/mm/transparent_hugepage/enabled) it is
// one page: one fault, one TLB entry. Where they are not, it behaves as any anonymous mapping.
//
// Threads: Allocate is not thread-safe (the caller serializes it); MappedBytes may be read from
// any thread. Every chunk is unmapped by the destructor: what was allocated must not be used
// after it.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

namespace rockcache::storage {

class HugePageChunks {
 public:
  static constexpr size_t kChunkBytes = size_t{2} << 20;  // one x86-64 huge page

  // The count is published with release and read with acquire: RocksDB hands a new memtable to
  // its background threads through its own atomics, invisible to TSan, so a reader's first load
  // is ordered after the construction by this pair (as SkipListMemTable's head_).
  HugePageChunks() { mapped_bytes_.store(0, std::memory_order_release); }
  ~HugePageChunks();
  HugePageChunks(const HugePageChunks&) = delete;
  HugePageChunks& operator=(const HugePageChunks&) = delete;

  // `bytes` (at most kChunkBytes) aligned to `alignment` (a power of two, at most 4096), from
  // the current chunk or a new one; nullptr if the kernel refuses a new mapping.
  char* Allocate(size_t bytes, size_t alignment);

  // The bytes of every chunk mapped so far (whole chunks, used or not).
  size_t MappedBytes() const { return mapped_bytes_.load(std::memory_order_acquire); }

 private:
  std::vector<char*> chunks_;
  char* next_ = nullptr;  // the first free byte of the newest chunk
  char* end_ = nullptr;
  std::atomic<size_t> mapped_bytes_{0};
};

}  // namespace rockcache::storage
