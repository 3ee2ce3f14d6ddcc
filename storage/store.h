// storage::Store — every key of rockcache, durably, in RocksDB.
//
// Contract
// - Every method may block on disk (RocksDB reads, WAL writes, fsync with sync_writes): call them
//   from worker threads only, never from a network thread.
// - All methods are thread-safe with respect to the store's own state (lifecycle, counters,
//   version allocation, SCAN cursors). Per-key atomicity is the caller's: storage takes no key
//   locks of its own (one lock layer, the cache's key stripes, taken by server/executor.cc).
//   REQUIRES for every method that writes (and for the reads of a read-modify-write): the caller
//   holds the key locks of every key the method reads or writes, so no two threads interleave on
//   one key. Plain reads (Get, HGet, ...) need no lock: one meta Get or one RocksDB snapshot gives
//   them a consistent view. FlushAll REQUIRES every key lock.
// - Outside a WriteGroup, a method returns once its write is in the WAL (and fsynced when
//   Options::sync_writes): an acknowledged write survives kill -9. Inside a WriteGroup (below),
//   the write is durable when the group's Commit() returns OK.
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
//
// Databases (SELECT, MOVE, SWAPDB, FLUSHDB). Options::databases logical databases, numbered as
// clients SELECT them, each a *physical* database: its own meta column family ("default" for
// physical 0, "db<N>" for physical N; data column families are shared, their entries being
// told apart by the store-wide version). Every method that names keys works in the physical
// database of the calling thread, config/current_db.h (set by the server once per command:
// DbScope(PhysicalDb(selected))); methods taking a database number as an argument take the
// logical one. The logical -> physical mapping is persisted ("db-map" in "props") and is what
// SWAPDB swaps: O(1), nothing is copied. Data written before databases existed is physical
// database 0, logical 0: it opens as it is, no migration.
//
// Where things are: this file holds the contract above, WriteGroup (group commit, transactions)
// and the Store interface, its methods grouped by type (strings, keyspace, databases, hashes,
// lists, sets, sorted sets, streams, maintenance). The types they take and return are in
// storage/store_types.h (options, keyspace, strings, hashes, lists), storage/zset_types.h and
// storage/stream_types.h; the `max_bytes` bound of large reads in storage/result_bytes.h; sliced
// reads (RangeQuery, RangeRead) in storage/range_read.h. Including store.h includes them all.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/status.h"
#include "storage/key_value.h"
#include "storage/range_read.h"
#include "storage/replication_types.h"
#include "storage/result_bytes.h"
#include "storage/store_types.h"
#include "storage/stream_types.h"
#include "storage/zset_types.h"

namespace rockcache::storage {

// Group commit: while a thread has a WriteGroup open, the writes of the Store methods *that
// thread* calls are not written one by one: each method's WriteBatch is appended to the group's
// batch, and Commit() writes all of them with one RocksDB Write (one WAL append; one fsync with
// sync_writes). A method inside a group returns its result at once, as if written; its effect is
// invisible to reads (of any thread) until Commit().
// REQUIRES while a group has uncommitted writes (outside a transaction, below): the thread must
// not read, through any Store method, a key it wrote since the last Commit() (not indexed):
// commit first. The server does this (server/executor.h). Methods with their own WriteOptions
// (FlushAll, the version counter) still write directly; Keys/Scan/DbSize do not see pending
// writes. One group per thread at a time; it must be committed or destroyed on its thread.
class WriteGroup {
 public:
  virtual ~WriteGroup() = default;  // commits what is pending (the result is lost: Commit first)
  // Writes every pending write as one batch. BLOCKS on the WAL (and fsync). On error nothing of
  // the pending writes is applied (RocksDB writes a batch atomically); key counters are only
  // adjusted on success. The group stays open for further writes either way.
  [[nodiscard]] virtual Status Commit() = 0;
  // RocksDB records (puts, deletes) appended since the last Commit().
  virtual size_t pending() const = 0;
  // Transactions (EXEC): from BeginAtomic() to the next Commit(), every write of the group reaches
  // RocksDB in that Commit, as ONE batch (one WAL record), so a crash keeps all of them or none;
  // until then nothing of them is in RocksDB (not even in a memtable). Unlike a plain group,
  // reads of the thread (every Store method, Keys/Scan/DbSize included) see the transaction's
  // writes (the batch is indexed: tx_overlay.h, TxOverlay), so FlushThreadWriteGroup() is a
  // no-op. A range deletion in a transaction becomes point deletes (one per entry). Not covered:
  // methods that write with their own WriteOptions (FlushAll, FlushDb, SwapDb): the caller
  // commits before them. Commit() fails the whole transaction if any of its writes failed.
  virtual void BeginAtomic() = 0;
  // Ends a transaction (BeginAtomic) without writing anything of it: its writes and key-count
  // changes are dropped, as if it never ran (a killed script). No-op outside BeginAtomic.
  virtual void Rollback() = 0;
  // Savepoints inside a transaction (BeginAtomic): several units (scripts) share one transaction
  // and one Commit, each all-or-nothing. Savepoint() marks the transaction's state now (replacing
  // any earlier mark); RollbackToSavepoint() drops every write, key-count change and replica note
  // made since the mark, as if they never ran, and keeps what came before. No-ops outside
  // BeginAtomic, and RollbackToSavepoint without a mark since the last BeginAtomic/Commit.
  virtual void Savepoint() = 0;
  virtual void RollbackToSavepoint() = 0;
  // Group commit of commands that touch the same key (a pipeline of LPUSHes to one list, 50
  // clients' SADDs to one set): from BeginIndexed() to the next Commit(), the group's writes go
  // to the same indexed overlay as a transaction's, so the thread's reads see them without a
  // RocksDB write per command, and Commit() writes them as one batch. Not atomic, unlike
  // BeginAtomic: FlushThreadWriteGroup() and OpenRangeRead() write the overlay and go on with
  // an empty one (a blocked client is served only what is durable; a sliced read's later steps,
  // on other threads, read a snapshot that must hold the group's writes), and a write holding a
  // range deletion (LTRIM of more than 64 elements, XTRIM) is not turned into point deletes: the
  // overlay is written, then that write, and the overlay starts over empty. No-op inside
  // BeginAtomic.
  virtual void BeginIndexed() = 0;
  // Indexed group only: Commit(), then BeginIndexed() again, keeping what the overlay read that
  // the commit leaves true (the front of a collection a pop read ahead, so a pipelined drain
  // does not read it again at each commit). REQUIRES: the caller holds the locks of every key
  // written since BeginIndexed() and keeps them until the next Commit(). Outside an indexed
  // group it is Commit() and BeginIndexed().
  [[nodiscard]] virtual Status CommitAndReindex() = 0;
};

// With mmap reads (Options::mmap_reads), how long a network thread's no-wait read trusts a 64 KB
// stretch of an SST file it found in memory before asking the kernel again (milliseconds; <= 0:
// ask on every read). Process-wide, any thread, any time; storage/no_wait_files.h.
void SetResidencyMemoMs(int64_t ms);
// The calling thread's mincore calls for no-wait reads so far (INFO, tests: how often the memo
// above did not answer).
uint64_t ResidencyChecksOfThisThread();

// Runs `critical` while holding the caller's key lock of `key` (see SweepExpired).
using WithKeyLock =
    std::function<void(std::string_view key, const std::function<void()>& critical)>;

class Store {
 public:
  // Opens (creating if needed) the database in the data directory options.dir (its layout,
  // lock and start-up recovery: data_dir.h). Busy when another process uses the directory.
  // Blocking.
  static StatusOr<std::unique_ptr<Store>> Open(const Options& options);
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // ---- read-ahead (a group's misses) ----
  // Reads the meta records of `keys` (physical database, key) with one RocksDB MultiGet per
  // database and keeps them for the calling thread's reads of those keys until EndReadAhead: the
  // point reads of a group's misses then share the MultiGet's work (RocksDB sorts the keys and
  // probes each file's filter, index and data blocks once for neighbouring keys) instead of
  // paying a whole Get each (storage/meta_read_ahead.h). Replaces any earlier read-ahead of
  // this thread; does nothing for fewer than two keys or while the store is closing. Blocking
  // (reads files).
  // REQUIRES: the caller holds the key locks of every key until EndReadAhead, writes none of
  // them on this thread before EndReadAhead (what is kept would be outdated), keeps the views'
  // bytes alive until then, and opens no snapshot-reading transaction in between.
  virtual void BeginReadAhead(const std::vector<ReadAheadKey>& keys) = 0;
  // Forgets this thread's read-ahead (unpins its records). Cheap when there is none.
  virtual void EndReadAhead() = 0;

