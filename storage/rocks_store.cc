// RocksStore: open, close, the lifecycle, meta helpers, INFO. See rocks_store.h (write groups and
// the write path: write_group.cc).
#include "storage/rocks_store.h"

#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/table_properties_collectors.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>

#include "storage/memtable_rep.h"
#include "storage/perf_counters.h"
#include "storage/write_group.h"

namespace rockcache::storage {

namespace {

// Data keys start [u32 len][key][u64 version] (encoding.h): one collection's entries share
// that prefix. The memtable can keep an insert hint per prefix (rocksdb's
// memtable_insert_with_hint_prefix_extractor), so that a run of inserts into one collection
// near each other (a pipelined fill, a drain's tombstones) skips most of the skiplist search:
// ZPOPMIN 81k -> 62k instructions, LPOP 50k -> 42k (callgrind, pipelined drain of one key).
// A hint costs ~250 bytes of the memtable's arena per prefix, which would make a memtable of
// many small collections fill (and flush) several times sooner. So a key is in the domain only
// when the previous data insert on this thread had the same prefix: a single write into a
// collection never gets a hint, a run of them does. (Stateful on purpose; RocksDB asks only
// from MemTable::Add, on the writing thread.)
//
// RocksDB 7.8 keeps one hint per prefix for a memtable's point entries and its range deletions
// alike, and a range deletion given a point entry's hint aborts (InlineSkipList::Insert:
// "recompute_height <= max_height"). So every range deletion in a data column family is written
// right after a point delete of kHintBreakerKey (RocksStore::DeleteDataRange), whose prefix
// (an empty key at version 0, which no collection has) is never a collection's: the range
// deletion is then never a repeat, never in the domain.
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
// [u32 0][][u64 0]: the prefix of no collection (versions start at 1).
const std::string kHintBreakerKey(12, '\0');

// Written right before a range deletion of metas (DeleteAllMetas); see MetaRunPrefix. Any key
// would do: the range deletion deletes every meta of its database anyway, and a user's write of
// this key only costs the write after it its hint.
const std::string kMetaHintBreakerKey("\0rockcache:meta-hint-breaker", 28);

// The meta column families' insert hint: one for the whole memtable (every key has the empty
// prefix). A write group's metas go to RocksDB in key order (batch_records::SortedByKey), so each
// insert starts from the one before it: a pipelined SET of spread keys makes 96 key comparisons
// in the skiplist instead of 127 (callgrind, redis-benchmark -t set -r 1000000 -P 16). A range
// deletion must not be given a point entry's hint (above), so the entry after
// kMetaHintBreakerKey is outside the domain. (Stateful like CollectionPrefix.)
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

}  // namespace

void RocksStore::DeleteDataRange(Records* batch, rocksdb::ColumnFamilyHandle* cf,
                                 const std::string& begin, const std::string& end) {
  batch->Delete(cf, kHintBreakerKey);
  batch->DeleteRange(cf, begin, end);
}

void RocksStore::DeleteMetaRange(Records* batch, rocksdb::ColumnFamilyHandle* cf,
                                 const std::string& begin, const std::string& end) {
  batch->Delete(cf, kMetaHintBreakerKey);
  batch->DeleteRange(cf, begin, end);
}

namespace {

const char kPropsNextVersion[] = "next-version";

// The meta column family of physical database `db`.
std::string MetaCfName(int db) {
  return db == 0 ? rocksdb::kDefaultColumnFamilyName : "db" + std::to_string(db);
}
// Versions reserved per synced write to "props": one fsync per 65536 new keys/collections.
constexpr uint64_t kVersionChunk = 1ull << 16;

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

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound(s.ToString());
  if (s.IsCorruption()) return Status::Corruption(s.ToString());
  if (s.IsInvalidArgument()) return Status::InvalidArgument(s.ToString());
  if (s.IsBusy() || s.IsTryAgain()) return Status::Busy(s.ToString());
  if (s.IsShutdownInProgress()) return Status::Shutdown(s.ToString());
  return Status::IOError(s.ToString());
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kNone:
      return "none";
    case KeyType::kString:
      return "string";
    case KeyType::kHash:
      return "hash";
    case KeyType::kList:
      return "list";
    case KeyType::kSet:
      return "set";
    case KeyType::kZSet:
      return "zset";
    case KeyType::kStream:
      return "stream";
  }
  return "none";
}

