// RocksStore: lists. Entries: "list" CF, DataKey(key, version, BE64(index)) -> element, for every
// index in [meta.head, meta.tail) (no holes). Pushes and pops at either end are O(1) writes;
// LINSERT / LREM rewrite the part of the list after the first change (O(n), as Kvrocks).
#include <algorithm>

#include "storage/rocks_store.h"

namespace rockcache::storage {

namespace {

// LINDEX/LSET: the offset of `index`, or nullopt when out of range.
std::optional<uint64_t> IndexOffset(int64_t index, uint64_t len) {
  int64_t n = static_cast<int64_t>(len);
  if (index < 0) index = n + index;
  if (index < 0 || index >= n) return std::nullopt;
  return static_cast<uint64_t>(index);
}

// Pops of up to this many elements read them with point lookups instead of an iterator.
constexpr uint64_t kPointReadsUpTo = 8;
// Elements RPOP reads ahead inside a group (DbView::ReadAheadForBackward).
constexpr uint64_t kReadAheadBackward = 32;

}  // namespace

StatusOr<int64_t> RocksStore::LPush(std::string_view key,
                                    const std::vector<std::string_view>& elements) {
  return PushElements(key, elements, true, false);
}
StatusOr<int64_t> RocksStore::RPush(std::string_view key,
                                    const std::vector<std::string_view>& elements) {
  return PushElements(key, elements, false, false);
}
StatusOr<int64_t> RocksStore::LPushX(std::string_view key,
                                     const std::vector<std::string_view>& elements) {
  return PushElements(key, elements, true, true);
}
StatusOr<int64_t> RocksStore::RPushX(std::string_view key,
                                     const std::vector<std::string_view>& elements) {
  return PushElements(key, elements, false, true);
}

StatusOr<int64_t> RocksStore::PushElements(std::string_view key,
                                           const std::vector<std::string_view>& elements, bool left,
                                           bool only_if_exists) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kList, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0 && (only_if_exists || elements.empty())) return int64_t{0};
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  Records batch;
  for (auto e : elements) {
    uint64_t index = left ? --meta.head : meta.tail++;
    PutEntry(&batch, list_cf_, key, meta.version, EncodeListIndex(index), e);
  }
  meta.count = meta.tail - meta.head;
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return static_cast<int64_t>(meta.count);
}

StatusOr<std::optional<std::vector<std::string>>> RocksStore::PopElements(std::string_view key,
                                                                          uint64_t count,
                                                                          bool left) {
  using Result = std::optional<std::vector<std::string>>;
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kList, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return Result();
  std::vector<std::string> out;
  uint64_t n = std::min(count, meta.count);
  if (n == 0) return Result(std::move(out));
  out.reserve(n);
  uint64_t first = left ? meta.head : meta.tail - 1;
  // Bounded to [head, tail): iterators never see popped indexes.
  const std::string live_lo = EncodeListIndex(meta.head), live_hi = EncodeListIndex(meta.tail);
  Status s;
  if (n <= kPointReadsUpTo) {  // a few point reads are cheaper than an iterator
    if (!left) {               // in a group, RPOPs read the elements below them once, forward
      const uint64_t lo = first + 1 - std::min(meta.count, kReadAheadBackward);
      ReadAheadForBackward(list_cf_, DataKey(key, meta.version, EncodeListIndex(lo)),
                           DataKey(key, meta.version, EncodeListIndex(first)));
    }
    for (uint64_t i = 0; i < n && s.ok(); ++i) {
      bool found = false;
      s = GetEntry(rocksdb::ReadOptions(), list_cf_, key, meta.version,
                   EncodeListIndex(left ? first + i : first - i), &out.emplace_back(), &found,
                   left ? ReadOrder::kForward : ReadOrder::kBackward);
      if (s.ok() && !found) return Status::Corruption("list shorter than its meta");
    }
  } else {
    s = ForEachEntry(
        rocksdb::ReadOptions(), list_cf_, key, meta.version,
        [&](std::string_view, std::string_view value) {
          out.emplace_back(value);
          return out.size() < n;
        },
        EncodeListIndex(first), /*reverse=*/!left, EntryBounds{live_lo, live_hi, std::nullopt, {}});
  }
  if (!s.ok()) return s;
  if (out.size() != n) return Status::Corruption("list shorter than its meta");
  // The popped elements are not deleted: moving head or tail is enough. Every read of a list is
  // bounded to [head, tail), a push writes an index before it becomes live again, and the
  // compaction filter drops the indexes outside the live range (storage/compaction_filter.cc).
  // A pop then writes one meta record, not a tombstone per element: a queue's LPOP costs about
  // what its RPUSH did, and a drained range leaves no tombstones for later seeks to walk.
  Records batch;
  if (n < meta.count) {
    if (left) {
      meta.head += n;
    } else {
      meta.tail -= n;
    }
  }  // else: the whole list goes; deleting the meta is enough (O(1))
  meta.count -= n;
  if (Status c = Commit(&batch, key, old, meta); !c.ok()) return c;
  return Result(std::move(out));
}

