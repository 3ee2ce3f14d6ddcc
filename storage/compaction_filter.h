// storage/compaction_filter — drops what no read can see any more, during RocksDB compactions.
//
// - Meta column family: a meta record whose expire-at has passed is dropped. Safe because every
//   read treats an expired key as absent, and no write revives one (a write to an expired key
//   starts a new version). Note: DbSize's counter is not told (a compaction cannot tell whether it
//   saw the newest copy of a key), so DBSIZE may over-count keys dropped here before
//   SweepExpired reached them; the counter is exact again after a restart.
// - Data column families: an entry whose user key has no meta, a meta of another type, a meta with
//   another version, or an expired meta is dropped. Versions only grow, so once an entry's version
//   is not its key's live version it never will be again. The meta is read through the DB pointer
//   published in FilterContext after Open; while it is null (during Open and Close) every entry is
//   kept.
// - List elements of the live version whose index is outside the meta's [head, tail) are dropped
//   too: LPOP/RPOP move head or tail without deleting the elements they pop. Safe because every
//   list read is bounded to [head, tail), and an index outside it is written again (a push)
//   before it is live again; an entry in a compaction's input was written before the meta the
//   filter reads, so a later push's element is never in it.
// - Snapshots: RocksDB calls compaction filters whatever snapshots are open, so a dead entry
//   (either rule above) may still be what an open snapshot reads (a sliced HGETALL of a key
//   deleted since, a sliced LRANGE of a list popped since). When the oldest open snapshot is
//   older than the database's last sequence number read right after the metas, the key's dead
//   entries are kept for a later compaction; a snapshot taken after that sees the write that
//   made them dead.
//
// Threads: RocksDB's compaction threads. Each (sub)compaction gets its own filter object.
// Only storage/*.cc includes this header (it includes RocksDB).
#pragma once

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>

#include <atomic>
#include <memory>
#include <vector>

#include "storage/encoding.h"

namespace rockcache::storage {

// What filters need from the open database. The store fills meta_cfs (every physical
// database's meta column family, store.h "Databases") and then publishes db after Open; it
// clears db at the start of Close, before it waits for background work to stop (and only then
// destroys the handles). A data entry is live when the meta of its key *in any database* has its
// version: versions are unique store-wide, and MOVE keeps a collection's version.
struct FilterContext {
  std::atomic<rocksdb::DB*> db{nullptr};
  std::vector<rocksdb::ColumnFamilyHandle*> meta_cfs;  // written before db is published
};

class MetaFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return "rockcache.MetaFilterFactory"; }
};

class DataFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  DataFilterFactory(std::shared_ptr<FilterContext> ctx, MetaType type)
      : ctx_(std::move(ctx)), type_(type) {}
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return "rockcache.DataFilterFactory"; }

 private:
  std::shared_ptr<FilterContext> ctx_;
  MetaType type_;
};

}  // namespace rockcache::storage