std::optional<KeyType> ParseKeyTypeName(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (KeyType t : {KeyType::kString, KeyType::kHash, KeyType::kList, KeyType::kSet, KeyType::kZSet,
                    KeyType::kStream}) {
    if (lower == KeyTypeName(t)) return t;
  }
  return std::nullopt;
}

StatusOr<std::unique_ptr<Store>> Store::Open(const Options& options) {
  return RocksStore::OpenRocks(options);
}

// ---- Open / Close ----

StatusOr<std::unique_ptr<Store>> RocksStore::OpenRocks(const Options& options) {
  std::unique_ptr<RocksStore> store(new RocksStore());
  store->options_ = options;
  store->filter_ctx_ = std::make_shared<FilterContext>();

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
  store->compression_note_ = options.compression;
  if (compression != rocksdb::kNoCompression) {
    auto supported = rocksdb::GetSupportedCompressions();
    if (std::find(supported.begin(), supported.end(), compression) == supported.end()) {
      store->compression_note_ = "none (" + options.compression + " not built into RocksDB)";
      compression = rocksdb::kNoCompression;
    }
  }

  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) return Status::IOError("cannot create " + options.dir + ": " + ec.message());

  store->block_cache_ = rocksdb::NewLRUCache(options.block_cache_bytes);
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = store->block_cache_;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10, false));
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  // Partitioned index and filters (rocksdb-partitioned-index): a file's index and bloom filter
  // are cut into 4 KB partitions under a small top-level index (in the block cache at high
  // priority, pinned), so a point read of a cold key loads one filter partition and one index
  // partition. Whole, they are ~1-2% of the file (a 64 MB file of 100-byte records: an ~800 KB
  // filter block): once the data outgrows what the block cache holds of them, every read of a
  // cold key loads and checksums whole filter and index blocks again (~110 us of CPU per GET
  // miss with 1M keys and an 8 MB block cache, against ~12 us partitioned). While they all fit,
  // the extra level costs each file a read probes (callgrind, GET -r 1000000 -P 16 after 300k
  // SETs, mostly absent keys: 5.4k -> 7.2k instructions a GET). Files keep the layout they were
  // written with; both read back.
  if (options.partitioned_index) {
    table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.partition_filters = true;
  }

  // Every column family uses the default (bytewise) comparator: rockcache's own skip list
  // (storage/memtable_rep.h) may serve their memtables.
  std::shared_ptr<rocksdb::MemTableRepFactory> memtable_factory;
  if (options.memtable == "rockcache") {
    memtable_factory = NewSkipListMemTableFactory();
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
    cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    cf.compaction_filter_factory = std::move(filter);
    cf.level_compaction_dynamic_level_bytes = true;
    // A whole-key bloom filter in each memtable (2% of its size): the meta read before a write of
    // a new key, a miss and an HSET/SADD/ZADD of a new member then skip the skiplist search
    // (~40 key comparisons, most of a write's cost in callgrind) when the key is not in it.
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
    cf.memtable_insert_with_hint_prefix_extractor = meta_run_prefix;
    return cf;
  };
  auto data = [&](MetaType t, bool point_reads = true) {
    rocksdb::ColumnFamilyOptions cf =
        cf_options(std::make_shared<DataFilterFactory>(store->filter_ctx_, t), point_reads);
    cf.memtable_insert_with_hint_prefix_extractor = collection_prefix;
    return cf;
  };
  if (options.databases < 1 || options.databases > kMaxDatabases) {
    return Status::InvalidArgument("databases must be between 1 and " +
                                   std::to_string(kMaxDatabases));
  }
  // Physical databases: as many as `databases`, or more when an earlier run had more.
  int physical = options.databases;
  {
    std::vector<std::string> existing;
    rocksdb::Status ls =
        rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), options.dir, &existing);
    if (ls.ok()) {
      for (const auto& name : existing) {
        if (name.size() > 2 && name.compare(0, 2, "db") == 0) {
          int n = std::atoi(name.c_str() + 2);
          if (n > 0 && n < kMaxDatabases && n + 1 > physical) physical = n + 1;
        }
      }
    }
  }
  store->physical_dbs_ = physical;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
      {rocksdb::kDefaultColumnFamilyName, meta_options()},
      {"props", cf_options(nullptr)},
      {"hash", data(MetaType::kHash)},
      {"set", data(MetaType::kSet)},
      {"list", data(MetaType::kList)},
      {"zset", data(MetaType::kZSet)},
      {"zscore", data(MetaType::kZSet, /*point_reads=*/false)},  // iterated only (Walk)
      {"stream", data(MetaType::kStream)},
  };
  for (int db = 1; db < physical; ++db) {
    cfs.push_back({MetaCfName(db), meta_options()});
  }

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = std::max(1, options.max_background_jobs);
  db_options.keep_log_file_num = 10;
  // One memtable writer at a time (the write group's leader inserts every batch of the group):
  // what rockcache's skip list supports.
  db_options.allow_concurrent_memtable_write = memtable_factory == nullptr;

  rocksdb::Status s =
      rocksdb::DB::Open(db_options, options.dir, cfs, &store->handles_, &store->db_);
  if (!s.ok()) return FromRocks(s);
  store->meta_cfs_.push_back(store->handles_[0]);
  for (int db = 1; db < physical; ++db) store->meta_cfs_.push_back(store->handles_[7 + db]);
  store->props_cf_ = store->handles_[1];
  store->hash_cf_ = store->handles_[2];
  store->set_cf_ = store->handles_[3];
  store->list_cf_ = store->handles_[4];
  store->zset_cf_ = store->handles_[5];
  store->zscore_cf_ = store->handles_[6];
  store->stream_cf_ = store->handles_[7];
  store->write_options_.sync = options.sync_writes;

  // Version counter: resume above everything reserved before.
  std::string stored;
  s = store->db_->Get(rocksdb::ReadOptions(), store->props_cf_, kPropsNextVersion, &stored);
  if (s.ok() && stored.size() == 8) {
    store->next_version_ = GetFixed64BE(stored.data());
  } else if (!s.ok() && !s.IsNotFound()) {
    return FromRocks(s);
  }
  store->reserved_version_ = store->next_version_;

  // Database mapping: identity unless SWAPDB changed it.
  store->db_map_.reset(new std::atomic<int>[physical]);
  for (int db = 0; db < physical; ++db) store->db_map_[db].store(db);
  s = store->db_->Get(rocksdb::ReadOptions(), store->props_cf_, kPropsDbMapKey, &stored);
  if (s.ok()) {
    std::vector<bool> seen(physical, false);
    const size_t n = stored.size() / 2;
    for (size_t db = 0; db < n && db < static_cast<size_t>(physical); ++db) {
      int p =
          (static_cast<uint8_t>(stored[2 * db]) << 8) | static_cast<uint8_t>(stored[2 * db + 1]);
      if (p >= physical || seen[p]) return Status::Corruption("bad db-map in props");
      seen[p] = true;
      store->db_map_[db].store(p);
    }
    // Logical databases added since (databases raised): the physical ones nobody maps yet.
    for (size_t db = n; db < static_cast<size_t>(physical); ++db) {
      int p = 0;
      while (seen[p]) ++p;
      seen[p] = true;
      store->db_map_[db].store(p);
    }
  } else if (!s.IsNotFound()) {
    return FromRocks(s);
  }

  // Key counters: one pass over every meta column family.
  store->ttl_base_ms_ = NowMs();
  store->counters_.reset(new DbCounters[physical]);
  for (int db = 0; db < physical; ++db) {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(store->db_->NewIterator(ro, store->meta_cfs_[db]));
    int64_t n = 0, expires = 0;
    uint64_t sum = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++n;
      Meta meta;
      if (DecodeMetaHeader(std::string_view(it->value().data(), it->value().size()), &meta) &&
          meta.expire_at_ms != 0) {
        ++expires;
        sum += static_cast<uint64_t>(meta.expire_at_ms - store->ttl_base_ms_);
      }
    }
    if (!it->status().ok()) return FromRocks(it->status());
    store->counters_[db].keys.store(n);
    store->counters_[db].expires.store(expires);
    store->counters_[db].expire_sum.store(sum);
  }
  // A logical database beyond `databases` that holds keys would be unreachable: refuse.
  for (int db = options.databases; db < physical; ++db) {
    int64_t keys = store->counters_[store->db_map_[db].load()].keys.load();
    if (keys > 0) {
      return Status::InvalidArgument("database " + std::to_string(db) + " holds " +
                                     std::to_string(keys) + " keys but databases is " +
                                     std::to_string(options.databases) + ": start with databases " +
                                     std::to_string(db + 1) + " or more (and FLUSHDB it)");
    }
  }

  store->filter_ctx_->meta_cfs = store->meta_cfs_;
  store->filter_ctx_->db.store(store->db_, std::memory_order_release);
  return std::unique_ptr<Store>(std::move(store));
}

