// RocksStore: whole values — ReadValue (DUMP) reads a key and every element over one snapshot;
// WriteValue (RESTORE, RDB import) writes a key and every element as one WriteBatch.
#include <algorithm>

#include "storage/rocks_store.h"
#include "storage/stream_groups.h"

namespace rockcache::storage {

StatusOr<std::optional<KeyValue>> RocksStore::ReadValue(std::string_view key, uint64_t max_bytes) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  SnapshotRead snap(db_);
  MetaLookup lookup;
  if (Status s = ReadMeta(snap.options, key, &lookup); !s.ok()) return s;
  if (!lookup.live) return std::optional<KeyValue>();
  const Meta& meta = lookup.meta;
  KeyValue value;
  value.type = ToKeyType(meta.type);
  value.expire_at_ms = meta.expire_at_ms;
  ResultBytes bytes(max_bytes);
  Status corrupt;
  Status s;
  switch (meta.type) {
    case MetaType::kString:
      if (!bytes.Add(meta.value.size())) return Status::OverLimit();
      value.string = meta.value;
      return std::optional<KeyValue>(std::move(value));
    case MetaType::kList:
      s = ReadListSpan(snap.options, key, meta, 0, meta.count, &value.elements, max_bytes);
      break;
    case MetaType::kSet:
      value.elements.reserve(std::min<uint64_t>(meta.count, max_bytes / kResultItemOverhead));
      s = ForEachEntry(
          snap.options, set_cf_, key, meta.version,
          [&](std::string_view sub, std::string_view) {
            if (!bytes.Add(sub.size())) return false;
            value.elements.emplace_back(sub);
            return true;
          },
          std::nullopt, false, HintOf(meta));
      break;
    case MetaType::kHash:
      value.pairs.reserve(std::min<uint64_t>(meta.count, max_bytes / kResultItemOverhead));
      s = ForEachEntry(
          snap.options, hash_cf_, key, meta.version,
          [&](std::string_view sub, std::string_view v) {
            if (!bytes.Add(sub.size() + v.size())) return false;
            value.pairs.emplace_back(sub, v);
            return true;
          },
          std::nullopt, false, HintOf(meta));
      break;
    case MetaType::kZSet:
      value.members.reserve(std::min<uint64_t>(meta.count, max_bytes / kResultItemOverhead));
      s = ForEachEntry(
          snap.options, zscore_cf_, key, meta.version,
          [&](std::string_view sub, std::string_view) {
            if (sub.size() < 8) {
              corrupt = Status::Corruption("bad score index entry");
              return false;
            }
            if (!bytes.Add(sub.size())) return false;
            value.members.push_back(
                ScoredMember{std::string(sub.substr(8)), DecodeScore(sub.data())});
            return true;
          },
          std::nullopt, false, HintOf(meta));
      break;
    case MetaType::kStream: {
      value.stream_last_id = meta.last_id;
      value.stream_max_deleted_id = meta.max_deleted_id;
      value.stream_entries_added = meta.entries_added;
      if (meta.groups > 0) {
        s = StreamGroups(this, key, meta, snap.options).ReadAll(&value.stream_groups);
        if (!s.ok()) return s;
      }
      if (meta.count == 0) break;
      const std::string lo = EncodeStreamId(meta.first_id);
      const std::string hi = ImmediateSuccessor(EncodeStreamId(meta.top_id));
      s = ForEachEntry(
          snap.options, stream_cf_, key, meta.version,
          [&](std::string_view sub, std::string_view v) {
            if (!bytes.Add(v.size())) return false;
            StreamEntry& entry = value.entries.emplace_back();
            entry.id = DecodeStreamId(sub.data());
            if (!DecodeStreamFields(v, &entry.fields)) {
              corrupt = Status::Corruption("bad stream entry");
              return false;
            }
            return true;
          },
          std::nullopt, false, EntryBounds{lo, std::string_view(hi), std::nullopt, {}});
      break;
    }
  }
  if (!s.ok()) return s;
  if (!corrupt.ok()) return corrupt;
  if (bytes.over()) return Status::OverLimit();
  return std::optional<KeyValue>(std::move(value));
}

StatusOr<bool> RocksStore::WriteValue(std::string_view key, const KeyValue& value, bool replace) {
  Hold hold;
  MetaLookup old;
  if (Status s = BeginWrite(key, &hold, &old); !s.ok()) return s;
  if (old.live && !replace) return false;
  if (value.type == KeyType::kString) {
    if (Status s = WriteString(key, old, value.string, value.expire_at_ms); !s.ok()) return s;
    return true;
  }
  Meta meta;
  meta.expire_at_ms = value.expire_at_ms;
  auto version = NewVersion();
  if (!version.ok()) return version.status();
  meta.version = *version;
  Records batch;
  switch (value.type) {
    case KeyType::kList:
      meta.type = MetaType::kList;
      meta.count = value.elements.size();
      meta.head = kListInitialIndex;
      meta.tail = meta.head + meta.count;
      for (uint64_t i = 0; i < meta.count; ++i) {
        PutEntry(&batch, list_cf_, key, meta.version, EncodeListIndex(meta.head + i),
                 value.elements[i]);
      }
      break;
    case KeyType::kSet:
      meta.type = MetaType::kSet;
      meta.count = value.elements.size();
      for (const auto& m : value.elements) PutEntry(&batch, set_cf_, key, meta.version, m, "");
      break;
    case KeyType::kHash:
      meta.type = MetaType::kHash;
      meta.count = value.pairs.size();
      for (const auto& [f, v] : value.pairs) PutEntry(&batch, hash_cf_, key, meta.version, f, v);
      break;
    case KeyType::kZSet:
      meta.type = MetaType::kZSet;
      meta.count = value.members.size();
      for (const auto& m : value.members) PutZMember(&batch, key, meta.version, m.member, m.score);
      break;
    case KeyType::kStream:
      meta.type = MetaType::kStream;
      meta.count = value.entries.size();
      meta.last_id = value.stream_last_id;
      meta.first_id = meta.count ? value.entries.front().id : value.stream_last_id;
      meta.top_id = meta.count ? value.entries.back().id : value.stream_last_id;
      meta.max_deleted_id = value.stream_max_deleted_id;
      meta.entries_added =
          value.stream_entries_added == 0 ? meta.count : value.stream_entries_added;
      if (Status s = StreamGroups::PutAll(this, &batch, key, &meta, value.stream_groups); !s.ok()) {
        return s;
      }
      for (const auto& entry : value.entries) {
        std::vector<std::pair<std::string_view, std::string_view>> fields;
        fields.reserve(entry.fields.size());
        for (const auto& [f, v] : entry.fields) fields.emplace_back(f, v);
        PutEntry(&batch, stream_cf_, key, meta.version, EncodeStreamId(entry.id),
                 EncodeStreamFields(fields));
      }
      break;
    default:
      return Status::InvalidArgument("Bad data format");
  }
  // The old key (any type) is replaced by the new meta; its entries are left under their old
  // version to the compaction filter, as DEL leaves them.
  PutMeta(&batch, key, old, meta);
  if (Status s = Write(&batch); !s.ok()) return s;
  if (!old.present) AddKeyCount(1);
  return true;
}

}  // namespace rockcache::storage
