// RocksStore: hashes. Entries: "hash" CF, DataKey(key, version, field) -> value; the meta's
// count is the number of fields.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "storage/numbers.h"
#include "storage/rocks_store.h"

namespace rockcache::storage {

StatusOr<int64_t> RocksStore::HSet(
    std::string_view key,
    const std::vector<std::pair<std::string_view, std::string_view>>& field_values,
    std::vector<uint8_t>* created_at) {
  if (created_at != nullptr) created_at->assign(field_values.size(), 0);
  if (field_values.empty()) return int64_t{0};
  // A later pair of the same field wins. One pair (most HSETs) needs no map.
  std::map<std::string_view, std::string_view> last;
  if (field_values.size() > 1) {
    for (const auto& [f, v] : field_values) last[f] = v;
  }
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kHash, &hold, &old, &meta); !s.ok()) return s;
  bool existed = meta.version != 0;
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  Records batch;
  int64_t created = 0;
  std::string ignored;
  std::set<std::string_view> created_fields;  // with created_at only
  auto set = [&](std::string_view field, std::string_view value) {
    bool found = false;
    if (existed) {
      Status s =
          GetEntry(rocksdb::ReadOptions(), hash_cf_, key, meta.version, field, &ignored, &found);
      if (!s.ok()) return s;
    }
    if (!found) {
      ++created;
      if (created_at != nullptr) created_fields.insert(field);
    }
    meta.CoverInHint(field);
    PutEntry(&batch, hash_cf_, key, meta.version, field, value);
    return Status::OK();
  };
  if (field_values.size() == 1) {
    if (Status s = set(field_values[0].first, field_values[0].second); !s.ok()) return s;
  }
  for (const auto& [field, value] : last) {
    if (Status s = set(field, value); !s.ok()) return s;
  }
  meta.count += static_cast<uint64_t>(created);
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  if (created_at != nullptr) {
    // The first pair of each created field: erased from the set once flagged.
    for (size_t i = 0; i < field_values.size(); ++i) {
      (*created_at)[i] = created_fields.erase(field_values[i].first) > 0;
    }
  }
  return created;
}

StatusOr<bool> RocksStore::HSetNx(std::string_view key, std::string_view field,
                                  std::string_view value) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kHash, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version != 0) {
    std::string ignored;
    bool found = false;
    Status s =
        GetEntry(rocksdb::ReadOptions(), hash_cf_, key, meta.version, field, &ignored, &found);
    if (!s.ok()) return s;
    if (found) return false;
  }
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  Records batch;
  PutEntry(&batch, hash_cf_, key, meta.version, field, value);
  meta.CoverInHint(field);
  meta.count += 1;
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return true;
}

StatusOr<std::optional<std::string>> RocksStore::HGet(std::string_view key,
                                                      std::string_view field) {
  Hold hold;
  // A point read needs no snapshot: entries of one version only change while it is live.
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kHash, &hold, /*snap=*/nullptr, &meta, &found);
      !s.ok() || !found) {
    if (!s.ok()) return s;
    return std::optional<std::string>();
  }
  std::string value;
  if (Status s =
          GetEntry(rocksdb::ReadOptions(), hash_cf_, key, meta.version, field, &value, &found);
      !s.ok()) {
    return s;
  }
  if (!found) return std::optional<std::string>();
  return std::optional<std::string>(std::move(value));
}

StatusOr<std::vector<std::optional<std::string>>> RocksStore::HMGet(
    std::string_view key, const std::vector<std::string_view>& fields) {
  Hold hold;
  SnapshotRead snap;
  std::vector<std::optional<std::string>> out(fields.size());
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kHash, &hold, &snap, &meta, &found); !s.ok()) {
    return s;
  }
  if (!found) return out;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string value;
    bool has = false;
    if (Status s = GetEntry(snap.options, hash_cf_, key, meta.version, fields[i], &value, &has);
        !s.ok()) {
      return s;
    }
    if (has) out[i] = std::move(value);
  }
  return out;
}

StatusOr<std::vector<std::pair<std::string, std::string>>> RocksStore::HGetAll(std::string_view key,
                                                                               uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  std::vector<std::pair<std::string, std::string>> out;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kHash, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  out.reserve(std::min<uint64_t>(meta.count, max_bytes / kResultItemOverhead));
  ResultBytes bytes(max_bytes);
  Status s = ForEachEntry(
      snap.options, hash_cf_, key, meta.version,
      [&](std::string_view field, std::string_view value) {
        if (!bytes.Add(field.size() + value.size())) return false;
        out.emplace_back(field, value);
        return true;
      },
      std::nullopt, false, HintOf(meta));
  if (!s.ok()) return s;
  if (bytes.over()) return Status::OverLimit();
  return out;
}

