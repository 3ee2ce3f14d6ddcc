// storage/store_types — the option and result types of the Store API (store.h) shared by the
// keyspace, string, hash and list commands: opening options, key types and their TYPE names,
// TTL changes, SET's options and result, EXPIRE's conditions, SCAN / HSCAN / SSCAN results,
// list ends. Sorted-set types are in zset_types.h, stream types in stream_types.h.
//
// Plain values: no behaviour beyond KeyTypeName / ParseKeyTypeName (pure, any thread; defined in
// rocks_store.cc). Included by store.h; include this alone when only the types are needed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rockcache::storage {

struct Options {
  std::string dir = "./data";  // data directory (data_dir.h); created if missing
  bool sync_writes = false;    // fsync the WAL on every write (storage-sync always)
  uint64_t block_cache_bytes = 64ull << 20;
  uint64_t write_buffer_bytes = 16ull << 20;
  std::string compression = "lz4";  // none | snappy | lz4 | zstd
  bool compress_level0 = false;     // rocksdb-compress-level0: flushes' files compressed too
  bool mmap_reads = true;           // rocksdb-mmap-reads (rocks_options.cc)
  bool verify_point_read_checksums = false;  // rocksdb-verify-read-checksums (db_view.h)
  bool partitioned_index = true;             // rocksdb-partitioned-index (rocks_options.cc)
  bool pin_metadata = true;                  // rocksdb-pin-metadata (rocks_options.cc)
  uint64_t meta_block_bytes = 2048;          // rocksdb-meta-block-size (rocks_options.cc)
  int max_background_jobs = 2;
  std::string memtable = "rockcache";  // rockcache (storage/memtable_rep.h) | rocksdb
  bool memtable_huge_pages = true;     // rocksdb-memtable-huge-pages (storage/huge_page_chunks.h)
  int databases = 16;                  // logical databases, 1..kMaxDatabases (config/current_db.h)
  uint32_t key_filter_bits_per_key = 10;        // key-filter-bits-per-key (storage/key_filter.h)
  uint64_t key_filter_max_bytes = 64ull << 20;  // key-filter-max-memory
  // WAL files kept for replication after they are no longer needed for recovery (RocksDB's
  // WAL_ttl_seconds, WAL_size_limit_MB; 0 and 0 = deleted at once): repl-backlog-ttl,
  // repl-backlog-size.
  uint64_t wal_ttl_seconds = 3600;
  uint64_t wal_size_limit_mb = 1024;
};

// A database's key figures, for INFO keyspace (as counted by the store; see DbSize).
struct KeyStats {
  int64_t keys = 0;
  int64_t expires = 0;     // keys with a TTL
  int64_t avg_ttl_ms = 0;  // average remaining TTL of those keys, 0 when none
};

enum class KeyType { kNone, kString, kHash, kList, kSet, kZSet, kStream };

// The name TYPE replies with: "none", "string", "hash", "list", "set", "zset", "stream".
const char* KeyTypeName(KeyType type);
// Parses a TYPE name (case-insensitive) as SCAN ... TYPE takes it; nullopt when unknown.
std::optional<KeyType> ParseKeyTypeName(std::string_view name);

// When the write of SET/GETEX/... changes the key's TTL.
struct Expiry {
  enum class Mode {
    kClear,  // the key ends with no TTL (plain SET)
    kKeep,   // keep the TTL the key had (SET KEEPTTL; APPEND, INCR... always keep)
    kAt,     // expire at `at_ms` (SET EX/PX/EXAT/PXAT); at_ms in the past deletes the key
  };
  Mode mode = Mode::kClear;
  int64_t at_ms = 0;
};

struct SetOptions {
  enum class Condition { kAlways, kIfAbsent /* NX */, kIfPresent /* XX */ };
  Condition condition = Condition::kAlways;
  Expiry expiry;
  bool return_old = false;  // SET ... GET: also report the old value (WrongType if not a string)
  // The caller knows a meta record exists for the key (of any type, e.g. from a cache entry held
  // under the key lock). A plain SET (kAlways, no return_old, no kKeep) then writes blind: no read
  // of the old meta, the key counter stays as it is (overwrite), and a collection it replaces
  // becomes unreachable through the new version like on any type change. Ignored otherwise.
  bool known_present = false;
  // With known_present: the key's TTL as the caller knows it (0 = none), so the per-database
  // expires= counters stay exact without the read.
  int64_t known_expire_at_ms = 0;
};

// What MSET's caller knows of one pair's key from elsewhere (the cache, read under the key's
// lock): `present` -- a meta record exists, with this TTL (0 = none) -- and the pair is then
// written blind, without reading the old meta, as SetOptions::known_present. Default: unknown.
struct KnownKey {
  bool present = false;
  int64_t expire_at_ms = 0;
};

struct SetResult {
  bool written = false;                  // false when NX/XX prevented the write
  std::optional<std::string> old_value;  // with return_old: the previous string value, if any
};

// A key of Store::BeginReadAhead: its physical database (Store::PhysicalDb) and the key.
struct ReadAheadKey {
  int db = 0;
  std::string_view key;
};

// How far Store::TryGetString looks: RocksDB's memtables and block cache, or also the pages of
// mapped SST files the OS holds in memory (with rocksdb-mmap-reads; storage/no_wait_files.h).
enum class MemoryReach { kRocksDbCaches, kResidentFiles };

// What Store::TryGetString found without reading a file.
struct MemoryRead {
  enum class Outcome {
    kNeedsStorage,  // answering needs a file read, a bigger value, or the store is closing
    kAbsent,        // no such key (or it has expired)
    kString,        // value and expire_at_ms are set
    kOtherType,     // a key of another type
  };
  Outcome outcome = Outcome::kNeedsStorage;
  std::string value;
  int64_t expire_at_ms = 0;  // 0 = no TTL
};

// LRANGE's index rules: the offsets [begin, end) from the head that start..stop select in a
// list of `length` elements; begin == end when nothing is selected.
struct ListSpan {
  uint64_t begin = 0;
  uint64_t end = 0;
};
inline ListSpan ListRangeSpan(int64_t start, int64_t stop, uint64_t length) {
  const int64_t n = static_cast<int64_t>(length);
  if (start < 0) start = n + start;
  if (stop < 0) stop = n + stop;
  if (start < 0) start = 0;
  if (start > stop || start >= n) return ListSpan{};
  if (stop >= n) stop = n - 1;
  return ListSpan{static_cast<uint64_t>(start), static_cast<uint64_t>(stop) + 1};
}

// What Store::LHead read: a list's length and expiry, and its first elements when asked.
struct ListHeadRead {
  bool found = false;                 // false: no such key (the rest is empty)
  uint64_t length = 0;                // the list's length
  int64_t expire_at_ms = 0;           // 0 = no TTL
  ListSpan span;                      // what start..stop selects (ListRangeSpan)
  std::vector<std::string> elements;  // elements [0, span.end), or none (see Store::LHead)
};

enum class ExpireCondition { kAlways, kNX, kXX, kGT, kLT };  // EXPIRE's NX/XX/GT/LT

struct ScanResult {
  uint64_t next_cursor = 0;       // 0 when the iteration is complete
  std::vector<std::string> keys;  // keys (SCAN) or members (SSCAN)
};

// HSCAN: field/value pairs.
struct PairScanResult {
  uint64_t next_cursor = 0;
  std::vector<std::pair<std::string, std::string>> items;
};

enum class ListEnd { kLeft, kRight };  // LMOVE's LEFT/RIGHT; LPUSH/LPOP work on kLeft

}  // namespace rockcache::storage
