// storage/rocks_options — the RocksDB options rockcache's database opens with (internal to
// storage/: includes RocksDB).
//
// MakeRocksOpenOptions turns the store's Options into RocksDB's: the DB options and each column
// family's memtable (rockcache's skip list, memtable_rep.h, its bloom filter and insert hints),
// table format (block cache, bloom filters, partitioned index), compression and compaction filter
// (compaction_filter.h). Why each value is what it is sits beside it in rocks_options.cc. Also
// here: the insert-hint breaker keys that the write path writes before a range deletion
// (RocksStore::DeleteDataRange / DeleteMetaRange), because the hints are these options' doing.
//
// Pure: builds option structs and opens nothing; any thread.
#pragma once

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/counting_cache.h"
#include "storage/store.h"

namespace rockcache::storage {

struct FilterContext;

// A point delete of kHintBreakerKey goes right before every range deletion in a data column
// family, and one of kMetaHintBreakerKey before every range deletion of metas: RocksDB 7.8 aborts
// when a range deletion is handed a point entry's insert hint (rocks_options.cc,
// CollectionPrefix and MetaRunPrefix).
extern const std::string kHintBreakerKey;
extern const std::string kMetaHintBreakerKey;

// The meta column family of physical database `db` ("default" for 0, "db<N>" otherwise).
std::string MetaCfName(int db);

struct RocksOpenOptions {
  rocksdb::DBOptions db;
  // The column families every database has, in the order of RocksDB's handles: the meta of
  // physical database 0 ("default"), "props", "hash", "set", "list", "zset", "zscore", "stream".
  // The metas of databases 1.. follow them, each {MetaCfName(db), meta}.
  std::vector<rocksdb::ColumnFamilyDescriptor> column_families;
  rocksdb::ColumnFamilyOptions meta;           // a meta column family's options
  std::shared_ptr<CountingCache> block_cache;  // shared by every column family
  std::string compression_note;  // the compression in use, for INFO ("none (zstd not built...)")
};

// InvalidArgument for an unknown compression or memtable. `filter_ctx` is handed to the data
// column families' compaction filters.
StatusOr<RocksOpenOptions> MakeRocksOpenOptions(const Options& options,
                                                std::shared_ptr<FilterContext> filter_ctx);

}  // namespace rockcache::storage
