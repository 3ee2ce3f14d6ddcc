// RocksStore: commands on keys of every type (DEL, EXISTS, EXPIRE..., KEYS, SCAN, FLUSHALL...).
// They touch only meta records: a collection's data entries are left to the compaction filter.
#include <algorithm>
#include <cstring>
#include <set>

#include "config/glob.h"
#include "storage/rocks_store.h"

namespace rockcache::storage {

namespace {

// The literal text every match of `pattern` starts with (up to the first wildcard).
bool StartsWith(const rocksdb::Slice& s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::memcmp(s.data(), prefix.data(), prefix.size()) == 0;
}

}  // namespace

std::string GlobLiteralPrefix(std::string_view pattern) {
  std::string prefix;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '*' || c == '?' || c == '[') break;
    if (c == '\\') {
      if (i + 1 >= pattern.size()) break;
      c = pattern[++i];
    }
    prefix.push_back(c);
  }
  return prefix;
}

StatusOr<int64_t> RocksStore::Del(const std::vector<std::string_view>& keys) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::set<std::string_view> unique(keys.begin(), keys.end());
  Records batch;
  int64_t removed = 0;
  int64_t present = 0;
  for (auto key : unique) {
    MetaLookup old;
    if (Status s = ReadMetaLocked(key, &old); !s.ok()) return s;
    if (!old.present) continue;
    DeleteMeta(&batch, key, old);
    ++present;
    if (old.live) ++removed;
  }
  if (present == 0) return int64_t{0};
  if (Status s = Write(&batch); !s.ok()) return s;
  AddKeyCount(-present);
  return removed;
}

StatusOr<int64_t> RocksStore::Exists(const std::vector<std::string_view>& keys) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  int64_t n = 0;
  for (auto key : keys) {
    MetaLookup lookup;
    if (Status s = ReadMeta(rocksdb::ReadOptions(), key, &lookup, false); !s.ok()) return s;
    if (lookup.live) ++n;
  }
  return n;
}

StatusOr<bool> RocksStore::ExpireAt(std::string_view key, int64_t at_ms, ExpireCondition cond) {
  Hold hold;
  MetaLookup old;
  if (Status s = BeginWrite(key, &hold, &old); !s.ok()) return s;
  if (!old.live) return false;
  int64_t current = old.meta.expire_at_ms;  // 0 = none = infinite for GT/LT
  switch (cond) {
    case ExpireCondition::kAlways:
      break;
    case ExpireCondition::kNX:
      if (current != 0) return false;
      break;
    case ExpireCondition::kXX:
      if (current == 0) return false;
      break;
    case ExpireCondition::kGT:
      if (current == 0 || at_ms <= current) return false;
      break;
    case ExpireCondition::kLT:
      if (current != 0 && at_ms >= current) return false;
      break;
  }
  if (at_ms <= NowMs()) {
    if (Status s = DeleteKey(key, old); !s.ok()) return s;
    return true;
  }
  if (at_ms != current) {
    Meta meta = old.meta;
    meta.expire_at_ms = at_ms;
    Records batch;
    PutMeta(&batch, key, old, meta);
    if (Status s = Write(&batch); !s.ok()) return s;
  }
  return true;
}

StatusOr<int64_t> RocksStore::PTtl(std::string_view key) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup lookup;
  if (Status s = ReadMeta(rocksdb::ReadOptions(), key, &lookup, false); !s.ok()) return s;
  if (!lookup.live) return int64_t{-2};
  if (lookup.meta.expire_at_ms == 0) return int64_t{-1};
  return std::max<int64_t>(0, lookup.meta.expire_at_ms - NowMs());
}

StatusOr<int64_t> RocksStore::ExpireTimeMs(std::string_view key) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup lookup;
  if (Status s = ReadMeta(rocksdb::ReadOptions(), key, &lookup, false); !s.ok()) return s;
  if (!lookup.live) return int64_t{-2};
  if (lookup.meta.expire_at_ms == 0) return int64_t{-1};
  return lookup.meta.expire_at_ms;
}

