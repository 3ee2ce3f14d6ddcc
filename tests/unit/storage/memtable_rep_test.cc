// storage/memtable_rep: rockcache's skip list behind RocksDB, checked against RocksDB's own
// memtable. Two databases get the same random writes (puts, deletes, many versions of few keys,
// with and without insert hints) and must answer every read the same way: point reads at
// snapshots, full scans both ways, Seek / SeekForPrev with and without bounds. Every key
// comparison is also checked against RocksDB's comparator (SetMemTableComparisonCheck). Others:
// a write of a key just read starts from the read's search path (key comparisons counted); reads
// while one thread writes; memtables filled past their first megabyte, whose nodes then come from
// huge page chunks.
#include "storage/memtable_rep.h"

#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/slice_transform.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/store_fixture.h"

// librocksdb's LookupKey constructor and destructor (exported; the class is in a private
// header), called as the free functions they compile to, to check MemTableKeyOf's layout.
void RocksLookupKeyConstruct(
    void* self, const rocksdb::Slice& user_key, uint64_t sequence,
    const rocksdb::Slice* timestamp) __asm__("_ZN7rocksdb9LookupKeyC1ERKNS_5SliceEmPS2_");
void RocksLookupKeyDestruct(void* self) __asm__("_ZN7rocksdb9LookupKeyD1Ev");

using rockcache::storage::MemTableComparisonsOnThisThread;
using rockcache::storage::MemTableInsertsFromReadPathOnThisThread;
using rockcache::storage::MemTableKeyOf;
using rockcache::storage::NewSkipListMemTableFactory;
using rockcache::storage::SetMemTableComparisonCheck;
using rockcache::storage::testing::TempDir;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace memtable_rep_test {

namespace {

struct Db {
  Db(const std::string& path, bool ours, bool hints, bool prefix_skip = false) {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 20;  // everything stays in the memtable
    if (ours) {
      options.memtable_factory = NewSkipListMemTableFactory(true, true, prefix_skip);
      options.allow_concurrent_memtable_write = false;
    }
    if (hints) {
      options.memtable_insert_with_hint_prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(2));
    }
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, path, &raw);
    INFO(s.ToString());
    REQUIRE(s.ok());
    db.reset(raw);
  }
  std::unique_ptr<rocksdb::DB> db;
};

// Keys of a few prefixes and lengths (one a prefix of another), so order edge cases come up.
// Short keys, and long ones sharing prefixes of 8 to 20 bytes (as a collection's entries do:
// the skip list's prefix skipping compares them from the bytes its neighbours share).
std::string RandomKey(std::mt19937_64& rng) {
  static const std::string kPrefixes[] = {"a",
                                          "aa",
                                          "ab",
                                          std::string("b\xff", 2),
                                          std::string("c\0", 2),
                                          "collection:0001:v",
                                          "collection:0001:version:",
                                          "collection:0002",
                                          std::string("collect\0on", 11)};
  const size_t which = rng() % 9;
  std::string key = kPrefixes[which];
  const int n = static_cast<int>(rng() % (which < 5 ? 4 : 14));
  for (int i = 0; i < n; ++i) key.push_back(static_cast<char>('0' + rng() % 4));
  return key;
}

std::vector<std::string> Scan(rocksdb::DB* db, const rocksdb::ReadOptions& ro, bool backward) {
  std::vector<std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  if (backward) {
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      out.push_back(it->key().ToString() + "=" + it->value().ToString());
    }
  } else {
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out.push_back(it->key().ToString() + "=" + it->value().ToString());
    }
  }
  REQUIRE(it->status().ok());
  return out;
}

// Seek (or SeekForPrev) to `target`, then up to 3 steps on (or back, or both ways).
std::vector<std::string> SeekAndStep(rocksdb::DB* db, const rocksdb::ReadOptions& ro,
                                     const std::string& target, int mode) {
  std::vector<std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  if (mode % 2 == 0) {
    it->Seek(target);
  } else {
    it->SeekForPrev(target);
  }
  for (int i = 0; i < 4 && it->Valid(); ++i) {
    out.push_back(it->key().ToString());
    if (mode < 2) {
      it->Next();
    } else {
      it->Prev();
    }
  }
  REQUIRE(it->status().ok());
  return out;
}

}  // namespace

