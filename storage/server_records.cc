// Server records (store.h, "server records"): named values in the props column family, apart from
// the keyspace, under a prefix of their own so they never meet the store's own properties
// (next-version, db-map).
#include <memory>

#include "storage/encoding.h"
#include "storage/rocks_store.h"
#include "storage/rocks_support.h"

namespace rockcache::storage {
namespace {

std::string RecordKey(std::string_view name) {
  std::string key(kServerRecordPrefix);
  key.append(name);
  return key;
}

}  // namespace

Status RocksStore::PutServerRecord(std::string_view name, std::string_view value) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return PutOwn(wo, props_cf_, RecordKey(name), value);
}

Status RocksStore::DeleteServerRecord(std::string_view name) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::WriteBatch batch;
  if (Status s = FromRocks(batch.Delete(props_cf_, RecordKey(name))); !s.ok()) return s;
  return WriteOwn(wo, &batch);
}

StatusOr<std::vector<std::pair<std::string, std::string>>> RocksStore::ServerRecords(
    std::string_view prefix) {
  const std::string start = RecordKey(prefix);
  std::vector<std::pair<std::string, std::string>> records;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), props_cf_));
  for (it->Seek(start); it->Valid() && it->key().starts_with(start); it->Next()) {
    records.emplace_back(it->key().ToString().substr(kServerRecordPrefix.size()),
                         it->value().ToString());
  }
  if (Status s = FromRocks(it->status()); !s.ok()) return s;
  return records;
}

}  // namespace rockcache::storage
