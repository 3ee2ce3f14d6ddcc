// RocksStore: stream consumer groups. Records (sub-keys of the stream's DataPrefix in the
// "stream" column family, after every entry: kSpace is 16 x 0xff, longer sub-keys than any
// entry id so that entry iterators bounded by ids never meet them; encoding.h):
//   kSpace 'G' name                                 -> group: [gid u64][last id 16]
//        [entries-read i64][pending u64][consumers u64][pel lo 16][pel hi 16]
//   kSpace 'P' BE64(gid) id                         -> PEL entry: [delivery ms i64]
//        [delivery count u64][consumer name]
//   kSpace 'C' BE64(gid) [u32 len] consumer id      -> "" (the consumer's own PEL, an index)
//   kSpace 'N' BE64(gid) consumer                   -> consumer: [seen ms i64][pending u64]
//        [pel lo 16]
// A group id is the stream's next_group_id when it was created: never reused, so a group
// destroyed and created again under its name never meets records of the old one.
//
// Costs. A group, a consumer and a PEL entry are one point read each. The group keeps the bounds
// of its PEL exactly ([pel lo, pel hi], the first and last pending id, while pending > 0) and a
// consumer the first id of its own PEL, so range reads start and end at live records: a drained
// PEL (everything acknowledged) costs no iteration at all, and acknowledging the first (or last)
// pending entry moves the bound past the tombstones of earlier acknowledgements once (each
// tombstone is passed at most once by each bound). Acknowledgements in the middle leave
// tombstones inside the bounds until compaction drops them.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "storage/result_bytes.h"
#include "storage/rocks_store.h"

namespace rockcache::storage {

namespace {

const std::string& Space() {
  static const std::string space(16, '\xff');
  return space;
}

std::string GroupSub(std::string_view name) {
  std::string s = Space();
  s.push_back('G');
  s.append(name.data(), name.size());
  return s;
}

std::string Scope(char tag, uint64_t gid) {
  std::string s = Space();
  s.push_back(tag);
  PutFixed64BE(&s, gid);
  return s;
}

std::string ConsumerPelScope(uint64_t gid, std::string_view consumer) {
  std::string s = Scope('C', gid);
  PutFixed32BE(&s, static_cast<uint32_t>(consumer.size()));
  s.append(consumer.data(), consumer.size());
  return s;
}

struct GroupRec {
  uint64_t gid = 0;
  StreamId last_id;
  int64_t entries_read = kInvalidEntriesRead;
  uint64_t pending = 0;
  uint64_t consumers = 0;
  StreamId lo, hi;  // with pending > 0: the first and last pending id
  // A dead stretch: no pending id in (gap_lo, gap_hi]. Left by a walk of the upper bound down
  // past acknowledged entries, so that the next walks (either way) jump it: with one entry
  // stuck at the bottom of the PEL, acknowledging the newest ones again and again would
  // otherwise walk every earlier acknowledgement each time.
  bool has_gap = false;
  StreamId gap_lo, gap_hi;
};

std::string EncodeGroup(const GroupRec& g) {
  std::string s;
  PutFixed64BE(&s, g.gid);
  s.append(EncodeStreamId(g.last_id));
  PutFixed64BE(&s, static_cast<uint64_t>(g.entries_read));
  PutFixed64BE(&s, g.pending);
  PutFixed64BE(&s, g.consumers);
  s.append(EncodeStreamId(g.lo));
  s.append(EncodeStreamId(g.hi));
  s.push_back(g.has_gap ? '\1' : '\0');
  s.append(EncodeStreamId(g.gap_lo));
  s.append(EncodeStreamId(g.gap_hi));
  return s;
}

constexpr size_t kGroupBytes = 8 + 16 + 8 + 8 + 8 + 32 + 1 + 32;

bool DecodeGroup(std::string_view v, GroupRec* g) {
  if (v.size() != kGroupBytes) return false;
  const char* p = v.data();
  g->gid = GetFixed64BE(p);
  g->last_id = DecodeStreamId(p + 8);
  g->entries_read = static_cast<int64_t>(GetFixed64BE(p + 24));
  g->pending = GetFixed64BE(p + 32);
  g->consumers = GetFixed64BE(p + 40);
  g->lo = DecodeStreamId(p + 48);
  g->hi = DecodeStreamId(p + 64);
  g->has_gap = p[80] != 0;
  g->gap_lo = DecodeStreamId(p + 81);
  g->gap_hi = DecodeStreamId(p + 97);
  return true;
}

struct ConsumerRec {
  int64_t seen_ms = 0;
  uint64_t pending = 0;
  StreamId lo;  // with pending > 0: its first pending id
};

std::string EncodeConsumer(const ConsumerRec& c) {
  std::string s;
  PutFixed64BE(&s, static_cast<uint64_t>(c.seen_ms));
  PutFixed64BE(&s, c.pending);
  s.append(EncodeStreamId(c.lo));
  return s;
}

bool DecodeConsumer(std::string_view v, ConsumerRec* c) {
  if (v.size() != 32) return false;
  c->seen_ms = static_cast<int64_t>(GetFixed64BE(v.data()));
  c->pending = GetFixed64BE(v.data() + 8);
  c->lo = DecodeStreamId(v.data() + 16);
  return true;
}

struct Nack {
  int64_t time_ms = 0;
  uint64_t count = 0;
  std::string consumer;
};

std::string EncodeNack(const Nack& n) {
  std::string s;
  PutFixed64BE(&s, static_cast<uint64_t>(n.time_ms));
  PutFixed64BE(&s, n.count);
  s.append(n.consumer);
  return s;
}

bool DecodeNack(std::string_view v, Nack* n) {
  if (v.size() < 16) return false;
  n->time_ms = static_cast<int64_t>(GetFixed64BE(v.data()));
  n->count = GetFixed64BE(v.data() + 8);
  n->consumer.assign(v.data() + 16, v.size() - 16);
  return true;
}

Status Corrupt() { return Status::Corruption("bad stream group record"); }

// Redis 7.0's streamRangeHasTombstones(s, start, NULL).
bool HasTombstonesFrom(const Meta& m, StreamId start) {
  if (m.count == 0 || m.max_deleted_id == StreamId::Min()) return false;
  if (m.first_id > m.max_deleted_id) return false;
  return start <= m.max_deleted_id;
}

// Redis 7.0's streamEstimateDistanceFromFirstEverEntry.
int64_t EstimateDistance(const Meta& m, StreamId id) {
  if (m.entries_added == 0) return 0;
  if (m.count == 0 && id <= m.last_id) return static_cast<int64_t>(m.entries_added);
  if (id == m.last_id) return static_cast<int64_t>(m.entries_added);
  if (id > m.last_id) return kInvalidEntriesRead;
  if (m.max_deleted_id == StreamId::Min() || m.max_deleted_id < m.first_id) {
    if (id < m.first_id) return static_cast<int64_t>(m.entries_added - m.count);
    if (id == m.first_id) return static_cast<int64_t>(m.entries_added - m.count + 1);
  }
  return kInvalidEntriesRead;
}

// Redis 7.0's XINFO lag (streamReplyWithCGLag); nullopt = nil.
std::optional<int64_t> Lag(const Meta& m, const GroupRec& g) {
  if (m.entries_added == 0) return 0;
  if (g.entries_read != kInvalidEntriesRead && !HasTombstonesFrom(m, g.last_id)) {
    return static_cast<int64_t>(m.entries_added) - g.entries_read;
  }
  int64_t read = EstimateDistance(m, g.last_id);
  if (read == kInvalidEntriesRead) return std::nullopt;
  return static_cast<int64_t>(m.entries_added) - read;
}

StreamInfo InfoOf(const Meta& m) {
  StreamInfo info;
  info.length = m.count;
  info.last_id = m.last_id;
  info.max_deleted_id = m.max_deleted_id;
  info.entries_added = m.entries_added;
  info.first_id = m.count > 0 ? m.first_id : StreamId::Min();
  info.top_id = m.count > 0 ? m.top_id : StreamId::Min();
  info.groups = m.groups;
  return info;
}

}  // namespace

// The groups of one stream (key, meta), read with `ro`; with a batch, the changes of one write
// to one group, applied to the batch by Finish(). REQUIRES for writes: the key lock.
class StreamGroups {
 public:
  StreamGroups(RocksStore* store, std::string_view key, const Meta& meta,
               const rocksdb::ReadOptions& ro = rocksdb::ReadOptions())
      : s_(*store), key_(key), meta_(meta), ro_(ro) {}

