// storage/rocks_store — the RocksDB implementation of storage::Store (store.h is the contract).
//
// Internal to storage/: includes RocksDB, so only storage/*.cc may include it. The methods are
// split over several .cc files by type (rocks_store.cc: open/close/helpers, with its RocksDB
// options in rocks_options.cc; store_strings.cc, store_keyspace.cc, ...).
//
// Concurrency
// - lifecycle_ (shared_mutex): every public method holds it shared; Close holds it exclusive.
// - No key locks here: the caller holds the key locks of the keys a write touches (store.h).
//   Every write method starts with one prologue, BeginWrite (lifecycle hold + the key's meta read
//   once), then does its type's own work and ends with Commit or Write. A read of one collection
//   key starts with its counterpart, BeginRead (lifecycle hold, the command's snapshot if it
//   takes one, the key's meta read once with its type and expiry checked).
// - Write groups (write_group.{h,cc}): a thread-local pointer names the group open on the calling
//   thread. Write() appends a method's Records to it (byte append of the records;
//   WriteBatch's rep is "seq fixed64, count fixed32, records", stable since LevelDB) and
//   AddKeyCount() defers the counter change to the group's successful Commit().
// - Transactions (WriteGroup::BeginAtomic) and indexed groups: the group's writes go to a
//   TxOverlay (a WriteBatch plus an ordered index of its keys, tx_overlay.h) installed in
//   tls_tx_overlay; every read of the store goes through its DbView (db_view.h), which merges
//   the overlay over the database, so a transaction reads its own writes.
// - counters_[physical db]: atomics, adjusted after each successful write that creates or removes
//   a meta (keys) or changes whether a key has a TTL (expires, expire_sum): PutMeta/DeleteMeta
//   note the TTL change on a thread-local list that the next successful Write applies (or hands
//   to the write group, applied at its Commit); Enter drops what a failed method left there.
// - Databases (store.h): meta_cfs_[physical] is the meta column family of each physical
//   database; MetaCf() the one of the calling thread's (config/current_db.h). db_map_ is the
//   logical -> physical mapping (atomics: read by any thread; changed by SwapDb under map_mu_).
#pragma once

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/current_db.h"
#include "config/mutex.h"
#include "storage/compaction_filter.h"
#include "storage/counting_cache.h"
#include "storage/data_dir.h"
#include "storage/db_view.h"
#include "storage/encoding.h"
#include "storage/key_filter.h"
#include "storage/records.h"
#include "storage/rocks_support.h"
#include "storage/scan_cursor.h"
#include "storage/store.h"

namespace rockcache::storage {

class RocksStore final : public Store, public DbView {
 public:
  static StatusOr<std::unique_ptr<Store>> OpenRocks(const Options& options);
  ~RocksStore() override;

  // ---- strings (store_strings.cc) ----
  void BeginReadAhead(const std::vector<ReadAheadKey>& keys) override;
  void EndReadAhead() override;
  using Store::Get;
  StatusOr<std::optional<std::string>> Get(std::string_view key, int64_t* expire_at_ms) override;
  MemoryRead TryGetString(std::string_view key, size_t max_value_bytes, MemoryReach reach) override;
  StatusOr<SetResult> Set(std::string_view key, std::string_view value,
                          const SetOptions& options) override;
  using Store::MGet;
  StatusOr<std::vector<std::optional<std::string>>> MGet(
      const std::vector<std::string_view>& keys, std::vector<int64_t>* expire_at_ms) override;
  using Store::MSet;
  Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& kvs,
              const std::vector<KnownKey>* known) override;
  StatusOr<bool> MSetNx(
      const std::vector<std::pair<std::string_view, std::string_view>>& kvs) override;
  StatusOr<std::optional<std::string>> GetDel(std::string_view key) override;
  StatusOr<std::optional<std::string>> GetEx(std::string_view key, const Expiry& expiry) override;
  StatusOr<int64_t> Append(std::string_view key, std::string_view value) override;
  StatusOr<int64_t> StrLen(std::string_view key) override;
  using Store::IncrBy;
  StatusOr<int64_t> IncrBy(std::string_view key, int64_t delta, int64_t* expire_at_ms) override;
  StatusOr<std::string> IncrByFloat(std::string_view key, long double delta) override;
  StatusOr<std::string> GetRange(std::string_view key, int64_t start, int64_t end) override;
  StatusOr<int64_t> SetRange(std::string_view key, int64_t offset, std::string_view value,
                             uint64_t max_size) override;

