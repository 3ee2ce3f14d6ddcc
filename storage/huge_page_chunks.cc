#include "storage/huge_page_chunks.h"

#include <sys/mman.h>

#include <cstdint>

namespace rockcache::storage {

namespace {

// kChunkBytes of anonymous memory at a kChunkBytes boundary (a huge page can only back an aligned
// range): twice that is mapped and the unaligned ends are unmapped.
char* MapAlignedChunk() {
  constexpr size_t kChunk = HugePageChunks::kChunkBytes;
  void* raw = mmap(nullptr, 2 * kChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* const start = static_cast<char*>(raw);
  const auto address = reinterpret_cast<uintptr_t>(start);
  char* const aligned = start + ((kChunk - address % kChunk) % kChunk);
  if (aligned > start) munmap(start, static_cast<size_t>(aligned - start));
  char* const tail = aligned + kChunk;
  if (tail < start + 2 * kChunk) munmap(tail, static_cast<size_t>(start + 2 * kChunk - tail));
  // Advice only: without transparent huge pages (or with them off) the chunk stays 4 KB pages.
  (void)madvise(aligned, kChunk, MADV_HUGEPAGE);
  return aligned;
}

}  // namespace

HugePageChunks::~HugePageChunks() {
  for (char* chunk : chunks_) munmap(chunk, kChunkBytes);
}

char* HugePageChunks::Allocate(size_t bytes, size_t alignment) {
  if (bytes > kChunkBytes) return nullptr;
  auto aligned = [alignment](char* p) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    return p + ((alignment - address % alignment) % alignment);
  };
  char* at = next_ == nullptr ? nullptr : aligned(next_);
  if (at == nullptr || bytes > static_cast<size_t>(end_ - at)) {
    char* chunk = MapAlignedChunk();
    if (chunk == nullptr) return nullptr;
    chunks_.push_back(chunk);
    mapped_bytes_.fetch_add(kChunkBytes, std::memory_order_relaxed);
    end_ = chunk + kChunkBytes;
    at = chunk;  // chunk-aligned, so aligned for any `alignment` up to 4096
  }
  next_ = at + bytes;
  return at;
}

}  // namespace rockcache::storage