TEST_CASE("memtable_rep reads a LookupKey's memtable key where librocksdb puts it",
          "[storage][memtable]") {
  for (size_t length : {size_t{1}, size_t{16}, size_t{300}}) {  // 300: past LookupKey's buffer
    const std::string user_key(length, 'k');
    alignas(16) unsigned char lookup[1024];  // LookupKey is 3 pointers and 200 bytes
    const rocksdb::Slice user(user_key);
    RocksLookupKeyConstruct(lookup, user, 42, nullptr);
    const auto* p = reinterpret_cast<const unsigned char*>(
        MemTableKeyOf(*reinterpret_cast<rocksdb::LookupKey*>(lookup)));
    // varint32 of the internal key's length, the user key, then (42 << 8 | a value type).
    uint32_t internal_length = p[0] & 127;
    size_t header = 1;
    if (p[0] >= 128) {
      internal_length |= static_cast<uint32_t>(p[1] & 127) << 7;
      header = 2;
    }
    CHECK(internal_length == length + 8);
    CHECK(std::string(reinterpret_cast<const char*>(p + header), length) == user_key);
    uint64_t trailer = 0;
    std::memcpy(&trailer, p + header + length, 8);
    CHECK((trailer >> 8) == 42);
    RocksLookupKeyDestruct(lookup);
  }
}

