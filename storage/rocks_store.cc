// RocksStore: open, close, the lifecycle, meta helpers, INFO. See rocks_store.h (write groups and
// the write path: write_group.cc; the RocksDB options it opens with: rocks_options.cc).
#include "storage/rocks_store.h"

#include <rocksdb/convenience.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>

#include "storage/data_dir.h"
#include "storage/meta_read_ahead.h"
#include "storage/no_wait_files.h"
#include "storage/perf_counters.h"
#include "storage/rocks_options.h"
#include "storage/write_group.h"

namespace rockcache::storage {

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

// Versions reserved per synced write to "props": one fsync per 65536 new keys/collections.
constexpr uint64_t kVersionChunk = 1ull << 16;

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
  store->verify_point_checksums_ = options.verify_point_read_checksums;
  store->filter_ctx_ = std::make_shared<FilterContext>();
  // The directory first: locked against a second server, then a cut swap recovered, sync
  // leftovers removed, an old layout migrated (data_dir.h).
  if (Status s = store->dir_lock_.Acquire(options.dir); !s.ok()) return s;
  if (Status s = data_dir::Prepare(options.dir, &store->open_notes_); !s.ok()) return s;
  store->db_path_ = data_dir::DatabasePath(options.dir);
  if (Status s = store->OpenDb(); !s.ok()) return s;
  return std::unique_ptr<Store>(std::move(store));
}

Status RocksStore::OpenDb() {
  const Options& options = options_;
  RocksStore* store = this;  // the body was OpenRocks's, on a new store; now also a reopen
  auto open = MakeRocksOpenOptions(options, store->filter_ctx_);
  if (!open.ok()) return open.status();
  open->db.WAL_ttl_seconds = options.wal_ttl_seconds;
  open->db.WAL_size_limit_MB = options.wal_size_limit_mb;
  store->compression_note_ = open->compression_note;
  store->block_cache_ = open->block_cache;
  store->no_wait_reads_ = open->db.env == NoWaitEnv();

  std::error_code ec;
  std::filesystem::create_directories(db_path_, ec);
  if (ec) return Status::IOError("cannot create " + db_path_ + ": " + ec.message());

  if (options.databases < 1 || options.databases > kMaxDatabases) {
    return Status::InvalidArgument("databases must be between 1 and " +
                                   std::to_string(kMaxDatabases));
  }
  // Physical databases: as many as `databases`, or more when an earlier run had more.
  int physical = options.databases;
  {
    std::vector<std::string> existing;
    rocksdb::Status ls = rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), db_path_, &existing);
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
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = open->column_families;
  for (int db = 1; db < physical; ++db) cfs.push_back({MetaCfName(db), open->meta});

  rocksdb::Status s = rocksdb::DB::Open(open->db, db_path_, cfs, &store->handles_, &store->db_);
  if (!s.ok()) return FromRocks(s);
  store->meta_cfs_.clear();
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

  // Version counter: resume above everything reserved before. (No other thread sees the store
  // yet; the lock is taken for the annotations' sake.)
  std::string stored;
  s = store->db_->Get(rocksdb::ReadOptions(), store->props_cf_, kPropsNextVersion, &stored);
  {
    MutexLock lock(&store->version_mu_);
    if (s.ok() && stored.size() == 8) {
      store->next_version_ = GetFixed64BE(stored.data());
    } else if (!s.ok() && !s.IsNotFound()) {
      return FromRocks(s);
    }
    store->reserved_version_ = store->next_version_;
    store->first_run_version_ = store->next_version_;
  }
  store->entry_filter_ =
      std::make_unique<KeyFilter>(options.key_filter_bits_per_key, options.key_filter_max_bytes, 0);

  // Database mapping: identity unless SWAPDB changed it.
  // Sized for every possible database and allocated once: PhysicalDb reads it without the
  // lifecycle hold, also while ReplaceDatabase reopens.
  if (store->db_map_ == nullptr) store->db_map_.reset(new std::atomic<int>[kMaxDatabases]);
  if (Status m = store->LoadDbMap(); !m.ok()) return m;

  // Key counters and the key filter: one pass over every meta column family.
  uint64_t estimated_keys = 0;
  for (auto* cf : store->meta_cfs_) {
    uint64_t v = 0;
    if (store->db_->GetIntProperty(cf, rocksdb::DB::Properties::kEstimateNumKeys, &v)) {
      estimated_keys += v;
    }
  }
  store->key_filter_ = std::make_unique<KeyFilter>(options.key_filter_bits_per_key,
                                                   options.key_filter_max_bytes, estimated_keys);
  store->ttl_base_ms_ = NowMs();
  if (store->counters_ == nullptr) store->counters_.reset(new DbCounters[kMaxDatabases]);
  for (int db = physical; db < kMaxDatabases; ++db) store->ResetCounters(db);  // a reopen
  for (int db = 0; db < physical; ++db) {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(store->db_->NewIterator(ro, store->meta_cfs_[db]));
    int64_t n = 0, expires = 0;
    uint64_t sum = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++n;
      store->key_filter_->Add(db, std::string_view(it->key().data(), it->key().size()));
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
  return Status::OK();
}

