// RocksStore: open, close, locks, meta helpers, INFO. See rocks_store.h.
#include "storage/rocks_store.h"

#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/table_properties_collectors.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>

#include "storage/perf_counters.h"

namespace rockcache::storage {

namespace {

const char kPropsNextVersion[] = "next-version";
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

  auto cf_options = [&](std::shared_ptr<rocksdb::CompactionFilterFactory> filter) {
    rocksdb::ColumnFamilyOptions cf;
    cf.write_buffer_size = options.write_buffer_bytes;
    cf.compression = compression;
    cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    cf.compaction_filter_factory = std::move(filter);
    cf.level_compaction_dynamic_level_bytes = true;
    // A whole-key bloom filter in each memtable (2% of its size): the meta read before a write of
    // a new key, a miss and an HSET/SADD/ZADD of a new member then skip the skiplist search
    // (~40 key comparisons, most of a write's cost in callgrind) when the key is not in it.
    cf.memtable_prefix_bloom_size_ratio = 0.02;
    cf.memtable_whole_key_filtering = true;
    // Files dense with tombstones (a drained queue, a deleted range of keys) are compacted soon
    // after they are written, so iterations stop walking them: any 16384 consecutive entries
    // with 8192 deletions, or a file that is half deletions, marks the file for compaction.
    cf.table_properties_collector_factories.push_back(
        rocksdb::NewCompactOnDeletionCollectorFactory(16384, 8192, 0.5));
    return cf;
  };
  auto data = [&](MetaType t) {
    return cf_options(std::make_shared<DataFilterFactory>(store->filter_ctx_, t));
  };
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
      {rocksdb::kDefaultColumnFamilyName, cf_options(std::make_shared<MetaFilterFactory>())},
      {"props", cf_options(nullptr)},
      {"hash", data(MetaType::kHash)},
      {"set", data(MetaType::kSet)},
      {"list", data(MetaType::kList)},
      {"zset", data(MetaType::kZSet)},
      {"zscore", data(MetaType::kZSet)},
      {"stream", data(MetaType::kStream)},
  };

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = std::max(1, options.max_background_jobs);
  db_options.keep_log_file_num = 10;

  rocksdb::Status s =
      rocksdb::DB::Open(db_options, options.dir, cfs, &store->handles_, &store->db_);
  if (!s.ok()) return FromRocks(s);
  store->meta_cf_ = store->handles_[0];
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

  // Key counter: one pass over the meta column family.
  {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(store->db_->NewIterator(ro, store->meta_cf_));
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    if (!it->status().ok()) return FromRocks(it->status());
    store->key_count_.store(n);
  }

  store->filter_ctx_->meta_cf.store(store->meta_cf_, std::memory_order_release);
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
  filter_ctx_->meta_cf.store(nullptr, std::memory_order_release);
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
  *hold = Hold(lifecycle_);
  if (closed_) {
    hold->unlock();
    return Status::Shutdown("store is closed");
  }
  return Status::OK();
}

// ---- write groups ----

namespace {
// WriteBatch rep header: sequence (fixed64) then count (fixed32, little endian).
constexpr size_t kBatchHeader = 12;
}  // namespace

class RocksWriteGroup final : public WriteGroup {
 public:
  explicit RocksWriteGroup(RocksStore* store) : store_(store) {
    rep_.assign(kBatchHeader, '\0');
    previous_ = tls_group;
    tls_group = this;
  }
  ~RocksWriteGroup() override {
    (void)Commit();
    tls_group = previous_;
  }

  Status Commit() override {
    if (!failed_.ok()) {  // an early flush failed: the writes it held are lost, say so once
      Status s = failed_;
      failed_ = Status::OK();
      if (count_ == 0) return s;
      (void)Flush();
      return s;
    }
    return Flush();
  }
  // Writes what is pending now (a command that reads back its own earlier write); an error is
  // kept and returned by the next Commit(), so the group fails every write it acknowledged.
  Status FlushEarly() {
    if (atomic_) return ApplyWithoutWal();
    Status s = Flush();
    if (!s.ok() && failed_.ok()) failed_ = s;
    return s;
  }

  void BeginAtomic() override {
    atomic_ = true;
    applied_.assign(kBatchHeader, '\0');
    applied_count_ = 0;
  }

  // Atomic mode: the pending records go to the memtables only (readable now; see store.h) and
  // are kept for the WAL write of the whole transaction at Commit().
  Status ApplyWithoutWal() {
    if (count_ == 0) return Status::OK();
    SetCount(&rep_, count_);
    rocksdb::WriteBatch batch(rep_);
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    Status s = FromRocks(store_->db_->Write(wo, &batch));
    if (!s.ok()) {
      if (failed_.ok()) failed_ = s;
      return s;
    }
    applied_.append(rep_, kBatchHeader, std::string::npos);
    applied_count_ += count_;
    if (key_delta_ != 0) store_->key_count_.fetch_add(key_delta_, std::memory_order_relaxed);
    rep_.assign(kBatchHeader, '\0');
    count_ = 0;
    key_delta_ = 0;
    return s;
  }