StatusOr<std::optional<std::vector<std::string>>> RocksStore::LPop(std::string_view key,
                                                                   uint64_t count) {
  return PopElements(key, count, true);
}

StatusOr<std::optional<std::vector<std::string>>> RocksStore::RPop(std::string_view key,
                                                                   uint64_t count) {
  return PopElements(key, count, false);
}

StatusOr<int64_t> RocksStore::LLen(std::string_view key) {
  return CollectionCount(key, MetaType::kList);
}

Status RocksStore::ReadListSpan(const rocksdb::ReadOptions& ro, std::string_view key,
                                const Meta& meta, uint64_t begin, uint64_t end,
                                std::vector<std::string>* out, uint64_t max_bytes) {
  out->clear();
  if (begin >= end) return Status::OK();
  uint64_t want = end - begin;
  const std::string live_lo = EncodeListIndex(meta.head), live_hi = EncodeListIndex(meta.tail);
  out->reserve(std::min<uint64_t>(want, max_bytes / kResultItemOverhead));
  ResultBytes bytes(max_bytes);
  Status s = ForEachEntry(
      ro, list_cf_, key, meta.version,
      [&](std::string_view, std::string_view value) {
        if (!bytes.Add(value.size())) return false;
        out->emplace_back(value);
        return out->size() < want;
      },
      EncodeListIndex(meta.head + begin), false, EntryBounds{live_lo, live_hi, std::nullopt, {}});
  if (!s.ok()) return s;
  if (bytes.over()) return Status::OverLimit();
  if (out->size() != want) return Status::Corruption("list shorter than its meta");
  return Status::OK();
}

StatusOr<std::vector<std::string>> RocksStore::LRange(std::string_view key, int64_t start,
                                                      int64_t stop, uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  std::vector<std::string> out;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kList, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  ListSpan span = ListRangeSpan(start, stop, meta.count);
  if (Status s = ReadListSpan(snap.options, key, meta, span.begin, span.end, &out, max_bytes);
      !s.ok()) {
    return s;
  }
  return out;
}

StatusOr<ListHeadRead> RocksStore::LHead(std::string_view key, int64_t start, int64_t stop,
                                         uint64_t max_elements, uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  ListHeadRead head;
  Meta meta;
  if (Status s = BeginRead(key, MetaType::kList, &hold, &snap, &meta, &head.found);
      !s.ok() || !head.found) {
    if (!s.ok()) return s;
    return head;
  }
  head.length = meta.count;
  head.expire_at_ms = meta.expire_at_ms;
  head.span = ListRangeSpan(start, stop, meta.count);
  if (head.span.begin == head.span.end || head.span.end > max_elements) return head;
  if (Status s = ReadListSpan(snap.options, key, meta, 0, head.span.end, &head.elements, max_bytes);
      !s.ok()) {
    return s;
  }
  return head;
}

