#include "storage/compaction_filter.h"

#include <chrono>
#include <string>
#include <vector>

namespace rockcache::storage {
namespace {

int64_t WallNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class MetaFilter : public rocksdb::CompactionFilter {
 public:
  bool Filter(int /*level*/, const rocksdb::Slice& /*key*/, const rocksdb::Slice& value,
              std::string* /*new_value*/, bool* /*value_changed*/) const override {
    Meta meta;
    if (!DecodeMetaHeader(std::string_view(value.data(), value.size()), &meta)) return false;
    return meta.ExpiredAt(now_ms_);
  }
  const char* Name() const override { return "rockcache.MetaFilter"; }

 private:
  int64_t now_ms_ = WallNowMs();  // one clock read per compaction is precise enough
};

class DataFilter : public rocksdb::CompactionFilter {
 public:
  DataFilter(std::shared_ptr<FilterContext> ctx, MetaType type)
      : ctx_(std::move(ctx)), type_(type) {}

  bool Filter(int /*level*/, const rocksdb::Slice& key, const rocksdb::Slice& /*value*/,
              std::string* /*new_value*/, bool* /*value_changed*/) const override {
    std::string_view user_key, sub_key;
    uint64_t version = 0;
    if (!ParseDataKey(std::string_view(key.data(), key.size()), &user_key, &version, &sub_key)) {
      return false;  // not ours to judge
    }
    // Entries of one key are adjacent: look its meta up once per key.
    if (!cached_ || user_key != cached_key_) {
      if (!LookUp(user_key)) return false;
    }
    for (const Live& live : live_versions_) {
      if (live.version != version) continue;
      // A list's pops do not delete their elements (RocksStore::PopElements): the indexes
      // outside its live range [head, tail) go here.
      if (type_ == MetaType::kList && sub_key.size() == 8) {
        const uint64_t index = GetFixed64BE(sub_key.data());
        return (index < live.head || index >= live.tail) && !needed_by_snapshot_;
      }
      return false;
    }
    return !needed_by_snapshot_;
  }
  const char* Name() const override { return "rockcache.DataFilter"; }

 private:
  // Whether a snapshot older than the metas just read is open (a sliced read,
  // store_range_read.cc, or a SnapshotRead). RocksDB's compaction filters ignore snapshots, so
  // an entry that the metas show dead (a deleted or replaced version, a popped list element) may
  // still be what such a snapshot reads; it waits for a later compaction. `latest` is the
  // database's last sequence number, taken after the metas were read: a snapshot at or after it
  // sees the write that made the entry dead, and does not read the entry.
  bool SnapshotBefore(rocksdb::DB* db, uint64_t latest) const {
    uint64_t n = 0, oldest = 0;
    if (!db->GetIntProperty(rocksdb::DB::Properties::kNumSnapshots, &n)) return true;
    if (n == 0) return false;
    if (!db->GetIntProperty(rocksdb::DB::Properties::kOldestSnapshotSequence, &oldest)) {
      return true;
    }
    return oldest < latest;
  }

  // Fills the cache for user_key; false when the meta could not be read (keep the entry).
  bool LookUp(std::string_view user_key) const {
    rocksdb::DB* db = ctx_->db.load(std::memory_order_acquire);
    if (db == nullptr) return false;
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    cached_key_.assign(user_key.data(), user_key.size());
    cached_ = true;
    live_versions_.clear();
    std::string value;
    for (rocksdb::ColumnFamilyHandle* cf : ctx_->meta_cfs) {
      rocksdb::Status s = db->Get(ro, cf, rocksdb::Slice(user_key.data(), user_key.size()), &value);
      if (s.IsNotFound()) continue;
      Meta meta;
      const bool list = type_ == MetaType::kList;
      if (!s.ok() || !(list ? DecodeMeta(value, &meta) : DecodeMetaHeader(value, &meta))) {
        cached_ = false;
        return false;
      }
      if (meta.type == type_ && !meta.ExpiredAt(now_ms_)) {
        live_versions_.push_back(Live{meta.version, meta.head, meta.tail});
      }
    }
    // Once per key, after its metas: a snapshot taken later sees what they show.
    needed_by_snapshot_ = SnapshotBefore(db, db->GetLatestSequenceNumber());
    return true;
  }

  std::shared_ptr<FilterContext> ctx_;
  MetaType type_;
  int64_t now_ms_ = WallNowMs();
  mutable bool cached_ = false;
  mutable std::string cached_key_;
  struct Live {
    uint64_t version;
    uint64_t head, tail;  // a list's live range (other types: unused)
  };
  mutable std::vector<Live> live_versions_;  // of cached_key_, one per database holding it
  mutable bool needed_by_snapshot_ = false;  // cached_key_'s dead entries are kept (see above)
};

}  // namespace

std::unique_ptr<rocksdb::CompactionFilter> MetaFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  return std::make_unique<MetaFilter>();
}

std::unique_ptr<rocksdb::CompactionFilter> DataFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  return std::make_unique<DataFilter>(ctx_, type_);
}

}  // namespace rockcache::storage