Status RocksStore::LoadDbMap() {
  const int physical = physical_dbs_;
  std::string stored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), props_cf_, kPropsDbMapKey, &stored);
  if (!s.ok() && !s.IsNotFound()) return FromRocks(s);
  std::vector<int> map(static_cast<size_t>(physical));
  for (int db = 0; db < physical; ++db) map[static_cast<size_t>(db)] = db;
  if (s.ok()) {
    std::vector<bool> seen(physical, false);
    const size_t n = stored.size() / 2;
    for (size_t db = 0; db < n && db < static_cast<size_t>(physical); ++db) {
      int p =
          (static_cast<uint8_t>(stored[2 * db]) << 8) | static_cast<uint8_t>(stored[2 * db + 1]);
      if (p >= physical || seen[p]) return Status::Corruption("bad db-map in props");
      seen[p] = true;
      map[db] = p;
    }
    // Logical databases added since (databases raised): the physical ones nobody maps yet.
    for (size_t db = n; db < static_cast<size_t>(physical); ++db) {
      int p = 0;
      while (seen[p]) ++p;
      seen[p] = true;
      map[db] = p;
    }
  }
  for (int db = 0; db < physical; ++db) db_map_[db].store(map[static_cast<size_t>(db)]);
  return Status::OK();
}

RocksStore::~RocksStore() { (void)Close(); }

Status RocksStore::Close() {
  WriterMutexLock lock(&lifecycle_);
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
  dir_lock_.Release();
  if (!flush.ok()) return FromRocks(flush);
  return FromRocks(close);
}

Status RocksStore::Enter(Hold* hold) {
  QuietPerfCounting();
  if (!tls_pending.empty()) tls_pending.clear();  // left by a method that failed before Write
  *hold = Hold(lifecycle_);
  lifecycle_.AssertReaderHeld();
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

namespace {
// This thread's read-ahead (BeginReadAhead .. EndReadAhead); empty otherwise.
thread_local MetaReadAhead tls_meta_read_ahead;
}  // namespace

void RocksStore::BeginReadAhead(const std::vector<ReadAheadKey>& keys) {
  MetaReadAhead& ahead = tls_meta_read_ahead;
  ahead.Clear();
  if (keys.size() < 2) return;
  Hold hold;
  if (!Enter(&hold).ok()) return;
  // Grouped by database (one MultiGet each), in the given order within one.
  std::vector<ReadAheadKey> sorted(keys);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ReadAheadKey& a, const ReadAheadKey& b) { return a.db < b.db; });
  ahead.Reset(sorted.size());
  for (const ReadAheadKey& k : sorted) ahead.Add(k.db, k.key);
  std::vector<std::string_view> run;
  run.reserve(sorted.size());
  for (size_t first = 0, last = 0; first < sorted.size(); first = last) {
    run.clear();
    for (last = first; last < sorted.size() && sorted[last].db == sorted[first].db; ++last) {
      run.push_back(sorted[last].key);
    }
    DbScope scope(sorted[first].db);
    MultiGetMetas(run, ahead.records() + first, ahead.statuses() + first);
  }
}

void RocksStore::EndReadAhead() {
  if (tls_meta_read_ahead.active()) tls_meta_read_ahead.Clear();
}

void RocksStore::ForgetReadAhead(int db, std::string_view key) {
  if (tls_meta_read_ahead.active()) tls_meta_read_ahead.Forget(db, key);
}

void RocksStore::ForgetAllReadAhead() {
  if (tls_meta_read_ahead.active()) tls_meta_read_ahead.Clear();
}

