// StreamGroups: the consumer groups of one stream, as RocksStore's stream group methods read
// and change them (store_stream_group*.cc). Storage-internal. The records are described in
// stream_group_records.h.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "storage/rocks_store.h"
#include "storage/stream_group_records.h"
#include "storage/stream_types.h"

namespace rockcache::storage {

// The errors of a stream group command on an absent key or group (stream_types.h's messages).
inline Status NoKey() { return Status::NotFound(kNoStreamKey); }
inline Status NoGroup() { return Status::NotFound(kNoStreamGroup); }

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
    return DecodeGroup(v, g) ? Status::OK() : CorruptGroupRecord();
  }

  Status FindConsumer(uint64_t gid, std::string_view name, ConsumerRec* c, bool* found) {
    std::string v;
    std::string sub = GroupScope('N', gid);
    sub.append(name.data(), name.size());
    if (Status s = Get(sub, &v, found); !s.ok() || !*found) return s;
    return DecodeConsumer(v, c) ? Status::OK() : CorruptGroupRecord();
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
    if (Status s = Get(GroupScope('P', gid) + EncodeStreamId(id), &v, found); !s.ok() || !*found) {
      return s;
    }
    return DecodeNack(v, n) ? Status::OK() : CorruptGroupRecord();
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
            bad = CorruptGroupRecord();
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
    std::string prefix = GroupSpace();
    prefix.push_back('G');
    Status bad;
    Status s = VisitNamed(prefix, [&](std::string_view name, std::string_view v) {
      GroupRec g;
      if (!DecodeGroup(v, &g)) return bad = CorruptGroupRecord(), false;
      return fn(name, g);
    });
    return s.ok() ? bad : s;
  }

  Status ListConsumers(uint64_t gid,
                       const std::function<bool(std::string_view, const ConsumerRec&)>& fn) {
    Status bad;
    Status s = VisitNamed(GroupScope('N', gid), [&](std::string_view name, std::string_view v) {
      ConsumerRec c;
      if (!DecodeConsumer(v, &c)) return bad = CorruptGroupRecord(), false;
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
        GroupScope('P', g.gid), std::max(from, g.lo), std::min(to, g.hi), false,
        [&](StreamId id, std::string_view v) {
          Nack n;
          if (!DecodeNack(v, &n)) return bad = CorruptGroupRecord(), false;
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
    batch_.DeleteEntry(s_.stream_cf_, key_, meta_.version,
                       GroupScope('P', g_.gid) + EncodeStreamId(id));
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
      const std::string scope = GroupScope('P', g_.gid);
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
      if (!lo || !hi) return CorruptGroupRecord();  // pending > 0 but nothing pending found
      g_.lo = *lo;
      g_.hi = *hi;
    }
    for (auto& entry : consumers_) {  // not a structured binding: lambdas below capture them
      const auto& name = entry.first;
      auto& st = entry.second;
      std::string sub = GroupScope('N', g_.gid) + name;
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
        if (!best) return CorruptGroupRecord();
        st.rec.lo = *best;
      }
      s_.PutEntry(&batch_, s_.stream_cf_, key_, meta_.version, sub, EncodeConsumer(st.rec));
    }
    s_.PutEntry(&batch_, s_.stream_cf_, key_, meta_.version, GroupSub(name_), EncodeGroup(g_));
    return Status::OK();
  }

  Records& batch() { return batch_; }

  // ---- whole values (DUMP / RESTORE: store_stream_group_value.cc) ----

  // Every group of the stream with its whole PEL and its consumers, as KeyValue::stream_groups
  // holds them. O(groups + PEL + consumers).
  Status ReadAll(std::vector<StreamFullInfo::Group>* out);
  // Puts the records of `groups` (as KeyValue::stream_groups) for a stream written whole under a
  // fresh version (no group records yet), and sets meta->groups and meta->next_group_id.
  // InvalidArgument when a PEL entry names no consumer of its group.
  static Status PutAll(RocksStore* store, Records* batch, std::string_view key, Meta* meta,
                       const std::vector<StreamFullInfo::Group>& groups);

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
                GroupScope('P', g_.gid) + EncodeStreamId(id), EncodeNack(n));
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

}  // namespace rockcache::storage