TEST_CASE("memtable_rep answers every read as RocksDB's memtable does", "[storage][memtable]") {
  SetMemTableComparisonCheck(true);
  for (int variant = 0; variant < 4; ++variant) {
    const bool hints = variant % 2 == 1;
    const bool prefix_skip = variant >= 2;
    INFO("insert hints: " << hints << ", prefix skipping: " << prefix_skip);
    TempDir dir_ours;
    TempDir dir_rocks;
    Db ours(dir_ours.path(), true, hints, prefix_skip);
    Db rocks(dir_rocks.path(), false, hints);
    std::mt19937_64 rng(7 + variant);
    std::vector<const rocksdb::Snapshot*> snaps_ours;
    std::vector<const rocksdb::Snapshot*> snaps_rocks;
    for (int step = 0; step < 4000; ++step) {
      const std::string key = RandomKey(rng);
      const uint64_t op = rng() % 10;
      if (op < 6) {
        const std::string value = std::to_string(step);
        REQUIRE(ours.db->Put(rocksdb::WriteOptions(), key, value).ok());
        REQUIRE(rocks.db->Put(rocksdb::WriteOptions(), key, value).ok());
      } else if (op < 8) {
        REQUIRE(ours.db->Delete(rocksdb::WriteOptions(), key).ok());
        REQUIRE(rocks.db->Delete(rocksdb::WriteOptions(), key).ok());
      } else if (op == 8) {  // a batch of several keys, some repeated, half of them ascending
        rocksdb::WriteBatch batch;
        std::vector<std::string> keys;
        for (int i = 0; i < 6; ++i) keys.push_back(RandomKey(rng));
        if (rng() % 2 == 0) std::sort(keys.begin(), keys.end());
        for (const std::string& k : keys) {
          if (rng() % 3 == 0) {
            REQUIRE(batch.Delete(k).ok());
          } else {
            REQUIRE(batch.Put(k, "b" + std::to_string(step)).ok());
          }
        }
        REQUIRE(ours.db->Write(rocksdb::WriteOptions(), &batch).ok());
        REQUIRE(rocks.db->Write(rocksdb::WriteOptions(), &batch).ok());
      } else if (snaps_ours.size() < 8) {
        snaps_ours.push_back(ours.db->GetSnapshot());
        snaps_rocks.push_back(rocks.db->GetSnapshot());
      }
      if (step % 50 != 0) continue;
      // Reads: now and at every snapshot.
      for (size_t s = 0; s <= snaps_ours.size(); ++s) {
        rocksdb::ReadOptions ro_ours;
        rocksdb::ReadOptions ro_rocks;
        if (s < snaps_ours.size()) {
          ro_ours.snapshot = snaps_ours[s];
          ro_rocks.snapshot = snaps_rocks[s];
        }
        for (int i = 0; i < 10; ++i) {
          const std::string k = RandomKey(rng);
          std::string v_ours;
          std::string v_rocks;
          rocksdb::Status a = ours.db->Get(ro_ours, k, &v_ours);
          rocksdb::Status b = rocks.db->Get(ro_rocks, k, &v_rocks);
          REQUIRE(a.code() == b.code());
          REQUIRE(v_ours == v_rocks);
        }
        REQUIRE(Scan(ours.db.get(), ro_ours, false) == Scan(rocks.db.get(), ro_rocks, false));
        REQUIRE(Scan(ours.db.get(), ro_ours, true) == Scan(rocks.db.get(), ro_rocks, true));
        for (int i = 0; i < 8; ++i) {
          const std::string target = RandomKey(rng);
          const int mode = static_cast<int>(rng() % 4);
          std::string lower = RandomKey(rng);
          std::string upper = RandomKey(rng);
          if (upper < lower) std::swap(lower, upper);
          rocksdb::Slice lo(lower);
          rocksdb::Slice hi(upper);
          if (i % 2 == 1) {
            ro_ours.iterate_lower_bound = ro_rocks.iterate_lower_bound = &lo;
            ro_ours.iterate_upper_bound = ro_rocks.iterate_upper_bound = &hi;
          }
          REQUIRE(SeekAndStep(ours.db.get(), ro_ours, target, mode) ==
                  SeekAndStep(rocks.db.get(), ro_rocks, target, mode));
          ro_ours.iterate_lower_bound = ro_rocks.iterate_lower_bound = nullptr;
          ro_ours.iterate_upper_bound = ro_rocks.iterate_upper_bound = nullptr;
        }
      }
    }
    for (const auto* s : snaps_ours) ours.db->ReleaseSnapshot(s);
    for (const auto* s : snaps_rocks) rocks.db->ReleaseSnapshot(s);
    // The same after both memtables are flushed (the skip list's iterator fed the flush).
    REQUIRE(ours.db->Flush(rocksdb::FlushOptions()).ok());
    REQUIRE(rocks.db->Flush(rocksdb::FlushOptions()).ok());
    REQUIRE(Scan(ours.db.get(), rocksdb::ReadOptions(), false) ==
            Scan(rocks.db.get(), rocksdb::ReadOptions(), false));
  }
  SetMemTableComparisonCheck(false);
}

