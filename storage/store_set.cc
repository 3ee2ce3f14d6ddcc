// RocksStore: sets. Entries: "set" CF, DataKey(key, version, member) -> "".
#include <algorithm>
#include <random>
#include <set>

#include "storage/rocks_store.h"

namespace rockcache::storage {

StatusOr<int64_t> RocksStore::SAdd(std::string_view key,
                                   const std::vector<std::string_view>& members,
                                   std::vector<uint8_t>* added_at) {
  if (added_at != nullptr) added_at->assign(members.size(), 0);
  std::set<std::string_view> unique(members.begin(), members.end());
  if (unique.empty()) return int64_t{0};
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kSet, &hold, &old, &meta); !s.ok()) return s;
  bool existed = meta.version != 0;
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  Records batch;
  int64_t added = 0;
  std::string ignored;
  for (auto it = unique.begin(); it != unique.end();) {
    bool found = false;
    if (existed) {
      Status s =
          GetEntry(rocksdb::ReadOptions(), set_cf_, key, meta.version, *it, &ignored, &found);
      if (!s.ok()) return s;
    }
    if (found) {  // what stays in `unique` was added
      it = unique.erase(it);
      continue;
    }
    PutEntry(&batch, set_cf_, key, meta.version, *it, "");
    meta.CoverInHint(*it);
    ++added;
    ++it;
  }
  if (added == 0) return int64_t{0};
  meta.count += static_cast<uint64_t>(added);
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  if (added_at != nullptr) {
    // The first occurrence of each added member: erased from `unique` once flagged.
    for (size_t i = 0; i < members.size(); ++i) (*added_at)[i] = unique.erase(members[i]) > 0;
  }
  return added;
}

StatusOr<int64_t> RocksStore::SRem(std::string_view key,
                                   const std::vector<std::string_view>& members) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kSet, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return int64_t{0};
  std::set<std::string_view> unique(members.begin(), members.end());
  Records batch;
  std::vector<std::string> gone;
  std::string ignored;
  for (auto m : unique) {
    bool found = false;
    Status s = GetEntry(rocksdb::ReadOptions(), set_cf_, key, meta.version, m, &ignored, &found);
    if (!s.ok()) return s;
    if (!found) continue;
    batch.DeleteEntry(set_cf_, key, meta.version, m);
    gone.emplace_back(m);
  }
  const auto removed = static_cast<int64_t>(gone.size());
  if (removed == 0) return int64_t{0};
  if (Status s = TightenHint(set_cf_, key, &meta, gone, true, true); !s.ok()) return s;
  meta.count -= static_cast<uint64_t>(removed);
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return removed;
}

StatusOr<std::vector<std::string>> RocksStore::SMembers(std::string_view key, uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  std::vector<std::string> out;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  out.reserve(std::min<uint64_t>(meta.count, max_bytes / kResultItemOverhead));
  ResultBytes bytes(max_bytes);
  Status s = ForEachEntry(
      snap.options, set_cf_, key, meta.version,
      [&](std::string_view m, std::string_view) {
        if (!bytes.Add(m.size())) return false;
        out.emplace_back(m);
        return true;
      },
      std::nullopt, false, HintOf(meta));
  if (!s.ok()) return s;
  if (bytes.over()) return Status::OverLimit();
  return out;
}

StatusOr<bool> RocksStore::SIsMember(std::string_view key, std::string_view member) {
  auto r = SMIsMember(key, {member});
  if (!r.ok()) return r.status();
  return static_cast<bool>((*r)[0]);
}

StatusOr<std::vector<bool>> RocksStore::SMIsMember(std::string_view key,
                                                   const std::vector<std::string_view>& members) {
  Hold hold;
  SnapshotRead snap;
  std::vector<bool> out(members.size(), false);
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  std::string ignored;
  for (size_t i = 0; i < members.size(); ++i) {
    bool has = false;
    if (Status s = GetEntry(snap.options, set_cf_, key, meta.version, members[i], &ignored, &has);
        !s.ok()) {
      return s;
    }
    out[i] = has;
  }
  return out;
}

StatusOr<int64_t> RocksStore::SCard(std::string_view key) {
  return CollectionCount(key, MetaType::kSet);
}

// SPOP picks among the first count + kSPopWindow live members from the hint on (see the front
// bias below), then moves the hint past the front. So a pop costs O(count + window) whatever was
// popped before: popping uniformly over the whole set
// would scatter tombstones that every later pop walks (O(n^2) to drain). Redis's SPOP is not
// uniform either (it picks a random bucket, then a random entry of its chain).
constexpr uint64_t kSPopWindow = 16;

