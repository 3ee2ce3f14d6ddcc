// The RocksDB options of rockcache's database: see rocks_options.h.
#include "storage/rocks_options.h"

#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/table_properties_collectors.h>

#include <algorithm>
#include <cstring>

#include "storage/compaction_filter.h"
#include "storage/encoding.h"
#include "storage/memtable_rep.h"
#include "storage/no_wait_files.h"

namespace rockcache::storage {

// [u32 0][][u64 0]: the prefix of no collection (versions start at 1).
const std::string kHintBreakerKey(12, '\0');

// Written right before a range deletion of metas (DeleteAllMetas); see MetaRunPrefix. Any key
// would do: the range deletion deletes every meta of its database anyway, and a user's write of
// this key only costs the write after it its hint.
const std::string kMetaHintBreakerKey("\0rockcache:meta-hint-breaker", 28);

std::string MetaCfName(int db) {
  return db == 0 ? rocksdb::kDefaultColumnFamilyName : "db" + std::to_string(db);
}

namespace {

// Data keys start [u32 len][key][u64 version] (encoding.h): one collection's entries share
// that prefix. The memtable can keep an insert hint per prefix (rocksdb's
// memtable_insert_with_hint_prefix_extractor), so that a run of inserts into one collection
// near each other (a pipelined fill, a drain's tombstones) skips most of the skiplist search.
// A hint costs ~250 bytes of the memtable's arena per prefix, which would make a memtable of
// many small collections fill (and flush) several times sooner. So a key is in the domain only
// when the previous data insert on this thread had the same prefix: a single write into a
// collection never gets a hint, a run of them does. (Stateful on purpose; RocksDB asks only
// from MemTable::Add, on the writing thread.)
//
// RocksDB 7.8 keeps one hint per prefix for a memtable's point entries and its range deletions
// alike, and a range deletion given a point entry's hint aborts (InlineSkipList::Insert:
// "recompute_height <= max_height"). So every range deletion in a data column family is written
// right after a point delete of kHintBreakerKey (RocksStore::DeleteDataRange, rocks_store.cc),
// whose prefix (an empty key at version 0, which no collection has) is never a collection's: the
// range deletion is then never a repeat, never in the domain.
class CollectionPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "rockcache.CollectionPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), PrefixSize(key));
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    if (key.size() < 4 || key.size() < PrefixSize(key)) return false;
    thread_local std::string last;
    const std::string_view prefix(key.data(), PrefixSize(key));
    if (prefix == last) return true;
    last.assign(prefix);
    return false;
  }

 private:
  static size_t PrefixSize(const rocksdb::Slice& key) {
    return 4 + static_cast<size_t>(GetFixed32BE(key.data())) + 8;
  }
};

// The meta column families' insert hint: one for the whole memtable (every key has the empty
// prefix). A write group's metas go to RocksDB in key order (batch_records::SortedByKey), so each
// insert starts from the one before it: a pipelined SET of spread keys makes about a quarter
// fewer key comparisons in the skiplist. A range deletion must not be given a point entry's
// hint (above), so the entry after kMetaHintBreakerKey is outside the domain. (Stateful like
// CollectionPrefix.)
class MetaRunPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "rockcache.MetaRunPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), 0);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    thread_local bool after_breaker = false;
    if (after_breaker) {
      after_breaker = false;
      return false;
    }
    if (key.size() == kMetaHintBreakerKey.size() &&
        memcmp(key.data(), kMetaHintBreakerKey.data(), key.size()) == 0) {
      after_breaker = true;
      return false;
    }
    return true;
  }
};

struct CompressionName {
  const char* name;
  rocksdb::CompressionType type;
};
constexpr CompressionName kCompressions[] = {
    {"none", rocksdb::kNoCompression},
    {"snappy", rocksdb::kSnappyCompression},
    {"lz4", rocksdb::kLZ4Compression},
    {"zstd", rocksdb::kZSTD},
};

}  // namespace