Status RocksStore::ReadMeta(const rocksdb::ReadOptions& ro, std::string_view key, MetaLookup* out,
                            bool full) {
  *out = MetaLookup();
  if (ro.snapshot == nullptr) {
    const MetaReadAhead& ahead = tls_meta_read_ahead;
    if (ahead.active()) {
      if (const int i = ahead.Find(CurrentDb(), key); i >= 0) {
        return DecodeMetaRead(key, ahead.status(i), ahead.record(i), out, full);
      }
    }
    // A key never written has no meta: no RocksDB read. Not for a snapshot's older view (a key
    // deleted since, before this filter was built, may be in it).
    if (!key_filter_->MayContain(CurrentDb(), key)) return Status::OK();
  }
  rocksdb::PinnableSlice value;
  rocksdb::Status s = DbGet(ro, MetaCf(), rocksdb::Slice(key.data(), key.size()), &value);
  return DecodeMetaRead(key, s, value, out, full);
}

Status RocksStore::DecodeMetaRead(std::string_view key, const rocksdb::Status& s,
                                  const rocksdb::Slice& value, MetaLookup* out, bool full) {
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
  // Before the record can reach RocksDB (key_filter.h); a key that has a meta was added when
  // it got it.
  if (!old.present) key_filter_->Add(db, key);
  ForgetReadAhead(db, key);
  // One buffer per thread (the batch copies the record): no allocation per collection write.
  thread_local std::string encoded;
  EncodeMetaInto(meta, &encoded);
  batch->Put(meta_cfs_[static_cast<size_t>(db)], rocksdb::Slice(key.data(), key.size()), encoded);
  if (encoded.capacity() > 4096) std::string().swap(encoded);  // a string's value: not kept
}

void RocksStore::DeleteMeta(Records* batch, std::string_view key, const MetaLookup& old, int db) {
  if (db < 0) db = CurrentDb();
  NoteTtlChange(db, old, nullptr);
  ForgetReadAhead(db, key);
  batch->Delete(meta_cfs_[static_cast<size_t>(db)], rocksdb::Slice(key.data(), key.size()));
}

StatusOr<uint64_t> RocksStore::NewVersion() {
  MutexLock lock(&version_mu_);
  if (next_version_ >= reserved_version_) {
    uint64_t reserve = next_version_ + kVersionChunk;
    std::string v;
    PutFixed64BE(&v, reserve);
    rocksdb::WriteOptions wo;
    wo.sync = true;
    if (Status s = PutOwn(wo, props_cf_, kPropsNextVersion, v); !s.ok()) return s;
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
  const CountingCache::Counts lookups =
      block_cache_ ? block_cache_->counts() : CountingCache::Counts();
  line("rocksdb_block_cache_hits", lookups.hits);
  line("rocksdb_block_cache_misses", lookups.misses);
  auto db_wide = [&](const std::string& property) {
    uint64_t v = 0;
    db_->GetIntProperty(meta_cfs_[0], property, &v);
    return v;
  };
  line("rocksdb_num_running_compactions", db_wide(rocksdb::DB::Properties::kNumRunningCompactions));
  line("rocksdb_num_running_flushes", db_wide(rocksdb::DB::Properties::kNumRunningFlushes));
  out += "rocksdb_compression:" + compression_note_ + "\r\n";
  out += std::string("rocksdb_sync_writes:") + (options_.sync_writes ? "yes" : "no") + "\r\n";
  // The key filter (key_filter.h): on, off (key-filter-bits-per-key 0) or full (turned off at
  // key-filter-max-memory until a restart).
  const KeyFilter::Stats kf = key_filter_->GetStats();
  out += std::string("key_filter_state:") + (kf.on ? "on" : kf.full ? "full" : "off") + "\r\n";
  line("key_filter_bytes", kf.bytes);
  line("key_filter_layers", static_cast<uint64_t>(kf.layers));
  line("key_filter_keys_added", kf.keys_added);
  const KeyFilter::Stats ef = entry_filter_->GetStats();
  out += std::string("entry_filter_state:") + (ef.on ? "on" : ef.full ? "full" : "off") + "\r\n";
  line("entry_filter_bytes", ef.bytes);
  line("entry_filter_entries_added", ef.keys_added);
  return out;
}

}  // namespace rockcache::storage