StatusOr<std::vector<std::string>> RocksStore::SPop(std::string_view key, uint64_t count) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kSet, &hold, &old, &meta); !s.ok()) return s;
  std::vector<std::string> out;
  if (meta.version == 0 || count == 0) return out;
  uint64_t n = std::min(count, meta.count);
  uint64_t window = n >= meta.count ? meta.count : std::min(meta.count, n + kSPopWindow);
  thread_local std::mt19937_64 rng(std::random_device{}());
  // Reads the first `want` members from the hint on into `candidates`.
  std::vector<std::string> candidates;
  auto read_front = [&](uint64_t want) -> Status {
    candidates.reserve(std::min<uint64_t>(want, 65536));
    Status s = ForEachEntry(
        rocksdb::ReadOptions(), set_cf_, key, meta.version,
        [&](std::string_view sub, std::string_view) {
          candidates.emplace_back(sub);
          return candidates.size() < want;
        },
        std::nullopt, false, HintOf(meta));
    if (!s.ok()) return s;
    if (candidates.size() < want) return Status::Corruption("set shorter than its meta");
    return Status::OK();
  };
  std::vector<std::string>* kept = nullptr;  // the members read ahead (FrontEntries)
  std::string new_lo;
  if (n * 2 >= window) {
    if (Status s = read_front(window); !s.ok()) return s;
    // The new front of the hint: the first window member left, else just past the window.
    new_lo = ImmediateSuccessor(candidates.back());
    // Most of the window goes: the members before its last 2 * kSPopWindow all go, and the rest
    // of the picks are uniform among those last ones, so the survivors (and the tombstones left
    // between them) stay within 2 * kSPopWindow entries.
    const size_t head = candidates.size() - std::min<size_t>(candidates.size(), 2 * kSPopWindow);
    for (uint64_t i = head; i < n; ++i) {
      std::uniform_int_distribution<size_t> pick(i, candidates.size() - 1);
      std::swap(candidates[i], candidates[pick(rng)]);
    }
    if (n < candidates.size()) {
      new_lo = *std::min_element(candidates.begin() + static_cast<long>(n), candidates.end());
    }
    candidates.resize(n);
  } else {
    // Each pick is the front-most remaining window position with probability 1/2, else uniform
    // among the window. The front bias is what bounds the work: with uniform picks alone a lucky
    // early member survives ever longer while tombstones pile up behind it (~window * ln(pops)).
    // The positions are chosen first, so that only the members up to the last one needed (a
    // pick, or the new front) are read: ~6 of the 17 for a single pop.
    std::vector<bool> taken(window, false);
    std::vector<size_t> picks;
    picks.reserve(n);
    size_t front = 0;
    std::uniform_int_distribution<size_t> any(0, window - 1);
    while (picks.size() < n) {
      size_t i = front;
      if (rng() & 1) {
        do {
          i = any(rng);
        } while (taken[i]);
      }
      taken[i] = true;
      picks.push_back(i);
      while (front < taken.size() && taken[front]) ++front;
    }
    // front < window: n * 2 < window leaves members untaken.
    const size_t last = std::max(front, *std::max_element(picks.begin(), picks.end()));
    // In a group or a transaction, the next SPOP of this set picks from what this one read and
    // did not take (FrontEntries) while nothing else is written.
    auto front_entries = FrontEntries(set_cf_, key, meta, last + 1);
    if (!front_entries.ok()) return front_entries.status();
    kept = *front_entries;
    std::vector<std::string>* members = kept;
    if (kept == nullptr) {
      if (Status s = read_front(last + 1); !s.ok()) return s;
      members = &candidates;
    } else if (kept->size() <= last) {
      return Status::Corruption("set shorter than its meta");
    }
    new_lo = (*members)[front];
    std::vector<std::string> popped;
    popped.reserve(n);
    for (size_t i : picks) popped.push_back(std::move((*members)[i]));
    if (kept != nullptr) {  // keep the members not taken, in order
      size_t left = 0;
      for (size_t i = 0; i < kept->size(); ++i) {
        if (i < taken.size() && taken[i]) continue;
        if (left != i) (*kept)[left] = std::move((*kept)[i]);
        ++left;
      }
      kept->resize(left);
    }
    candidates = std::move(popped);
  }
  Records batch;
  if (n < meta.count) {  // else the meta goes, O(1)
    for (const auto& m : candidates) batch.DeleteEntry(set_cf_, key, meta.version, m);
    meta.RaiseLo(std::move(new_lo));
  }
  meta.count -= n;
  if (Status c = Commit(&batch, key, old, meta); !c.ok()) return c;
  if (kept != nullptr) KeepFront();
  out = std::move(candidates);
  return out;
}

