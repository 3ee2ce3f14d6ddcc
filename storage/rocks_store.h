// storage/rocks_store — the RocksDB implementation of storage::Store (store.h is the contract).
//
// Internal to storage/: includes RocksDB, so only storage/*.cc may include it. The methods are
// split over several .cc files by type (rocks_store.cc: open/close/helpers, store_strings.cc,
// store_keyspace.cc, ...).
//
// Concurrency
// - lifecycle_ (shared_mutex): every public method holds it shared; Close holds it exclusive.
// - Key stripes (kStripes mutexes): a write holds the stripe(s) of its key(s) across its reads and
//   its single WriteBatch. Multi-key writes lock their stripes in ascending index order, without
//   duplicates. FlushAll takes all stripes in order. Reads take no stripe: one meta Get (strings)
//   or one RocksDB snapshot (collections) gives them a consistent view.
// - key_count_: atomic, adjusted after each successful write that creates or removes a meta.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "storage/compaction_filter.h"
#include "storage/encoding.h"
#include "storage/store.h"

namespace rockcache::storage {

// rocksdb::Status -> rockcache::Status.
Status FromRocks(const rocksdb::Status& s);

// Wall clock, Unix ms.
int64_t NowMs();

// The meta of one key as a read found it.
struct MetaLookup {
  bool present = false;  // a meta record exists (perhaps expired)
  bool live = false;     // present and not expired
  Meta meta;             // valid when present
};

inline KeyType ToKeyType(MetaType t) {
  switch (t) {
    case MetaType::kString:
      return KeyType::kString;
    case MetaType::kHash:
      return KeyType::kHash;
    case MetaType::kList:
      return KeyType::kList;
    case MetaType::kSet:
      return KeyType::kSet;
    case MetaType::kZSet:
      return KeyType::kZSet;
  }
  return KeyType::kNone;
}

// Locks a set of key stripes in ascending order; unlocks on destruction.
class StripeGuard {
 public:
  StripeGuard() = default;
  StripeGuard(StripeGuard&&) = default;
  StripeGuard& operator=(StripeGuard&&) = default;
  ~StripeGuard();
  void Add(std::mutex* mu) { locked_.push_back(mu); }

 private:
  std::vector<std::mutex*> locked_;
};

// A RocksDB snapshot for a multi-step read; released on destruction.
class SnapshotRead {
 public:
  explicit SnapshotRead(rocksdb::DB* db) : db_(db), snap_(db->GetSnapshot()) {
    options.snapshot = snap_;
  }
  ~SnapshotRead() { db_->ReleaseSnapshot(snap_); }
  SnapshotRead(const SnapshotRead&) = delete;
  SnapshotRead& operator=(const SnapshotRead&) = delete;
  rocksdb::ReadOptions options;

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snap_;
};

// Opaque SCAN cursors: id -> (scope, last key/member returned). Bounded; the oldest entries are
// forgotten first (a forgotten cursor restarts its scan, as the contract allows). Thread-safe.
class CursorTable {
 public:
  // Records a resume position; returns its cursor id (never 0).
  uint64_t Put(std::string scope, std::string last);
  // The resume position of `cursor` for `scope`; false when unknown or of another scope.
  bool Get(uint64_t cursor, std::string_view scope, std::string* last);
  void Clear();

 private:
  static constexpr size_t kCapacity = 16384;
  struct Entry {
    std::string scope;
    std::string last;
  };
  std::mutex mu_;
  uint64_t next_id_ = 1;  // GUARDED_BY(mu_)
  std::unordered_map<uint64_t, Entry> entries_;  // GUARDED_BY(mu_)
  std::deque<uint64_t> order_;                   // GUARDED_BY(mu_)
};

class RocksStore final : public Store {
 public:
  static StatusOr<std::unique_ptr<Store>> OpenRocks(const Options& options);
  ~RocksStore() override;

