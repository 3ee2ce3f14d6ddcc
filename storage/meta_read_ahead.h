// storage::MetaReadAhead — the meta records of a set of keys, read together ahead of the point
// reads that will ask for them (RocksStore::BeginReadAhead, store.h). Internal to storage/.
//
// A group of misses (the commands of a group-commit segment that the network thread could not
// answer) each reads its key's meta with its own Get: each pays RocksDB's lookup setup, the
// memtable searches, and every level's filter, index and data block lookups alone. Read ahead,
// the same keys go through one MultiGet per database, which sorts them and shares that work
// (one super-version reference, batched filter probes, one index walk and one block read per
// file region for neighbouring keys). The point reads then find their record here.
//
// Thread: one per thread (RocksStore keeps it thread_local); never shared. The records are
// PinnableSlices, so a record in the block cache is pinned, not copied, until Clear().
#pragma once

#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace rockcache::storage {

class MetaReadAhead {
 public:
  // Sizes the table for `n` keys and forgets what it held. Then Add each key and fill
  // record(i) / status(i) for i in [0, n).
  void Reset(size_t n);
  // Adds key `key` of physical database `db` as entry size()-1; a key given twice keeps its
  // first entry (the second is not indexed). The view must outlive the read-ahead.
  void Add(int db, std::string_view key);
  size_t size() const { return keys_.size(); }
  std::string_view key(size_t i) const { return keys_[i].key; }
  int db(size_t i) const { return keys_[i].db; }
  rocksdb::PinnableSlice* records() { return records_.data(); }
  rocksdb::Status* statuses() { return statuses_.data(); }

  // Whether the read-ahead holds anything (one branch on the read path when it does not).
  bool active() const { return !keys_.empty(); }
  // The entry of (db, key), or -1. Its record/status say what the MultiGet found.
  int Find(int db, std::string_view key) const;
  const rocksdb::PinnableSlice& record(size_t i) const { return records_[i]; }
  const rocksdb::Status& status(size_t i) const { return statuses_[i]; }
  // Makes Find miss (db, key) from now on: the store writes its meta (a write the caller did not
  // foresee, such as a blocked client served after a push, must not leave an outdated record).
  void Forget(int db, std::string_view key);
  // Forgets every entry and unpins the records. Keeps the vectors' capacity for the next group.
  void Clear();

 private:
  struct Key {
    int db;
    uint32_t hash;
    bool forgotten;
    std::string_view key;
  };
  static uint32_t Hash(int db, std::string_view key);

  std::vector<Key> keys_;
  std::vector<rocksdb::PinnableSlice> records_;
  std::vector<rocksdb::Status> statuses_;
  // Open addressing over keys_: slot -> entry index + 1 (0 = empty); a power-of-two size of at
  // least twice the keys, so a probe sequence is short.
  std::vector<uint16_t> slots_;
  uint32_t mask_ = 0;
};

}  // namespace rockcache::storage