  static void SetCount(std::string* rep, uint32_t count) {
    for (int i = 0; i < 4; ++i) (*rep)[8 + i] = static_cast<char>((count >> (8 * i)) & 0xff);
  }

  Status Flush() {
    if (atomic_) {
      atomic_ = false;
      if (applied_count_ > 0) {  // the whole transaction, in order, as one WAL record
        applied_.append(rep_, kBatchHeader, std::string::npos);
        rep_ = std::move(applied_);
        count_ += applied_count_;
        applied_count_ = 0;
        applied_.clear();
      }
    }
    if (count_ == 0) return Status::OK();
    SetCount(&rep_, count_);
    rocksdb::WriteBatch batch(std::move(rep_));
    Status s = store_->WriteNow(&batch);
    if (s.ok() && key_delta_ != 0) {
      store_->key_count_.fetch_add(key_delta_, std::memory_order_relaxed);
    }
    rep_.assign(kBatchHeader, '\0');
    count_ = 0;
    key_delta_ = 0;
    return s;
  }
  size_t pending() const override { return count_; }

  // The group open on this thread for `store`, or nullptr.
  static RocksWriteGroup* Current(const RocksStore* store) {
    RocksWriteGroup* g = tls_group;
    return g != nullptr && g->store_ == store ? g : nullptr;
  }
  void Append(const rocksdb::WriteBatch& batch) {
    const std::string& data = batch.Data();
    if (data.size() <= kBatchHeader) return;
    rep_.append(data, kBatchHeader, std::string::npos);
    count_ += batch.Count();
  }
  void AddKeyDelta(int64_t delta) { key_delta_ += delta; }

 private:
  static thread_local RocksWriteGroup* tls_group;
  RocksStore* const store_;
  RocksWriteGroup* previous_ = nullptr;
  Status failed_;
  std::string rep_;
  uint32_t count_ = 0;
  bool atomic_ = false;  // between BeginAtomic() and Commit()
  std::string applied_;  // atomic mode: records applied to the memtables only (header first)
  uint32_t applied_count_ = 0;
  int64_t key_delta_ = 0;
};

thread_local RocksWriteGroup* RocksWriteGroup::tls_group = nullptr;

std::unique_ptr<WriteGroup> RocksStore::OpenWriteGroup() {
  return std::make_unique<RocksWriteGroup>(this);
}

Status RocksStore::FlushThreadWriteGroup() {
  RocksWriteGroup* group = RocksWriteGroup::Current(this);
  return group == nullptr ? Status::OK() : group->FlushEarly();
}

void RocksStore::AddKeyCount(int64_t delta) {
  if (RocksWriteGroup* group = RocksWriteGroup::Current(this)) {
    group->AddKeyDelta(delta);
    return;
  }
  key_count_.fetch_add(delta, std::memory_order_relaxed);
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

Status RocksStore::ReadMeta(const rocksdb::ReadOptions& ro, std::string_view key, MetaLookup* out,
                            bool full) {
  *out = MetaLookup();
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(ro, meta_cf_, rocksdb::Slice(key.data(), key.size()), &value);
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

void RocksStore::PutMeta(rocksdb::WriteBatch* batch, std::string_view key, const Meta& meta) {
  batch->Put(meta_cf_, rocksdb::Slice(key.data(), key.size()), EncodeMeta(meta));
}

void RocksStore::DeleteMeta(rocksdb::WriteBatch* batch, std::string_view key) {
  batch->Delete(meta_cf_, rocksdb::Slice(key.data(), key.size()));
}

Status RocksStore::Write(rocksdb::WriteBatch* batch) {
  if (RocksWriteGroup* group = RocksWriteGroup::Current(this)) {
    group->Append(*batch);
    return Status::OK();
  }
  return WriteNow(batch);
}

Status RocksStore::WriteNow(rocksdb::WriteBatch* batch) {
  return FromRocks(db_->Write(write_options_, batch));
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

Status RocksStore::WriteString(std::string_view key, const MetaLookup& old, std::string value,
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
  meta.value = std::move(value);
  rocksdb::WriteBatch batch;
  PutMeta(&batch, key, meta);
  Status s = Write(&batch);
  if (s.ok() && !old.present) AddKeyCount(1);
  return s;
}

Status RocksStore::DeleteKey(std::string_view key, const MetaLookup& old) {
  rocksdb::WriteBatch batch;
  DeleteMeta(&batch, key);
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
    db_->GetIntProperty(meta_cf_, property, &v);
    return v;
  };
  line("rocksdb_num_running_compactions", db_wide(rocksdb::DB::Properties::kNumRunningCompactions));
  line("rocksdb_num_running_flushes", db_wide(rocksdb::DB::Properties::kNumRunningFlushes));
  out += "rocksdb_compression:" + compression_note_ + "\r\n";
  out += std::string("rocksdb_sync_writes:") + (options_.sync_writes ? "yes" : "no") + "\r\n";
  return out;
}

}  // namespace rockcache::storage
