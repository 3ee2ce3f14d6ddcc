// RocksStore: streams. Entries: "stream" CF, DataKey(key, version, EncodeStreamId(id)) ->
// EncodeStreamFields(fields). The meta keeps the last id ever added and the live bounds
// [first_id, top_id] (encoding.h); every read iterates within them (and within the asked range),
// and trims/deletes at either end move them, so tombstones of trimmed entries are never walked.
// Unlike other collections, a stream with no entries stays (Redis keeps it, with its last id).
#include <algorithm>
#include <chrono>
#include <set>

#include "storage/rocks_store.h"

namespace rockcache::storage {

namespace {

// Trims of more entries than this delete them with one range tombstone instead of point deletes
// (range tombstones cost every iterator of the memtable: keep them for big trims).
constexpr uint64_t kPointDeletesUpTo = 64;

}  // namespace

StatusOr<uint64_t> RocksStore::TrimStream(std::string_view key, Meta* meta, const StreamTrim& trim,
                                          std::optional<StreamId> pending, Records* batch) {
  if (trim.strategy == StreamTrim::Strategy::kNone || meta->count == 0) return uint64_t{0};
  uint64_t want = 0;  // entries to remove from the front (kMaxLen); kMinId: decided per entry
  if (trim.strategy == StreamTrim::Strategy::kMaxLen) {
    if (meta->count <= trim.maxlen) return uint64_t{0};
    want = meta->count - trim.maxlen;
  }
  if (trim.limit != 0 && (want == 0 || want > trim.limit)) want = trim.limit;
  auto removes = [&](StreamId id, uint64_t removed) {
    if (trim.strategy == StreamTrim::Strategy::kMaxLen) return removed < want;
    return id < trim.minid && (want == 0 || removed < want);
  };
  // The stored entries are [first_id, stored_top]; `pending` (if any) is above them.
  uint64_t stored = meta->count - (pending ? 1 : 0);
  uint64_t removed = 0;
  std::vector<std::string> point;  // sub-keys, while few
  std::optional<StreamId> new_first;
  if (stored > 0) {
    const std::string lo = EncodeStreamId(meta->first_id);
    StreamId stored_top = meta->top_id;
    if (pending) stored_top.Decr();  // pending == top_id; nothing stored is above pending - 1
    std::string hi = EncodeStreamId(stored_top);
    hi = ImmediateSuccessor(hi);
    Status s = ForEachEntry(
        rocksdb::ReadOptions(), stream_cf_, key, meta->version,
        [&](std::string_view sub, std::string_view) {
          StreamId id = DecodeStreamId(sub.data());
          if (!removes(id, removed)) {
            new_first = id;
            return false;
          }
          if (point.size() <= kPointDeletesUpTo) point.emplace_back(sub);
          ++removed;
          return true;
        },
        std::nullopt, false, EntryBounds{lo, std::string_view(hi), std::nullopt, {}});
    if (!s.ok()) return s;
  }
  if (!new_first && pending) {
    if (removes(*pending, removed)) {
      point.push_back(EncodeStreamId(*pending));
      ++removed;
    } else {
      new_first = *pending;
    }
  }
  if (removed == 0) return uint64_t{0};
  if (removed <= kPointDeletesUpTo) {
    for (const auto& sub : point) batch->DeleteEntry(stream_cf_, key, meta->version, sub);
  } else {
    std::string end =
        new_first ? EncodeStreamId(*new_first) : ImmediateSuccessor(EncodeStreamId(meta->top_id));
    DeleteDataRange(batch, stream_cf_, DataKey(key, meta->version, EncodeStreamId(meta->first_id)),
                    DataKey(key, meta->version, end));
  }
  meta->count -= removed;
  meta->first_id = new_first ? *new_first : meta->last_id;
  if (!new_first) meta->top_id = meta->last_id;
  return removed;
}

StatusOr<std::optional<StreamId>> RocksStore::XAdd(
    std::string_view key, const XAddSpec& spec,
    const std::vector<std::pair<std::string_view, std::string_view>>& fields, uint64_t* trimmed) {
  using Result = std::optional<StreamId>;
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0 && spec.nomkstream) return Result();
  if (meta.last_id == StreamId::Max()) {
    return Status::InvalidArgument(
        "The stream has exhausted the last possible ID, unable to add more items");
  }
  const Status too_small = Status::InvalidArgument(
      "The ID specified in XADD is equal or smaller than the target stream top item");
  StreamId id;
  switch (spec.id_kind) {
    case XAddSpec::IdKind::kAuto: {  // Redis's streamNextID
      auto now = static_cast<uint64_t>(NowMs());
      if (now > meta.last_id.ms) {
        id = StreamId{now, 0};
      } else {
        id = meta.last_id;
        id.Incr();
      }
      break;
    }
    case XAddSpec::IdKind::kAutoSeq:
      if (meta.last_id.ms == spec.id.ms) {
        if (meta.last_id.seq == UINT64_MAX) return too_small;
        id = StreamId{spec.id.ms, meta.last_id.seq + 1};
      } else {
        id = StreamId{spec.id.ms, 0};
      }
      break;
    case XAddSpec::IdKind::kExplicit:
      id = spec.id;
      break;
  }
  if (id <= meta.last_id) return too_small;
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  Records batch;
  PutEntry(&batch, stream_cf_, key, meta.version, EncodeStreamId(id), EncodeStreamFields(fields));
  if (meta.count == 0) meta.first_id = id;
  meta.count += 1;
  meta.entries_added += 1;
  meta.last_id = meta.top_id = id;
  auto removed = TrimStream(key, &meta, spec.trim, id, &batch);
  if (!removed.ok()) return removed.status();
  PutMeta(&batch, key, old, meta);
  if (Status s = Write(&batch); !s.ok()) return s;
  if (!old.present) AddKeyCount(1);
  if (trimmed != nullptr) *trimmed = *removed;
  return Result(id);
}