  // ---- strings ----
  // nullopt when absent; WrongType when not a string. `expire_at_ms` (may be nullptr): the
  // string's expire-at (0 = no TTL), from the same meta read, for a caller that fills the cache.
  virtual StatusOr<std::optional<std::string>> Get(std::string_view key, int64_t* expire_at_ms) = 0;
  StatusOr<std::optional<std::string>> Get(std::string_view key) { return Get(key, nullptr); }
  // GET for a thread that must not wait (a network thread): reads `key` from RocksDB's memtables,
  // block cache and, for kResidentFiles with mmap reads (rocksdb-mmap-reads), the file pages the
  // OS holds in memory (storage/no_wait_files.h); never from a disk (kNeedsStorage), and never
  // waits for the store's lifecycle lock (kNeedsStorage while it is contended, i.e. closing). A
  // string longer than `max_value_bytes` is kNeedsStorage too (the copy would hold the thread).
  // Reads the committed database: REQUIRES no write group or transaction open on the calling
  // thread. Needs no key lock; what it returns may be outdated by a concurrent write
  // (cache/cache.h, "Fills without the stripe", says how a fill stays coherent anyway).
  virtual MemoryRead TryGetString(std::string_view key, size_t max_value_bytes,
                                  MemoryReach reach) = 0;
  virtual StatusOr<SetResult> Set(std::string_view key, std::string_view value,
                                  const SetOptions& options) = 0;
  // One entry per key; nullopt for absent keys and for keys of another type (as Redis MGET).
  // `expire_at_ms` (may be nullptr): resized to one expire-at per key (0 = no TTL; meaningful
  // for the keys found), from the same reads.
  virtual StatusOr<std::vector<std::optional<std::string>>> MGet(
      const std::vector<std::string_view>& keys, std::vector<int64_t>* expire_at_ms) = 0;
  StatusOr<std::vector<std::optional<std::string>>> MGet(
      const std::vector<std::string_view>& keys) {
    return MGet(keys, nullptr);
  }
  // All pairs in one WriteBatch; clears TTLs. Later pairs win on duplicate keys. `known`
  // (nullptr, or one entry per pair): a key known present is written without reading its old
  // meta (KnownKey); the others are read to keep the key count exact.
  virtual Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& kvs,
                      const std::vector<KnownKey>* known) = 0;
  Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& kvs) {
    return MSet(kvs, nullptr);
  }
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
  // "increment or decrement would overflow". Keeps the TTL; sets *expire_at_ms (when not
  // nullptr) to it after the write (0 = none), for the caller's cache entry.
  virtual StatusOr<int64_t> IncrBy(std::string_view key, int64_t delta, int64_t* expire_at_ms) = 0;
  StatusOr<int64_t> IncrBy(std::string_view key, int64_t delta) {
    return IncrBy(key, delta, nullptr);
  }
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
  virtual StatusOr<std::vector<std::string>> Keys(std::string_view pattern,
                                                  uint64_t max_bytes = kNoByteLimit) = 0;
  // SCAN: cursor 0 starts; examines about `count` keys per call (more when resuming a cursor
  // whose exact position was forgotten, see below), filtered by `pattern` (empty = all) and
  // `type` (nullopt = all). Keys come in byte order. The cursor carries its own position
  // (storage/scan_cursor.h): the first bytes of the next key, sharpened by an entry of a bounded
  // table when many keys share those bytes. Guarantees, for any number of concurrent scanners:
  // a key present from the first call to the last is returned at least once (duplicates are
  // possible, as in Redis); an iteration never restarts (a forgotten table entry resumes at the
  // cursor's prefix and that call goes past every key sharing it); every call ends past where it
  // resumed, so an iteration ends unless keys are inserted ahead of it forever. A number that is
  // not a cursor this store produced (e.g. typed by hand) is read as some position or as 0.
  // HSCAN/SSCAN/ZSCAN: the same over the fields/members of one key.
  virtual StatusOr<ScanResult> Scan(uint64_t cursor, std::string_view pattern, uint64_t count,
                                    std::optional<KeyType> type,
                                    uint64_t max_bytes = kNoByteLimit) = 0;
  // Number of keys of the current database (may include expired keys not yet swept, as Redis
  // DBSIZE does). Never blocks (a counter): any thread.
  virtual StatusOr<int64_t> DbSize() = 0;
  // DbSize with the keys having a TTL and their average remaining TTL, for the current database.
  // Never blocks: any thread.
  virtual KeyStats GetKeyStats() = 0;
  // Removes every key of every database. Blocking until durable.
  virtual Status FlushAll() = 0;
  // Removes every key of the current database (FLUSHDB). O(1) writes (a range deletion);
  // collection entries are left to the compaction filter. REQUIRES every key lock. Blocking
  // until durable.
  virtual Status FlushDb() = 0;

  // ---- server records: state of the server, not of any database (FLUSHALL leaves them) ----
  // Writes `value` under `name`, durably (fsynced) before it returns: the function libraries
  // (FUNCTION LOAD) survive a restart and kill -9. Blocking.
  virtual Status PutServerRecord(std::string_view name, std::string_view value) = 0;
  // Removes `name` (absent: nothing to do), durably. Blocking.
  virtual Status DeleteServerRecord(std::string_view name) = 0;
  // Every record whose name starts with `prefix`, in name order. Blocking (reads files).
  virtual StatusOr<std::vector<std::pair<std::string, std::string>>> ServerRecords(
      std::string_view prefix) = 0;

  // ---- databases (see the top of this file) ----
  // Options::databases.
  virtual int databases() const = 0;
  // The physical database of logical database `db` (REQUIRES 0 <= db < databases()). Never
  // blocks: any thread, the network threads included.
  virtual int PhysicalDb(int db) const = 0;
  // The logical database that physical database `physical` currently stands for (the inverse of
  // PhysicalDb; what __keyspace@<db>__ names for a key found by a storage-side scan).
  virtual int LogicalDb(int physical) const = 0;
  // SWAPDB a b (logical): swaps the mapping and persists it (fsynced). O(1). REQUIRES every key
  // lock (no command may run in either database meanwhile).
  virtual Status SwapDb(int a, int b) = 0;
  // MOVE key db: moves `key` of the current database to logical database `db`, keeping its TTL
  // (O(1): collections keep their version and entries). False when the key is absent here or
  // exists there. REQUIRES db's physical database is not the current one, and the key lock.
  virtual StatusOr<bool> Move(std::string_view key, int db) = 0;
  // COPY src dst [DB db] [REPLACE]: copies src of the current database to dst in logical
  // database `db` (-1 = the current one), keeping the TTL. False when src is absent, or dst
  // exists and !replace. Collections are copied under a new version (O(size)). REQUIRES the key
  // locks of src and dst; src != dst when in the same database.
  virtual StatusOr<bool> Copy(std::string_view src, std::string_view dst, int db, bool replace) = 0;
  // Removes keys whose TTL passed; examines at most `max_keys` meta entries starting after the
  // previous call's position (databases with no key holding a TTL, per the expires= counter, are
  // skipped without iterating). Returns the number removed. For the periodic sweep. Each removal
  // re-checks and deletes inside `with_lock(key, ...)`, which must hold the caller's key lock of
  // `key` (a writer may be replacing the key meanwhile).
  // `on_removed`, when set, is called with each key removed, still inside `with_lock`.
  virtual StatusOr<int64_t> SweepExpired(
      uint64_t max_keys, const WithKeyLock& with_lock,
      const std::function<void(std::string_view key)>& on_removed = nullptr) = 0;
  // Removes `key` when it is stored but expired (a key a read found expired, see
  // SetExpiredObserver); true when it removed it. REQUIRES: the key lock of `key`.
  virtual StatusOr<bool> DeleteIfExpired(std::string_view key) = 0;
  // Keyspace notifications: `observer` is called with every key a method found stored but
  // expired (any thread, storage holds no lock; it must be cheap and must not call the store).
  // Set once, before the store is shared between threads.
  void SetExpiredObserver(std::function<void(std::string_view key)> observer) {
    expired_observer_ = std::move(observer);
  }

  // Renames src to dst (any type, keeping the TTL), replacing dst. With `nx`, does nothing and
  // returns false when dst exists. Error: InvalidArgument "no such key" when src is absent.
  // src == dst: true (false with nx), nothing written. O(1) for strings; a collection is copied
  // under a new version of dst (O(size)) and src's entries are left to the compaction filter.
  virtual StatusOr<bool> Rename(std::string_view src, std::string_view dst, bool nx) = 0;
  // RANDOMKEY: a random live key (approximately uniform), nullopt when there is none.
  virtual StatusOr<std::optional<std::string>> RandomKey() = 0;

  // ---- whole values (DUMP, RESTORE, RDB import; store_value.cc) ----
  // The whole value of `key` with its expire-at, read over one snapshot; nullopt when absent.
  // O(size), a stream's consumer groups, PELs and consumers included. OverLimit when the
  // elements' bytes pass max_bytes (nothing more is read).
  virtual StatusOr<std::optional<KeyValue>> ReadValue(std::string_view key,
                                                      uint64_t max_bytes = kNoByteLimit) = 0;
  // Writes `value` (type, elements, expire-at) as `key` in one WriteBatch (kill -9 leaves the
  // old key or the whole new one), replacing a live key of any type only with `replace`: false
  // and nothing written when the key is live and !replace. A collection gets a fresh version.
  // REQUIRES: value.type != kNone; a list, set, hash or sorted set has at least one element (a
  // stream may be empty); set members, hash fields and sorted-set members distinct; scores not
  // NaN; stream ids ascending and <= stream_last_id; each pending entry of a stream's group owned
  // by one of the group's consumers (InvalidArgument otherwise). The key lock of `key`.
  virtual StatusOr<bool> WriteValue(std::string_view key, const KeyValue& value, bool replace) = 0;

  // A sliced read over a snapshot taken now (see RangeRead), in the current database. Errors:
  // WrongType when `query.key` holds another type (an absent key reads as empty).
  virtual StatusOr<std::unique_ptr<RangeRead>> OpenRangeRead(const RangeQuery& query) = 0;

  // ---- hashes ----
  // Common rules for collections (hashes, lists, sets, sorted sets):
  // - WrongType when the key holds another type; an absent (or expired) key reads as empty.
  // - A collection whose last element is removed is deleted (absent, not empty).
  // - Read methods see one RocksDB snapshot: a consistent view of the whole collection.
  // - Results that Redis returns in hash-table order are returned in byte order here.
  //
  // HSET: sets the pairs (a later pair wins over an earlier one with the same field); returns the
  // number of fields that did not exist. Keeps the TTL. With `created`, (*created)[i] is 1 when
  // field_values[i] created its field (the field's first pair in the call, absent before), else 0
  // (server/commands/write_run.h splits one call's count among the commands it joined).
  virtual StatusOr<int64_t> HSet(
      std::string_view key,
      const std::vector<std::pair<std::string_view, std::string_view>>& field_values,
      std::vector<uint8_t>* created = nullptr) = 0;
  // HSETNX: true when the field was created.
  virtual StatusOr<bool> HSetNx(std::string_view key, std::string_view field,
                                std::string_view value) = 0;
  virtual StatusOr<std::optional<std::string>> HGet(std::string_view key,
                                                    std::string_view field) = 0;
  // One entry per field; nullopt for absent fields (all nullopt for an absent key).
  virtual StatusOr<std::vector<std::optional<std::string>>> HMGet(
      std::string_view key, const std::vector<std::string_view>& fields) = 0;
  virtual StatusOr<std::vector<std::pair<std::string, std::string>>> HGetAll(
      std::string_view key, uint64_t max_bytes = kNoByteLimit) = 0;
  // Number of fields removed (repeats count once).
  virtual StatusOr<int64_t> HDel(std::string_view key,
                                 const std::vector<std::string_view>& fields) = 0;
  virtual StatusOr<int64_t> HLen(std::string_view key) = 0;
  virtual StatusOr<bool> HExists(std::string_view key, std::string_view field) = 0;
  virtual StatusOr<std::vector<std::string>> HKeys(std::string_view key,
                                                   uint64_t max_bytes = kNoByteLimit) = 0;
  virtual StatusOr<std::vector<std::string>> HVals(std::string_view key,
                                                   uint64_t max_bytes = kNoByteLimit) = 0;
  // Errors: "hash value is not an integer", "increment or decrement would overflow".
  virtual StatusOr<int64_t> HIncrBy(std::string_view key, std::string_view field,
                                    int64_t delta) = 0;
  // Returns the new value formatted as Redis (FormatLongDouble). REQUIRES: delta finite (server:
  // "value is NaN or Infinity"). Errors: "hash value is not a float", "increment would produce
  // NaN or Infinity".
  virtual StatusOr<std::string> HIncrByFloat(std::string_view key, std::string_view field,
                                             long double delta) = 0;
  // Length of the field's value, 0 when absent.
  virtual StatusOr<int64_t> HStrLen(std::string_view key, std::string_view field) = 0;
  // HRANDFIELD with Redis's count rules: count > 0 returns min(count, HLEN) distinct fields,
  // count < 0 returns |count| fields that may repeat, 0 returns none. Values always come along
  // (the server drops them without WITHVALUES; without a count argument it asks for 1 and replies
  // nil when the result is empty). Approximately uniform.
  virtual StatusOr<std::vector<std::pair<std::string, std::string>>> HRandField(
      std::string_view key, int64_t count, uint64_t max_bytes = kNoByteLimit) = 0;
  // HSCAN, with SCAN's cursor rules; `count` fields examined per call; pattern matches fields.
  virtual StatusOr<PairScanResult> HScan(std::string_view key, uint64_t cursor,
                                         std::string_view pattern, uint64_t count) = 0;

  // ---- lists ----
  // Elements are numbered from the head (index 0, LEFT) to the tail (index -1, RIGHT).
  // LPUSH / RPUSH: pushes each element in turn (LPUSH a b c leaves c at the head); returns the
  // new length. Keeps the TTL.
  virtual StatusOr<int64_t> LPush(std::string_view key,
                                  const std::vector<std::string_view>& elements) = 0;
  virtual StatusOr<int64_t> RPush(std::string_view key,
                                  const std::vector<std::string_view>& elements) = 0;
  // LPUSHX / RPUSHX: only when the list exists; returns the new length, 0 when absent.
  virtual StatusOr<int64_t> LPushX(std::string_view key,
                                   const std::vector<std::string_view>& elements) = 0;
  virtual StatusOr<int64_t> RPushX(std::string_view key,
                                   const std::vector<std::string_view>& elements) = 0;
  // LPOP / RPOP key count: up to `count` elements (empty when count is 0); nullopt when the key
  // is absent. The server maps the count-less form to count 1 and a single bulk reply.
  virtual StatusOr<std::optional<std::vector<std::string>>> LPop(std::string_view key,
                                                                 uint64_t count) = 0;
  virtual StatusOr<std::optional<std::vector<std::string>>> RPop(std::string_view key,
                                                                 uint64_t count) = 0;
  virtual StatusOr<int64_t> LLen(std::string_view key) = 0;
  // LRANGE with Redis's index rules.
  virtual StatusOr<std::vector<std::string>> LRange(std::string_view key, int64_t start,
                                                    int64_t stop,
                                                    uint64_t max_bytes = kNoByteLimit) = 0;
  // LRANGE start stop for the cache: the list's length, expiry and span (ListRangeSpan) from one
  // meta read, and, when the span is not empty and ends within the first max_elements elements,
  // the elements [0, span.end) — the head the range lies in. No elements otherwise (the caller
  // reads the range another way). OverLimit when those elements pass max_bytes.
  virtual StatusOr<ListHeadRead> LHead(std::string_view key, int64_t start, int64_t stop,
                                       uint64_t max_elements, uint64_t max_bytes) = 0;
  // nullopt when absent or out of range.
  virtual StatusOr<std::optional<std::string>> LIndex(std::string_view key, int64_t index) = 0;
  // Errors: "no such key", "index out of range".
  virtual Status LSet(std::string_view key, int64_t index, std::string_view element) = 0;
  // LREM: count > 0 removes the first `count` matches from the head, < 0 from the tail, 0 all.
  // Returns the number removed. O(n).
  virtual StatusOr<int64_t> LRem(std::string_view key, int64_t count, std::string_view element) = 0;
  // LTRIM with Redis's index rules (an empty range deletes the key).
  virtual Status LTrim(std::string_view key, int64_t start, int64_t stop) = 0;
  // LINSERT BEFORE/AFTER: the new length, -1 when the pivot is absent, 0 when the key is. O(n).
  virtual StatusOr<int64_t> LInsert(std::string_view key, bool before, std::string_view pivot,
                                    std::string_view element) = 0;
  // LPOS: indexes of matches. REQUIRES rank != 0 (the server reports Redis's RANK error);
  // rank > 0 skips rank-1 matches from the head, rank < 0 scans from the tail. count 0 = all
  // matches (the server passes 1 without COUNT and replies a single integer or nil); maxlen 0 =
  // compare every element, else at most maxlen elements.
  virtual StatusOr<std::vector<int64_t>> LPos(std::string_view key, std::string_view element,
                                              int64_t rank, uint64_t count, uint64_t maxlen) = 0;
  // LMOVE (RPOPLPUSH = LMove(src, dst, kRight, kLeft)): pops from src's `from` end, pushes onto
  // dst's `to` end, atomically; returns the element, nullopt when src is absent. src == dst
  // rotates. WrongType when src, or dst (if it exists), is not a list.
  virtual StatusOr<std::optional<std::string>> LMove(std::string_view src, std::string_view dst,
                                                     ListEnd from, ListEnd to) = 0;

  // ---- sets ----
  // Number of members added / removed (repeats count once). With `added`, (*added)[i] is 1 when
  // members[i] was added (its first occurrence in the call, absent before), else 0.
  virtual StatusOr<int64_t> SAdd(std::string_view key, const std::vector<std::string_view>& members,
                                 std::vector<uint8_t>* added = nullptr) = 0;
  virtual StatusOr<int64_t> SRem(std::string_view key,
                                 const std::vector<std::string_view>& members) = 0;
  virtual StatusOr<std::vector<std::string>> SMembers(std::string_view key,
                                                      uint64_t max_bytes = kNoByteLimit) = 0;
  virtual StatusOr<bool> SIsMember(std::string_view key, std::string_view member) = 0;
  virtual StatusOr<std::vector<bool>> SMIsMember(std::string_view key,
                                                 const std::vector<std::string_view>& members) = 0;
  virtual StatusOr<int64_t> SCard(std::string_view key) = 0;
  // SPOP key count: removes and returns up to `count` random members (empty when absent). The
  // server maps the count-less form to count 1 (nil when empty). Random within a window of
  // count + 16 members at the front of the set's live range (front-biased), not over the whole
  // set: what keeps a pop O(count) whatever was popped before (Redis's is not uniform either).
  virtual StatusOr<std::vector<std::string>> SPop(std::string_view key, uint64_t count) = 0;
  // SRANDMEMBER with Redis's count rules (count < 0: |count| members, repeats allowed).
  virtual StatusOr<std::vector<std::string>> SRandMember(std::string_view key, int64_t count,
                                                         uint64_t max_bytes = kNoByteLimit) = 0;
  // SMOVE: false when src is absent or member is not in it. WrongType when src or dst (if it
  // exists) is not a set; src absent wins over dst's type, as Redis.
  virtual StatusOr<bool> SMove(std::string_view src, std::string_view dst,
                               std::string_view member) = 0;
  // SINTER / SUNION / SDIFF over one snapshot; absent keys are empty sets; WrongType if any key
  // is not a set. Members in byte order.
  virtual StatusOr<std::vector<std::string>> SInter(const std::vector<std::string_view>& keys) = 0;
  virtual StatusOr<std::vector<std::string>> SUnion(const std::vector<std::string_view>& keys) = 0;
  virtual StatusOr<std::vector<std::string>> SDiff(const std::vector<std::string_view>& keys) = 0;
  // SINTERCARD: size of the intersection, stopping at `limit` (0 = no limit).
  virtual StatusOr<int64_t> SInterCard(const std::vector<std::string_view>& keys,
                                       uint64_t limit) = 0;
  // *STORE: computes as above and replaces dst (any type, TTL cleared) with the result, deleting
  // dst when it is empty; atomic with respect to all the keys. Returns the result's size.
  virtual StatusOr<int64_t> SInterStore(std::string_view dst,
                                        const std::vector<std::string_view>& keys) = 0;
  virtual StatusOr<int64_t> SUnionStore(std::string_view dst,
                                        const std::vector<std::string_view>& keys) = 0;
  virtual StatusOr<int64_t> SDiffStore(std::string_view dst,
                                       const std::vector<std::string_view>& keys) = 0;
  virtual StatusOr<ScanResult> SScan(std::string_view key, uint64_t cursor,
                                     std::string_view pattern, uint64_t count) = 0;

  // ---- sorted sets ----
  // Members are ordered by (score, member bytes). Scores are never NaN; -0 is stored as 0.
  // ZADD: pairs are applied in order. Error "resulting score is not a number (NaN)" when INCR
  // adds +inf to -inf (nothing is written).
  virtual StatusOr<ZAddResult> ZAdd(std::string_view key,
                                    const std::vector<std::pair<double, std::string_view>>& members,
                                    const ZAddOptions& options) = 0;
  // ZINCRBY: the new score. Error as ZADD INCR.
  virtual StatusOr<double> ZIncrBy(std::string_view key, double increment,
                                   std::string_view member) = 0;
  virtual StatusOr<std::optional<double>> ZScore(std::string_view key, std::string_view member) = 0;
  virtual StatusOr<std::vector<std::optional<double>>> ZMScore(
      std::string_view key, const std::vector<std::string_view>& members) = 0;
  virtual StatusOr<int64_t> ZCard(std::string_view key) = 0;
  virtual StatusOr<int64_t> ZCount(std::string_view key, const ScoreRange& range) = 0;
  virtual StatusOr<int64_t> ZLexCount(std::string_view key, const LexRange& range) = 0;
  // ZRANK / ZREVRANK: nullopt when the key or member is absent. O(rank).
  virtual StatusOr<std::optional<int64_t>> ZRank(std::string_view key, std::string_view member,
                                                 bool reverse) = 0;
  // ZRANGE in all its forms (and ZRANGEBYSCORE, ZREVRANGE..., mapped by the server).
  virtual StatusOr<std::vector<ScoredMember>> ZRange(std::string_view key, const ZRangeSpec& spec,
                                                     uint64_t max_bytes = kNoByteLimit) = 0;
  // ZRANGESTORE: replaces dst (any type) with the range (deleting dst when empty); its size.
  virtual StatusOr<int64_t> ZRangeStore(std::string_view dst, std::string_view src,
                                        const ZRangeSpec& spec) = 0;
  virtual StatusOr<int64_t> ZRem(std::string_view key,
                                 const std::vector<std::string_view>& members) = 0;
  virtual StatusOr<int64_t> ZRemRangeByScore(std::string_view key, const ScoreRange& range) = 0;
  virtual StatusOr<int64_t> ZRemRangeByRank(std::string_view key, int64_t start, int64_t stop) = 0;
  virtual StatusOr<int64_t> ZRemRangeByLex(std::string_view key, const LexRange& range) = 0;
  // ZPOPMIN / ZPOPMAX: up to `count` members, lowest (highest) first; empty when absent.
  virtual StatusOr<std::vector<ScoredMember>> ZPopMin(std::string_view key, uint64_t count) = 0;
  virtual StatusOr<std::vector<ScoredMember>> ZPopMax(std::string_view key, uint64_t count) = 0;
  // ZRANDMEMBER with HRANDFIELD's count rules (count < 0: |count| members, repeats allowed);
  // members with their scores. Approximately uniform.
  virtual StatusOr<std::vector<ScoredMember>> ZRandMember(std::string_view key, int64_t count,
                                                          uint64_t max_bytes = kNoByteLimit) = 0;
  // ZSCAN: members in byte order with their scores; pattern matches members.
  virtual StatusOr<ZScanResult> ZScan(std::string_view key, uint64_t cursor,
                                      std::string_view pattern, uint64_t count) = 0;

  // ---- streams (store_stream.cc) ----
  // A stream may exist with no entries (after XDEL/XTRIM of all of them), as in Redis; it keeps
  // its last id.
  // XADD: appends the entry and trims (*trimmed: how many entries the trim removed); returns its
  // id, nullopt when `nomkstream` and the key is absent. Errors: "The ID specified in XADD is equal
  // or smaller than the target stream top item", "The stream has exhausted the last possible ID,
  // unable to add more items".
  virtual StatusOr<std::optional<StreamId>> XAdd(
      std::string_view key, const XAddSpec& spec,
      const std::vector<std::pair<std::string_view, std::string_view>>& fields,
      uint64_t* trimmed = nullptr) = 0;
  virtual StatusOr<int64_t> XLen(std::string_view key) = 0;
  // XRANGE (reverse: XREVRANGE): the entries with start <= id <= end, at most `count` (0 = all),
  // in id order (reverse: highest first). Reads only entries inside the range.
  virtual StatusOr<std::vector<StreamEntry>> XRange(std::string_view key, StreamId start,
                                                    StreamId end, bool reverse, uint64_t count,
                                                    uint64_t max_bytes = kNoByteLimit) = 0;
  // XDEL: the number of entries removed (repeats count once).
  virtual StatusOr<int64_t> XDel(std::string_view key, const std::vector<StreamId>& ids) = 0;
  // XTRIM: the number of entries removed. O(removed).
  virtual StatusOr<int64_t> XTrim(std::string_view key, const StreamTrim& trim) = 0;

  // ---- stream consumer groups (store_stream_group.cc) ----
  // Groups, consumers and the pending entries list (PEL) of a stream live beside its entries
  // (encoding.h) and go with it (DEL, FLUSHDB, expiry, COPY, RENAME). Writes (REQUIRES the key
  // lock) are one atomic batch each, durable as any write. Costs: a group or a consumer is one
  // point read; a PEL entry is one point read (XACK, XCLAIM); a range of the PEL is read within
  // live bounds the group keeps (the first and last pending id), so acknowledged entries are not
  // walked again; nothing reads the whole PEL unless asked to return it.
  // Errors: WrongType; NotFound(kNoStreamKey) when the key is absent, NotFound(kNoStreamGroup)
  // when the group is (the server words each command's Redis error).
  //
  // The stream's figures; nullopt when the key is absent.
  virtual StatusOr<std::optional<StreamInfo>> XInfoStream(std::string_view key) = 0;
  // XGROUP CREATE: `id` nullopt = `$` (the last id). mkstream creates an absent stream.
  // Busy when the group exists.
  virtual Status XGroupCreate(std::string_view key, std::string_view group,
                              std::optional<StreamId> id, bool mkstream, int64_t entries_read) = 0;
  // XGROUP SETID (`id` nullopt = `$`; entries_read kInvalidEntriesRead unless given).
  virtual Status XGroupSetId(std::string_view key, std::string_view group,
                             std::optional<StreamId> id, int64_t entries_read) = 0;
  // XGROUP DESTROY: true when the group existed (its PEL and consumers go with it).
  virtual StatusOr<bool> XGroupDestroy(std::string_view key, std::string_view group) = 0;
  // XGROUP CREATECONSUMER: true when created, false when it existed.
  virtual StatusOr<bool> XGroupCreateConsumer(std::string_view key, std::string_view group,
                                              std::string_view consumer, int64_t now_ms) = 0;
  // XGROUP DELCONSUMER: the consumer's pending count (its entries leave the PEL); 0 when absent.
  virtual StatusOr<uint64_t> XGroupDelConsumer(std::string_view key, std::string_view group,
                                               std::string_view consumer) = 0;
  // XREADGROUP on one key (see StreamGroupReadSpec); when the key is served, creates the
  // consumer if new and sets its seen time (as Redis 7.0: not when it is not served). `>`:
  // delivers entries after the group's last id, moving it and entries-read as Redis 7.0.
  // nullopt: nothing served (the key is not part of the reply).
  virtual StatusOr<std::optional<std::vector<StreamEntry>>> XReadGroup(
      std::string_view key, const StreamGroupReadSpec& spec, int64_t now_ms,
      uint64_t max_bytes = kNoByteLimit) = 0;
  // XACK: the number of ids that were pending (repeats count once); 0 when the key or the group
  // is absent.
  virtual StatusOr<int64_t> XAck(std::string_view key, std::string_view group,
                                 const std::vector<StreamId>& ids) = 0;
  virtual StatusOr<StreamPendingSummary> XPendingSummary(std::string_view key,
                                                         std::string_view group) = 0;
  virtual StatusOr<std::vector<StreamPendingEntry>> XPendingRange(std::string_view key,
                                                                  std::string_view group,
                                                                  const StreamPendingQuery& query,
                                                                  int64_t now_ms) = 0;
  // XCLAIM as Redis 7.0 (ids whose entry was deleted leave the PEL and are not returned; the
  // consumer is created only when something is claimed).
  virtual StatusOr<StreamClaimResult> XClaim(std::string_view key, const StreamClaimSpec& spec,
                                             int64_t now_ms) = 0;
  // XAUTOCLAIM: walks the PEL from `start`, at most count * 10 entries, claims at most `count`.
  virtual StatusOr<StreamClaimResult> XAutoClaim(std::string_view key, std::string_view group,
                                                 std::string_view consumer, int64_t min_idle_ms,
                                                 StreamId start, uint64_t count, bool justid,
                                                 int64_t now_ms) = 0;
  virtual StatusOr<std::vector<StreamGroupInfo>> XInfoGroups(std::string_view key) = 0;
  // One group's record (lag included); nullopt when the group is absent.
  virtual StatusOr<std::optional<StreamGroupInfo>> XInfoGroup(std::string_view key,
                                                              std::string_view group) = 0;
  virtual StatusOr<std::vector<StreamConsumerInfo>> XInfoConsumers(std::string_view key,
                                                                   std::string_view group) = 0;
  // XINFO STREAM FULL (see StreamFullInfo). Bounded by `count` per list (0 = everything).
  virtual StatusOr<StreamFullInfo> XInfoFull(std::string_view key, uint64_t count) = 0;
  // XSETID. Errors as Redis: InvalidArgument with its text.
  virtual Status XSetId(std::string_view key, StreamId last_id,
                        std::optional<uint64_t> entries_added,
                        std::optional<StreamId> max_deleted_id) = 0;

  // ---- replication (storage/store_replication.cc; storage/replication_types.h) ----
  // The sequence number of the last committed write: the primary's replication offset.
  virtual uint64_t LatestSequence() = 0;
  // Bytes of the write batches this store wrote since it opened (their WAL records' data): the
  // replication senders' measure of how far behind a replica is in bytes. Any thread; one load.
  virtual uint64_t WalBytesWritten() const = 0;
  // CreateCheckpoint(dir, &sequence) below, with the list of the files it holds (what a full
  // synchronization sends).
  virtual StatusOr<CheckpointFiles> CreateCheckpoint(const std::string& dir) = 0;
  // A reader of the committed batches from sequence `from` on (WalReader). NotFound when the WAL
  // no longer holds `from` (the replica needs a full synchronization).
  virtual StatusOr<std::unique_ptr<WalReader>> ReadWalFrom(uint64_t from) = 0;
  // Decodes consecutive batches of the primary's (a WalReader's, each starting at the sequence
  // number the one before it ends at; REQUIRES: not empty) into *batch, as one: the keys they
  // touch and the records ApplyReplicated writes in one RocksDB write (a replica applies the
  // batches that reached it together with one WAL write, not one each). Pure decoding;
  // Corruption for bad bytes.
  virtual Status DecodeReplicated(const std::vector<std::string_view>& reps,
                                  ReplicatedBatch* batch) = 0;
  // The same for one batch.
  Status DecodeReplicated(std::string_view rep, ReplicatedBatch* batch) {
    return DecodeReplicated(std::vector<std::string_view>{rep}, batch);
  }
  // Replica: writes the primary's batches (DecodeReplicated's) as one batch, together with the
  // replication state `state` (the offset the last one ends at), and keeps the key counters
  // (from the counts notes a write group's batch carries, storage/counts_note.h; a record no
  // note covers, from its meta's state before it), the key and entry filters and the database
  // mapping right; spends batch->records. REQUIRES: the caller holds the key locks of every key
  // batch->keys names (every key when all_keys or flushed_dbs), and nothing else writes. BLOCKS
  // on the WAL. *local_first (when not null) receives the sequence number this store gave the
  // first record (the written batch has one record more: the state).
  virtual Status ApplyReplicated(ReplicatedBatch* batch, const ReplicationState& state,
                                 uint64_t* local_first = nullptr) = 0;
  // A batch `rep` of this store's own WAL (a WalReader's): kReplicated when it is a batch
  // ApplyReplicated wrote; then *state is the state written with it and *rep is trimmed to the
  // primary's batches as they were received, joined (the state record removed, the count and
  // the header's sequence number those of the primary: state.offset - records + 1). kStateOnly when
  // it holds nothing but a replication state; kOwn otherwise (*rep untouched). Pure decoding; any
  // thread.
  virtual WalBatchOrigin ClassifyWalBatch(std::string* rep, ReplicationState* state) = 0;
  // Trims `rep`, a batch holding sequence numbers [first, first + n) with first < from < first +
  // n, to its records from `from` on (its header's sequence `from`): a replica's applied batch
  // joins several of the primary's (ApplyReplicated), and a replica of it may stand between two
  // of them (it joined others). Drops the LogData records before the first record kept (they
  // belong to the batches before `from`). Pure decoding; any thread. InvalidArgument when `from`
  // is not inside the batch; Corruption for bad bytes.
  virtual Status DropRecordsBefore(std::string* rep, uint64_t from) = 0;
  // The replication state last written by ApplyReplicated or SetReplicationState; replid empty
  // when none.
  virtual StatusOr<ReplicationState> GetReplicationState() = 0;
  virtual Status SetReplicationState(const ReplicationState& state) = 0;
  // Replica, full synchronization: replaces the whole database with the one in `staged_dir`
  // (a checkpoint received from the primary; data_dir::ReceivedSyncPath, on the data
  // directory's file system) and records `state` as its replication state: closes the
  // database, moves it to data_dir::ReplacedPath, moves `staged_dir` in its place, opens it
  // with fresh counters and filters, writes `state` (fsynced: the commit point), then removes
  // the old database. A crash before the commit point leaves the old database to the next
  // open (data_dir::Prepare puts it back). Other threads' calls wait meanwhile (the lifecycle
  // lock, held exclusive). On failure before the swap the old data stays open; a failure to
  // open the new one or write `state` closes the store (the next open rolls back).
  // BLOCKS for the reopen (a pass over every meta).
  virtual Status ReplaceDatabase(const std::string& staged_dir, const ReplicationState& state) = 0;
  // A replica becoming a primary: takes up the version counter the primary persisted.
  virtual Status ResumeWrites() = 0;
  // On while this store is a replica's: then its own writes (a writable replica's clients'
  // commands, its server records) never share a WAL record with a batch ApplyReplicated writes.
  // RocksDB joins the batches of writers that queue at the same time into one record, and a
  // chained replica's sender must find each applied batch alone in its record
  // (ClassifyWalBatch). Off on a primary, whose writers then group freely. Set it before the
  // first ApplyReplicated (a write already under way when it turns on is not ordered).
  virtual void OrderOwnWritesWithApplied(bool on) = 0;

  // ---- maintenance ----
  // Compacts every column family now (expired metas and stale collection entries are dropped).
  // Blocking, O(database): for DEBUG-style admin commands and tests.
  virtual Status CompactAll() = 0;
  // Entries in the data column families, live and stale, by iterating them: O(database). For
  // tests and DEBUG.
  virtual StatusOr<uint64_t> CountDataEntries() = 0;

  // A RocksDB checkpoint of every database in `path` (BGSAVE / SAVE): SST files hard-linked
  // (`path` must be on the database's file system, its parent must exist, `path` itself must
  // not), the live WAL copied, or the memtables flushed first when the WAL has grown past
  // kCheckpointFlushWalBytes. Writes go on meanwhile; the checkpoint holds every write committed
  // before the call, whole WriteBatches only, and opens as a database of its own. *sequence gets
  // its last RocksDB sequence number. BLOCKS (file links and copies, maybe a flush): a
  // background thread or a worker. On failure nothing is left at `path`.
  virtual Status CreateCheckpoint(const std::string& path, uint64_t* sequence) = 0;
  static constexpr uint64_t kCheckpointFlushWalBytes = 64ull << 20;

  // A few "name:value" lines of RocksDB figures for INFO (sst size, memtable size, pending
  // compaction bytes, ...), each ending in "\r\n".
  virtual std::string InfoRocksDb() = 0;
  // What Open did to the data directory before opening (a migrated layout, a cut full sync
  // recovered, leftovers removed): one line each, for the log; empty when nothing.
  virtual std::string OpenNotes() const = 0;
  // Flushes memtables and closes the database. Idempotent; later calls fail with kShutdown.
  virtual Status Close() = 0;

  // Opens a write group on the calling thread (see WriteGroup). REQUIRES: no other group open on
  // this thread for this store.
  virtual std::unique_ptr<WriteGroup> OpenWriteGroup() = 0;
  // For a command made of several Store calls that reads back its own earlier write (SORT ...
  // STORE deletes the target, then pushes): writes the calling thread's open WriteGroup now (a
  // no-op without one). BLOCKS on the WAL. A failure is also reported by the group's next
  // Commit(), so every write the group holds fails with it.
  [[nodiscard]] virtual Status FlushThreadWriteGroup() = 0;
  // Adds `note` (opaque bytes: the server's keyspace events for replicas) to the calling
  // thread's open WriteGroup: the group's next write of records carries it in the same WAL record,
  // as a RocksDB LogData record (not applied to the database), so the batches ReadWalFrom returns
  // hold it and DecodeReplicated hands it back (ReplicatedKeys::notes). Dropped when the thread has
  // no open group, and with a transaction that rolls back or a group that writes nothing more.
  virtual void NoteForReplicas(std::string note) = 0;

 protected:
  Store() = default;
  // Called by implementations with a key found stored but expired (see SetExpiredObserver).
  void ReportExpired(std::string_view key) const {
    if (expired_observer_) expired_observer_(key);
  }

 private:
  std::function<void(std::string_view key)> expired_observer_;
};

}  // namespace rockcache::storage