StatusOr<bool> RocksStore::Persist(std::string_view key) {
  Hold hold;
  MetaLookup old;
  if (Status s = BeginWrite(key, &hold, &old); !s.ok()) return s;
  if (!old.live || old.meta.expire_at_ms == 0) return false;
  Meta meta = old.meta;
  meta.expire_at_ms = 0;
  Records batch;
  PutMeta(&batch, key, old, meta);
  if (Status s = Write(&batch); !s.ok()) return s;
  return true;
}

StatusOr<KeyType> RocksStore::Type(std::string_view key) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup lookup;
  if (Status s = ReadMeta(rocksdb::ReadOptions(), key, &lookup, false); !s.ok()) return s;
  return lookup.live ? ToKeyType(lookup.meta.type) : KeyType::kNone;
}

StatusOr<std::vector<std::string>> RocksStore::Keys(std::string_view pattern, uint64_t max_bytes) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::string prefix = GlobLiteralPrefix(pattern);
  bool match_all = pattern == "*";
  int64_t now = NowMs();
  std::vector<std::string> out;
  ResultBytes bytes(max_bytes);
  std::unique_ptr<rocksdb::Iterator> it = NewIter(rocksdb::ReadOptions(), MetaCf());
  for (it->Seek(prefix); it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    Meta meta;
    if (!DecodeMetaHeader(std::string_view(it->value().data(), it->value().size()), &meta)) {
      continue;
    }
    if (meta.ExpiredAt(now)) continue;
    if (!match_all && !GlobMatch(pattern, key)) continue;
    if (!bytes.Add(key.size())) return Status::OverLimit();
    out.emplace_back(key);
  }
  if (!it->status().ok()) return FromRocks(it->status());
  return out;
}

StatusOr<ScanResult> RocksStore::Scan(uint64_t cursor, std::string_view pattern, uint64_t count,
                                      std::optional<KeyType> type, uint64_t max_bytes) {
  ResultBytes bytes(max_bytes);
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  bool match_all = pattern.empty() || pattern == "*";
  std::unique_ptr<rocksdb::Iterator> it = NewIter(rocksdb::ReadOptions(), MetaCf());
  ScanResult result;
  int64_t now = NowMs();
  bool over = false;
  // Cursors of different databases never share a resume-table entry.
  const std::string scope = CurrentDb() == 0 ? std::string() : "db" + std::to_string(CurrentDb());
  Status s = ScanStep(
      it.get(), "", scope, cursor, count,
      [&](std::string_view key, std::string_view value) {
        Meta meta;
        if (!DecodeMetaHeader(value, &meta) || meta.ExpiredAt(now)) return;
        if (type && ToKeyType(meta.type) != *type) return;
        if (!match_all && !GlobMatch(pattern, key)) return;
        if (over || !bytes.Add(key.size())) {
          over = true;
          return;
        }
        result.keys.emplace_back(key);
      },
      &result.next_cursor);
  if (!s.ok()) return s;
  if (over) return Status::OverLimit();
  return result;
}

StatusOr<int64_t> RocksStore::DbSize() {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  const int db = CurrentDb();
  return std::max<int64_t>(
      0, counters_[db].keys.load(std::memory_order_relaxed) + PendingKeyDelta(db));
}

KeyStats RocksStore::GetKeyStats() {
  const DbCounters& c = counters_[CurrentDb()];
  KeyStats out;
  out.keys = std::max<int64_t>(0, c.keys.load(std::memory_order_relaxed));
  out.expires = std::max<int64_t>(0, c.expires.load(std::memory_order_relaxed));
  if (out.expires > 0) {
    const auto sum = static_cast<int64_t>(c.expire_sum.load(std::memory_order_relaxed));
    const int64_t avg_expire_at = ttl_base_ms_ + sum / out.expires;
    out.avg_ttl_ms = std::max<int64_t>(0, avg_expire_at - NowMs());
  }
  return out;
}