StatusOr<std::optional<std::string>> RocksStore::LIndex(std::string_view key, int64_t index) {
  Hold hold;
  SnapshotRead snap;  // indexes shift under concurrent pops: read meta and entry together
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kList, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return std::optional<std::string>();
  }
  auto offset = IndexOffset(index, meta.count);
  if (!offset) return std::optional<std::string>();
  std::string value;
  if (Status s = GetEntry(snap.options, list_cf_, key, meta.version,
                          EncodeListIndex(meta.head + *offset), &value, &found);
      !s.ok()) {
    return s;
  }
  if (!found) return Status::Corruption("list shorter than its meta");
  return std::optional<std::string>(std::move(value));
}

Status RocksStore::LSet(std::string_view key, int64_t index, std::string_view element) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kList, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return Status::InvalidArgument("no such key");
  auto offset = IndexOffset(index, meta.count);
  if (!offset) return Status::InvalidArgument("index out of range");
  Records batch;
  PutEntry(&batch, list_cf_, key, meta.version, EncodeListIndex(meta.head + *offset), element);
  return Write(&batch);
}

StatusOr<int64_t> RocksStore::LRem(std::string_view key, int64_t count, std::string_view element) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kList, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return int64_t{0};
  std::vector<std::string> all;
  if (Status s = ReadListSpan(rocksdb::ReadOptions(), key, meta, 0, meta.count, &all); !s.ok()) {
    return s;
  }
  std::vector<bool> remove(all.size(), false);
  uint64_t limit = count == 0 ? UINT64_MAX
                              : (count > 0 ? static_cast<uint64_t>(count)
                                           : static_cast<uint64_t>(-(count + 1)) + 1);
  uint64_t removed = 0;
  for (size_t k = 0; k < all.size() && removed < limit; ++k) {
    size_t i = count >= 0 ? k : all.size() - 1 - k;
    if (all[i] == element) {
      remove[i] = true;
      ++removed;
    }
  }
  if (removed == 0) return int64_t{0};
  // Rewrite everything from the first removed element on, without the removed ones.
  size_t first =
      static_cast<size_t>(std::find(remove.begin(), remove.end(), true) - remove.begin());
  Records batch;
  uint64_t next = meta.head + first;
  for (size_t i = first; i < all.size(); ++i) {
    if (remove[i]) continue;
    PutEntry(&batch, list_cf_, key, meta.version, EncodeListIndex(next++), all[i]);
  }
  DeleteEntries(&batch, list_cf_, key, meta.version, next, meta.tail);
  meta.tail = next;
  meta.count = meta.tail - meta.head;
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return static_cast<int64_t>(removed);
}

Status RocksStore::LTrim(std::string_view key, int64_t start, int64_t stop) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kList, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return Status::OK();
  ListSpan keep = ListRangeSpan(start, stop, meta.count);
  if (keep.begin == 0 && keep.end == meta.count) return Status::OK();
  Records batch;
  if (keep.begin < keep.end) {
    DeleteEntries(&batch, list_cf_, key, meta.version, meta.head, meta.head + keep.begin);
    DeleteEntries(&batch, list_cf_, key, meta.version, meta.head + keep.end, meta.tail);
    meta.tail = meta.head + keep.end;
    meta.head += keep.begin;
  }  // else: everything goes; deleting the meta is enough
  meta.count = keep.begin < keep.end ? meta.tail - meta.head : 0;
  return Commit(&batch, key, old, meta);
}

StatusOr<int64_t> RocksStore::LInsert(std::string_view key, bool before, std::string_view pivot,
                                      std::string_view element) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kList, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return int64_t{0};
  std::vector<std::string> all;
  if (Status s = ReadListSpan(rocksdb::ReadOptions(), key, meta, 0, meta.count, &all); !s.ok()) {
    return s;
  }
  auto it = std::find(all.begin(), all.end(), pivot);
  if (it == all.end()) return int64_t{-1};
  size_t at = static_cast<size_t>(it - all.begin()) + (before ? 0 : 1);
  // Shift [at, end) one slot towards the tail and put the element at `at`.
  Records batch;
  PutEntry(&batch, list_cf_, key, meta.version, EncodeListIndex(meta.head + at), element);
  for (size_t i = at; i < all.size(); ++i) {
    PutEntry(&batch, list_cf_, key, meta.version, EncodeListIndex(meta.head + i + 1), all[i]);
  }
  meta.tail += 1;
  meta.count += 1;
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return static_cast<int64_t>(meta.count);
}