  // ---- strings (store_strings.cc) ----
  StatusOr<std::optional<std::string>> Get(std::string_view key) override;
  StatusOr<SetResult> Set(std::string_view key, std::string_view value,
                          const SetOptions& options) override;
  StatusOr<std::vector<std::optional<std::string>>> MGet(
      const std::vector<std::string_view>& keys) override;
  Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& kvs) override;
  StatusOr<bool> MSetNx(
      const std::vector<std::pair<std::string_view, std::string_view>>& kvs) override;
  StatusOr<std::optional<std::string>> GetDel(std::string_view key) override;
  StatusOr<std::optional<std::string>> GetEx(std::string_view key, const Expiry& expiry) override;
  StatusOr<int64_t> Append(std::string_view key, std::string_view value) override;
  StatusOr<int64_t> StrLen(std::string_view key) override;
  StatusOr<int64_t> IncrBy(std::string_view key, int64_t delta) override;
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
  StatusOr<std::vector<std::string>> Keys(std::string_view pattern) override;
  StatusOr<ScanResult> Scan(uint64_t cursor, std::string_view pattern, uint64_t count,
                            std::optional<KeyType> type) override;
  StatusOr<int64_t> DbSize() override;
  Status FlushAll() override;
  StatusOr<int64_t> SweepExpired(uint64_t max_keys) override;

  // ---- admin (rocks_store.cc) ----
  std::string InfoRocksDb() override;
  Status Close() override;

 private:
  RocksStore() = default;

  // Lifecycle: a shared hold on lifecycle_ for the duration of one public method.
  using Hold = std::shared_lock<std::shared_mutex>;
  // Sets *hold and returns OK, or returns Shutdown after Close.
  Status Enter(Hold* hold);

  // Locks.
  static constexpr size_t kStripes = 1024;
  size_t StripeOf(std::string_view key) const;
  StripeGuard LockKey(std::string_view key);
  StripeGuard LockKeys(const std::vector<std::string_view>& keys);
  StripeGuard LockAll();

  // Meta access.
  // Reads the meta of `key`. With !full, a string's value is not copied (out->meta.value empty).
  Status ReadMeta(const rocksdb::ReadOptions& ro, std::string_view key, MetaLookup* out,
                  bool full = true);
  // Reads the meta of a key whose stripe the caller holds (latest state).
  Status ReadMetaLocked(std::string_view key, MetaLookup* out) {
    return ReadMeta(rocksdb::ReadOptions(), key, out);
  }
  void PutMeta(rocksdb::WriteBatch* batch, std::string_view key, const Meta& meta);
  void DeleteMeta(rocksdb::WriteBatch* batch, std::string_view key);
  Status Write(rocksdb::WriteBatch* batch);
  // A fresh version, larger than every version ever handed out (also across restarts).
  StatusOr<uint64_t> NewVersion();
  // Applies a write of a string value to `key`, whose stripe the caller holds and whose current
  // state is `old`. Handles the key counter. `expire_at_ms` 0 = no TTL.
  Status WriteString(std::string_view key, const MetaLookup& old, std::string value,
                     int64_t expire_at_ms);
  // Deletes `key` (stripe held, `old.present`): meta only, O(1) for any type.
  Status DeleteKey(std::string_view key, const MetaLookup& old);
  // Reads the live string at key (stripe held or not): nullopt when absent, WrongType otherwise.
  StatusOr<std::optional<std::string>> ReadString(const rocksdb::ReadOptions& ro,
                                                  std::string_view key, MetaLookup* lookup);
  void AddKeyCount(int64_t delta) { key_count_.fetch_add(delta, std::memory_order_relaxed); }

  Options options_;
  std::string compression_note_;
  rocksdb::DB* db_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* meta_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* props_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* hash_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* set_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* list_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* zset_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* zscore_cf_ = nullptr;
  std::shared_ptr<rocksdb::Cache> block_cache_;
  std::shared_ptr<FilterContext> filter_ctx_;
  rocksdb::WriteOptions write_options_;

  std::shared_mutex lifecycle_;
  bool closed_ = false;  // GUARDED_BY(lifecycle_)

  std::array<std::mutex, kStripes> stripes_;
  std::atomic<int64_t> key_count_{0};

  std::mutex version_mu_;
  uint64_t next_version_ = 1;     // GUARDED_BY(version_mu_)
  uint64_t reserved_version_ = 0; // GUARDED_BY(version_mu_): versions < this are on disk

  CursorTable cursors_;

  std::mutex sweep_mu_;
  std::string sweep_pos_;  // GUARDED_BY(sweep_mu_): last meta key the sweep examined
  bool sweep_has_pos_ = false;
};

}  // namespace rockcache::storage