// Deletes every meta of physical database `db` into `batch` (one range deletion).
Status RocksStore::DeleteAllMetas(int db, Records* batch) {
  ForgetAllReadAhead();
  rocksdb::ColumnFamilyHandle* cf = meta_cfs_[static_cast<size_t>(db)];
  std::unique_ptr<rocksdb::Iterator> it = NewIter(rocksdb::ReadOptions(), cf);
  it->SeekToFirst();
  if (it->Valid()) {
    std::string first = it->key().ToString();
    it->SeekToLast();
    if (!it->Valid()) return FromRocks(it->status());
    std::string last = it->key().ToString();
    if (first != last) DeleteMetaRange(batch, cf, first, last);
    batch->Delete(cf, last);
  }
  return FromRocks(it->status());
}

void RocksStore::ResetCounters(int db) {
  DbCounters& c = counters_[static_cast<size_t>(db)];
  c.keys.store(0);
  c.expires.store(0);
  c.expire_sum.store(0);
}

Status RocksStore::FlushAll() {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  Records batch;
  for (int db = 0; db < physical_dbs_; ++db) {
    if (Status s = DeleteAllMetas(db, &batch); !s.ok()) return s;
  }
  // Every data key starts with a 4-byte length < 0xffffffff.
  const std::string data_end(5, '\xff');
  for (auto* cf : {hash_cf_, set_cf_, list_cf_, zset_cf_, zscore_cf_, stream_cf_}) {
    batch.DeleteRange(cf, "", data_end);
  }
  rocksdb::WriteOptions wo = write_options_;
  wo.sync = true;
  rocksdb::WriteBatch write_batch = batch.TakeBatch();
  if (Status s = WriteOwn(wo, &write_batch); !s.ok()) return s;
  for (int db = 0; db < physical_dbs_; ++db) ResetCounters(db);
  return Status::OK();
}

StatusOr<bool> RocksStore::DeleteIfExpired(std::string_view key) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup current;
  if (Status s = ReadMetaLocked(key, &current); !s.ok()) return s;
  if (!current.present || current.live) return false;
  if (Status s = DeleteKey(key, current); !s.ok()) return s;
  return true;
}

Status RocksStore::FlushDb() {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  const int db = CurrentDb();
  Records batch;
  if (Status s = DeleteAllMetas(db, &batch); !s.ok()) return s;
  rocksdb::WriteOptions wo = write_options_;
  wo.sync = true;
  rocksdb::WriteBatch write_batch = batch.TakeBatch();
  if (Status s = WriteOwn(wo, &write_batch); !s.ok()) return s;
  ResetCounters(db);
  return Status::OK();
}

Status RocksStore::SwapDb(int a, int b) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MutexLock lock(&map_mu_);
  std::vector<int> map(static_cast<size_t>(physical_dbs_));
  for (int db = 0; db < physical_dbs_; ++db) map[db] = db_map_[db].load();
  std::swap(map[a], map[b]);
  std::string bytes;
  for (int p : map) {
    bytes.push_back(static_cast<char>((p >> 8) & 0xff));
    bytes.push_back(static_cast<char>(p & 0xff));
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  if (Status s = PutOwn(wo, props_cf_, kPropsDbMapKey, bytes); !s.ok()) return s;
  db_map_[a].store(map[a], std::memory_order_release);
  db_map_[b].store(map[b], std::memory_order_release);
  return Status::OK();
}

StatusOr<bool> RocksStore::Move(std::string_view key, int db) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  const int from_db = CurrentDb();
  const int to_db = PhysicalDb(db);
  if (to_db == from_db)
    return Status::InvalidArgument("source and destination objects are the same");
  MetaLookup from, to;
  if (Status s = ReadMetaLocked(key, &from); !s.ok()) return s;
  if (!from.live) return false;
  if (Status s = ReadMetaIn(to_db, key, &to); !s.ok()) return s;
  if (to.live) return false;
  Records batch;
  // The collection keeps its version, so its entries stay where they are (see FilterContext).
  PutMeta(&batch, key, to, from.meta, to_db);
  DeleteMeta(&batch, key, from, from_db);
  if (Status s = Write(&batch); !s.ok()) return s;
  AddKeyCount(-1, from_db);
  if (!to.present) AddKeyCount(1, to_db);
  return true;
}