RocksStore::~RocksStore() { (void)Close(); }

Status RocksStore::Close() {
  std::unique_lock<std::shared_mutex> lock(lifecycle_);
  if (closed_ || db_ == nullptr) {
    closed_ = true;
    return Status::OK();
  }
  closed_ = true;
  rocksdb::FlushOptions fo;
  fo.wait = true;
  rocksdb::Status flush = db_->Flush(fo, handles_);
  filter_ctx_->db.store(nullptr, std::memory_order_release);
  rocksdb::CancelAllBackgroundWork(db_, /*wait=*/true);
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  handles_.clear();
  rocksdb::Status close = db_->Close();
  delete db_;
  db_ = nullptr;
  if (!flush.ok()) return FromRocks(flush);
  return FromRocks(close);
}

Status RocksStore::Enter(Hold* hold) {
  QuietPerfCounting();
  if (!tls_pending.empty()) tls_pending.clear();  // left by a method that failed before Write
  *hold = Hold(lifecycle_);
  if (closed_) {
    hold->unlock();
    return Status::Shutdown("store is closed");
  }
  return Status::OK();
}

Status RocksStore::BeginWrite(std::string_view key, MetaType type, Hold* hold, MetaLookup* old,
                              Meta* meta) {
  if (Status s = Enter(hold); !s.ok()) return s;
  return LoadForWrite(key, type, old, meta);
}