  Status Get(std::string_view sub, std::string* value, bool* found) {
    return s_.GetEntry(ro_, s_.stream_cf_, key_, meta_.version, sub, value, found);
  }

  Status FindGroup(std::string_view name, GroupRec* g, bool* found) {
    std::string v;
    if (Status s = Get(GroupSub(name), &v, found); !s.ok() || !*found) return s;
    return DecodeGroup(v, g) ? Status::OK() : Corrupt();
  }

  Status FindConsumer(uint64_t gid, std::string_view name, ConsumerRec* c, bool* found) {
    std::string v;
    std::string sub = Scope('N', gid);
    sub.append(name.data(), name.size());
    if (Status s = Get(sub, &v, found); !s.ok() || !*found) return s;
    return DecodeConsumer(v, c) ? Status::OK() : Corrupt();
  }

  Status FindNack(uint64_t gid, StreamId id, Nack* n, bool* found) {
    if (gid == g_.gid) {  // this write's own changes first (XCLAIM may name an id twice)
      auto it = nacks_.find(id);
      if (it != nacks_.end()) {
        *found = it->second.has_value();
        if (*found) *n = *it->second;
        return Status::OK();
      }
    }
    std::string v;
    if (Status s = Get(Scope('P', gid) + EncodeStreamId(id), &v, found); !s.ok() || !*found) {
      return s;
    }
    return DecodeNack(v, n) ? Status::OK() : Corrupt();
  }

  // The stream entry `id`; *found false when it is not there.
  Status FindEntry(StreamId id, StreamEntry* e, bool* found) {
    *found = false;
    if (meta_.count == 0 || id < meta_.first_id || id > meta_.top_id) return Status::OK();
    std::string v;
    if (Status s = Get(EncodeStreamId(id), &v, found); !s.ok() || !*found) return s;
    e->id = id;
    e->fields.clear();
    if (!DecodeStreamFields(v, &e->fields)) return Status::Corruption("bad stream entry");
    return Status::OK();
  }

  // Visits the records of `scope` whose next 16 bytes are an id in [from, to], in id order (or
  // reverse), fn(id, value) -> continue.
  // With `gap` (forward walks only), the ids in (gap->gap_lo, gap->gap_hi] are jumped.
  Status VisitIds(const std::string& scope, StreamId from, StreamId to, bool reverse,
                  const std::function<bool(StreamId, std::string_view)>& fn,
                  const GroupRec* gap = nullptr) {
    if (from > to) return Status::OK();
    const std::string lo = scope + EncodeStreamId(from);
    const std::string hi = ImmediateSuccessor(scope + EncodeStreamId(to));
    std::string gap_last, gap_end;
    EntryBounds bounds{lo, std::string_view(hi), std::nullopt, {}};
    if (gap != nullptr && gap->has_gap && !reverse) {
      gap_last = scope + EncodeStreamId(gap->gap_lo);
      gap_end = ImmediateSuccessor(scope + EncodeStreamId(gap->gap_hi));
      bounds.gap = gap_end;
      bounds.gap_last = gap_last;
    }
    Status bad;
    Status s = s_.ForEachEntry(
        ro_, s_.stream_cf_, key_, meta_.version,
        [&](std::string_view sub, std::string_view value) {
          if (sub.size() != scope.size() + 16) {
            bad = Corrupt();
            return false;
          }
          return fn(DecodeStreamId(sub.data() + scope.size()), value);
        },
        std::nullopt, reverse, bounds);
    if (!s.ok()) return s;
    return bad;
  }