StatusOr<RocksOpenOptions> MakeRocksOpenOptions(const Options& options,
                                                std::shared_ptr<FilterContext> filter_ctx) {
  RocksOpenOptions out;
  rocksdb::CompressionType compression = rocksdb::kNoCompression;
  bool known = false;
  for (const auto& c : kCompressions) {
    if (options.compression == c.name) {
      known = true;
      compression = c.type;
    }
  }
  if (!known) {
    return Status::InvalidArgument("unknown compression '" + options.compression +
                                   "' (none, snappy, lz4, zstd)");
  }
  out.compression_note = options.compression;
  if (compression != rocksdb::kNoCompression) {
    auto supported = rocksdb::GetSupportedCompressions();
    if (std::find(supported.begin(), supported.end(), compression) == supported.end()) {
      out.compression_note = "none (" + options.compression + " not built into RocksDB)";
      compression = rocksdb::kNoCompression;
    }
  }

  out.block_cache =
      std::make_shared<CountingCache>(rocksdb::NewLRUCache(options.block_cache_bytes));
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = out.block_cache;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10, false));
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  // Partitioned index and filters (rocksdb-partitioned-index): a file's index and bloom filter
  // are cut into 4 KB partitions under a small top-level index (in the block cache at high
  // priority, pinned), so a point read of a cold key loads one filter partition and one index
  // partition. Whole, they are ~1-2% of the file (a 64 MB file of 100-byte records: an ~800 KB
  // filter block): once the data outgrows what the block cache holds of them, every read of a
  // cold key loads and checksums whole filter and index blocks again (README, "Data larger than
  // memory"). While they all fit, the extra level costs each file a read probes. Files keep the
  // layout they were written with; both read back.
  // With rocksdb-pin-metadata every file's index and filter stay in memory either way, so
  // partitions would only add a level to each probe; and under rocksdb-mmap-reads RocksDB caches
  // no block it reads uncompressed from the mapping, and pins a partition only once cached: filter
  // partitions (never compressed) would be read, checksummed and parsed again by every point read
  // of a file that has them (all but the last level's). Whole, a pinned index or filter is held by
  // its file's reader wherever its bytes are.
  if (options.partitioned_index && !options.pin_metadata) {
    table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.partition_filters = true;
  }
  // rocksdb-pin-metadata: every file's index and filter (whole, above) are loaded when the file is
  // opened and held by its reader (charged to the block cache, or, read uncompressed from the
  // mapping, file pages of it), so a point read finds
  // them without a block cache lookup (a hash, a shard mutex and a reference count each) and
  // never reads them from the file again. The price is their memory, about 1% of the data
  // (bloom filters 1.25 bytes a key, an index entry per data block), whatever the block cache's
  // size.
  if (options.pin_metadata) {
    table.metadata_cache_options.top_level_index_pinning = rocksdb::PinningTier::kAll;
    table.metadata_cache_options.partition_pinning = rocksdb::PinningTier::kAll;
    table.metadata_cache_options.unpartitioned_pinning = rocksdb::PinningTier::kAll;
  }
  // A hash index inside each data block: a point read finds its key in the block with one probe
  // instead of a binary search over the block's restart points (RocksDB's "data block hash
  // index"; a few bytes per key of the block).
  table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  table.data_block_hash_table_util_ratio = 0.75;

  // Every column family uses the default (bytewise) comparator: rockcache's own skip list
  // (storage/memtable_rep.h) may serve their memtables.
  // The data families' keys share their collection's prefix (DataKey): their searches skip it.
  std::shared_ptr<rocksdb::MemTableRepFactory> memtable_factory;
  std::shared_ptr<rocksdb::MemTableRepFactory> data_memtable_factory;
  if (options.memtable == "rockcache") {
    memtable_factory =
        NewSkipListMemTableFactory(/*bytewise_keys=*/true, options.memtable_huge_pages);
    data_memtable_factory = NewSkipListMemTableFactory(
        /*bytewise_keys=*/true, options.memtable_huge_pages, /*prefix_skip=*/true);
  } else if (options.memtable != "rocksdb") {
    return Status::InvalidArgument("unknown memtable '" + options.memtable +
                                   "' (rockcache, rocksdb)");
  }
  auto collection_prefix = std::make_shared<CollectionPrefix>();
  // `point_reads`: the column family is read by key (Get/MultiGet), not only iterated.
  auto cf_options = [&](std::shared_ptr<rocksdb::CompactionFilterFactory> filter,
                        bool point_reads = true) {
    rocksdb::ColumnFamilyOptions cf;
    if (memtable_factory != nullptr) cf.memtable_factory = memtable_factory;
    cf.write_buffer_size = options.write_buffer_bytes;
    cf.compression = compression;
    if (!options.compress_level0 && compression != rocksdb::kNoCompression) {
      // Level 0 (what a memtable flush writes) uncompressed: the flush runs on every write's
      // CPU budget for files the first compaction rewrites anyway. With
      // level_compaction_dynamic_level_bytes the entries after the first apply from the base
      // level down.
      cf.compression_per_level.assign(cf.num_levels, compression);
      cf.compression_per_level[0] = rocksdb::kNoCompression;
    }
    cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    cf.compaction_filter_factory = std::move(filter);
    cf.level_compaction_dynamic_level_bytes = true;
    // A whole-key bloom filter in each memtable (2% of its size): the meta read before a write of
    // a new key, a miss and an HSET/SADD/ZADD of a new member then skip the skiplist search
    // (~40 key comparisons, most of a write's cost) when the key is not in it.
    // Only where something reads by key: every insert sets a bit at a random place of the
    // filter (a cache miss per insert with spread keys), which an iterated-only family (the
    // score index of sorted sets) never gets back.
    if (point_reads) {
      cf.memtable_prefix_bloom_size_ratio = 0.02;
      cf.memtable_whole_key_filtering = true;
    }
    // Files dense with tombstones (a drained queue, a deleted range of keys) are compacted soon
    // after they are written, so iterations stop walking them: any 16384 consecutive entries
    // with 8192 deletions, or a file that is half deletions, marks the file for compaction.
    cf.table_properties_collector_factories.push_back(
        rocksdb::NewCompactOnDeletionCollectorFactory(16384, 8192, 0.5));
    return cf;
  };
  auto meta_run_prefix = std::make_shared<MetaRunPrefix>();
  auto meta_options = [&]() {
    rocksdb::ColumnFamilyOptions cf = cf_options(std::make_shared<MetaFilterFactory>());
    // rocksdb-meta-block-size: a GET of a key the block cache does not hold reads one data
    // block from its file, checksums it and inserts it in the block cache; all three scale with
    // the block, while the index grows as the blocks shrink (pinned, rocksdb-pin-metadata).
    rocksdb::BlockBasedTableOptions meta_table = table;
    meta_table.block_size = options.meta_block_bytes;
    cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(meta_table));
    // No bloom filter in the last level's files (~90% of the filter memory): a read of a key that
    // exists finds it there anyway, so that filter only ever answered "maybe"; reads of keys
    // never written stop at the key filter (key_filter.h) before RocksDB.
    cf.optimize_filters_for_hits = true;
    cf.memtable_insert_with_hint_prefix_extractor = meta_run_prefix;
    return cf;
  };
  auto data = [&](MetaType t, bool point_reads = true) {
    rocksdb::ColumnFamilyOptions cf =
        cf_options(std::make_shared<DataFilterFactory>(filter_ctx, t), point_reads);
    cf.memtable_insert_with_hint_prefix_extractor = collection_prefix;
    if (data_memtable_factory != nullptr) cf.memtable_factory = data_memtable_factory;
    return cf;
  };
  out.meta = meta_options();
  out.column_families = {
      {rocksdb::kDefaultColumnFamilyName, out.meta},
      {"props", cf_options(nullptr)},
      {"hash", data(MetaType::kHash)},
      {"set", data(MetaType::kSet)},
      {"list", data(MetaType::kList)},
      {"zset", data(MetaType::kZSet)},
      {"zscore", data(MetaType::kZSet, /*point_reads=*/false)},  // iterated only (Walk)
      {"stream", data(MetaType::kStream)},
  };

  out.db.create_if_missing = true;
  out.db.create_missing_column_families = true;
  out.db.max_background_jobs = std::max(1, options.max_background_jobs);
  out.db.keep_log_file_num = 10;
  // rocksdb-mmap-reads: SST files are read through a memory mapping, not pread: a block read is
  // a page-cache hit without a system call or a copy into a read buffer.
  out.db.allow_mmap_reads = options.mmap_reads;
  if (options.mmap_reads) out.db.env = NoWaitEnv();  // no_wait_files.h
  // One memtable writer at a time (the write group's leader inserts every batch of the group):
  // what rockcache's skip list supports.
  out.db.allow_concurrent_memtable_write = memtable_factory == nullptr;
  return out;
}

}  // namespace rockcache::storage