Status RocksStore::BeginWrite(std::string_view key, Hold* hold, MetaLookup* old) {
  if (Status s = Enter(hold); !s.ok()) return s;
  return ReadMetaLocked(key, old);
}

// ---- meta helpers ----

Status RocksStore::ReadMetaIn(int db, std::string_view key, MetaLookup* out) {
  DbScope scope(db);
  return ReadMeta(rocksdb::ReadOptions(), key, out);
}

Status RocksStore::ReadMeta(const rocksdb::ReadOptions& ro, std::string_view key, MetaLookup* out,
                            bool full) {
  *out = MetaLookup();
  rocksdb::PinnableSlice value;
  rocksdb::Status s = DbGet(ro, MetaCf(), rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return FromRocks(s);
  std::string_view bytes(value.data(), value.size());
  bool is_string =
      !bytes.empty() && static_cast<uint8_t>(bytes[0]) == static_cast<uint8_t>(MetaType::kString);
  bool decoded =
      (full || !is_string) ? DecodeMeta(bytes, &out->meta) : DecodeMetaHeader(bytes, &out->meta);
  if (!decoded) {
    return Status::Corruption("undecodable meta record");
  }
  out->present = true;
  out->live = !out->meta.ExpiredAt(NowMs());
  if (!out->live) ReportExpired(key);
  return Status::OK();
}

void RocksStore::PutMeta(Records* batch, std::string_view key, const MetaLookup& old,
                         const Meta& meta, int db) {
  if (db < 0) db = CurrentDb();
  NoteTtlChange(db, old, &meta);
  // One buffer per thread (the batch copies the record): no allocation per collection write.
  thread_local std::string encoded;
  EncodeMetaInto(meta, &encoded);
  batch->Put(meta_cfs_[static_cast<size_t>(db)], rocksdb::Slice(key.data(), key.size()), encoded);
  if (encoded.capacity() > 4096) std::string().swap(encoded);  // a string's value: not kept
}

void RocksStore::DeleteMeta(Records* batch, std::string_view key, const MetaLookup& old, int db) {
  if (db < 0) db = CurrentDb();
  NoteTtlChange(db, old, nullptr);
  batch->Delete(meta_cfs_[static_cast<size_t>(db)], rocksdb::Slice(key.data(), key.size()));
}

StatusOr<uint64_t> RocksStore::NewVersion() {
  std::lock_guard<std::mutex> lock(version_mu_);
  if (next_version_ >= reserved_version_) {
    uint64_t reserve = next_version_ + kVersionChunk;
    std::string v;
    PutFixed64BE(&v, reserve);
    rocksdb::WriteOptions wo;
    wo.sync = true;
    rocksdb::Status s = db_->Put(wo, props_cf_, kPropsNextVersion, v);
    if (!s.ok()) return FromRocks(s);
    reserved_version_ = reserve;
  }
  return next_version_++;
}

Status RocksStore::WriteString(std::string_view key, const MetaLookup& old, std::string_view value,
                               int64_t expire_at_ms) {
  Meta meta;
  meta.type = MetaType::kString;
  if (old.live && old.meta.type == MetaType::kString) {
    meta.version = old.meta.version;  // strings have no data entries; keep it
  } else {
    auto v = NewVersion();
    if (!v.ok()) return v.status();
    meta.version = *v;
  }
  meta.expire_at_ms = expire_at_ms;
  if (WriteStringToThreadGroup(key, old, &meta, value)) return Status::OK();
  meta.value.assign(value.data(), value.size());
  Records batch;
  PutMeta(&batch, key, old, meta);
  Status s = Write(&batch);
  if (s.ok() && !old.present) AddKeyCount(1);
  return s;
}

Status RocksStore::DeleteKey(std::string_view key, const MetaLookup& old) {
  Records batch;
  DeleteMeta(&batch, key, old);
  Status s = Write(&batch);
  if (s.ok() && old.present) AddKeyCount(-1);
  return s;
}

StatusOr<std::optional<std::string>> RocksStore::ReadString(const rocksdb::ReadOptions& ro,
                                                            std::string_view key,
                                                            MetaLookup* lookup) {
  Status s = ReadMeta(ro, key, lookup);
  if (!s.ok()) return s;
  if (!lookup->live) return std::optional<std::string>();
  if (lookup->meta.type != MetaType::kString) return Status::WrongType();
  return std::optional<std::string>(lookup->meta.value);
}

// ---- INFO ----

std::string RocksStore::InfoRocksDb() {
  Hold hold;
  if (!Enter(&hold).ok()) return "rocksdb_state:closed\r\n";
  auto sum = [&](const std::string& property) {
    uint64_t total = 0;
    for (auto* h : handles_) {
      uint64_t v = 0;
      if (db_->GetIntProperty(h, property, &v)) total += v;
    }
    return total;
  };
  std::string out;
  auto line = [&](const char* name, uint64_t v) {
    out += name;
    out += ':';
    out += std::to_string(v);
    out += "\r\n";
  };
  line("rocksdb_total_sst_size", sum(rocksdb::DB::Properties::kTotalSstFilesSize));
  line("rocksdb_cur_size_all_mem_tables", sum(rocksdb::DB::Properties::kCurSizeAllMemTables));
  line("rocksdb_estimate_pending_compaction_bytes",
       sum(rocksdb::DB::Properties::kEstimatePendingCompactionBytes));
  line("rocksdb_estimate_num_keys", sum(rocksdb::DB::Properties::kEstimateNumKeys));
  line("rocksdb_block_cache_usage", block_cache_ ? block_cache_->GetUsage() : 0);
  line("rocksdb_block_cache_capacity", block_cache_ ? block_cache_->GetCapacity() : 0);
  auto db_wide = [&](const std::string& property) {
    uint64_t v = 0;
    db_->GetIntProperty(meta_cfs_[0], property, &v);
    return v;
  };
  line("rocksdb_num_running_compactions", db_wide(rocksdb::DB::Properties::kNumRunningCompactions));
  line("rocksdb_num_running_flushes", db_wide(rocksdb::DB::Properties::kNumRunningFlushes));
  out += "rocksdb_compression:" + compression_note_ + "\r\n";
  out += std::string("rocksdb_sync_writes:") + (options_.sync_writes ? "yes" : "no") + "\r\n";
  return out;
}

}  // namespace rockcache::storage