StatusOr<std::vector<int64_t>> RocksStore::LPos(std::string_view key, std::string_view element,
                                                int64_t rank, uint64_t count, uint64_t maxlen) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  if (rank == 0) {
    return Status::InvalidArgument(
        "RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
        "negative to start from the last match");
  }
  SnapshotRead snap(db_);
  std::vector<int64_t> out;
  Meta meta;
  bool found = false;
  if (Status s = LoadForRead(snap.options, key, MetaType::kList, &meta, &found);
      !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  bool reverse = rank < 0;
  uint64_t skip =
      (reverse ? static_cast<uint64_t>(-(rank + 1)) + 1 : static_cast<uint64_t>(rank)) - 1;
  uint64_t compared = 0;
  uint64_t offset = reverse ? meta.count - 1 : 0;
  Status s = ForEachEntry(
      snap.options, list_cf_, key, meta.version,
      [&](std::string_view, std::string_view value) {
        if (maxlen != 0 && compared >= maxlen) return false;
        ++compared;
        if (value == element) {
          if (skip > 0) {
            --skip;
          } else {
            out.push_back(static_cast<int64_t>(offset));
            if (count != 0 && out.size() >= count) return false;
          }
        }
        reverse ? --offset : ++offset;
        return true;
      },
      EncodeListIndex(reverse ? meta.tail - 1 : meta.head), reverse,
      EntryBounds{EncodeListIndex(meta.head), EncodeListIndex(meta.tail), std::nullopt, {}});
  if (!s.ok()) return s;
  return out;
}

StatusOr<std::optional<std::string>> RocksStore::LMove(std::string_view src, std::string_view dst,
                                                       ListEnd from, ListEnd to) {
  using Result = std::optional<std::string>;
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup src_old;
  Meta src_meta;
  if (Status s = LoadForWrite(src, MetaType::kList, &src_old, &src_meta); !s.ok()) return s;
  if (src_meta.version == 0) return Result();
  bool same = src == dst;
  MetaLookup dst_old;
  Meta dst_meta;
  if (!same) {
    if (Status s = LoadForWrite(dst, MetaType::kList, &dst_old, &dst_meta); !s.ok()) return s;
  }
  // Pop.
  uint64_t index = from == ListEnd::kLeft ? src_meta.head : src_meta.tail - 1;
  std::string element;
  bool found = false;
  if (Status s = GetEntry(rocksdb::ReadOptions(), list_cf_, src, src_meta.version,
                          EncodeListIndex(index), &element, &found);
      !s.ok()) {
    return s;
  }
  if (!found) return Status::Corruption("list shorter than its meta");
  Records batch;
  batch.DeleteEntry(list_cf_, src, src_meta.version, EncodeListIndex(index));
  from == ListEnd::kLeft ? ++src_meta.head : --src_meta.tail;
  src_meta.count -= 1;
  // Push (onto the same meta when src == dst).
  Meta& target = same ? src_meta : dst_meta;
  if (Status s = EnsureVersion(&target); !s.ok()) return s;
  uint64_t at = to == ListEnd::kLeft ? --target.head : target.tail++;
  PutEntry(&batch, list_cf_, dst, target.version, EncodeListIndex(at), element);
  target.count += 1;
  if (same) {
    if (Status s = Commit(&batch, src, src_old, src_meta); !s.ok()) return s;
    return Result(std::move(element));
  }
  // Two metas in one batch: Commit's batch write covers both; count the keys by hand.
  int64_t delta = 0;
  if (src_meta.count == 0) {
    DeleteMeta(&batch, src, src_old);
    delta -= 1;
  } else {
    PutMeta(&batch, src, src_old, src_meta);
  }
  PutMeta(&batch, dst, dst_old, dst_meta);
  if (!dst_old.present) delta += 1;
  if (Status s = Write(&batch); !s.ok()) return s;
  AddKeyCount(delta);
  return Result(std::move(element));
}

}  // namespace rockcache::storage