StatusOr<std::vector<std::string>> RocksStore::SRandMember(std::string_view key, int64_t count,
                                                           uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  std::vector<std::string> out;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  std::vector<std::pair<std::string, std::string>> picked;
  if (Status s = RandomEntries(snap.options, set_cf_, key, meta, count, &picked, max_bytes);
      !s.ok()) {
    return s;
  }
  out.reserve(picked.size());
  for (auto& p : picked) out.push_back(std::move(p.first));
  return out;
}

StatusOr<bool> RocksStore::SMove(std::string_view src, std::string_view dst,
                                 std::string_view member) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  MetaLookup src_old, dst_old;
  if (Status s = ReadMetaLocked(src, &src_old); !s.ok()) return s;
  if (Status s = ReadMetaLocked(dst, &dst_old); !s.ok()) return s;
  if (!src_old.live) return false;
  if (src_old.meta.type != MetaType::kSet ||
      (dst_old.live && dst_old.meta.type != MetaType::kSet)) {
    return Status::WrongType();
  }
  Meta src_meta = src_old.meta;
  std::string ignored;
  bool in_src = false;
  if (Status s = GetEntry(rocksdb::ReadOptions(), set_cf_, src, src_meta.version, member, &ignored,
                          &in_src);
      !s.ok()) {
    return s;
  }
  if (src == dst || !in_src) return in_src;
  Meta dst_meta;
  if (dst_old.live) {
    dst_meta = dst_old.meta;
  } else {
    dst_meta.type = MetaType::kSet;
    dst_meta.version = 0;
  }
  bool in_dst = false;
  if (dst_meta.version != 0) {
    if (Status s = GetEntry(rocksdb::ReadOptions(), set_cf_, dst, dst_meta.version, member,
                            &ignored, &in_dst);
        !s.ok()) {
      return s;
    }
  }
  if (Status s = EnsureVersion(&dst_meta); !s.ok()) return s;
  Records batch;
  int64_t delta = 0;
  batch.DeleteEntry(set_cf_, src, src_meta.version, member);
  if (--src_meta.count == 0) {
    DeleteMeta(&batch, src, src_old);
    delta -= 1;
  } else {
    PutMeta(&batch, src, src_old, src_meta);
  }
  if (!in_dst) {
    PutEntry(&batch, set_cf_, dst, dst_meta.version, member, "");
    dst_meta.CoverInHint(member);
    dst_meta.count += 1;
    PutMeta(&batch, dst, dst_old, dst_meta);
    if (!dst_old.present) delta += 1;
  }
  if (Status s = Write(&batch); !s.ok()) return s;
  AddKeyCount(delta);
  return true;
}

Status RocksStore::SetAlgebra(const rocksdb::ReadOptions& ro,
                              const std::vector<std::string_view>& keys, SetOp op, uint64_t limit,
                              std::vector<std::string>* out) {
  out->clear();
  struct Input {
    std::string_view key;
    Meta meta;
    bool found = false;
  };
  std::vector<Input> inputs(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    inputs[i].key = keys[i];
    Status s = LoadForRead(ro, keys[i], MetaType::kSet, &inputs[i].meta, &inputs[i].found);
    if (!s.ok()) return s;  // WrongType for any non-set key, as Redis
  }
  if (inputs.empty()) return Status::OK();
  auto contains = [&](const Input& in, std::string_view m, bool* has) {
    std::string ignored;
    return GetEntry(ro, set_cf_, in.key, in.meta.version, m, &ignored, has);
  };
  auto members_of = [&](const Input& in, const EntryFn& fn) {
    return ForEachEntry(ro, set_cf_, in.key, in.meta.version, fn, std::nullopt, false,
                        HintOf(in.meta));
  };
  Status inner = Status::OK();
  switch (op) {
    case SetOp::kInter: {
      for (const auto& in : inputs) {
        if (!in.found) return Status::OK();
      }
      // Walk the smallest set, probe the others.
      std::sort(inputs.begin(), inputs.end(),
                [](const Input& a, const Input& b) { return a.meta.count < b.meta.count; });
      Status s = members_of(inputs[0], [&](std::string_view m, std::string_view) {
        for (size_t i = 1; i < inputs.size(); ++i) {
          bool has = false;
          inner = contains(inputs[i], m, &has);
          if (!inner.ok()) return false;
          if (!has) return true;
        }
        out->emplace_back(m);
        return limit == 0 || out->size() < limit;
      });
      if (!s.ok()) return s;
      return inner;
    }
    case SetOp::kUnion: {
      std::set<std::string> all;
      for (const auto& in : inputs) {
        if (!in.found) continue;
        Status s = members_of(in, [&](std::string_view m, std::string_view) {
          all.emplace(m);
          return true;
        });
        if (!s.ok()) return s;
      }
      out->assign(all.begin(), all.end());
      return Status::OK();
    }
    case SetOp::kDiff: {
      if (!inputs[0].found) return Status::OK();
      Status s = members_of(inputs[0], [&](std::string_view m, std::string_view) {
        for (size_t i = 1; i < inputs.size(); ++i) {
          if (!inputs[i].found) continue;
          bool has = false;
          inner = contains(inputs[i], m, &has);
          if (!inner.ok()) return false;
          if (has) return true;
        }
        out->emplace_back(m);
        return true;
      });
      if (!s.ok()) return s;
      return inner;
    }
  }
  return Status::OK();
}