  // ---- keyspace (store_keyspace.cc) ----
  StatusOr<int64_t> Del(const std::vector<std::string_view>& keys) override;
  StatusOr<int64_t> Exists(const std::vector<std::string_view>& keys) override;
  StatusOr<bool> ExpireAt(std::string_view key, int64_t at_ms, ExpireCondition cond) override;
  StatusOr<int64_t> PTtl(std::string_view key) override;
  StatusOr<int64_t> ExpireTimeMs(std::string_view key) override;
  StatusOr<bool> Persist(std::string_view key) override;
  StatusOr<KeyType> Type(std::string_view key) override;
  StatusOr<std::vector<std::string>> Keys(std::string_view pattern,
                                          uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<ScanResult> Scan(uint64_t cursor, std::string_view pattern, uint64_t count,
                            std::optional<KeyType> type,
                            uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<int64_t> DbSize() override;
  KeyStats GetKeyStats() override;
  Status FlushAll() override;
  Status FlushDb() override;
  int databases() const override { return options_.databases; }
  int PhysicalDb(int db) const override {
    return db_map_[static_cast<size_t>(db)].load(std::memory_order_acquire);
  }
  Status SwapDb(int a, int b) override;
  Status PutServerRecord(std::string_view name, std::string_view value) override;
  Status DeleteServerRecord(std::string_view name) override;
  StatusOr<std::vector<std::pair<std::string, std::string>>> ServerRecords(
      std::string_view prefix) override;
  StatusOr<bool> Move(std::string_view key, int db) override;
  StatusOr<bool> Copy(std::string_view src, std::string_view dst, int db, bool replace) override;
  int LogicalDb(int physical) const override {
    for (int db = 0; db < options_.databases; ++db) {
      if (db_map_[static_cast<size_t>(db)].load(std::memory_order_acquire) == physical) return db;
    }
    return physical;
  }
  StatusOr<int64_t> SweepExpired(
      uint64_t max_keys, const WithKeyLock& with_lock,
      const std::function<void(std::string_view key)>& on_removed = nullptr) override;
  StatusOr<bool> DeleteIfExpired(std::string_view key) override;

  StatusOr<bool> Rename(std::string_view src, std::string_view dst, bool nx) override;
  StatusOr<std::optional<std::string>> RandomKey() override;
  // store_value.cc
  StatusOr<std::optional<KeyValue>> ReadValue(std::string_view key,
                                              uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<bool> WriteValue(std::string_view key, const KeyValue& value, bool replace) override;
  // store_range_read.cc
  StatusOr<std::unique_ptr<RangeRead>> OpenRangeRead(const RangeQuery& query) override;

  // ---- hashes (store_hash.cc) ----
  StatusOr<int64_t> HSet(
      std::string_view key,
      const std::vector<std::pair<std::string_view, std::string_view>>& field_values,
      std::vector<uint8_t>* created) override;
  StatusOr<bool> HSetNx(std::string_view key, std::string_view field,
                        std::string_view value) override;
  StatusOr<std::optional<std::string>> HGet(std::string_view key, std::string_view field) override;
  StatusOr<std::vector<std::optional<std::string>>> HMGet(
      std::string_view key, const std::vector<std::string_view>& fields) override;
  StatusOr<std::vector<std::pair<std::string, std::string>>> HGetAll(
      std::string_view key, uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<int64_t> HDel(std::string_view key,
                         const std::vector<std::string_view>& fields) override;
  StatusOr<int64_t> HLen(std::string_view key) override;
  StatusOr<bool> HExists(std::string_view key, std::string_view field) override;
  StatusOr<std::vector<std::string>> HKeys(std::string_view key,
                                           uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<std::vector<std::string>> HVals(std::string_view key,
                                           uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<int64_t> HIncrBy(std::string_view key, std::string_view field, int64_t delta) override;
  StatusOr<std::string> HIncrByFloat(std::string_view key, std::string_view field,
                                     long double delta) override;
  StatusOr<int64_t> HStrLen(std::string_view key, std::string_view field) override;
  StatusOr<std::vector<std::pair<std::string, std::string>>> HRandField(
      std::string_view key, int64_t count, uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<PairScanResult> HScan(std::string_view key, uint64_t cursor, std::string_view pattern,
                                 uint64_t count) override;

  // ---- lists (store_list.cc) ----
  StatusOr<int64_t> LPush(std::string_view key,
                          const std::vector<std::string_view>& elements) override;
  StatusOr<int64_t> RPush(std::string_view key,
                          const std::vector<std::string_view>& elements) override;
  StatusOr<int64_t> LPushX(std::string_view key,
                           const std::vector<std::string_view>& elements) override;
  StatusOr<int64_t> RPushX(std::string_view key,
                           const std::vector<std::string_view>& elements) override;
  StatusOr<std::optional<std::vector<std::string>>> LPop(std::string_view key,
                                                         uint64_t count) override;
  StatusOr<std::optional<std::vector<std::string>>> RPop(std::string_view key,
                                                         uint64_t count) override;
  StatusOr<int64_t> LLen(std::string_view key) override;
  StatusOr<std::vector<std::string>> LRange(std::string_view key, int64_t start, int64_t stop,
                                            uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<ListHeadRead> LHead(std::string_view key, int64_t start, int64_t stop,
                               uint64_t max_elements, uint64_t max_bytes) override;
  StatusOr<std::optional<std::string>> LIndex(std::string_view key, int64_t index) override;
  Status LSet(std::string_view key, int64_t index, std::string_view element) override;
  StatusOr<int64_t> LRem(std::string_view key, int64_t count, std::string_view element) override;
  Status LTrim(std::string_view key, int64_t start, int64_t stop) override;
  StatusOr<int64_t> LInsert(std::string_view key, bool before, std::string_view pivot,
                            std::string_view element) override;
  StatusOr<std::vector<int64_t>> LPos(std::string_view key, std::string_view element, int64_t rank,
                                      uint64_t count, uint64_t maxlen) override;
  StatusOr<std::optional<std::string>> LMove(std::string_view src, std::string_view dst,
                                             ListEnd from, ListEnd to) override;

  // ---- sets (store_set.cc) ----
  StatusOr<int64_t> SAdd(std::string_view key, const std::vector<std::string_view>& members,
                         std::vector<uint8_t>* added) override;
  StatusOr<int64_t> SRem(std::string_view key,
                         const std::vector<std::string_view>& members) override;
  StatusOr<std::vector<std::string>> SMembers(std::string_view key,
                                              uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<bool> SIsMember(std::string_view key, std::string_view member) override;
  StatusOr<std::vector<bool>> SMIsMember(std::string_view key,
                                         const std::vector<std::string_view>& members) override;
  StatusOr<int64_t> SCard(std::string_view key) override;
  StatusOr<std::vector<std::string>> SPop(std::string_view key, uint64_t count) override;
  StatusOr<std::vector<std::string>> SRandMember(std::string_view key, int64_t count,
                                                 uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<bool> SMove(std::string_view src, std::string_view dst,
                       std::string_view member) override;
  StatusOr<std::vector<std::string>> SInter(const std::vector<std::string_view>& keys) override;
  StatusOr<std::vector<std::string>> SUnion(const std::vector<std::string_view>& keys) override;
  StatusOr<std::vector<std::string>> SDiff(const std::vector<std::string_view>& keys) override;
  StatusOr<int64_t> SInterCard(const std::vector<std::string_view>& keys, uint64_t limit) override;
  StatusOr<int64_t> SInterStore(std::string_view dst,
                                const std::vector<std::string_view>& keys) override;
  StatusOr<int64_t> SUnionStore(std::string_view dst,
                                const std::vector<std::string_view>& keys) override;
  StatusOr<int64_t> SDiffStore(std::string_view dst,
                               const std::vector<std::string_view>& keys) override;
  StatusOr<ScanResult> SScan(std::string_view key, uint64_t cursor, std::string_view pattern,
                             uint64_t count) override;

  // ---- sorted sets (store_zset.cc) ----
  StatusOr<ZAddResult> ZAdd(std::string_view key,
                            const std::vector<std::pair<double, std::string_view>>& members,
                            const ZAddOptions& options) override;
  StatusOr<double> ZIncrBy(std::string_view key, double increment,
                           std::string_view member) override;
  StatusOr<std::optional<double>> ZScore(std::string_view key, std::string_view member) override;
  StatusOr<std::vector<std::optional<double>>> ZMScore(
      std::string_view key, const std::vector<std::string_view>& members) override;
  StatusOr<int64_t> ZCard(std::string_view key) override;
  StatusOr<int64_t> ZCount(std::string_view key, const ScoreRange& range) override;
  StatusOr<int64_t> ZLexCount(std::string_view key, const LexRange& range) override;
  StatusOr<std::optional<int64_t>> ZRank(std::string_view key, std::string_view member,
                                         bool reverse) override;
  StatusOr<std::vector<ScoredMember>> ZRange(std::string_view key, const ZRangeSpec& spec,
                                             uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<int64_t> ZRangeStore(std::string_view dst, std::string_view src,
                                const ZRangeSpec& spec) override;
  StatusOr<int64_t> ZRem(std::string_view key,
                         const std::vector<std::string_view>& members) override;
  StatusOr<int64_t> ZRemRangeByScore(std::string_view key, const ScoreRange& range) override;
  StatusOr<int64_t> ZRemRangeByRank(std::string_view key, int64_t start, int64_t stop) override;
  StatusOr<int64_t> ZRemRangeByLex(std::string_view key, const LexRange& range) override;
  StatusOr<std::vector<ScoredMember>> ZPopMin(std::string_view key, uint64_t count) override;
  StatusOr<std::vector<ScoredMember>> ZPopMax(std::string_view key, uint64_t count) override;
  StatusOr<std::vector<ScoredMember>> ZRandMember(
      std::string_view key, int64_t count,
      uint64_t max_bytes) override;  // store_zset_random.cc
  StatusOr<ZScanResult> ZScan(std::string_view key, uint64_t cursor, std::string_view pattern,
                              uint64_t count) override;

  // ---- streams (store_stream.cc) ----
  StatusOr<std::optional<StreamId>> XAdd(
      std::string_view key, const XAddSpec& spec,
      const std::vector<std::pair<std::string_view, std::string_view>>& fields,
      uint64_t* trimmed = nullptr) override;
  StatusOr<int64_t> XLen(std::string_view key) override;
  StatusOr<std::vector<StreamEntry>> XRange(std::string_view key, StreamId start, StreamId end,
                                            bool reverse, uint64_t count,
                                            uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<int64_t> XDel(std::string_view key, const std::vector<StreamId>& ids) override;
  StatusOr<int64_t> XTrim(std::string_view key, const StreamTrim& trim) override;
  // store_stream_group.cc
  StatusOr<std::optional<StreamInfo>> XInfoStream(std::string_view key) override;
  Status XGroupCreate(std::string_view key, std::string_view group, std::optional<StreamId> id,
                      bool mkstream, int64_t entries_read) override;
  Status XGroupSetId(std::string_view key, std::string_view group, std::optional<StreamId> id,
                     int64_t entries_read) override;
  StatusOr<bool> XGroupDestroy(std::string_view key, std::string_view group) override;
  StatusOr<bool> XGroupCreateConsumer(std::string_view key, std::string_view group,
                                      std::string_view consumer, int64_t now_ms) override;
  StatusOr<uint64_t> XGroupDelConsumer(std::string_view key, std::string_view group,
                                       std::string_view consumer) override;
  StatusOr<std::optional<std::vector<StreamEntry>>> XReadGroup(
      std::string_view key, const StreamGroupReadSpec& spec, int64_t now_ms,
      uint64_t max_bytes = kNoByteLimit) override;
  StatusOr<int64_t> XAck(std::string_view key, std::string_view group,
                         const std::vector<StreamId>& ids) override;
  StatusOr<StreamPendingSummary> XPendingSummary(std::string_view key,
                                                 std::string_view group) override;
  StatusOr<std::vector<StreamPendingEntry>> XPendingRange(std::string_view key,
                                                          std::string_view group,
                                                          const StreamPendingQuery& query,
                                                          int64_t now_ms) override;
  StatusOr<StreamClaimResult> XClaim(std::string_view key, const StreamClaimSpec& spec,
                                     int64_t now_ms) override;
  StatusOr<StreamClaimResult> XAutoClaim(std::string_view key, std::string_view group,
                                         std::string_view consumer, int64_t min_idle_ms,
                                         StreamId start, uint64_t count, bool justid,
                                         int64_t now_ms) override;
  StatusOr<std::vector<StreamGroupInfo>> XInfoGroups(std::string_view key) override;
  StatusOr<std::optional<StreamGroupInfo>> XInfoGroup(std::string_view key,
                                                      std::string_view group) override;
  StatusOr<std::vector<StreamConsumerInfo>> XInfoConsumers(std::string_view key,
                                                           std::string_view group) override;
  StatusOr<StreamFullInfo> XInfoFull(std::string_view key, uint64_t count) override;
  Status XSetId(std::string_view key, StreamId last_id, std::optional<uint64_t> entries_added,
                std::optional<StreamId> max_deleted_id) override;

  // ---- admin (rocks_store.cc, store_collections.cc) ----
  Status CompactAll() override;
  StatusOr<uint64_t> CountDataEntries() override;
  // store_checkpoint.cc
  Status CreateCheckpoint(const std::string& path, uint64_t* sequence) override;
  std::string InfoRocksDb() override;
  std::string OpenNotes() const override { return open_notes_; }
  Status Close() override;

  // ---- replication (store_replication.cc) ----
  uint64_t LatestSequence() override;
  uint64_t WalBytesWritten() const override { return wal_bytes_.load(std::memory_order_relaxed); }
  StatusOr<CheckpointFiles> CreateCheckpoint(const std::string& dir) override;
  StatusOr<std::unique_ptr<WalReader>> ReadWalFrom(uint64_t from) override;
  using Store::DecodeReplicated;
  Status DecodeReplicated(const std::vector<std::string_view>& reps,
                          ReplicatedBatch* batch) override;
  Status ApplyReplicated(ReplicatedBatch* batch, const ReplicationState& state,
                         uint64_t* local_first = nullptr) override;
  WalBatchOrigin ClassifyWalBatch(std::string* rep, ReplicationState* state) override;
  Status DropRecordsBefore(std::string* rep, uint64_t from) override;
  StatusOr<ReplicationState> GetReplicationState() override;
  Status SetReplicationState(const ReplicationState& state) override;
  Status ReplaceDatabase(const std::string& staged_dir, const ReplicationState& state) override;
  Status ResumeWrites() override;
  void OrderOwnWritesWithApplied(bool on) override {
    order_own_writes_.store(on, std::memory_order_release);
  }
  std::unique_ptr<WriteGroup> OpenWriteGroup() override;
  Status FlushThreadWriteGroup() override;
  void NoteForReplicas(std::string note) override;
  // When this thread's group reads through an indexed overlay (WriteGroup::BeginIndexed) that
  // holds writes, writes them now, so that a snapshot taken next holds them: a sliced read's
  // later steps run on other threads, where the overlay is not seen.
  Status FlushIndexedGroup();

 private:
  friend class RocksWriteGroup;
  friend class RocksRangeRead;
  friend class StreamGroups;  // store_stream_group.cc
  RocksStore() = default;

  // Lifecycle: a shared hold on lifecycle_ for the duration of one public method.
  // (The analysis does not follow a std::shared_lock: Enter asserts the hold for what follows.)
  using Hold = std::shared_lock<SharedMutex>;
  // Sets *hold and returns OK, or returns Shutdown after Close.
  Status Enter(Hold* hold);

  // The write prologue of a collection command: the lifecycle hold, then the key's meta read once
  // (LoadForWrite). REQUIRES: the caller holds the key lock of `key`.
  Status BeginWrite(std::string_view key, MetaType type, Hold* hold, MetaLookup* old, Meta* meta);
  // The same for a command that reads the key's meta itself (strings, EXPIRE, PERSIST).
  Status BeginWrite(std::string_view key, Hold* hold, MetaLookup* old);
  // The read prologue of a command that reads one key of a collection type: the lifecycle hold,
  // then, with `snap`, the snapshot the command's later reads share, then the key's meta read
  // once (LoadForRead) in that snapshot; with `snap` nullptr, from the latest state (a read with
  // at most one point read after it, or a caller that holds the key lock). On OK, *found = false
  // when the key is absent or expired (*meta untouched), true with *meta its live meta; WrongType
  // when it is live with another type; Shutdown after Close (no hold, no snapshot, *found not
  // set); errors of the meta read as ReadMeta's. Takes no key lock; allocates nothing beyond
  // the meta's own. Inline (below the class): it costs what the steps written out cost.
  // REQUIRES: `snap`, when given, default-constructed and declared after *hold, so that it is
  // released under the hold.
  Status BeginRead(std::string_view key, MetaType type, Hold* hold, SnapshotRead* snap, Meta* meta,
                   bool* found);

  // Meta access.
  // Reads the meta of `key`. With !full, a string's value is not copied (out->meta.value empty).
  Status ReadMeta(const rocksdb::ReadOptions& ro, std::string_view key, MetaLookup* out,
                  bool full = true);
  // Every meta write (PutMeta, DeleteMeta, the write group's string puts, DeleteAllMetas) drops
  // what this thread read ahead of the key (BeginReadAhead), so even a write its caller did
  // not foresee cannot leave an outdated record to a later read. One branch when none is open.
  static void ForgetReadAhead(int db, std::string_view key);
  static void ForgetAllReadAhead();
  // ReadMeta's second half: what a Get (or the read-ahead) of `key`'s meta returned, decoded.
  Status DecodeMetaRead(std::string_view key, const rocksdb::Status& s, const rocksdb::Slice& value,
                        MetaLookup* out, bool full);
  // Reads the meta of a key whose stripe the caller holds (latest state).
  Status ReadMetaLocked(std::string_view key, MetaLookup* out) {
    return ReadMeta(rocksdb::ReadOptions(), key, out);
  }
  // Puts / deletes the meta of `key` (whose state before the write is `old`) in the current
  // database, or in physical database `db`. Notes the change of the TTL figures (see top).
  void PutMeta(Records* batch, std::string_view key, const MetaLookup& old, const Meta& meta,
               int db = -1);
  void DeleteMeta(Records* batch, std::string_view key, const MetaLookup& old, int db = -1);
  // The meta column family of the calling thread's database.
  rocksdb::ColumnFamilyHandle* MetaCf() const {
    return meta_cfs_[static_cast<size_t>(CurrentDb())];
  }
  // Reads the meta of `key` in physical database `db` (stripe held).
  Status ReadMetaIn(int db, std::string_view key, MetaLookup* out);
  // Appends a Put of the entry DataKey(key, version, sub_key) of collection column family `cf`
  // to `batch`, noting it in the entry filter first (hash, set and zset entries). Every entry
  // Put goes through here, not Records::PutEntry: an entry missing from the filter would read
  // as absent (see entry_filter_).
  void PutEntry(Records* batch, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                uint64_t version, std::string_view sub_key, std::string_view value);
  // The entry filter's tag of `cf` (hash, set, zset: the families read by key), 0 for others.
  uint32_t EntryFilterTag(const rocksdb::ColumnFamilyHandle* cf) const {
    return cf == hash_cf_ ? 1 : cf == set_cf_ ? 2 : cf == zset_cf_ ? 3 : 0;
  }
  // The meta records of `keys` in the current database (values[i], statuses[i]: NotFound when
  // absent), with one DbMultiGet of the keys the key filter does not rule out.
  void MultiGetMetas(const std::vector<std::string_view>& keys, rocksdb::PinnableSlice* values,
                     rocksdb::Status* statuses);
  // The key-count change of physical database `db` held by the transaction open on this thread
  // (0 outside one): DBSIZE inside EXEC counts the transaction's own creations and deletions.
  int64_t PendingKeyDelta(int db) const;
  // Group commit's string fast path (storage/write_group.cc): when a write group is open on this
  // thread (plain, indexed, or a transaction), appends `meta` (a string; its value is `value`) as
  // one Put record straight into the group's batch or its overlay, with its counter changes, and
  // returns true; false without a group (the caller writes a Records). REQUIRES: the key's
  // stripe, `old` its state.
  bool WriteStringToThreadGroup(std::string_view key, const MetaLookup& old, Meta* meta,
                                std::string_view value);
  // Writes `batch` now, or appends it to the write group open on this thread (see top).
  Status Write(Records* batch);
  // Writes `batch` now, whatever group is open. REQUIRES: the lifecycle hold.
  Status WriteNow(rocksdb::WriteBatch* batch);
  // Every write of this store's own (all but ApplyReplicated's) reaches RocksDB here: while
  // order_own_writes_ is on, under applied_write_mu_ (OrderOwnWritesWithApplied).
  Status WriteOwn(const rocksdb::WriteOptions& options, rocksdb::WriteBatch* batch);
  Status PutOwn(const rocksdb::WriteOptions& options, rocksdb::ColumnFamilyHandle* cf,
                std::string_view key, std::string_view value);
  // A batch carrying a replication state (ApplyReplicated's, SetReplicationState's): always
  // under applied_write_mu_, so while own writes are ordered it is alone in its WAL record.
  Status WriteReplicationRecord(const rocksdb::WriteOptions& options, rocksdb::WriteBatch* batch);
  // Every range deletion in a data column family goes through here: it adds a point delete of
  // kHintBreakerKey before it (see CollectionPrefix in rocks_options.cc: RocksDB 7.8 would hand a
  // range deletion the insert hint of its collection's point entries, which belongs to another
  // skiplist, and abort).
  static void DeleteDataRange(Records* batch, rocksdb::ColumnFamilyHandle* cf,
                              const std::string& begin, const std::string& end);
  // Every range deletion in a meta column family goes through here: it adds a point delete of
  // kMetaHintBreakerKey before it (see MetaRunPrefix in rocks_options.cc), for the same reason.
  static void DeleteMetaRange(Records* batch, rocksdb::ColumnFamilyHandle* cf,
                              const std::string& begin, const std::string& end);
  // A write group's batch: WriteNow under its own lifecycle hold (Shutdown after Close).
  // REQUIRES: the calling thread holds no lifecycle hold (called between Store methods).
  Status WriteGroupBatch(rocksdb::WriteBatch* batch);
  // A fresh version, larger than every version ever handed out (also across restarts).
  StatusOr<uint64_t> NewVersion();
  // Applies a write of a string value to `key`, whose stripe the caller holds and whose current
  // state is `old`. Handles the key counter. `expire_at_ms` 0 = no TTL.
  Status WriteString(std::string_view key, const MetaLookup& old, std::string_view value,
                     int64_t expire_at_ms);
  // SET of a key whose meta the caller knows present (SetOptions::known_present), without reading
  // it. REQUIRES: the lifecycle hold and the key's stripe.
  StatusOr<SetResult> BlindSet(std::string_view key, std::string_view value, const Expiry& expiry,
                               int64_t old_expire_at_ms);
  // Deletes `key` (stripe held, `old.present`): meta only, O(1) for any type.
  Status DeleteKey(std::string_view key, const MetaLookup& old);
  // Reads the live string at key (stripe held or not): nullopt when absent, WrongType otherwise.
  StatusOr<std::optional<std::string>> ReadString(const rocksdb::ReadOptions& ro,
                                                  std::string_view key, MetaLookup* lookup);
  // Adjusts the key counter of the current database (or physical `db`) after a write, or,
  // inside a write group, at its successful Commit.
  void AddKeyCount(int64_t delta, int db = -1);
  // Per physical database figures.
  struct DbCounters {
    std::atomic<int64_t> keys{0};
    std::atomic<int64_t> expires{0};
    // Sum over keys with a TTL of (expire-at - ttl_base_ms_), modulo 2^64 (exact once summed).
    std::atomic<uint64_t> expire_sum{0};
  };

 public:
  // A pending change of DbCounters (see top).
  struct CounterDelta {
    int db = 0;
    int64_t keys = 0;
    int64_t expires = 0;
    uint64_t expire_sum = 0;
  };

 private:
  void ApplyDeltas(const CounterDelta* deltas, size_t n);
  // Replica (store_replication.cc): marks the records of *records its counts notes cover and
  // appends the notes' changes to *deltas; true when every record is covered.
  bool CountByNotes(ReplicatedBatch::Records* records, std::vector<CounterDelta>* deltas);
  // FLUSHDB / FLUSHALL helpers (store_keyspace.cc).
  Status DeleteAllMetas(int db, Records* batch);
  void ResetCounters(int db);
  static void AddDelta(std::vector<CounterDelta>* deltas, const CounterDelta& d);
  // Notes the TTL change of a meta write (old -> new; new_meta nullptr = deleted).
  void NoteTtlChange(int db, const MetaLookup& old, const Meta* new_meta);

  // ---- collection helpers (store_collections.cc) ----
  // The data column family of a collection type (zset: member -> score; the score index is
  // zscore_cf_).
  rocksdb::ColumnFamilyHandle* DataCf(MetaType type) const;
  // For a write to the collection at `key` (stripe held): WrongType when the key is live with
  // another type. *meta is the live meta, or a fresh empty meta of `type` with version 0 (see
  // EnsureVersion) when the key is absent or expired.
  Status LoadForWrite(std::string_view key, MetaType type, MetaLookup* old, Meta* meta);
  // Gives a fresh meta its version (a collection being created). No-op when it has one.
  Status EnsureVersion(Meta* meta);
  // Ends a collection write: puts `meta` (count > 0) or deletes the key (count == 0) in `batch`,
  // writes the batch and adjusts the key counter.
  Status Commit(Records* batch, std::string_view key, const MetaLookup& old, const Meta& meta);
  // For a read: *found = false when absent or expired; WrongType when another type.
  Status LoadForRead(const rocksdb::ReadOptions& ro, std::string_view key, MetaType type,
                     Meta* meta, bool* found);
  // HLEN, LLEN, SCARD, ZCARD, XLEN: the meta's count of a `type` key, 0 when absent; WrongType
  // when another type.
  StatusOr<int64_t> CollectionCount(std::string_view key, MetaType type);
  // Point read of one data entry; *found = false when absent. `order`: one of a run of reads
  // walking the collection (DbGetInOrder).
  Status GetEntry(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                  std::string_view key, uint64_t version, std::string_view sub_key,
                  std::string* value, bool* found, ReadOrder order = ReadOrder::kAny);
  // The live-range hint of `meta` (for the column family the hint is kept for: hash fields, set
  // members, the zset score index; see encoding.h).
  static EntryBounds HintOf(const Meta& meta) {
    auto view = [](const std::optional<std::string>& s) {
      return s ? std::optional<std::string_view>(*s) : std::nullopt;
    };
    return EntryBounds{meta.lo, view(meta.hi), view(meta.gap), meta.gap_last};
  }
  // Visits the entries of (key, version) in `cf` in byte order of sub-key (or reverse), starting
  // at `from` (inclusive; nullopt = the first, or the last when reverse), until fn returns false.
  // Only sub-keys within `bounds` are visited.
  using EntryFn = std::function<bool(std::string_view sub_key, std::string_view value)>;
  Status ForEachEntry(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                      std::string_view key, uint64_t version, const EntryFn& fn,
                      std::optional<std::string_view> from = std::nullopt, bool reverse = false,
                      const EntryBounds& bounds = EntryBounds());
  // The first entries of collection (key, meta.version) in `cf` from meta's hint on, as sub-keys
  // in key order, kept by the thread's overlay (a transaction or indexed group) for the pops
  // that take from the front (SPOP, ZPOPMIN; storage/store_front.cc): at least `want` (fewer only
  // at the end of the collection), read ahead up to kFrontReadAhead. The caller removes what it
  // pops from the front of the vector, writes, and then calls KeepFront(); the next call for the
  // same collection finds them again when nothing else was written in between, and reads on
  // from where they end. nullptr outside a group (read as usual).
  StatusOr<std::vector<std::string>*> FrontEntries(rocksdb::ColumnFamilyHandle* cf,
                                                   std::string_view key, const Meta& meta,
                                                   uint64_t want);
  // After the pop's own writes: what FrontEntries returned in this command stays true.
  void KeepFront();
  static constexpr uint64_t kFrontReadAhead = 64;
  // After removing the entries `removed` (sub-keys of the hinted column family `cf`, still
  // present: call before the batch is written, key lock held), moves meta's hint past removed
  // entries at the front (`front`) and/or at the back (`back`): one seek each, then a step per
  // removed entry found there. Keeps pops and ZREM/SREM/HDEL of the first/last members from
  // leaving tombstones inside the hinted range.
  Status TightenHint(rocksdb::ColumnFamilyHandle* cf, std::string_view key, Meta* meta,
                     const std::vector<std::string>& removed, bool front, bool back);
  // Random entries of a collection of `size` entries: count > 0: min(count, size) distinct;
  // count < 0: |count| entries, repeats allowed. Approximately uniform. OverLimit past max_bytes
  // (counting each entry's sub-key and value). `cf` is the hinted column family of `meta`.
  Status RandomEntries(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                       std::string_view key, const Meta& meta, int64_t count,
                       std::vector<std::pair<std::string, std::string>>* out,
                       uint64_t max_bytes = kNoByteLimit);
  // One SCAN-family step (see storage/scan_cursor.h for the cursor and its guarantee) over `it`,
  // whose keys are `base` + item: examines about `count` items from `cursor` on, passing each to
  // `visit` (which filters), and sets *next_cursor (0 at the end). `scope` names the iteration
  // ("" for SCAN, a tag + the key for HSCAN/SSCAN/ZSCAN). `it` must not see items of another
  // scope (bounded by its read options).
  using ScanVisit = std::function<void(std::string_view item, std::string_view value)>;
  Status ScanStep(rocksdb::Iterator* it, std::string_view base, std::string_view scope,
                  uint64_t cursor, uint64_t count, const ScanVisit& visit, uint64_t* next_cursor);
  // One HSCAN/SSCAN/ZSCAN step over the entries of `cf` within `bounds`; fn gets the matching
  // entries.
  Status ScanEntries(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                     char scope_tag, std::string_view key, uint64_t version,
                     const EntryBounds& bounds, uint64_t cursor, std::string_view pattern,
                     uint64_t count,
                     const std::function<void(std::string_view, std::string_view)>& fn,
                     uint64_t* next_cursor);
  // Puts a copy of every data entry of the collection (src, src_meta) under (dst, dst_version).
  Status CopyEntries(const rocksdb::ReadOptions& ro, std::string_view src, const Meta& src_meta,
                     std::string_view dst, uint64_t dst_version, Records* batch);
  // Deletes the entries of (key, version) in `cf` with sub-keys in [from, to): point deletes for
  // a few, one range tombstone for many.
  void DeleteEntries(Records* batch, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                     uint64_t version, uint64_t from_index, uint64_t to_index);
  // List internals (store_list.cc).
  StatusOr<int64_t> PushElements(std::string_view key,
                                 const std::vector<std::string_view>& elements, bool left,
                                 bool only_if_exists);
  StatusOr<std::optional<std::vector<std::string>>> PopElements(std::string_view key,
                                                                uint64_t count, bool left);
  // The elements at offsets [begin, end) from the head (OverLimit past max_bytes).
  Status ReadListSpan(const rocksdb::ReadOptions& ro, std::string_view key, const Meta& meta,
                      uint64_t begin, uint64_t end, std::vector<std::string>* out,
                      uint64_t max_bytes = kNoByteLimit);
  // Set internals (store_set.cc).
  enum class SetOp { kInter, kUnion, kDiff };
  // The result of `op` over `keys` read with `ro` (intersection stops at `limit`, 0 = none).
  Status SetAlgebra(const rocksdb::ReadOptions& ro, const std::vector<std::string_view>& keys,
                    SetOp op, uint64_t limit, std::vector<std::string>* out);
  StatusOr<std::vector<std::string>> SetAlgebraRead(const std::vector<std::string_view>& keys,
                                                    SetOp op);
  StatusOr<int64_t> SetAlgebraStore(std::string_view dst, const std::vector<std::string_view>& keys,
                                    SetOp op);
  // Stream internals (store_stream.cc): removes from the front of the stream (key, *meta) what
  // `trim` selects, in `batch`, counting `pending` (an entry just added at the top, not yet
  // written) as the stream's last entry; updates *meta; returns the number removed.
  StatusOr<uint64_t> TrimStream(std::string_view key, Meta* meta, const StreamTrim& trim,
                                std::optional<StreamId> pending, Records* batch);
  // Sorted-set internals (store_zset.cc).
  void PutZMember(Records* batch, std::string_view key, uint64_t version, std::string_view member,
                  double score);
  void DeleteZMember(Records* batch, std::string_view key, uint64_t version,
                     std::string_view member, double score);
  Status GetZScore(const rocksdb::ReadOptions& ro, std::string_view key, uint64_t version,
                   std::string_view member, std::optional<double>* score);
  // Visits the members `spec` selects, in result order (LIMIT applied), until fn returns false.
  using ZMemberFn = std::function<bool(std::string_view member, double score)>;
  Status VisitZRange(const rocksdb::ReadOptions& ro, std::string_view key, const Meta& meta,
                     const ZRangeSpec& spec, const ZMemberFn& fn);
  StatusOr<int64_t> CountZRange(std::string_view key, const ZRangeSpec& spec);
  // Removes the members `spec` selects and returns them.
  StatusOr<std::vector<ScoredMember>> RemoveZRange(std::string_view key, const ZRangeSpec& spec);
  // Replaces `dst` (stripe held, current state `old`) with the set `members` in `batch`, or
  // deletes it when members is empty; commits. Shared by the set *STORE commands.
  Status StoreSet(Records* batch, std::string_view dst, const MetaLookup& old,
                  const std::vector<std::string>& members);

  // Opens the database at db_path_ and sets every member that describes it (handles,
  // counters, filters, versions, the database mapping). OpenRocks and ReplaceDatabase.
  // REQUIRES: db_ == nullptr; no other thread uses the store (or lifecycle_ held exclusive).
  Status OpenDb();
  // Closes db_ without flushing (ReplaceDatabase discards it). REQUIRES: lifecycle_ exclusive.
  void DropDb();
  // Re-reads the logical -> physical mapping from "props" (a replicated SWAPDB).
  Status LoadDbMap();

  Options options_;
  data_dir::DirLock dir_lock_;  // options_.dir's, from open to Close
  std::string db_path_;         // data_dir::DatabasePath(options_.dir)
  std::string open_notes_;      // what data_dir::Prepare did (OpenNotes)
  std::string compression_note_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::vector<rocksdb::ColumnFamilyHandle*> meta_cfs_;  // by physical database
  rocksdb::ColumnFamilyHandle* props_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* hash_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* set_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* list_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* zset_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* zscore_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* stream_cf_ = nullptr;
  std::shared_ptr<CountingCache> block_cache_;
  bool no_wait_reads_ = false;  // SST reads honour NoWaitReads (no_wait_files.h)
  std::shared_ptr<FilterContext> filter_ctx_;
  rocksdb::WriteOptions write_options_;
  std::atomic<bool> order_own_writes_{false};  // OrderOwnWritesWithApplied
  Mutex applied_write_mu_;                     // WriteReplicationRecord's; WriteOwn's while
                                               // order_own_writes_
  // Which keys may have a meta record, by physical database (key_filter.h): ReadMeta,
  // TryGetString, MGet and MSet skip RocksDB for keys it rules out; every meta Put adds its key.
  std::unique_ptr<KeyFilter> key_filter_;
  // Which entries of hashes, sets and sorted sets (their data keys, by EntryFilterTag) may
  // exist, for the collections created since the store opened (version >= first_run_version_):
  // every entry of those was Put by this process, through PutEntry, which adds it. GetEntry
  // skips RocksDB for an entry it rules out (HSET / SADD / ZADD of a new member). Collections
  // from an earlier run are not in it and are always read.
  std::unique_ptr<KeyFilter> entry_filter_;
  uint64_t first_run_version_ = 0;  // next_version_ at open

  SharedMutex lifecycle_;
  bool closed_ GUARDED_BY(lifecycle_) = false;

  std::unique_ptr<DbCounters[]> counters_;      // by physical database
  std::atomic<uint64_t> wal_bytes_{0};          // WalBytesWritten
  int physical_dbs_ = 1;                        // meta column families
  std::unique_ptr<std::atomic<int>[]> db_map_;  // logical -> physical
  Mutex map_mu_;                                // serializes SwapDb
  int64_t ttl_base_ms_ = 0;                     // see DbCounters::expire_sum

  Mutex version_mu_;
  uint64_t next_version_ GUARDED_BY(version_mu_) = 1;
  uint64_t reserved_version_ GUARDED_BY(version_mu_) = 0;  // versions < this are on disk

  ResumeTable cursors_;

  Mutex sweep_mu_;
  int sweep_db_ GUARDED_BY(sweep_mu_) = 0;       // the physical database being swept
  std::string sweep_pos_ GUARDED_BY(sweep_mu_);  // last meta key the sweep examined
  bool sweep_has_pos_ GUARDED_BY(sweep_mu_) = false;
};

inline Status RocksStore::BeginRead(std::string_view key, MetaType type, Hold* hold,
                                    SnapshotRead* snap, Meta* meta, bool* found) {
  if (Status s = Enter(hold); !s.ok()) return s;
  if (snap == nullptr) return LoadForRead(rocksdb::ReadOptions(), key, type, meta, found);
  snap->Take(db_);
  return LoadForRead(snap->options, key, type, meta, found);
}

}  // namespace rockcache::storage
