// RocksStore: stream consumer groups — creating, changing and destroying groups and consumers,
// XINFO, XSETID. The reads and writes of the PEL (XREADGROUP, XACK, XPENDING, XCLAIM,
// XAUTOCLAIM) are in store_stream_group_pel.cc; the records in stream_group_records.h.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "storage/result_bytes.h"
#include "storage/rocks_store.h"
#include "storage/stream_groups.h"

namespace rockcache::storage {

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
          batch.DeleteEntry(stream_cf_, key, meta.version,
                            GroupScope('P', g.gid) + EncodeStreamId(id));
          batch.DeleteEntry(stream_cf_, key, meta.version,
                            ConsumerPelScope(g.gid, n.consumer) + EncodeStreamId(id));
          return true;
        });
    if (!s.ok()) return s;
    s = groups.ListConsumers(g.gid, [&](std::string_view name, const ConsumerRec&) {
      batch.DeleteEntry(stream_cf_, key, meta.version, GroupScope('N', g.gid) + std::string(name));
      return true;
    });
    if (!s.ok()) return s;
  } else {
    for (char tag : {'P', 'C', 'N'}) {
      const std::string scope = DataKey(key, meta.version, GroupScope(tag, g.gid));
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