  // The greatest pending id <= from and >= floor that this write does not remove, read from the
  // database (jumping the group's dead stretch); *crossed: the walk went below the stretch.
  Status LastLiveAtOrBelow(const std::string& scope, StreamId from, StreamId floor,
                           std::optional<StreamId>* live, bool* crossed) {
    *crossed = false;
    auto walk = [&](StreamId a, StreamId b) {
      return VisitIds(scope, a, b, true, [&](StreamId id, std::string_view) {
        if (removed_.count(id)) return true;
        *live = id;
        return false;
      });
    };
    if (g_.has_gap && g_.gap_lo < from) {
      StreamId above = g_.gap_hi;
      if (g_.gap_hi < from && above.Incr()) {
        if (Status s = walk(std::max(floor, above), from); !s.ok() || *live) return s;
      }
      *crossed = true;
      return walk(floor, g_.gap_lo);
    }
    return walk(floor, from);
  }

  // Visits records of `scope` + name (groups, consumers) in name order.
  Status VisitNamed(const std::string& scope,
                    const std::function<bool(std::string_view, std::string_view)>& fn) {
    const std::string hi = PrefixSuccessor(scope);
    return s_.ForEachEntry(
        ro_, s_.stream_cf_, key_, meta_.version,
        [&](std::string_view sub, std::string_view value) {
          return fn(sub.substr(scope.size()), value);
        },
        std::nullopt, false, EntryBounds{scope, std::string_view(hi), std::nullopt, {}});
  }

  Status ListGroups(const std::function<bool(std::string_view, const GroupRec&)>& fn) {
    std::string prefix = Space();
    prefix.push_back('G');
    Status bad;
    Status s = VisitNamed(prefix, [&](std::string_view name, std::string_view v) {
      GroupRec g;
      if (!DecodeGroup(v, &g)) return bad = Corrupt(), false;
      return fn(name, g);
    });
    return s.ok() ? bad : s;
  }

  Status ListConsumers(uint64_t gid,
                       const std::function<bool(std::string_view, const ConsumerRec&)>& fn) {
    Status bad;
    Status s = VisitNamed(Scope('N', gid), [&](std::string_view name, std::string_view v) {
      ConsumerRec c;
      if (!DecodeConsumer(v, &c)) return bad = Corrupt(), false;
      return fn(name, c);
    });
    return s.ok() ? bad : s;
  }

  // The group's PEL entries with from <= id <= to, within its bounds.
  Status VisitPel(const GroupRec& g, StreamId from, StreamId to,
                  const std::function<bool(StreamId, const Nack&)>& fn) {
    if (g.pending == 0) return Status::OK();
    Status bad;
    Status s = VisitIds(
        Scope('P', g.gid), std::max(from, g.lo), std::min(to, g.hi), false,
        [&](StreamId id, std::string_view v) {
          Nack n;
          if (!DecodeNack(v, &n)) return bad = Corrupt(), false;
          return fn(id, n);
        },
        &g);
    return s.ok() ? bad : s;
  }

  // The consumer's own pending ids with from <= id <= to.
  Status VisitConsumerPel(uint64_t gid, std::string_view name, const ConsumerRec& c, StreamId from,
                          StreamId to, const std::function<bool(StreamId)>& fn) {
    if (c.pending == 0) return Status::OK();
    return VisitIds(ConsumerPelScope(gid, name), std::max(from, c.lo), to, false,
                    [&](StreamId id, std::string_view) { return fn(id); });
  }

  // ---- the changes of one write to the group `name` (Load first) ----

  // Loads the group to change; *found false when absent.
  Status Load(std::string_view name, bool* found) {
    name_.assign(name.data(), name.size());
    if (Status s = FindGroup(name, &g_, found); !s.ok()) return s;
    had_pending_ = g_.pending > 0;
    return Status::OK();
  }
  GroupRec& group() { return g_; }

  // The consumer `name` (created when `create` and absent; *created says so), or nullptr.
  StatusOr<ConsumerRec*> Consumer(std::string_view name, bool create, int64_t now_ms,
                                  bool* created = nullptr) {
    if (created != nullptr) *created = false;
    auto it = consumers_.find(std::string(name));
    if (it != consumers_.end()) return it->second.exists ? &it->second.rec : nullptr;
    ConsumerState st;
    bool found = false;
    if (Status s = FindConsumer(g_.gid, name, &st.rec, &found); !s.ok()) return s;
    st.exists = found;
    st.had_pending = found && st.rec.pending > 0;
    if (!found && create) {
      st.exists = true;
      st.dirty = true;
      st.rec = ConsumerRec();
      st.rec.seen_ms = now_ms;
      ++g_.consumers;
      if (created != nullptr) *created = true;
    }
    auto& slot = consumers_[std::string(name)] = std::move(st);
    return slot.exists ? &slot.rec : nullptr;
  }
  void Touch(std::string_view name, int64_t now_ms) {
    auto& st = consumers_[std::string(name)];
    st.rec.seen_ms = now_ms;
    st.dirty = true;
  }

  // A new PEL entry (id not pending). REQUIRES: Consumer(n.consumer) exists.
  void AddPending(StreamId id, const Nack& n) {
    PutNack(id, n);
    ++g_.pending;
    removed_.erase(id);
    added_.insert(id);
    AddToConsumer(n.consumer, id);
  }
  // Moves a pending entry to `to` (REQUIRES: Consumer(to) exists) and rewrites it.
  void Reassign(StreamId id, const Nack& old, const Nack& now) {
    if (old.consumer != now.consumer) {
      RemoveFromConsumer(old.consumer, id);
      AddToConsumer(now.consumer, id);
    }
    PutNack(id, now);
  }
  void UpdateNack(StreamId id, const Nack& n) { PutNack(id, n); }
  void RemovePending(StreamId id, const Nack& n) {
    nacks_[id] = std::nullopt;
    batch_.DeleteEntry(s_.stream_cf_, key_, meta_.version, Scope('P', g_.gid) + EncodeStreamId(id));
    --g_.pending;
    added_.erase(id);
    removed_.insert(id);
    RemoveFromConsumer(n.consumer, id);
  }
  // Removes the consumer record (its PEL entries must have been removed).
  void DropConsumer(std::string_view name) {
    auto& st = consumers_[std::string(name)];
    st.exists = false;
    st.dropped = true;
    --g_.consumers;
  }

