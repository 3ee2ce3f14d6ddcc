// storage/huge_page_chunks: aligned, non-overlapping allocations from whole 2 MB chunks, each at
// a 2 MB boundary (what a transparent huge page needs), counted in MappedBytes.
#include "storage/huge_page_chunks.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

using rockcache::storage::HugePageChunks;

TEST_CASE("huge_page_chunks: allocations are aligned, disjoint and in 2 MB-aligned chunks",
          "[storage][memtable]") {
  constexpr size_t kChunk = HugePageChunks::kChunkBytes;
  HugePageChunks chunks;
  REQUIRE(chunks.MappedBytes() == 0);

  char* first = chunks.Allocate(1, 8);
  REQUIRE(first != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(first) % kChunk == 0);  // a new chunk starts at its boundary
  CHECK(chunks.MappedBytes() == kChunk);

  // Odd sizes keep the alignment asked for, and what is written stays (no two overlap).
  std::vector<std::pair<char*, size_t>> blocks;
  size_t total = 1;
  for (size_t i = 0; total < 3 * kChunk; ++i) {
    const size_t bytes = 1 + (i * 7919) % 5000;
    char* p = chunks.Allocate(bytes, 8);
    REQUIRE(p != nullptr);
    REQUIRE(reinterpret_cast<uintptr_t>(p) % 8 == 0);
    std::memset(p, static_cast<int>(i % 251), bytes);
    blocks.emplace_back(p, bytes);
    total += bytes;
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto [p, bytes] = blocks[i];
    for (size_t j = 0; j < bytes; ++j) {
      if (static_cast<unsigned char>(p[j]) != i % 251) FAIL("block " << i << " was overwritten");
    }
  }
  // Whole chunks only: three and a bit chunks of allocations map four.
  CHECK(chunks.MappedBytes() == 4 * kChunk);

  // A whole chunk still fits (in a fresh one); more than a chunk is refused.
  char* whole = chunks.Allocate(kChunk, 8);
  REQUIRE(whole != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(whole) % kChunk == 0);
  CHECK(chunks.MappedBytes() == 5 * kChunk);
  CHECK(chunks.Allocate(kChunk + 1, 8) == nullptr);
  CHECK(chunks.MappedBytes() == 5 * kChunk);
}
