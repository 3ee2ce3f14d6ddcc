// StreamGroups::ReadAll / PutAll: a stream's consumer groups as whole values (DUMP, RESTORE,
// RDB import: store_value.cc).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "storage/stream_groups.h"

namespace rockcache::storage {

Status StreamGroups::ReadAll(std::vector<StreamFullInfo::Group>* out) {
  std::vector<std::pair<std::string, GroupRec>> recs;
  Status s = ListGroups([&](std::string_view name, const GroupRec& g) {
    recs.emplace_back(std::string(name), g);
    return true;
  });
  if (!s.ok()) return s;
  for (const auto& rec : recs) {
    StreamFullInfo::Group& group = out->emplace_back();
    const GroupRec& g = rec.second;
    group.info.name = rec.first;
    group.info.last_id = g.last_id;
    group.info.entries_read = g.entries_read;
    s = VisitPel(g, StreamId::Min(), StreamId::Max(), [&group](StreamId id, const Nack& n) {
      group.pel.push_back({id, n.consumer, n.time_ms, n.count});
      return true;
    });
    if (!s.ok()) return s;
    s = ListConsumers(g.gid, [&group](std::string_view name, const ConsumerRec& c) {
      StreamFullInfo::Consumer& consumer = group.consumers.emplace_back();
      consumer.info.name.assign(name.data(), name.size());
      consumer.info.seen_time_ms = c.seen_ms;
      return true;
    });
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status StreamGroups::PutAll(RocksStore* store, Records* batch, std::string_view key, Meta* meta,
                            const std::vector<StreamFullInfo::Group>& groups) {
  for (const StreamFullInfo::Group& group : groups) {
    GroupRec g;
    g.gid = meta->next_group_id++;
    g.last_id = group.info.last_id;
    g.entries_read = group.info.entries_read;
    std::map<std::string, ConsumerRec, std::less<>> consumers;
    for (const auto& c : group.consumers) consumers[c.info.name].seen_ms = c.info.seen_time_ms;
    for (const StreamPendingEntry& p : group.pel) {  // ascending ids
      auto it = consumers.find(p.consumer);
      if (it == consumers.end()) {
        return Status::InvalidArgument("a pending entry of group " + group.info.name +
                                       " names no consumer of it");
      }
      ConsumerRec& c = it->second;
      if (c.pending++ == 0) c.lo = p.id;
      if (g.pending++ == 0) g.lo = p.id;
      g.hi = p.id;
      Nack n;
      n.time_ms = p.delivery_time_ms;
      n.count = p.delivery_count;
      n.consumer = p.consumer;
      store->PutEntry(batch, store->stream_cf_, key, meta->version,
                      GroupScope('P', g.gid) + EncodeStreamId(p.id), EncodeNack(n));
      store->PutEntry(batch, store->stream_cf_, key, meta->version,
                      ConsumerPelScope(g.gid, p.consumer) + EncodeStreamId(p.id), "");
    }
    for (const auto& [name, c] : consumers) {
      store->PutEntry(batch, store->stream_cf_, key, meta->version, GroupScope('N', g.gid) + name,
                      EncodeConsumer(c));
    }
    g.consumers = consumers.size();
    store->PutEntry(batch, store->stream_cf_, key, meta->version, GroupSub(group.info.name),
                    EncodeGroup(g));
    ++meta->groups;
  }
  return Status::OK();
}

}  // namespace rockcache::storage
