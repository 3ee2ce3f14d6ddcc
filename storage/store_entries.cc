// RocksStore: point reads and writes of one entry of a collection (a hash field, a set member, a
// sorted set member, a list index), through the entry filter (rocks_store.h: entry_filter_):
// every hash, set and zset entry Put goes through PutEntry, which adds it; GetEntry skips
// RocksDB for an entry of a collection made in this run that the filter rules out.
#include "storage/rocks_store.h"

namespace rockcache::storage {

Status RocksStore::GetEntry(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                            std::string_view key, uint64_t version, std::string_view sub_key,
                            std::string* value, bool* found, ReadOrder order) {
  const DataKeyBytes data_key(key, version, sub_key);
  const rocksdb::Slice data_key_slice(data_key.data(), data_key.size());
  // An entry of a collection created in this run that the entry filter rules out was never Put.
  if (version >= first_run_version_ && ro.snapshot == nullptr) {
    const uint32_t tag = EntryFilterTag(cf);
    if (tag != 0 && !entry_filter_->MayContain(tag, {data_key.data(), data_key.size()})) {
      *found = false;
      return Status::OK();
    }
  }
  rocksdb::Status s =
      order != ReadOrder::kAny
          ? DbGetInOrder(ro, cf, data_key_slice, data_key.size() - sub_key.size(), order, value)
          : DbGet(ro, cf, data_key_slice, value);
  *found = s.ok();
  if (s.IsNotFound()) return Status::OK();
  return FromRocks(s);
}

void RocksStore::PutEntry(Records* batch, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                          uint64_t version, std::string_view sub_key, std::string_view value) {
  if (const uint32_t tag = EntryFilterTag(cf); tag != 0) {
    const DataKeyBytes data_key(key, version, sub_key);
    entry_filter_->Add(tag, {data_key.data(), data_key.size()});
  }
  batch->PutEntry(cf, key, version, sub_key, value);
}

}  // namespace rockcache::storage
