// A point read of a key the block cache does not hold costs a few blocks, whatever the size of
// the data (rocksdb-partitioned-index, storage/rocks_store.cc). No timing: RocksDB's
// PerfContext counts the bytes of the blocks each read loaded from files
// (storage/perf_counters.h). The same reads on unpartitioned files load whole index and filter
// blocks, which is why the option exists: that case is measured too, so the test shows the
// difference it guards.
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "storage/perf_counters.h"
#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::storage::cold_read_test {
namespace {

using testing::Ok;
using testing::TempDir;

constexpr int kKeys = 200000;

std::string KeyOf(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key:%08d", i);
  return buf;
}

// Bytes loaded from files per GET of an existing key, on `kKeys` strings compacted into the
// last level (not L0, whose index and filter blocks stay pinned), with a 64 KB block cache.
uint64_t ColdReadBytes(bool partitioned) {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.write_buffer_bytes = 4 << 20;
  o.block_cache_bytes = 64 << 10;
  o.partitioned_index = partitioned;
  // What is measured is the partitions' effect once the index and filters are not all in
  // memory; pinned (rocksdb-pin-metadata, the default) none of them is read again anyway.
  o.pin_metadata = false;
  auto store = Ok(Store::Open(o));
  const std::string value(64, 'v');
  std::vector<std::string> keys;
  std::vector<std::pair<std::string_view, std::string_view>> kvs;
  for (int i = 0; i < kKeys; i += 1000) {
    keys.clear();
    kvs.clear();
    for (int j = i; j < i + 1000; ++j) keys.push_back(KeyOf(j));
    for (const auto& k : keys) kvs.emplace_back(k, value);
    REQUIRE(store->MSet(kvs).ok());
  }
  REQUIRE(store->CompactAll().ok());
  std::mt19937 random(7);
  constexpr int kReads = 200;
  PerfScope perf;
  for (int i = 0; i < kReads; ++i) {
    auto got = Ok(store->Get(KeyOf(static_cast<int>(random() % kKeys))));
    REQUIRE(got.has_value());
    CHECK(*got == value);
  }
  const PerfCounts counts = perf.Read();
  INFO("blocks " << counts.block_read << ", bytes " << counts.block_read_bytes);
  REQUIRE(counts.block_read >= static_cast<uint64_t>(kReads));  // the data really was cold
  return counts.block_read_bytes / kReads;
}

TEST_CASE("A cold GET loads a few blocks, not whole index and filter blocks",
          "[storage][cold-read]") {
  // ~200k keys in one last-level file: no filter there (optimize_filters_for_hits: keys that
  // exist are found there anyway), an index of ~200 KB over 2 KB data blocks
  // (rocksdb-meta-block-size).
  const uint64_t partitioned = ColdReadBytes(true);
  const uint64_t whole = ColdReadBytes(false);
  INFO("bytes per read: partitioned " << partitioned << ", whole " << whole);
  CHECK(partitioned <= 24u << 10);  // a filter partition, an index partition, a data block
  CHECK(whole >= 64u << 10);        // without partitions: the filter and index come back too
}

// With the defaults (rocksdb-pin-metadata, rocksdb-mmap-reads) every file's index and filter stay
// in memory, also in the levels above the last, which keep a filter: a GET of a key below them
// asks each of their filters without reading a block, and reads only its own data block. (Filter
// partitions read from the mapping are never pinned: each read of such a file loaded and
// checksummed one again, 36k instead of 20k instructions a cold GET after writes.)
TEST_CASE("With the defaults a cold GET reads only its data block, below files with filters",
          "[storage][cold-read]") {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.write_buffer_bytes = 1 << 20;
  o.block_cache_bytes = 64 << 10;
  REQUIRE(o.pin_metadata);
  REQUIRE(o.mmap_reads);
  auto store = Ok(Store::Open(o));
  auto write = [&](int first, int step, int count, const std::string& value) {
    std::vector<std::string> keys;
    std::vector<std::pair<std::string_view, std::string_view>> kvs;
    for (int n = 0; n < count; n += 1000) {
      keys.clear();
      kvs.clear();
      for (int j = n; j < n + 1000 && j < count; ++j) keys.push_back(KeyOf(first + j * step));
      for (const auto& k : keys) kvs.emplace_back(k, value);
      REQUIRE(store->MSet(kvs).ok());
    }
  };
  const std::string old_value(64, 'o');
  write(0, 1, kKeys, old_value);
  REQUIRE(store->CompactAll().ok());
  // Every 50th key rewritten, several times: files above the last level, each spanning every key.
  const std::string new_value(64, 'n');
  for (int round = 0; round < 4; ++round) write(round, 50, kKeys / 50, new_value);
  std::mt19937 random(11);
  constexpr int kReads = 300;
  int found_old = 0;
  PerfScope perf;
  for (int i = 0; i < kReads; ++i) {
    const int k = static_cast<int>(random() % kKeys);
    auto got = Ok(store->Get(KeyOf(k)));
    REQUIRE(got.has_value());
    if (*got == old_value) ++found_old;
  }
  const PerfCounts counts = perf.Read();
  INFO("blocks " << counts.block_read << " for " << kReads << " reads, " << found_old
                 << " of them below the rewritten files");
  REQUIRE(found_old >= kReads * 8 / 10);
  CHECK(counts.block_read <= static_cast<uint64_t>(kReads) * 12 / 10);
}

}  // namespace
}  // namespace rockcache::storage::cold_read_test
