// storage::Store — every key of rockcache, durably, in RocksDB.
//
// Contract
// - Every method may block on disk (RocksDB reads, WAL writes, fsync with sync_writes): call them
//   from worker threads only, never from a network thread.
// - All methods are thread-safe. Each method is atomic with respect to every other method on the
//   same key(s): read-modify-write commands hold a key-stripe lock across their read and their
//   single WriteBatch, so two workers never interleave on one key.
// - A method returns once its write is in the WAL (and fsynced when Options::sync_writes): an
//   acknowledged write survives kill -9.
// - Expired keys are invisible to every method at once (treated as absent), whether or not the
//   background sweep or the compaction filter has removed them yet.
// - Errors: Status::WrongType when the key holds another type; Status::InvalidArgument with the
//   Redis error text (without the "ERR " prefix) for bad values, e.g. "value is not an integer or
//   out of range"; Status::IOError/Corruption when RocksDB fails. RocksDB's own Status never leaves
//   storage/.
//
// On-disk layout: see storage/encoding.h (meta column family user key -> type, version,
// expire-at ms, element count, and the string value inline; data column families keyed by
// user key + version + sub-key).
//
// Times are Unix milliseconds (wall clock), as Redis's PEXPIREAT.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/status.h"

namespace rockcache::storage {

struct Options {
  std::string dir = "./data";          // RocksDB directory; created if missing
  bool sync_writes = false;            // fsync the WAL on every write (storage-sync always)
  uint64_t block_cache_bytes = 64ull << 20;
  uint64_t write_buffer_bytes = 64ull << 20;
  std::string compression = "lz4";    // none | snappy | lz4 | zstd
  int max_background_jobs = 2;
};

enum class KeyType { kNone, kString, kHash, kList, kSet, kZSet };

// The name TYPE replies with: "none", "string", "hash", "list", "set", "zset".
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
};

struct SetResult {
  bool written = false;                  // false when NX/XX prevented the write
  std::optional<std::string> old_value;  // with return_old: the previous string value, if any
};

enum class ExpireCondition { kAlways, kNX, kXX, kGT, kLT };  // EXPIRE's NX/XX/GT/LT

struct ScanResult {
  uint64_t next_cursor = 0;  // 0 when the iteration is complete
  std::vector<std::string> keys;
};

