// RocksStore: the pending entries lists of stream consumer groups — XREADGROUP, XACK,
// XPENDING, XCLAIM, XAUTOCLAIM (costs: stream_group_records.h).
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "storage/result_bytes.h"
#include "storage/rocks_store.h"
#include "storage/stream_groups.h"

namespace rockcache::storage {

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

}  // namespace rockcache::storage
