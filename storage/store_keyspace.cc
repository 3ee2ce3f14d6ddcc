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

bool StartsWith(const rocksdb::Slice& s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::memcmp(s.data(), prefix.data(), prefix.size()) == 0;
}

}  // namespace

StatusOr<int64_t> RocksStore::Del(const std::vector<std::string_view>& keys) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::set<std::string_view> unique(keys.begin(), keys.end());
  rocksdb::WriteBatch batch;
  int64_t removed = 0;
  int64_t present = 0;
  for (auto key : unique) {
    MetaLookup old;
    if (Status s = ReadMetaLocked(key, &old); !s.ok()) return s;
    if (!old.present) continue;
    DeleteMeta(&batch, key);
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
    rocksdb::WriteBatch batch;
    PutMeta(&batch, key, meta);
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
  rocksdb::WriteBatch batch;
  PutMeta(&batch, key, meta);
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
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_cf_));
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
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_cf_));
  ScanResult result;
  int64_t now = NowMs();
  bool over = false;
  Status s = ScanStep(
      it.get(), "", "", cursor, count,
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
  return std::max<int64_t>(0, key_count_.load(std::memory_order_relaxed));
}

Status RocksStore::FlushAll() {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  rocksdb::WriteBatch batch;
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_cf_));
    it->SeekToFirst();
    if (it->Valid()) {
      std::string first = it->key().ToString();
      it->SeekToLast();
      if (!it->Valid()) return FromRocks(it->status());
      std::string last = it->key().ToString();
      if (first != last) batch.DeleteRange(meta_cf_, first, last);
      batch.Delete(meta_cf_, last);
    }
    if (!it->status().ok()) return FromRocks(it->status());
  }
  // Every data key starts with a 4-byte length < 0xffffffff.
  const std::string data_end(5, '\xff');
  for (auto* cf : {hash_cf_, set_cf_, list_cf_, zset_cf_, zscore_cf_, stream_cf_}) {
    batch.DeleteRange(cf, "", data_end);
  }
  rocksdb::WriteOptions wo = write_options_;
  wo.sync = true;
  if (Status s = FromRocks(db_->Write(wo, &batch)); !s.ok()) return s;
  key_count_.store(0);
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

StatusOr<int64_t> RocksStore::SweepExpired(
    uint64_t max_keys, const WithKeyLock& with_lock,
    const std::function<void(std::string_view key)>& on_removed) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::lock_guard<std::mutex> sweep(sweep_mu_);
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_cf_));
  if (sweep_has_pos_) {
    it->Seek(sweep_pos_);
    if (it->Valid() && it->key() == rocksdb::Slice(sweep_pos_)) it->Next();
  } else {
    it->SeekToFirst();
  }
  int64_t removed = 0;
  int64_t now = NowMs();
  for (uint64_t examined = 0; it->Valid() && examined < max_keys; ++examined, it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    sweep_pos_.assign(key);
    sweep_has_pos_ = true;
    Meta meta;
    if (!DecodeMetaHeader(std::string_view(it->value().data(), it->value().size()), &meta) ||
        !meta.ExpiredAt(now)) {
      continue;
    }
    // Re-check under the key's lock: a writer may have replaced it since the iterator's view.
    Status status;
    with_lock(key, [&] {
      MetaLookup current;
      status = ReadMetaLocked(key, &current);
      if (!status.ok() || !current.present || current.live) return;
      status = DeleteKey(key, current);
      if (!status.ok()) return;
      ++removed;
      if (on_removed) on_removed(key);
    });
    if (!status.ok()) return status;
  }
  if (!it->status().ok()) return FromRocks(it->status());
  if (!it->Valid()) sweep_has_pos_ = false;  // wrapped: the next call starts over
  return removed;
}

}  // namespace rockcache::storage