StatusOr<std::vector<std::string>> RocksStore::SetAlgebraRead(
    const std::vector<std::string_view>& keys, SetOp op) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  SnapshotRead snap(db_);
  std::vector<std::string> out;
  if (Status s = SetAlgebra(snap.options, keys, op, 0, &out); !s.ok()) return s;
  return out;
}

StatusOr<int64_t> RocksStore::SetAlgebraStore(std::string_view dst,
                                              const std::vector<std::string_view>& keys, SetOp op) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::vector<std::string> members;
  // The stripes of every key are held: the latest state is a consistent view.
  if (Status s = SetAlgebra(rocksdb::ReadOptions(), keys, op, 0, &members); !s.ok()) return s;
  MetaLookup old;
  if (Status s = ReadMeta(rocksdb::ReadOptions(), dst, &old, /*full=*/false); !s.ok()) return s;
  Records batch;
  if (Status s = StoreSet(&batch, dst, old, members); !s.ok()) return s;
  return static_cast<int64_t>(members.size());
}

StatusOr<std::vector<std::string>> RocksStore::SInter(const std::vector<std::string_view>& keys) {
  return SetAlgebraRead(keys, SetOp::kInter);
}
StatusOr<std::vector<std::string>> RocksStore::SUnion(const std::vector<std::string_view>& keys) {
  return SetAlgebraRead(keys, SetOp::kUnion);
}
StatusOr<std::vector<std::string>> RocksStore::SDiff(const std::vector<std::string_view>& keys) {
  return SetAlgebraRead(keys, SetOp::kDiff);
}

StatusOr<int64_t> RocksStore::SInterCard(const std::vector<std::string_view>& keys,
                                         uint64_t limit) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  SnapshotRead snap(db_);
  std::vector<std::string> out;
  if (Status s = SetAlgebra(snap.options, keys, SetOp::kInter, limit, &out); !s.ok()) return s;
  return static_cast<int64_t>(out.size());
}

StatusOr<int64_t> RocksStore::SInterStore(std::string_view dst,
                                          const std::vector<std::string_view>& keys) {
  return SetAlgebraStore(dst, keys, SetOp::kInter);
}
StatusOr<int64_t> RocksStore::SUnionStore(std::string_view dst,
                                          const std::vector<std::string_view>& keys) {
  return SetAlgebraStore(dst, keys, SetOp::kUnion);
}
StatusOr<int64_t> RocksStore::SDiffStore(std::string_view dst,
                                         const std::vector<std::string_view>& keys) {
  return SetAlgebraStore(dst, keys, SetOp::kDiff);
}

StatusOr<ScanResult> RocksStore::SScan(std::string_view key, uint64_t cursor,
                                       std::string_view pattern, uint64_t count) {
  Hold hold;
  SnapshotRead snap;
  ScanResult result;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return result;
  }
  Status s = ScanEntries(
      snap.options, set_cf_, 's', key, meta.version, HintOf(meta), cursor, pattern, count,
      [&](std::string_view m, std::string_view) { result.keys.emplace_back(m); },
      &result.next_cursor);
  if (!s.ok()) return s;
  return result;
}

}  // namespace rockcache::storage