  // Writes the group, its consumers and the fixed bounds to the batch.
  Status Finish() {
    for (StreamId id : added_) {  // the dead stretch must stay dead
      if (g_.has_gap && g_.gap_lo < id && id <= g_.gap_hi) g_.has_gap = false;
    }
    if (g_.pending == 0) {
      g_.lo = g_.hi = StreamId::Min();
      g_.has_gap = false;
    } else {
      const std::string scope = Scope('P', g_.gid);
      std::optional<StreamId> first, last;  // what this write adds
      for (StreamId id : added_) {
        if (!first || id < *first) first = id;
        if (!last || id > *last) last = id;
      }
      // The lower bound: forward past what was removed (jumping the dead stretch).
      std::optional<StreamId> lo = first;
      if (had_pending_) {
        std::optional<StreamId> live;
        if (!removed_.count(g_.lo)) {
          live = g_.lo;
        } else {
          Status s = VisitIds(
              scope, g_.lo, g_.hi, false,
              [&](StreamId id, std::string_view) {
                if (removed_.count(id)) return true;
                live = id;
                return false;
              },
              &g_);
          if (!s.ok()) return s;
        }
        if (live && (!lo || *live < *lo)) lo = live;
      }
      // The upper bound: backward past what was removed; what it walked over is dead.
      std::optional<StreamId> hi = last;
      if (had_pending_) {
        std::optional<StreamId> live;
        if (!removed_.count(g_.hi)) {
          live = g_.hi;
        } else {
          bool crossed = false;
          if (Status s = LastLiveAtOrBelow(scope, g_.hi, g_.lo, &live, &crossed); !s.ok()) {
            return s;
          }
          if (live && added_.empty()) {
            const StreamId dead_lo = *live, dead_hi = g_.hi;  // nothing live in (dead_lo, dead_hi]
            if (crossed || !g_.has_gap) {
              g_.has_gap = true;
              g_.gap_lo = dead_lo;
              g_.gap_hi = std::max(dead_hi, crossed ? g_.gap_hi : dead_hi);
            } else if (dead_hi >= g_.gap_lo && dead_lo <= g_.gap_hi) {  // touching: one stretch
              g_.gap_lo = std::min(g_.gap_lo, dead_lo);
              g_.gap_hi = std::max(g_.gap_hi, dead_hi);
            }
          }
        }
        if (live && (!hi || *live > *hi)) hi = live;
      }
      if (!lo || !hi) return Corrupt();  // pending > 0 but nothing pending found
      g_.lo = *lo;
      g_.hi = *hi;
    }
    for (auto& entry : consumers_) {  // not a structured binding: lambdas below capture them
      const auto& name = entry.first;
      auto& st = entry.second;
      std::string sub = Scope('N', g_.gid) + name;
      if (st.dropped) {
        batch_.DeleteEntry(s_.stream_cf_, key_, meta_.version, sub);
        continue;
      }
      if (!st.dirty || !st.exists) continue;
      if (st.rec.pending == 0) {
        st.rec.lo = StreamId::Min();
      } else {
        std::optional<StreamId> best;
        for (StreamId id : st.added) {
          if (!best || id < *best) best = id;
        }
        if (st.had_pending) {
          std::optional<StreamId> live;
          if (!st.removed.count(st.rec.lo)) {
            live = st.rec.lo;
          } else {
            Status s = VisitIds(ConsumerPelScope(g_.gid, name), st.rec.lo, StreamId::Max(), false,
                                [&](StreamId id, std::string_view) {
                                  if (st.removed.count(id)) return true;
                                  live = id;
                                  return false;
                                });
            if (!s.ok()) return s;
          }
          if (live && (!best || *live < *best)) best = live;
        }
        if (!best) return Corrupt();
        st.rec.lo = *best;
      }
      s_.PutEntry(&batch_, s_.stream_cf_, key_, meta_.version, sub, EncodeConsumer(st.rec));
    }
    s_.PutEntry(&batch_, s_.stream_cf_, key_, meta_.version, GroupSub(name_), EncodeGroup(g_));
    return Status::OK();
  }

  Records& batch() { return batch_; }

 private:
  struct ConsumerState {
    ConsumerRec rec;
    bool exists = false;
    bool had_pending = false;
    bool dirty = false;
    bool dropped = false;
    std::set<StreamId> added, removed;
  };

  void PutNack(StreamId id, const Nack& n) {
    nacks_[id] = n;
    s_.PutEntry(&batch_, s_.stream_cf_, key_, meta_.version,
                Scope('P', g_.gid) + EncodeStreamId(id), EncodeNack(n));
  }
  void AddToConsumer(const std::string& name, StreamId id) {
    auto& st = consumers_[name];
    s_.PutEntry(&batch_, s_.stream_cf_, key_, meta_.version,
                ConsumerPelScope(g_.gid, name) + EncodeStreamId(id), "");
    ++st.rec.pending;
    st.removed.erase(id);
    st.added.insert(id);
    st.dirty = true;
  }
  void RemoveFromConsumer(const std::string& name, StreamId id) {
    auto it = consumers_.find(name);
    if (it == consumers_.end()) {  // load it to keep its count
      ConsumerState st;
      bool found = false;
      if (FindConsumer(g_.gid, name, &st.rec, &found).ok() && found) {
        st.exists = true;
        st.had_pending = st.rec.pending > 0;
      }
      it = consumers_.emplace(name, std::move(st)).first;
    }
    auto& st = it->second;
    batch_.DeleteEntry(s_.stream_cf_, key_, meta_.version,
                       ConsumerPelScope(g_.gid, name) + EncodeStreamId(id));
    if (st.exists && st.rec.pending > 0) --st.rec.pending;
    st.added.erase(id);
    st.removed.insert(id);
    st.dirty = true;
  }