TEST_CASE("memtable_rep: a write of a key this thread just read starts where the read ended",
          "[storage][memtable]") {
  for (const bool hints : {false, true}) {
    INFO("insert hints: " << hints);
    TempDir dir_ours;
    TempDir dir_rocks;
    Db ours(dir_ours.path(), true, hints);
    Db rocks(dir_rocks.path(), false, hints);
    std::mt19937_64 rng(hints ? 11 : 12);
    auto key_of = [](uint64_t i) { return "key:" + std::to_string(i * 2654435761u % 1000003); };
    constexpr uint64_t kKeys = 60000;
    for (uint64_t i = 0; i < kKeys; ++i) {
      REQUIRE(ours.db->Put(rocksdb::WriteOptions(), key_of(i), "v").ok());
      REQUIRE(rocks.db->Put(rocksdb::WriteOptions(), key_of(i), "v").ok());
    }
    std::string value;
    auto put_both = [&](const std::string& key, const std::string& v) {
      REQUIRE(ours.db->Put(rocksdb::WriteOptions(), key, v).ok());
      REQUIRE(rocks.db->Put(rocksdb::WriteOptions(), key, v).ok());
    };
    // Key comparisons of the inserts alone: a write of a key not read first, then of one read
    // just before (the read's own comparisons are not counted).
    constexpr int kWrites = 2000;
    uint64_t plain = 0;
    uint64_t after_read = 0;
    const uint64_t from_path_before = MemTableInsertsFromReadPathOnThisThread();
    for (int i = 0; i < kWrites; ++i) {
      const std::string key = key_of(rng() % kKeys);
      uint64_t c = MemTableComparisonsOnThisThread();
      put_both(key, "plain" + std::to_string(i));
      plain += MemTableComparisonsOnThisThread() - c;
      const std::string read = key_of(rng() % kKeys);
      REQUIRE(ours.db->Get(rocksdb::ReadOptions(), read, &value).ok());
      c = MemTableComparisonsOnThisThread();
      put_both(read, "rmw" + std::to_string(i));
      after_read += MemTableComparisonsOnThisThread() - c;
    }
    const uint64_t from_path = MemTableInsertsFromReadPathOnThisThread() - from_path_before;
    INFO("comparisons an insert: " << plain / kWrites << " plain, " << after_read / kWrites
                                   << " after a read");
    CHECK(from_path == kWrites);
    CHECK(after_read * 4 < plain);
    CHECK(after_read <= 5 * static_cast<uint64_t>(kWrites));
    // A write group's shape: read a few keys, then write them in one batch (sorted, one repeated).
    SetMemTableComparisonCheck(true);
    for (int round = 0; round < 200; ++round) {
      std::vector<std::string> keys;
      for (int i = 0; i < 8; ++i) keys.push_back(key_of(rng() % (kKeys + 100)));
      keys.push_back(keys[0]);
      for (const std::string& k : keys) (void)ours.db->Get(rocksdb::ReadOptions(), k, &value);
      std::sort(keys.begin(), keys.end());
      rocksdb::WriteBatch batch;
      for (size_t i = 0; i < keys.size(); ++i) {
        const std::string v = "batch" + std::to_string(round) + "." + std::to_string(i);
        REQUIRE((i % 5 == 4 ? batch.Delete(keys[i]) : batch.Put(keys[i], v)).ok());
      }
      REQUIRE(ours.db->Write(rocksdb::WriteOptions(), &batch).ok());
      REQUIRE(rocks.db->Write(rocksdb::WriteOptions(), &batch).ok());
    }
    SetMemTableComparisonCheck(false);
    // Another thread's read is not this thread's path.
    const std::string other_key = key_of(7);
    std::thread reader([&] { (void)ours.db->Get(rocksdb::ReadOptions(), other_key, &value); });
    reader.join();
    const uint64_t before_other = MemTableInsertsFromReadPathOnThisThread();
    put_both(other_key, "other");
    CHECK(MemTableInsertsFromReadPathOnThisThread() == before_other);
    // The same list as RocksDB's, read every way.
    REQUIRE(Scan(ours.db.get(), rocksdb::ReadOptions(), false) ==
            Scan(rocks.db.get(), rocksdb::ReadOptions(), false));
    REQUIRE(Scan(ours.db.get(), rocksdb::ReadOptions(), true) ==
            Scan(rocks.db.get(), rocksdb::ReadOptions(), true));
  }
}

