// RocksStore::CreateCheckpoint (store.h): rocksdb::Checkpoint over the open database.
#include <rocksdb/utilities/checkpoint.h>

#include <filesystem>
#include <memory>

#include "storage/rocks_store.h"
#include "storage/rocks_support.h"

namespace rockcache::storage {

Status RocksStore::CreateCheckpoint(const std::string& path, uint64_t* sequence) {
  Hold hold;  // the database stays open (a replica's ReplaceDatabase waits)
  if (Status s = Enter(&hold); !s.ok()) return s;
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(db_, &raw);
  if (!s.ok()) return FromRocks(s);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // RocksDB builds the checkpoint in `path`.tmp and renames it to `path` at the end (refusing
  // an existing `path`); a failure may leave the temporary directory behind.
  s = checkpoint->CreateCheckpoint(path, kCheckpointFlushWalBytes, sequence);
  if (!s.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(path + ".tmp", ec);
    return FromRocks(s);
  }
  return Status::OK();
}

}  // namespace rockcache::storage
