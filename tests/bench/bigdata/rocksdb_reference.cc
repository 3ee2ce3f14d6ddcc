// rocksdb-reference: the physical limit under scripts/bench-bigdata.sh. It opens a rockcache data
// directory READ-ONLY with rockcache's own RocksDB options (storage/rocks_options.h: the table
// format, filters, index layout and memtable the server reads with; the block cache of
// --block-cache-bytes, the server's rocksdb-block-cache-size) and measures how fast RocksDB alone
// answers point reads of the keys the benchmark loaded, with no network, protocol or cache in
// front:
//
//   get      threads=1, 2   DB::Get of a uniformly random key
//   multiget threads=1, 2   DB::MultiGet of batches of --batch (16) random keys; ops counts keys
//
// Keys are key:%012d in [0, --keys), the raw user keys rockcache keeps in the meta column family
// of database 0 (RocksDB's "default" family); a value is read (pinned) but not decoded. Each run
// lasts --seconds and prints one line
//   reference=<get|multiget> threads=<n> ops=<float> notfound=<n> errors=<n>
// where notfound counts keys the database did not hold (0 after a complete load). Before the
// runs, --warmup-seconds of 2-thread Gets (not reported) fill the block cache.
//
// The directory must not be open for writing: a read-only open takes no LOCK, and a server
// writing at the same time would change the files under it. scripts/bench-bigdata.sh stops
// rockcache first. Nothing is written; compactions never run (the compaction filters' context
// stays empty, which makes them keep every entry, were they ever called).
//
// --verify-checksums (default 0, as the server's rocksdb-verify-read-checksums) and --fill-cache
// (default 1) set the ReadOptions of every read; --only runs one of the four measurements.
#include <rocksdb/db.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/compaction_filter.h"
#include "storage/data_dir.h"
#include "storage/rocks_options.h"
#include "tests/bench/bigdata/bench_util.h"

namespace {

namespace storage = rockcache::storage;
using bigdata::Rng;

struct Flags {
  std::string dir;
  uint64_t keys = 1000000;
  double seconds = 10;
  double warmup_seconds = 2;
  uint64_t block_cache_bytes = 64ull << 20;  // rocksdb-block-cache-size's default (64mb)
  int batch = 16;
  bool mmap_reads = true;         // rocksdb-mmap-reads' default
  bool verify_checksums = false;  // rocksdb-verify-read-checksums' default
  bool fill_cache = true;         // ReadOptions::fill_cache
  std::string only;               // one run: get1, get2, multiget1 or multiget2 (all when empty)
};

void Usage() {
  std::fprintf(
      stderr,
      "usage: rocksdb-reference --dir D [--keys N] [--seconds S] [--warmup-seconds S]\n"
      "                         [--block-cache-bytes B] [--batch K]\n"
      "                         [--mmap-reads 0|1] [--verify-checksums 0|1]\n"
      "                         [--fill-cache 0|1] [--only get1|get2|multiget1|multiget2]\n");
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  using bigdata::ToU64;
  const std::vector<bigdata::FlagSetter> setters = {
      {"--dir", [f](const char* v) { f->dir = v; }},
      {"--keys", [f](const char* v) { f->keys = ToU64(v); }},
      {"--seconds", [f](const char* v) { f->seconds = std::atof(v); }},
      {"--warmup-seconds", [f](const char* v) { f->warmup_seconds = std::atof(v); }},
      {"--block-cache-bytes", [f](const char* v) { f->block_cache_bytes = ToU64(v); }},
      {"--batch", [f](const char* v) { f->batch = std::atoi(v); }},
      {"--mmap-reads", [f](const char* v) { f->mmap_reads = std::atoi(v) != 0; }},
      {"--verify-checksums", [f](const char* v) { f->verify_checksums = std::atoi(v) != 0; }},
      {"--fill-cache", [f](const char* v) { f->fill_cache = std::atoi(v) != 0; }},
      {"--only", [f](const char* v) { f->only = v; }},
  };
  if (!bigdata::ParseFlagPairs(argc, argv, "rocksdb-reference", setters)) return false;
  if (f->dir.empty() || f->keys == 0 || f->keys >= bigdata::kMaxKeys || f->seconds <= 0 ||
      f->batch < 1) {
    std::fprintf(stderr, "rocksdb-reference: --dir is required; --keys, --seconds, --batch > 0\n");
    return false;
  }
  return true;
}

// The open database: every column family rockcache made, each with rockcache's options for it.
struct ReadOnlyDb {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::ColumnFamilyHandle* meta0 = nullptr;  // database 0's metas ("default")