  RocksStore& s_;
  std::string_view key_;
  const Meta& meta_;
  rocksdb::ReadOptions ro_;
  Records batch_;
  std::string name_;
  GroupRec g_;
  bool had_pending_ = false;
  std::set<StreamId> added_, removed_;
  std::map<std::string, ConsumerState> consumers_;
  std::map<StreamId, std::optional<Nack>> nacks_;  // PEL entries this write put or removed
};

namespace {

Status NoKey() { return Status::NotFound(kNoStreamKey); }
Status NoGroup() { return Status::NotFound(kNoStreamGroup); }

}  // namespace

StatusOr<std::optional<StreamInfo>> RocksStore::XInfoStream(std::string_view key) {
  Hold hold;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kStream, &hold, nullptr, &meta, &found); !s.ok()) {
    return s;
  }
  if (!found) return std::optional<StreamInfo>();
  return std::optional<StreamInfo>(InfoOf(meta));
}

Status RocksStore::XGroupCreate(std::string_view key, std::string_view group,
                                std::optional<StreamId> id, bool mkstream, int64_t entries_read) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0 && !mkstream) return NoKey();
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  StreamGroups groups(this, key, meta);
  if (old.present) {
    GroupRec existing;
    bool found = false;
    if (Status s = groups.FindGroup(group, &existing, &found); !s.ok()) return s;
    if (found) return Status::Busy("BUSYGROUP Consumer Group name already exists");
  }
  GroupRec g;
  g.gid = meta.next_group_id++;
  g.last_id = id ? *id : meta.last_id;
  g.entries_read = entries_read;
  ++meta.groups;
  Records batch;
  PutEntry(&batch, stream_cf_, key, meta.version, GroupSub(group), EncodeGroup(g));
  PutMeta(&batch, key, old, meta);
  if (Status s = Write(&batch); !s.ok()) return s;
  if (!old.present) AddKeyCount(1);
  return Status::OK();
}

Status RocksStore::XGroupSetId(std::string_view key, std::string_view group,
                               std::optional<StreamId> id, int64_t entries_read) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return NoKey();
  StreamGroups groups(this, key, meta);
  bool found = false;
  if (Status s = groups.Load(group, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  groups.group().last_id = id ? *id : meta.last_id;
  groups.group().entries_read = entries_read;
  if (Status s = groups.Finish(); !s.ok()) return s;
  return Write(&groups.batch());
}

StatusOr<bool> RocksStore::XGroupDestroy(std::string_view key, std::string_view group) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return NoKey();
  StreamGroups groups(this, key, meta);
  GroupRec g;
  bool found = false;
  if (Status s = groups.FindGroup(group, &g, &found); !s.ok()) return s;
  if (!found) return false;
  Records batch;
  batch.DeleteEntry(stream_cf_, key, meta.version, GroupSub(group));
  // Few records: point deletes; many: one range tombstone per record kind.
  constexpr uint64_t kPointDeletesUpTo = 64;
  if (g.pending + g.consumers <= kPointDeletesUpTo) {
    Status s =
        groups.VisitPel(g, StreamId::Min(), StreamId::Max(), [&](StreamId id, const Nack& n) {
          batch.DeleteEntry(stream_cf_, key, meta.version, Scope('P', g.gid) + EncodeStreamId(id));
          batch.DeleteEntry(stream_cf_, key, meta.version,
                            ConsumerPelScope(g.gid, n.consumer) + EncodeStreamId(id));
          return true;
        });
    if (!s.ok()) return s;
    s = groups.ListConsumers(g.gid, [&](std::string_view name, const ConsumerRec&) {
      batch.DeleteEntry(stream_cf_, key, meta.version, Scope('N', g.gid) + std::string(name));
      return true;
    });
    if (!s.ok()) return s;
  } else {
    for (char tag : {'P', 'C', 'N'}) {
      const std::string scope = DataKey(key, meta.version, Scope(tag, g.gid));
      DeleteDataRange(&batch, stream_cf_, scope, PrefixSuccessor(scope));
    }
  }
  --meta.groups;
  PutMeta(&batch, key, old, meta);
  if (Status s = Write(&batch); !s.ok()) return s;
  return true;
}