StatusOr<int64_t> RocksStore::HDel(std::string_view key,
                                   const std::vector<std::string_view>& fields) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kHash, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return int64_t{0};
  std::set<std::string_view> unique(fields.begin(), fields.end());
  Records batch;
  std::vector<std::string> gone;
  std::string ignored;
  for (auto field : unique) {
    bool found = false;
    Status s =
        GetEntry(rocksdb::ReadOptions(), hash_cf_, key, meta.version, field, &ignored, &found);
    if (!s.ok()) return s;
    if (!found) continue;
    batch.DeleteEntry(hash_cf_, key, meta.version, field);
    gone.emplace_back(field);
  }
  const auto removed = static_cast<int64_t>(gone.size());
  if (removed == 0) return int64_t{0};
  if (Status s = TightenHint(hash_cf_, key, &meta, gone, true, true); !s.ok()) return s;
  meta.count -= static_cast<uint64_t>(removed);
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return removed;
}

StatusOr<int64_t> RocksStore::HLen(std::string_view key) {
  return CollectionCount(key, MetaType::kHash);
}

StatusOr<bool> RocksStore::HExists(std::string_view key, std::string_view field) {
  auto v = HGet(key, field);
  if (!v.ok()) return v.status();
  return v->has_value();
}

StatusOr<std::vector<std::string>> RocksStore::HKeys(std::string_view key, uint64_t max_bytes) {
  auto all = HGetAll(key, max_bytes);
  if (!all.ok()) return all.status();
  std::vector<std::string> out;
  out.reserve(all->size());
  for (auto& [f, v] : *all) out.push_back(std::move(f));
  return out;
}

StatusOr<std::vector<std::string>> RocksStore::HVals(std::string_view key, uint64_t max_bytes) {
  auto all = HGetAll(key, max_bytes);
  if (!all.ok()) return all.status();
  std::vector<std::string> out;
  out.reserve(all->size());
  for (auto& [f, v] : *all) out.push_back(std::move(v));
  return out;
}

StatusOr<int64_t> RocksStore::HIncrBy(std::string_view key, std::string_view field, int64_t delta) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kHash, &hold, &old, &meta); !s.ok()) return s;
  int64_t value = 0;
  bool found = false;
  if (meta.version != 0) {
    std::string current;
    Status s =
        GetEntry(rocksdb::ReadOptions(), hash_cf_, key, meta.version, field, &current, &found);
    if (!s.ok()) return s;
    if (found && !ParseInt64(current, &value)) {
      return Status::InvalidArgument("hash value is not an integer");
    }
  }
  if ((delta < 0 && value < 0 && delta < INT64_MIN - value) ||
      (delta > 0 && value > 0 && delta > INT64_MAX - value)) {
    return Status::InvalidArgument("increment or decrement would overflow");
  }
  value += delta;
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  Records batch;
  PutEntry(&batch, hash_cf_, key, meta.version, field, FormatInt64(value));
  if (!found) meta.count += 1;
  meta.CoverInHint(field);
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return value;
}

StatusOr<std::string> RocksStore::HIncrByFloat(std::string_view key, std::string_view field,
                                               long double delta) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kHash, &hold, &old, &meta); !s.ok()) return s;
  long double value = 0;
  bool found = false;
  if (meta.version != 0) {
    std::string current;
    Status s =
        GetEntry(rocksdb::ReadOptions(), hash_cf_, key, meta.version, field, &current, &found);
    if (!s.ok()) return s;
    if (found && !ParseLongDouble(current, &value)) {
      return Status::InvalidArgument("hash value is not a float");
    }
  }
  value += delta;
  if (std::isnan(value) || std::isinf(value)) {
    return Status::InvalidArgument("increment would produce NaN or Infinity");
  }
  std::string formatted = FormatLongDouble(value);
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  Records batch;
  PutEntry(&batch, hash_cf_, key, meta.version, field, formatted);
  if (!found) meta.count += 1;
  meta.CoverInHint(field);
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return formatted;
}

StatusOr<int64_t> RocksStore::HStrLen(std::string_view key, std::string_view field) {
  auto v = HGet(key, field);
  if (!v.ok()) return v.status();
  return static_cast<int64_t>(v->has_value() ? (*v)->size() : 0);
}

StatusOr<std::vector<std::pair<std::string, std::string>>> RocksStore::HRandField(
    std::string_view key, int64_t count, uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  std::vector<std::pair<std::string, std::string>> out;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kHash, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  if (Status s = RandomEntries(snap.options, hash_cf_, key, meta, count, &out, max_bytes);
      !s.ok()) {
    return s;
  }
  return out;
}

StatusOr<PairScanResult> RocksStore::HScan(std::string_view key, uint64_t cursor,
                                           std::string_view pattern, uint64_t count) {
  Hold hold;
  SnapshotRead snap;
  PairScanResult result;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kHash, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return result;
  }
  Status s = ScanEntries(
      snap.options, hash_cf_, 'h', key, meta.version, HintOf(meta), cursor, pattern, count,
      [&](std::string_view f, std::string_view v) { result.items.emplace_back(f, v); },
      &result.next_cursor);
  if (!s.ok()) return s;
  return result;
}

}  // namespace rockcache::storage