  ~ReadOnlyDb() {
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  }
};

// Opens flags.dir read-only; nullptr (after a message) on failure.
std::unique_ptr<ReadOnlyDb> Open(const Flags& flags) {
  storage::Options options;
  options.dir = flags.dir;
  options.block_cache_bytes = flags.block_cache_bytes;
  options.mmap_reads = flags.mmap_reads;
  // An empty context, as the server's before its Open publishes the DB: filters keep everything.
  auto open = storage::MakeRocksOpenOptions(options, std::make_shared<storage::FilterContext>());
  if (!open.ok()) {
    std::fprintf(stderr, "rocksdb-reference: options: %s\n", open.status().ToString().c_str());
    return nullptr;
  }
  // The server's database is <dir>/db (storage/data_dir.h).
  const std::string path = storage::data_dir::DatabasePath(flags.dir);
  std::vector<std::string> names;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(open->db, path, &names);
  if (!s.ok()) {
    std::fprintf(stderr, "rocksdb-reference: %s: %s\n", path.c_str(), s.ToString().c_str());
    return nullptr;
  }
  // Each family as rockcache declares it; the metas of databases 1.. ("db<N>") as `meta`.
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const std::string& name : names) {
    rocksdb::ColumnFamilyDescriptor d(name, open->meta);
    for (const auto& known : open->column_families) {
      if (known.name == name) d = known;
    }
    cfs.push_back(d);
  }
  auto out = std::make_unique<ReadOnlyDb>();
  rocksdb::DB* db = nullptr;
  s = rocksdb::DB::OpenForReadOnly(open->db, path, cfs, &out->handles, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "rocksdb-reference: open %s: %s\n", path.c_str(), s.ToString().c_str());
    return nullptr;
  }
  out->db.reset(db);
  for (auto* h : out->handles) {
    if (h->GetName() == rocksdb::kDefaultColumnFamilyName) out->meta0 = h;
  }
  return out;
}

struct Counts {
  uint64_t ops = 0;
  uint64_t notfound = 0;
  uint64_t errors = 0;
};

void Tally(const rocksdb::Status& s, Counts* c) {
  ++c->ops;
  if (s.IsNotFound())
    ++c->notfound;
  else if (!s.ok())
    ++c->errors;
}

// One thread's reads until `stop`: single Gets, or MultiGets of `batch` keys.
void ReadLoop(const ReadOnlyDb& rdb, const Flags& flags, bool multiget, uint64_t seed,
              const std::atomic<bool>& stop, Counts* counts) {
  Rng rng(seed);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = flags.verify_checksums;
  ro.fill_cache = flags.fill_cache;
  const int batch = multiget ? flags.batch : 1;
  std::vector<char> key_bytes(bigdata::kKeySize * batch);
  std::vector<rocksdb::Slice> keys(batch);
  std::vector<rocksdb::PinnableSlice> values(batch);
  std::vector<rocksdb::Status> statuses(batch);
  for (int i = 0; i < batch; ++i)
    keys[i] = rocksdb::Slice(&key_bytes[bigdata::kKeySize * i], bigdata::kKeySize);
  while (!stop.load(std::memory_order_relaxed)) {
    for (int i = 0; i < batch; ++i)
      bigdata::WriteKey(rng.Next() % flags.keys, &key_bytes[bigdata::kKeySize * i]);
    if (multiget) {
      rdb.db->MultiGet(ro, rdb.meta0, batch, keys.data(), values.data(), statuses.data());
    } else {
      statuses[0] = rdb.db->Get(ro, rdb.meta0, keys[0], &values[0]);
    }
    for (int i = 0; i < batch; ++i) {
      Tally(statuses[i], counts);
      values[i].Reset();
    }
  }
}

// Runs `threads` readers for `seconds`; returns the summed counts and sets *elapsed.
Counts Run(const ReadOnlyDb& rdb, const Flags& flags, bool multiget, int threads, double seconds,
           double* elapsed) {
  std::atomic<bool> stop{false};
  std::vector<Counts> counts(threads);
  std::vector<std::thread> workers;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back(ReadLoop, std::cref(rdb), std::cref(flags), multiget, 7919 * (t + 1),
                         std::cref(stop), &counts[t]);
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  *elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Counts total;
  for (const Counts& c : counts) {
    total.ops += c.ops;
    total.notfound += c.notfound;
    total.errors += c.errors;
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    Usage();
    return 2;
  }
  std::unique_ptr<ReadOnlyDb> rdb = Open(flags);
  if (rdb == nullptr) return 1;
  uint64_t sst_bytes = 0, est_keys = 0;
  rdb->db->GetIntProperty(rdb->meta0, rocksdb::DB::Properties::kTotalSstFilesSize, &sst_bytes);
  rdb->db->GetIntProperty(rdb->meta0, rocksdb::DB::Properties::kEstimateNumKeys, &est_keys);
  std::printf(
      "# %s read-only: meta family %.1f MB of files, ~%llu keys; block cache %.1f MB; "
      "reading %llu keys\n",
      flags.dir.c_str(), sst_bytes / 1e6, static_cast<unsigned long long>(est_keys),
      flags.block_cache_bytes / 1e6, static_cast<unsigned long long>(flags.keys));
  std::string levels;
  rdb->db->GetProperty(rdb->meta0, rocksdb::DB::Properties::kLevelStats, &levels);
  std::printf("# meta family levels:\n%s", levels.c_str());
  double elapsed = 0;
  if (flags.warmup_seconds > 0) Run(*rdb, flags, false, 2, flags.warmup_seconds, &elapsed);

  struct Spec {
    const char* name;
    bool multiget;
    int threads;
  };
  const Spec specs[] = {
      {"get", false, 1}, {"get", false, 2}, {"multiget", true, 1}, {"multiget", true, 2}};
  for (const Spec& spec : specs) {
    if (!flags.only.empty() && flags.only != spec.name + std::to_string(spec.threads)) continue;
    const Counts c = Run(*rdb, flags, spec.multiget, spec.threads, flags.seconds, &elapsed);
    std::printf("reference=%s threads=%d ops=%.1f notfound=%llu errors=%llu\n", spec.name,
                spec.threads, c.ops / elapsed, static_cast<unsigned long long>(c.notfound),
                static_cast<unsigned long long>(c.errors));
    std::fflush(stdout);
  }
  return 0;
}