StatusOr<bool> RocksStore::XGroupCreateConsumer(std::string_view key, std::string_view group,
                                                std::string_view consumer, int64_t now_ms) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return NoKey();
  StreamGroups groups(this, key, meta);
  bool found = false;
  if (Status s = groups.Load(group, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  bool created = false;
  if (auto c = groups.Consumer(consumer, true, now_ms, &created); !c.ok()) return c.status();
  if (!created) return false;
  if (Status s = groups.Finish(); !s.ok()) return s;
  if (Status s = Write(&groups.batch()); !s.ok()) return s;
  return true;
}

StatusOr<uint64_t> RocksStore::XGroupDelConsumer(std::string_view key, std::string_view group,
                                                 std::string_view consumer) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return NoKey();
  StreamGroups groups(this, key, meta);
  bool found = false;
  if (Status s = groups.Load(group, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  auto c = groups.Consumer(consumer, false, 0);
  if (!c.ok()) return c.status();
  if (*c == nullptr) return uint64_t{0};
  const uint64_t pending = (*c)->pending;
  const ConsumerRec rec = **c;
  std::vector<StreamId> ids;
  Status s = groups.VisitConsumerPel(groups.group().gid, consumer, rec, StreamId::Min(),
                                     StreamId::Max(), [&](StreamId id) {
                                       ids.push_back(id);
                                       return true;
                                     });
  if (!s.ok()) return s;
  Nack n;
  n.consumer.assign(consumer.data(), consumer.size());
  for (StreamId id : ids) groups.RemovePending(id, n);
  groups.DropConsumer(consumer);
  if (s = groups.Finish(); !s.ok()) return s;
  if (s = Write(&groups.batch()); !s.ok()) return s;
  return pending;
}

StatusOr<std::optional<std::vector<StreamEntry>>> RocksStore::XReadGroup(
    std::string_view key, const StreamGroupReadSpec& spec, int64_t now_ms, uint64_t max_bytes) {
  using Result = std::optional<std::vector<StreamEntry>>;
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return NoKey();
  StreamGroups groups(this, key, meta);
  bool found = false;
  if (Status s = groups.Load(spec.group, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  GroupRec& g = groups.group();
  bool serve = true;
  if (!spec.after) {
    serve = spec.blocked ? meta.last_id > g.last_id : (meta.count > 0 && meta.top_id > g.last_id);
  }
  if (spec.blocked && !serve) return Result();
  if (spec.probe) return Result(std::vector<StreamEntry>());
  // As Redis 7.0: the consumer is created (and its seen time set) only when the key is served.
  if (!serve) return Result();
  auto consumer = groups.Consumer(spec.consumer, true, now_ms);
  if (!consumer.ok()) return consumer.status();
  groups.Touch(spec.consumer, now_ms);
  std::vector<StreamEntry> out;
  ResultBytes bytes(max_bytes);
  const std::string consumer_name(spec.consumer);
  if (serve && spec.after) {  // the consumer's history
    StreamId from = *spec.after;
    if (from.Incr()) {
      std::vector<StreamId> ids;
      Status s = groups.VisitConsumerPel(g.gid, spec.consumer, **consumer, from, StreamId::Max(),
                                         [&](StreamId id) {
                                           ids.push_back(id);
                                           return spec.count == 0 || ids.size() < spec.count;
                                         });
      if (!s.ok()) return s;
      for (StreamId id : ids) {
        StreamEntry e;
        bool exists = false;
        if (s = groups.FindEntry(id, &e, &exists); !s.ok()) return s;
        size_t size = 0;
        for (const auto& [field, value] : e.fields) size += field.size() + value.size();
        if (!out.empty() && !bytes.Add(size)) break;  // the rest is read by the next call
        out.push_back(std::move(e));
        if (!exists) {
          out.back().id = id;
          out.back().deleted = true;
          continue;
        }
        Nack n;
        bool pending = false;
        if (s = groups.FindNack(g.gid, id, &n, &pending); !s.ok()) return s;
        if (pending) {
          n.time_ms = now_ms;
          ++n.count;
          groups.UpdateNack(id, n);
        }
      }
    }
  } else if (serve) {  // new entries
    StreamId from = g.last_id;
    if (from.Incr() && meta.count > 0) {
      from = std::max(from, meta.first_id);
      const std::string lo = EncodeStreamId(from);
      const std::string hi = ImmediateSuccessor(EncodeStreamId(meta.top_id));
      Status corrupt;
      Status s = ForEachEntry(
          rocksdb::ReadOptions(), stream_cf_, key, meta.version,
          [&](std::string_view sub, std::string_view value) {
            if (!out.empty() && !bytes.Add(value.size())) return false;  // delivered next time
            StreamEntry& e = out.emplace_back();
            e.id = DecodeStreamId(sub.data());
            if (!DecodeStreamFields(value, &e.fields)) {
              corrupt = Status::Corruption("bad stream entry");
              return false;
            }
            return spec.count == 0 || out.size() < spec.count;
          },
          std::nullopt, false, EntryBounds{lo, std::string_view(hi), std::nullopt, {}});
      if (!s.ok()) return s;
      if (!corrupt.ok()) return corrupt;
      for (const StreamEntry& e : out) {
        if (g.entries_read != kInvalidEntriesRead && !HasTombstonesFrom(meta, e.id)) {
          ++g.entries_read;
        } else if (meta.entries_added != 0) {
          g.entries_read = EstimateDistance(meta, e.id);
        }
        g.last_id = e.id;
        if (spec.noack) continue;
        Nack now{now_ms, 1, consumer_name};
        Nack was;
        bool pending = false;
        if (s = groups.FindNack(g.gid, e.id, &was, &pending); !s.ok()) return s;
        if (pending) {
          groups.Reassign(e.id, was, now);
        } else {
          groups.AddPending(e.id, now);
        }
      }
    }
  }
  if (Status s = groups.Finish(); !s.ok()) return s;
  if (Status s = Write(&groups.batch()); !s.ok()) return s;
  return Result(std::move(out));
}

StatusOr<int64_t> RocksStore::XAck(std::string_view key, std::string_view group,
                                   const std::vector<StreamId>& ids) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return int64_t{0};
  StreamGroups groups(this, key, meta);
  bool found = false;
  if (Status s = groups.Load(group, &found); !s.ok()) return s;
  if (!found) return int64_t{0};
  std::set<StreamId> done;
  for (StreamId id : ids) {
    if (groups.group().pending == 0) break;
    if (!done.insert(id).second) continue;
    if (id < groups.group().lo || id > groups.group().hi) {
      done.erase(id);
      continue;
    }
    Nack n;
    bool pending = false;
    if (Status s = groups.FindNack(groups.group().gid, id, &n, &pending); !s.ok()) return s;
    if (!pending) {
      done.erase(id);
      continue;
    }
    groups.RemovePending(id, n);
  }
  if (done.empty()) return int64_t{0};
  if (Status s = groups.Finish(); !s.ok()) return s;
  if (Status s = Write(&groups.batch()); !s.ok()) return s;
  return static_cast<int64_t>(done.size());
}

StatusOr<StreamPendingSummary> RocksStore::XPendingSummary(std::string_view key,
                                                           std::string_view group) {
  Hold hold;
  SnapshotRead snap;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kStream, &hold, &snap, &meta, &found); !s.ok()) {
    return s;
  }
  if (!found) return NoKey();
  StreamGroups groups(this, key, meta, snap.options);
  GroupRec g;
  if (Status s = groups.FindGroup(group, &g, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  StreamPendingSummary out;
  out.count = g.pending;
  if (g.pending == 0) return out;
  out.min_id = g.lo;
  out.max_id = g.hi;
  Status s = groups.ListConsumers(g.gid, [&](std::string_view name, const ConsumerRec& c) {
    if (c.pending > 0) out.consumers.emplace_back(std::string(name), c.pending);
    return true;
  });
  if (!s.ok()) return s;
  return out;
}

StatusOr<std::vector<StreamPendingEntry>> RocksStore::XPendingRange(std::string_view key,
                                                                    std::string_view group,
                                                                    const StreamPendingQuery& q,
                                                                    int64_t now_ms) {
  Hold hold;
  SnapshotRead snap;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kStream, &hold, &snap, &meta, &found); !s.ok()) {
    return s;
  }
  if (!found) return NoKey();
  StreamGroups groups(this, key, meta, snap.options);
  GroupRec g;
  if (Status s = groups.FindGroup(group, &g, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  std::vector<StreamPendingEntry> out;
  if (q.count == 0 || g.pending == 0) return out;
  auto idle_ok = [&](const Nack& n) {
    return q.min_idle_ms == 0 || now_ms - n.time_ms >= q.min_idle_ms;
  };
  if (!q.consumer) {
    Status s = groups.VisitPel(g, q.start, q.end, [&](StreamId id, const Nack& n) {
      if (!idle_ok(n)) return true;
      out.push_back({id, n.consumer, n.time_ms, n.count});
      return out.size() < q.count;
    });
    if (!s.ok()) return s;
    return out;
  }
  ConsumerRec c;
  if (Status s = groups.FindConsumer(g.gid, *q.consumer, &c, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  Status bad;
  Status s = groups.VisitConsumerPel(g.gid, *q.consumer, c, q.start, q.end, [&](StreamId id) {
    Nack n;
    bool pending = false;
    if (bad = groups.FindNack(g.gid, id, &n, &pending); !bad.ok()) return false;
    if (!pending || !idle_ok(n)) return true;
    out.push_back({id, n.consumer, n.time_ms, n.count});
    return out.size() < q.count;
  });
  if (!s.ok()) return s;
  if (!bad.ok()) return bad;
  return out;
}

StatusOr<StreamClaimResult> RocksStore::XClaim(std::string_view key, const StreamClaimSpec& spec,
                                               int64_t now_ms) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return NoKey();
  StreamGroups groups(this, key, meta);
  bool found = false;
  if (Status s = groups.Load(spec.group, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  GroupRec& g = groups.group();
  if (spec.last_id && *spec.last_id > g.last_id) g.last_id = *spec.last_id;
  StreamClaimResult out;
  const std::string name(spec.consumer);
  for (StreamId id : spec.ids) {
    Nack n;
    bool pending = false;
    if (Status s = groups.FindNack(g.gid, id, &n, &pending); !s.ok()) return s;
    StreamEntry entry;
    bool exists = false;
    if (Status s = groups.FindEntry(id, &entry, &exists); !s.ok()) return s;
    if (!exists) {
      if (pending) groups.RemovePending(id, n);
      continue;
    }
    bool forced = false;
    if (!pending) {
      if (!spec.force) continue;
      forced = true;
      n = Nack{now_ms, 1, std::string()};  // as Redis's streamCreateNACK: one delivery, now
    }
    if (!forced && spec.min_idle_ms > 0 && now_ms - n.time_ms < spec.min_idle_ms) continue;
    auto c = groups.Consumer(spec.consumer, true, now_ms);
    if (!c.ok()) return c.status();
    Nack now = n;
    now.consumer = name;
    now.time_ms = spec.delivery_time_ms;
    if (spec.retry_count >= 0) {
      now.count = static_cast<uint64_t>(spec.retry_count);
    } else if (!spec.justid) {
      ++now.count;
    }
    if (forced) {
      groups.AddPending(id, now);
    } else {
      groups.Reassign(id, n, now);
    }
    if (spec.justid) entry.fields.clear();
    out.claimed.push_back(std::move(entry));
  }
  if (Status s = groups.Finish(); !s.ok()) return s;
  if (Status s = Write(&groups.batch()); !s.ok()) return s;
  return out;
}

StatusOr<StreamClaimResult> RocksStore::XAutoClaim(std::string_view key, std::string_view group,
                                                   std::string_view consumer, int64_t min_idle_ms,
                                                   StreamId start, uint64_t count, bool justid,
                                                   int64_t now_ms) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return NoKey();
  StreamGroups groups(this, key, meta);
  bool found = false;
  if (Status s = groups.Load(group, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  GroupRec& g = groups.group();
  StreamClaimResult out;
  out.next = StreamId::Min();
  uint64_t attempts = count * 10;
  uint64_t left = count;
  // Decided while the PEL is walked (the walk reads the database, not this command's changes),
  // applied after it.
  struct Step {
    StreamId id;
    Nack nack;
    bool deleted;
  };
  std::vector<Step> steps;
  Status bad;
  Status s = groups.VisitPel(g, start, StreamId::Max(), [&](StreamId id, const Nack& n) {
    if (attempts == 0 || left == 0) {
      out.next = id;
      return false;
    }
    --attempts;
    bool exists = false;
    StreamEntry entry;
    if (bad = groups.FindEntry(id, &entry, &exists); !bad.ok()) return false;
    if (!exists) {
      steps.push_back({id, n, true});
      --left;
      return true;
    }
    if (min_idle_ms > 0 && now_ms - n.time_ms < min_idle_ms) return true;
    steps.push_back({id, n, false});
    --left;
    return true;
  });
  if (!s.ok()) return s;
  if (!bad.ok()) return bad;
  const std::string name(consumer);
  for (Step& step : steps) {
    if (step.deleted) {
      groups.RemovePending(step.id, step.nack);
      out.deleted.push_back(step.id);
      continue;
    }
    StreamEntry entry;
    bool exists = false;
    if (s = groups.FindEntry(step.id, &entry, &exists); !s.ok()) return s;
    auto c = groups.Consumer(consumer, true, now_ms);
    if (!c.ok()) return c.status();
    Nack now = step.nack;
    now.consumer = name;
    now.time_ms = now_ms;
    if (!justid) ++now.count;
    groups.Reassign(step.id, step.nack, now);
    if (justid) entry.fields.clear();
    entry.id = step.id;
    out.claimed.push_back(std::move(entry));
  }
  if (s = groups.Finish(); !s.ok()) return s;
  if (s = Write(&groups.batch()); !s.ok()) return s;
  return out;
}

StatusOr<std::vector<StreamGroupInfo>> RocksStore::XInfoGroups(std::string_view key) {
  Hold hold;
  SnapshotRead snap;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kStream, &hold, &snap, &meta, &found); !s.ok()) {
    return s;
  }
  if (!found) return NoKey();
  StreamGroups groups(this, key, meta, snap.options);
  std::vector<StreamGroupInfo> out;
  Status s = groups.ListGroups([&](std::string_view name, const GroupRec& g) {
    out.push_back(
        {std::string(name), g.last_id, g.entries_read, g.pending, g.consumers, Lag(meta, g)});
    return true;
  });
  if (!s.ok()) return s;
  return out;
}

StatusOr<std::optional<StreamGroupInfo>> RocksStore::XInfoGroup(std::string_view key,
                                                                std::string_view group) {
  Hold hold;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kStream, &hold, nullptr, &meta, &found); !s.ok()) {
    return s;
  }
  if (!found) return NoKey();
  StreamGroups groups(this, key, meta);
  GroupRec g;
  if (Status s = groups.FindGroup(group, &g, &found); !s.ok()) return s;
  if (!found) return std::optional<StreamGroupInfo>();
  return std::optional<StreamGroupInfo>(StreamGroupInfo{
      std::string(group), g.last_id, g.entries_read, g.pending, g.consumers, Lag(meta, g)});
}

StatusOr<std::vector<StreamConsumerInfo>> RocksStore::XInfoConsumers(std::string_view key,
                                                                     std::string_view group) {
  Hold hold;
  SnapshotRead snap;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kStream, &hold, &snap, &meta, &found); !s.ok()) {
    return s;
  }
  if (!found) return NoKey();
  StreamGroups groups(this, key, meta, snap.options);
  GroupRec g;
  if (Status s = groups.FindGroup(group, &g, &found); !s.ok()) return s;
  if (!found) return NoGroup();
  std::vector<StreamConsumerInfo> out;
  Status s = groups.ListConsumers(g.gid, [&](std::string_view name, const ConsumerRec& c) {
    out.push_back({std::string(name), c.seen_ms, c.pending});
    return true;
  });
  if (!s.ok()) return s;
  return out;
}

StatusOr<StreamFullInfo> RocksStore::XInfoFull(std::string_view key, uint64_t count) {
  Hold hold;
  SnapshotRead snap;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kStream, &hold, &snap, &meta, &found); !s.ok()) {
    return s;
  }
  if (!found) return NoKey();
  StreamFullInfo out;
  out.stream = InfoOf(meta);
  StreamGroups groups(this, key, meta, snap.options);
  if (meta.count > 0) {
    const std::string lo = EncodeStreamId(meta.first_id);
    const std::string hi = ImmediateSuccessor(EncodeStreamId(meta.top_id));
    Status corrupt;
    Status s = ForEachEntry(
        snap.options, stream_cf_, key, meta.version,
        [&](std::string_view sub, std::string_view value) {
          StreamEntry& e = out.entries.emplace_back();
          e.id = DecodeStreamId(sub.data());
          if (!DecodeStreamFields(value, &e.fields)) {
            corrupt = Status::Corruption("bad stream entry");
            return false;
          }
          return count == 0 || out.entries.size() < count;
        },
        std::nullopt, false, EntryBounds{lo, std::string_view(hi), std::nullopt, {}});
    if (!s.ok()) return s;
    if (!corrupt.ok()) return corrupt;
  }
  std::vector<std::pair<std::string, GroupRec>> recs;
  Status s = groups.ListGroups([&](std::string_view name, const GroupRec& g) {
    recs.emplace_back(std::string(name), g);
    return true;
  });
  if (!s.ok()) return s;
  for (auto& rec_entry : recs) {  // not a structured binding: lambdas below capture them
    const auto& name = rec_entry.first;
    auto& g = rec_entry.second;
    StreamFullInfo::Group& group = out.groups.emplace_back();
    group.info = {name, g.last_id, g.entries_read, g.pending, g.consumers, Lag(meta, g)};
    s = groups.VisitPel(g, StreamId::Min(), StreamId::Max(), [&](StreamId id, const Nack& n) {
      group.pel.push_back({id, n.consumer, n.time_ms, n.count});
      return count == 0 || group.pel.size() < count;
    });
    if (!s.ok()) return s;
    std::vector<std::pair<std::string, ConsumerRec>> consumers;
    s = groups.ListConsumers(g.gid, [&](std::string_view cname, const ConsumerRec& c) {
      consumers.emplace_back(std::string(cname), c);
      return true;
    });
    if (!s.ok()) return s;
    for (auto& consumer_entry : consumers) {
      const auto& cname = consumer_entry.first;
      auto& c = consumer_entry.second;
      StreamFullInfo::Consumer& consumer = group.consumers.emplace_back();
      consumer.info = {cname, c.seen_ms, c.pending};
      Status bad;
      s = groups.VisitConsumerPel(g.gid, cname, c, StreamId::Min(), StreamId::Max(),
                                  [&](StreamId id) {
                                    Nack n;
                                    bool pending = false;
                                    bad = groups.FindNack(g.gid, id, &n, &pending);
                                    if (!bad.ok()) return false;
                                    if (pending) {
                                      consumer.pending.push_back({id, cname, n.time_ms, n.count});
                                    }
                                    return count == 0 || consumer.pending.size() < count;
                                  });
      if (!s.ok()) return s;
      if (!bad.ok()) return bad;
    }
  }
  return out;
}

Status RocksStore::XSetId(std::string_view key, StreamId last_id,
                          std::optional<uint64_t> entries_added,
                          std::optional<StreamId> max_deleted_id) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kStream, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return NoKey();
  if (meta.count > 0) {
    if (last_id < meta.top_id) {
      return Status::InvalidArgument(
          "The ID specified in XSETID is smaller than the target stream top item");
    }
    if (entries_added && meta.count > *entries_added) {
      return Status::InvalidArgument(
          "The entries_added specified in XSETID is smaller than the target stream length");
    }
  }
  meta.last_id = last_id;
  if (meta.count == 0) meta.first_id = meta.top_id = last_id;
  if (entries_added) meta.entries_added = *entries_added;
  if (max_deleted_id && *max_deleted_id != StreamId::Min()) meta.max_deleted_id = *max_deleted_id;
  Records batch;
  PutMeta(&batch, key, old, meta);
  return Write(&batch);
}

}  // namespace rockcache::storage
