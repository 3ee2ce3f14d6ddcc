// storage/rocks_support — small helpers of RocksStore's implementation files (internal to
// storage/; includes RocksDB): status conversion, the clock, a key's meta as a read found it, a
// snapshot held for a multi-step read, and the sub-key bounds of an iteration.
#pragma once

#include <rocksdb/db.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/status.h"
#include "storage/encoding.h"
#include "storage/store_types.h"

namespace rockcache::storage {

// rocksdb::Status -> rockcache::Status.
Status FromRocks(const rocksdb::Status& s);

// Wall clock, Unix ms.
int64_t NowMs();

// The literal bytes a glob pattern starts with (every key it matches starts with them).
std::string GlobLiteralPrefix(std::string_view pattern);

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
    case MetaType::kStream:
      return KeyType::kStream;
  }
  return KeyType::kNone;
}

// A RocksDB snapshot for a multi-step read; released on destruction. Taken at construction, or,
// default-constructed, by Take (RocksStore::BeginRead takes it once the lifecycle hold is set);
// until then `options` reads the latest state.
class SnapshotRead {
 public:
  SnapshotRead() = default;
  explicit SnapshotRead(rocksdb::DB* db) { Take(db); }
  ~SnapshotRead() {
    if (snap_ != nullptr) db_->ReleaseSnapshot(snap_);
  }
  SnapshotRead(const SnapshotRead&) = delete;
  SnapshotRead& operator=(const SnapshotRead&) = delete;
  // Takes the snapshot. REQUIRES: none taken yet.
  void Take(rocksdb::DB* db) {
    db_ = db;
    snap_ = db->GetSnapshot();
    options.snapshot = snap_;
  }
  rocksdb::ReadOptions options;

 private:
  rocksdb::DB* db_ = nullptr;
  const rocksdb::Snapshot* snap_ = nullptr;
};

// How a point read relates to the reads before it (DbView::DbGetInOrder): one of a run
// walking a collection forward (LPOP), backward (RPOP), or neither.
enum class ReadOrder { kAny, kForward, kBackward };

// Sub-key bounds of an iteration: [lo, hi) (no hi = to the end of the collection). Iterators
// are always bounded by them, so tombstones outside are never walked.
struct EntryBounds {
  std::string_view lo;
  std::optional<std::string_view> hi;
  // A dead stretch (gap_last, gap): forward walks jump it instead of stepping over its tombstones.
  std::optional<std::string_view> gap;
  std::string_view gap_last;
};

}  // namespace rockcache::storage
