// memtable-bench: the cost of a memtable insert and point read with spread keys, through
// RocksDB's own write and read paths (no WAL, no flush), for rockcache's skip list
// (storage/memtable_rep.h; rockcache-4k: without huge pages) or RocksDB's.
//
//   build/memtable-bench [rockcache|rockcache-4k|rockcache-skip|rocksdb] [N=300000] [ROUNDS=5]
//                        [DIR=/tmp/memtable-bench-PID]
//
// rockcache-skip: rockcache's skip list with prefix skipping (as the data column families).
// Each round opens a fresh database in DIR, puts N keys drawn from a million ("key:%012d", the
// shape of redis-benchmark -r 1000000, 3-byte values; with MEMTABLE_BENCH_KEYS=member, the
// data keys of one collection's members instead: [u32 6]["myzset"][u64 1]["element:%012d"],
// as ZADD myzset ... element:__rand_int__ writes), then reads N of them, then reads and writes
// back each key it put (a read-modify-write of a key in the memtable: INCR's shape, whose insert
// starts from its read's path), and prints the fastest round's thread CPU time per put, per get
// and per read-modify-write. Timing is noisy on a shared machine; scripts/memtable-misses.sh runs
// one round under cachegrind for deterministic instruction and cache-miss counts.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>

#include "storage/memtable_rep.h"

namespace {

double ThreadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

bool g_member_keys = false;

std::string KeyOf(uint64_t n) {
  char key[32];
  if (!g_member_keys) {
    std::snprintf(key, sizeof key, "key:%012llu", static_cast<unsigned long long>(n % 1000000));
    return key;
  }
  std::snprintf(key, sizeof key, "element:%012llu", static_cast<unsigned long long>(n % 1000000));
  return std::string("\0\0\0\6myzset\0\0\0\0\0\0\0\1", 18) + key;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string memtable = argc > 1 ? argv[1] : "rockcache";
  const int n = argc > 2 ? std::atoi(argv[2]) : 300000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::string dir =
      argc > 4 ? argv[4] : "/tmp/memtable-bench-" + std::to_string(static_cast<long>(getpid()));
  if ((memtable != "rockcache" && memtable != "rockcache-4k" && memtable != "rockcache-skip" &&
       memtable != "rocksdb") ||
      n <= 0 || rounds <= 0) {
    std::fprintf(stderr,
                 "usage: %s [rockcache|rockcache-4k|rockcache-skip|rocksdb] [N] [ROUNDS] [DIR]\n",
                 argv[0]);
    return 2;
  }
  const char* keys = std::getenv("MEMTABLE_BENCH_KEYS");
  g_member_keys = keys != nullptr && std::string(keys) == "member";
  double best_put = 1e30;
  double best_get = 1e30;
  double best_rmw = 1e30;
  for (int round = 0; round < rounds; ++round) {
    std::filesystem::remove_all(dir);
    rocksdb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = 1ull << 30;           // no flush: the memtable alone
    options.memtable_prefix_bloom_size_ratio = 0.02;  // as rockcache's column families
    options.memtable_whole_key_filtering = true;
    if (memtable != "rocksdb") {
      options.memtable_factory = rockcache::storage::NewSkipListMemTableFactory(
          /*bytewise_keys=*/true, /*huge_pages=*/memtable != "rockcache-4k",
          /*prefix_skip=*/memtable == "rockcache-skip");
      options.allow_concurrent_memtable_write = false;
    }
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, dir, &db);
    if (!s.ok()) {
      std::fprintf(stderr, "open %s: %s\n", dir.c_str(), s.ToString().c_str());
      return 1;
    }
    rocksdb::WriteOptions write;
    write.disableWAL = true;
    std::mt19937_64 random(42);
    const double t0 = ThreadCpuNs();
    for (int i = 0; i < n; ++i) db->Put(write, KeyOf(random()), "xxx");
    const double t1 = ThreadCpuNs();
    random.seed(7);
    std::string value;
    for (int i = 0; i < n; ++i) db->Get(rocksdb::ReadOptions(), KeyOf(random()), &value);
    const double t2 = ThreadCpuNs();
    random.seed(42);  // the keys put above: each is in the memtable
    for (int i = 0; i < n; ++i) {
      const std::string key = KeyOf(random());
      db->Get(rocksdb::ReadOptions(), key, &value);
      db->Put(write, key, "yyy");
    }
    const double t3 = ThreadCpuNs();
    best_put = std::min(best_put, (t1 - t0) / n);
    best_get = std::min(best_get, (t2 - t1) / n);
    best_rmw = std::min(best_rmw, (t3 - t2) / n);
    delete db;
  }
  std::filesystem::remove_all(dir);
  std::printf(
      "memtable %s n=%d rounds=%d: put %.0f ns, get %.0f ns, get+put of one key %.0f ns (fastest "
      "round)\n",
      memtable.c_str(), n, rounds, best_put, best_get, best_rmw);
  return 0;
}