StatusOr<bool> RocksStore::Copy(std::string_view src, std::string_view dst, int db, bool replace) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  const int to_db = db < 0 ? CurrentDb() : PhysicalDb(db);
  MetaLookup from, to;
  if (Status s = ReadMetaLocked(src, &from); !s.ok()) return s;
  if (!from.live) return false;
  if (Status s = ReadMetaIn(to_db, dst, &to); !s.ok()) return s;
  if (to.live && !replace) return false;
  Records batch;
  Meta meta = from.meta;
  auto v = NewVersion();
  if (!v.ok()) return v.status();
  meta.version = *v;
  if (meta.type != MetaType::kString) {
    SnapshotRead snap(db_);
    if (Status s = CopyEntries(snap.options, src, from.meta, dst, meta.version, &batch); !s.ok()) {
      return s;
    }
  }
  PutMeta(&batch, dst, to, meta, to_db);
  if (Status s = Write(&batch); !s.ok()) return s;
  if (!to.present) AddKeyCount(1, to_db);
  return true;
}

StatusOr<int64_t> RocksStore::SweepExpired(
    uint64_t max_keys, const WithKeyLock& with_lock,
    const std::function<void(std::string_view key)>& on_removed) {
  // Lock order: a key's stripe before lifecycle_, as every command (it holds its keys' stripes
  // when it enters the store). So the sweep never waits for a stripe while it holds the store: it
  // lists a database's expired keys under one hold, lets the hold go, then removes each under its
  // key lock and a hold of its own. (TSan's deadlock detector reported the other order.)
  MutexLock sweep(&sweep_mu_);
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  int64_t removed = 0;
  int64_t now = NowMs();
  uint64_t examined = 0;
  // One physical database after the other, resuming where the previous call stopped.
  for (int visited = 0; visited < physical_dbs_ && examined < max_keys; ++visited) {
    if (sweep_db_ >= physical_dbs_) sweep_db_ = 0;
    DbScope scope(sweep_db_);
    std::vector<std::string> expired;  // as the iterator saw them
    bool db_done = true;
    {
      Hold hold;
      if (Status s = Enter(&hold); !s.ok()) return s;
      // Only keys with a TTL can expire: a database whose expires= counter is 0 has nothing to
      // sweep (the common cache-without-TTLs case costs no iteration at all).
      if (counters_[sweep_db_].keys.load(std::memory_order_relaxed) <= 0 ||
          counters_[sweep_db_].expires.load(std::memory_order_relaxed) <= 0) {
        sweep_has_pos_ = false;
        ++sweep_db_;
        continue;
      }
      std::unique_ptr<rocksdb::Iterator> it = NewIter(ro, MetaCf());
      if (sweep_has_pos_) {
        it->Seek(sweep_pos_);
        if (it->Valid() && it->key() == rocksdb::Slice(sweep_pos_)) it->Next();
      } else {
        it->SeekToFirst();
      }
      for (; it->Valid() && examined < max_keys; ++examined, it->Next()) {
        std::string_view key(it->key().data(), it->key().size());
        sweep_pos_.assign(key);
        sweep_has_pos_ = true;
        Meta meta;
        if (DecodeMetaHeader(std::string_view(it->value().data(), it->value().size()), &meta) &&
            meta.ExpiredAt(now)) {
          expired.emplace_back(key);
        }
      }
      if (!it->status().ok()) return FromRocks(it->status());
      db_done = !it->Valid();  // else out of budget inside this database: resume here next time
    }
    for (const std::string& key : expired) {
      // Re-check under the key's lock: a writer may have replaced it since the iterator's view.
      Status status;
      with_lock(key, [&] {
        Hold hold;
        if (status = Enter(&hold); !status.ok()) return;
        MetaLookup current;
        status = ReadMetaLocked(key, &current);
        if (!status.ok() || !current.present || current.live) return;
        status = DeleteKey(key, current);
        if (!status.ok()) return;
        ++removed;
        if (on_removed) on_removed(key);  // inside the DbScope: CurrentDb() is the key's
      });
      if (!status.ok()) return status;
    }
    if (!db_done) break;
    sweep_has_pos_ = false;  // this database is done: the next one
    ++sweep_db_;
  }
  return removed;
}

}  // namespace rockcache::storage