class Store {
 public:
  // Opens (creating if needed) the database under options.dir. Blocking.
  static StatusOr<std::unique_ptr<Store>> Open(const Options& options);
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // ---- strings ----
  // nullopt when absent; WrongType when not a string.
  virtual StatusOr<std::optional<std::string>> Get(std::string_view key) = 0;
  virtual StatusOr<SetResult> Set(std::string_view key, std::string_view value,
                                  const SetOptions& options) = 0;
  // One entry per key; nullopt for absent keys and for keys of another type (as Redis MGET).
  virtual StatusOr<std::vector<std::optional<std::string>>> MGet(
      const std::vector<std::string_view>& keys) = 0;
  // All pairs in one WriteBatch; clears TTLs. Later pairs win on duplicate keys.
  virtual Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& kvs) = 0;
  // Writes all pairs only when none of the keys exists (any type); returns whether it wrote.
  virtual StatusOr<bool> MSetNx(
      const std::vector<std::pair<std::string_view, std::string_view>>& kvs) = 0;
  // Returns the string value and deletes the key. WrongType (and no delete) when not a string.
  virtual StatusOr<std::optional<std::string>> GetDel(std::string_view key) = 0;
  // GETEX: returns the value and applies `expiry` (kKeep = leave TTL, kClear = PERSIST, kAt).
  virtual StatusOr<std::optional<std::string>> GetEx(std::string_view key,
                                                     const Expiry& expiry) = 0;
  // Returns the new length. Keeps the TTL.
  virtual StatusOr<int64_t> Append(std::string_view key, std::string_view value) = 0;
  virtual StatusOr<int64_t> StrLen(std::string_view key) = 0;
  // INCRBY/DECRBY. Errors: "value is not an integer or out of range",
  // "increment or decrement would overflow". Keeps the TTL.
  virtual StatusOr<int64_t> IncrBy(std::string_view key, int64_t delta) = 0;
  // INCRBYFLOAT; returns the new value formatted as Redis does (e.g. "10.5", "5.0e+3" never:
  // Redis prints with %.17Lg and strips trailing zeros). Errors: "value is not a valid float",
  // "increment would produce NaN or Infinity". Keeps the TTL.
  virtual StatusOr<std::string> IncrByFloat(std::string_view key, long double delta) = 0;
  // GETRANGE with Redis's negative-index rules; "" when absent or empty range.
  virtual StatusOr<std::string> GetRange(std::string_view key, int64_t start, int64_t end) = 0;
  // SETRANGE; returns the new length. REQUIRES offset >= 0 (server checks "offset is out of
  // range"). Error "string exceeds maximum allowed size (proto-max-bulk-len)" when
  // offset + value.size() > max_size. An empty value on an absent key writes nothing, returns 0.
  virtual StatusOr<int64_t> SetRange(std::string_view key, int64_t offset, std::string_view value,
                                     uint64_t max_size) = 0;

  // ---- keyspace (all types) ----
  // Number of keys removed. O(1) per key whatever its size (collections: drop meta).
  virtual StatusOr<int64_t> Del(const std::vector<std::string_view>& keys) = 0;
  // Number of the given keys that exist, counting repeats (as Redis EXISTS).
  virtual StatusOr<int64_t> Exists(const std::vector<std::string_view>& keys) = 0;
  // Sets the expire-at of an existing key subject to `cond` (GT/LT treat "no TTL" as infinite, as
  // Redis 7). Returns false when the key is absent or the condition fails. An at_ms not in the
  // future deletes the key (and returns true).
  virtual StatusOr<bool> ExpireAt(std::string_view key, int64_t at_ms, ExpireCondition cond) = 0;
  // Remaining TTL in ms; -2 when absent, -1 when the key has no TTL.
  virtual StatusOr<int64_t> PTtl(std::string_view key) = 0;
  // Expire-at in ms; -2 when absent, -1 when no TTL (EXPIRETIME/PEXPIRETIME).
  virtual StatusOr<int64_t> ExpireTimeMs(std::string_view key) = 0;
  // Removes the TTL; false when the key is absent or had none.
  virtual StatusOr<bool> Persist(std::string_view key) = 0;
  virtual StatusOr<KeyType> Type(std::string_view key) = 0;
  // Every live key matching the glob (config/glob.h), in key order.
  virtual StatusOr<std::vector<std::string>> Keys(std::string_view pattern) = 0;
  // SCAN: cursor 0 starts; returns about `count` keys examined per call, filtered by `pattern`
  // (empty = all) and `type` (nullopt = all). Cursors are opaque integers the store maps to a
  // resume position; an unknown cursor restarts from the beginning (as a Redis client may).
  virtual StatusOr<ScanResult> Scan(uint64_t cursor, std::string_view pattern, uint64_t count,
                                    std::optional<KeyType> type) = 0;
  // Number of keys (may include expired keys not yet swept, as Redis DBSIZE does).
  virtual StatusOr<int64_t> DbSize() = 0;
  // Removes every key. Blocking until durable.
  virtual Status FlushAll() = 0;
  // Removes keys whose TTL passed; examines at most `max_keys` meta entries starting after the
  // previous call's position. Returns the number removed. For the periodic sweep.
  virtual StatusOr<int64_t> SweepExpired(uint64_t max_keys) = 0;

  // A few "name:value" lines of RocksDB figures for INFO (sst size, memtable size, pending
  // compaction bytes, ...), each ending in "\r\n".
  virtual std::string InfoRocksDb() = 0;
  // Flushes memtables and closes the database. Idempotent; later calls fail with kShutdown.
  virtual Status Close() = 0;

 protected:
  Store() = default;
};

}  // namespace rockcache::storage