StatusOr<int64_t> RocksStore::XLen(std::string_view key) {
  return CollectionCount(key, MetaType::kStream);
}

StatusOr<std::vector<StreamEntry>> RocksStore::XRange(std::string_view key, StreamId start,
                                                      StreamId end, bool reverse, uint64_t count,
                                                      uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  std::vector<StreamEntry> out;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kStream, &hold, &snap, &meta, &found);
      !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  start = std::max(start, meta.first_id);
  end = std::min(end, meta.top_id);
  if (meta.count == 0 || start > end) return out;
  const std::string lo = EncodeStreamId(start);
  const std::string hi = ImmediateSuccessor(EncodeStreamId(end));
  ResultBytes bytes(max_bytes);
  Status corrupt;
  Status s = ForEachEntry(
      snap.options, stream_cf_, key, meta.version,
      [&](std::string_view sub, std::string_view value) {
        if (!bytes.Add(value.size())) return false;
        StreamEntry& entry = out.emplace_back();
        entry.id = DecodeStreamId(sub.data());
        if (!DecodeStreamFields(value, &entry.fields)) {
          corrupt = Status::Corruption("bad stream entry");
          return false;
        }
        return count == 0 || out.size() < count;
      },
      std::nullopt, reverse, EntryBounds{lo, std::string_view(hi), std::nullopt, {}});
  if (!s.ok()) return s;
  if (!corrupt.ok()) return corrupt;
  if (bytes.over()) return Status::OverLimit();
  return out;
}

StatusOr<int64_t> RocksStore::XDel(std::string_view key, const std::vector<StreamId>& ids) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0 || meta.count == 0) return int64_t{0};
  std::set<std::string> gone;
  Records batch;
  for (StreamId id : ids) {
    if (id < meta.first_id || id > meta.top_id) continue;
    std::string sub = EncodeStreamId(id);
    if (gone.count(sub)) continue;
    std::string value;
    bool found = false;
    if (Status s =
            GetEntry(rocksdb::ReadOptions(), stream_cf_, key, meta.version, sub, &value, &found);
        !s.ok()) {
      return s;
    }
    if (!found) continue;
    batch.DeleteEntry(stream_cf_, key, meta.version, sub);
    gone.insert(std::move(sub));
    meta.max_deleted_id = std::max(meta.max_deleted_id, id);
  }
  if (gone.empty()) return int64_t{0};
  meta.count -= gone.size();
  if (meta.count == 0) {
    meta.first_id = meta.top_id = meta.last_id;
  } else {
    // Move the live bounds past deleted entries at either end: the walk steps over the entries
    // deleted now (and tombstones of earlier middle deletions, once: the bound then passes them).
    const std::string lo = EncodeStreamId(meta.first_id);
    const std::string hi = ImmediateSuccessor(EncodeStreamId(meta.top_id));
    for (bool reverse : {false, true}) {
      const std::string& end_sub = reverse ? *gone.rbegin() : *gone.begin();
      if (end_sub != EncodeStreamId(reverse ? meta.top_id : meta.first_id)) continue;
      Status s = ForEachEntry(
          rocksdb::ReadOptions(), stream_cf_, key, meta.version,
          [&](std::string_view sub, std::string_view) {
            if (gone.count(std::string(sub))) return true;
            (reverse ? meta.top_id : meta.first_id) = DecodeStreamId(sub.data());
            return false;
          },
          std::nullopt, reverse, EntryBounds{lo, std::string_view(hi), std::nullopt, {}});
      if (!s.ok()) return s;
    }
  }
  PutMeta(&batch, key, old, meta);
  if (Status s = Write(&batch); !s.ok()) return s;
  return static_cast<int64_t>(gone.size());
}

StatusOr<int64_t> RocksStore::XTrim(std::string_view key, const StreamTrim& trim) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return int64_t{0};
  Records batch;
  auto removed = TrimStream(key, &meta, trim, std::nullopt, &batch);
  if (!removed.ok()) return removed.status();
  if (*removed == 0) return int64_t{0};
  PutMeta(&batch, key, old, meta);
  if (Status s = Write(&batch); !s.ok()) return s;
  return static_cast<int64_t>(*removed);
}

}  // namespace rockcache::storage