TEST_CASE("memtable_rep: readers see a consistent list while one thread writes",
          "[storage][memtable]") {
  TempDir dir;
  Db ours(dir.path(), true, true);
  constexpr int kKeys = 20000;
  std::atomic<int> written{0};
  std::atomic<bool> failed{false};
  auto key_of = [](int i) {
    // Spread over the key space, not in insert order.
    const unsigned h = static_cast<unsigned>(i) * 2654435761u;
    return "k" + std::to_string(h % 1000) + ":" + std::to_string(i);
  };
  uint64_t from_read_path = 0;
  std::thread writer([&] {
    const uint64_t before = MemTableInsertsFromReadPathOnThisThread();
    std::string absent;
    for (int i = 0; i < kKeys; ++i) {
      // Every other key is looked up first, so its insert starts from the read's path.
      if (i % 2 == 0 && !ours.db->Get(rocksdb::ReadOptions(), key_of(i), &absent).IsNotFound()) {
        failed = true;
      }
      if (!ours.db->Put(rocksdb::WriteOptions(), key_of(i), std::to_string(i)).ok()) {
        failed = true;
      }
      written.store(i + 1, std::memory_order_release);
    }
    from_read_path = MemTableInsertsFromReadPathOnThisThread() - before;
  });
  std::vector<std::thread> readers;
  std::atomic<int> scans{0};
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937 rng(static_cast<unsigned>(r));
      while (written.load(std::memory_order_acquire) < kKeys && !failed) {
        const int seen = written.load(std::memory_order_acquire);
        // Every key written before the read is found, with its value.
        if (seen > 0) {
          const int i = static_cast<int>(rng() % static_cast<unsigned>(seen));
          std::string value;
          if (!ours.db->Get(rocksdb::ReadOptions(), key_of(i), &value).ok() ||
              value != std::to_string(i)) {
            failed = true;
          }
        }
        // A scan is in order and holds at least what was written before it began.
        std::unique_ptr<rocksdb::Iterator> it(ours.db->NewIterator(rocksdb::ReadOptions()));
        std::string last;
        int count = 0;
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
          if (count > 0 && !(last < it->key().ToString())) failed = true;
          last = it->key().ToString();
          ++count;
        }
        if (count < seen) failed = true;
        scans.fetch_add(1);
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  CHECK(scans.load() > 0);
  // All but the first (RocksDB does not read an empty memtable).
  CHECK(from_read_path == kKeys / 2 - 1);
  REQUIRE_FALSE(failed.load());
  std::unique_ptr<rocksdb::Iterator> it(ours.db->NewIterator(rocksdb::ReadOptions()));
  int count = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++count;
  REQUIRE(count == kKeys);
}

TEST_CASE("memtable_rep: nodes from huge page chunks are read back and count toward a flush",
          "[storage][memtable]") {
  // 4 MB memtables and ~12 MB of writes: each memtable takes its nodes from 2 MB chunks after its
  // first megabyte. If the chunks were not counted in the memtable's size, RocksDB would see only
  // that first megabyte of arena and never flush.
  TempDir dir;
  rocksdb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 4 << 20;
  options.memtable_factory =
      NewSkipListMemTableFactory(/*bytewise_keys=*/true, /*huge_pages=*/true);
  options.allow_concurrent_memtable_write = false;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(options, dir.path(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions write;
  write.disableWAL = true;
  constexpr int kKeys = 100000;
  const std::string filler(100, 'v');
  auto key_of = [](int i) {
    return "k" + std::to_string((static_cast<unsigned>(i) * 2654435761u) % 1000003) + ":" +
           std::to_string(i);
  };
  uint64_t largest_active = 0;
  for (int i = 0; i < kKeys; ++i) {
    REQUIRE(db->Put(write, key_of(i), filler + std::to_string(i)).ok());
    if (i % 1000 == 0) {
      uint64_t active = 0;
      REQUIRE(db->GetIntProperty("rocksdb.cur-size-active-mem-table", &active));
      largest_active = std::max(largest_active, active);
    }
  }
  REQUIRE(db->Flush(rocksdb::FlushOptions()).ok());
  // Flushed along the way, each memtable at most its buffer and a chunk of slack. (At least two
  // files: a flush slower than the writes (TSan) writes the memtables queued behind it as one.)
  std::vector<rocksdb::LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  CHECK(files.size() >= 2);
  CHECK(largest_active >= (2u << 20));
  CHECK(largest_active <= (7u << 20));
  std::string value;
  for (int i = 0; i < kKeys; i += 7) {
    REQUIRE(db->Get(rocksdb::ReadOptions(), key_of(i), &value).ok());
    REQUIRE(value == filler + std::to_string(i));
  }
}

}  // namespace memtable_rep_test
