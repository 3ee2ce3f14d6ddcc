#include "storage/stream_group_records.h"

namespace rockcache::storage {

const std::string& GroupSpace() {
  static const std::string space(16, '\xff');
  return space;
}

std::string GroupSub(std::string_view name) {
  std::string s = GroupSpace();
  s.push_back('G');
  s.append(name.data(), name.size());
  return s;
}

std::string GroupScope(char tag, uint64_t gid) {
  std::string s = GroupSpace();
  s.push_back(tag);
  PutFixed64BE(&s, gid);
  return s;
}

std::string ConsumerPelScope(uint64_t gid, std::string_view consumer) {
  std::string s = GroupScope('C', gid);
  PutFixed32BE(&s, static_cast<uint32_t>(consumer.size()));
  s.append(consumer.data(), consumer.size());
  return s;
}

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

Status CorruptGroupRecord() { return Status::Corruption("bad stream group record"); }

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

}  // namespace rockcache::storage
