#include "server/rdb/value_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_set>

#include "server/rdb/listpack.h"
#include "server/rdb/ziplist.h"

namespace rockcache::server::rdb {
namespace {

using storage::KeyType;
using storage::KeyValue;
using storage::StreamEntry;
using storage::StreamId;

constexpr uint8_t kQuicklistPlain = 1;
constexpr uint8_t kQuicklistPacked = 2;
constexpr uint8_t kStreamFlagDeleted = 1;
constexpr uint8_t kStreamFlagSameFields = 2;
constexpr size_t kStreamListpackMaxSize = 1u << 30;

// ---- encoding ----

// Redis 7.0's d2string: integral values below 2^52 as integers, others as %.17g.
std::string ScoreText(double score) {
  if (std::isinf(score)) return score < 0 ? "-inf" : "inf";
  if (score == 0) return std::signbit(score) ? "-0" : "0";
  if (score > -4503599627370495.0 && score < 4503599627370496.0 &&
      score == static_cast<double>(static_cast<long long>(score))) {
    return std::to_string(static_cast<long long>(score));
  }
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", score);
  return std::string(buf, static_cast<size_t>(n));
}

bool FitsListpack(const std::vector<std::pair<std::string, std::string>>& pairs,
                  int64_t max_entries, int64_t max_value) {
  if (static_cast<int64_t>(pairs.size()) > max_entries) return false;
  for (const auto& [a, b] : pairs) {
    if (static_cast<int64_t>(a.size()) > max_value || static_cast<int64_t>(b.size()) > max_value) {
      return false;
    }
  }
  return true;
}

// The quicklist nodes of RPUSHes of `elements` in order, as quicklistPushTail fills them.
void AppendQuicklist(std::string* out, const std::vector<std::string>& elements, int64_t fill) {
  constexpr size_t kSafetyLimit = 8192, kEstimateOverhead = 8, kPlainThreshold = 1u << 30;
  static constexpr size_t kLevels[] = {4096, 8192, 16384, 32768, 65536};
  std::vector<std::string> nodes;  // each: container byte + blob, joined at the end
  std::vector<uint8_t> containers;
  ListpackWriter current;
  bool open = false;
  auto close = [&] {
    if (!open) return;
    nodes.push_back(current.Finish());
    containers.push_back(kQuicklistPacked);
    current = ListpackWriter();
    open = false;
  };
  for (const auto& element : elements) {
    const size_t sz = element.size();
    if (sz >= kPlainThreshold) {
      close();
      nodes.push_back(element);
      containers.push_back(kQuicklistPlain);
      continue;
    }
    bool allow = false;
    if (open) {
      const size_t new_sz = current.bytes() + sz + kEstimateOverhead;
      if (fill < 0 && static_cast<size_t>(-fill - 1) < 5) {
        allow = new_sz <= kLevels[-fill - 1];
      }
      if (!allow && new_sz <= kSafetyLimit && fill >= 0) {
        allow = static_cast<int64_t>(current.count()) < fill;
      }
    }
    if (!allow) close();
    current.Append(element);
    open = true;
  }
  close();
  AppendLength(out, nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    AppendLength(out, containers[i]);
    AppendRdbString(out, nodes[i]);
  }
}

bool SameFields(const StreamEntry& entry, const StreamEntry& master) {
  if (entry.fields.size() != master.fields.size()) return false;
  for (size_t i = 0; i < entry.fields.size(); ++i) {
    if (entry.fields[i].first != master.fields[i].first) return false;
  }
  return true;
}

void AppendStreamId16(std::string* out, StreamId id) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(id.ms >> shift));
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(id.seq >> shift));
}

void AppendStreamMaster(ListpackWriter* lp, const StreamEntry& master, size_t count) {
  lp->AppendInt(static_cast<int64_t>(count));  // live entries
  lp->AppendInt(0);                            // deleted entries
  lp->AppendInt(static_cast<int64_t>(master.fields.size()));
  for (const auto& field : master.fields) lp->Append(field.first);
  lp->AppendInt(0);  // the master entry's terminator
}

void AppendStreamEntry(ListpackWriter* lp, const StreamEntry& entry, const StreamEntry& master) {
  const bool same = SameFields(entry, master);
  const auto n = static_cast<int64_t>(entry.fields.size());
  lp->AppendInt(same ? kStreamFlagSameFields : 0);
  lp->AppendInt(static_cast<int64_t>(entry.id.ms - master.id.ms));
  lp->AppendInt(static_cast<int64_t>(entry.id.seq - master.id.seq));
  if (!same) lp->AppendInt(n);
  for (const auto& [field, value] : entry.fields) {
    if (!same) lp->Append(field);
    lp->Append(value);
  }
  lp->AppendInt(same ? n + 3 : 2 * n + 4);
}

// One stream node: the master entry (from its first entry) and its entries, as streamAppendItem
// lays them out.
std::string StreamNode(const std::vector<StreamEntry>& entries, size_t begin, size_t end) {
  ListpackWriter lp;
  AppendStreamMaster(&lp, entries[begin], end - begin);
  for (size_t i = begin; i < end; ++i) AppendStreamEntry(&lp, entries[i], entries[begin]);
  return lp.Finish();
}

void AppendMillisecondTime(std::string* out, int64_t ms) {
  const auto v = static_cast<uint64_t>(ms);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The consumer groups of a stream as RDB_TYPE_STREAM_LISTPACKS_2 has them (rdbSaveObject): by
// name, each with its last id, entries-read, its PEL (raw id, delivery time, delivery count) by
// id and its consumers by name (name, seen time, the raw ids each one owns).
void AppendStreamGroups(std::string* out, const KeyValue& value) {
  std::vector<const storage::StreamFullInfo::Group*> groups;
  for (const auto& g : value.stream_groups) groups.push_back(&g);
  std::sort(groups.begin(), groups.end(),
            [](const auto* a, const auto* b) { return a->info.name < b->info.name; });
  AppendLength(out, groups.size());
  for (const auto* g : groups) {
    AppendRdbString(out, g->info.name);
    AppendLength(out, g->info.last_id.ms);
    AppendLength(out, g->info.last_id.seq);
    AppendLength(out, static_cast<uint64_t>(g->info.entries_read));
    std::vector<const storage::StreamPendingEntry*> pel;
    for (const auto& p : g->pel) pel.push_back(&p);
    std::sort(pel.begin(), pel.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
    AppendLength(out, pel.size());
    for (const auto* p : pel) {
      AppendStreamId16(out, p->id);
      AppendMillisecondTime(out, p->delivery_time_ms);
      AppendLength(out, p->delivery_count);
    }
    std::vector<const storage::StreamConsumerInfo*> consumers;
    for (const auto& c : g->consumers) consumers.push_back(&c.info);
    std::sort(consumers.begin(), consumers.end(),
              [](const auto* a, const auto* b) { return a->name < b->name; });
    AppendLength(out, consumers.size());
    for (const auto* c : consumers) {
      AppendRdbString(out, c->name);
      AppendMillisecondTime(out, c->seen_time_ms);
      uint64_t owned = 0;
      for (const auto* p : pel) owned += p->consumer == c->name;
      AppendLength(out, owned);
      for (const auto* p : pel) {
        if (p->consumer == c->name) AppendStreamId16(out, p->id);
      }
    }
  }
}

void AppendStream(std::string* out, const KeyValue& value, const EncodingLimits& limits) {
  size_t max_bytes = static_cast<size_t>(std::max<int64_t>(0, limits.stream_node_max_bytes));
  if (max_bytes == 0 || max_bytes > kStreamListpackMaxSize) max_bytes = kStreamListpackMaxSize;
  const auto& entries = value.entries;
  // Node boundaries as streamAppendItem decides them, entry by entry: it opens a new node when
  // the node's listpack (lpBytes, its master count as of then) plus the new entry's field and
  // value bytes reach stream-node-max-bytes, or its entries reach stream-node-max-entries.
  std::vector<std::pair<size_t, size_t>> nodes;
  size_t begin = 0;
  size_t entries_bytes = 0;  // encoded entries of the open node
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > begin) {
      size_t fields_bytes = 0;
      for (const auto& [f, v] : entries[i].fields) fields_bytes += f.size() + v.size();
      ListpackWriter master;
      AppendStreamMaster(&master, entries[begin], i - begin);
      const size_t lp_bytes = master.bytes() + entries_bytes;
      bool new_node = lp_bytes + fields_bytes >= max_bytes;
      if (!new_node && limits.stream_node_max_entries > 0) {
        new_node = static_cast<int64_t>(i - begin) >= limits.stream_node_max_entries;
      }
      if (new_node) {
        nodes.emplace_back(begin, i);
        begin = i;
        entries_bytes = 0;
      }
    }
    ListpackWriter one;
    AppendStreamEntry(&one, entries[i], entries[begin]);
    entries_bytes += one.bytes() - 7;
  }
  if (!entries.empty()) nodes.emplace_back(begin, entries.size());
  AppendLength(out, nodes.size());
  for (const auto& [b, e] : nodes) {
    std::string key;
    AppendStreamId16(&key, entries[b].id);
    AppendRdbString(out, key);
    AppendRdbString(out, StreamNode(entries, b, e));
  }
  AppendLength(out, entries.size());
  AppendLength(out, value.stream_last_id.ms);
  AppendLength(out, value.stream_last_id.seq);
  const StreamId first = entries.empty() ? StreamId{} : entries.front().id;
  AppendLength(out, first.ms);
  AppendLength(out, first.seq);
  AppendLength(out, value.stream_max_deleted_id.ms);
  AppendLength(out, value.stream_max_deleted_id.seq);
  // entries-added 0 with entries: a value that does not know it (see KeyValue).
  AppendLength(out, value.stream_entries_added == 0 ? entries.size() : value.stream_entries_added);
  AppendStreamGroups(out, value);
}

}  // namespace

void AppendObject(std::string* out, const KeyValue& value, const EncodingLimits& limits) {
  switch (value.type) {
    case KeyType::kString:
      out->push_back(static_cast<char>(kTypeString));
      AppendRdbString(out, value.string);
      return;
    case KeyType::kList:
      out->push_back(static_cast<char>(kTypeListQuicklist2));
      AppendQuicklist(out, value.elements, limits.list_max_listpack_size);
      return;
    case KeyType::kSet: {
      std::vector<int64_t> ints;
      bool intset = static_cast<int64_t>(value.elements.size()) <= limits.set_max_intset_entries;
      for (size_t i = 0; intset && i < value.elements.size(); ++i) {
        int64_t n = 0;
        intset = ParseStrictInt64(value.elements[i], &n);
        ints.push_back(n);
      }
      if (intset) {
        std::sort(ints.begin(), ints.end());
        out->push_back(static_cast<char>(kTypeSetIntset));
        AppendRdbString(out, EncodeIntset(ints));
        return;
      }
      out->push_back(static_cast<char>(kTypeSet));
      AppendLength(out, value.elements.size());
      for (const auto& m : value.elements) AppendRdbString(out, m);
      return;
    }
    case KeyType::kHash:
      if (FitsListpack(value.pairs, limits.hash_max_listpack_entries,
                       limits.hash_max_listpack_value)) {
        ListpackWriter lp;
        for (const auto& [f, v] : value.pairs) {
          lp.Append(f);
          lp.Append(v);
        }
        out->push_back(static_cast<char>(kTypeHashListpack));
        AppendRdbString(out, lp.Finish());
        return;
      }
      out->push_back(static_cast<char>(kTypeHash));
      AppendLength(out, value.pairs.size());
      for (const auto& [f, v] : value.pairs) {
        AppendRdbString(out, f);
        AppendRdbString(out, v);
      }
      return;
    case KeyType::kZSet: {
      bool small = static_cast<int64_t>(value.members.size()) <= limits.zset_max_listpack_entries;
      for (size_t i = 0; small && i < value.members.size(); ++i) {
        small =
            static_cast<int64_t>(value.members[i].member.size()) <= limits.zset_max_listpack_value;
      }
      if (small) {
        ListpackWriter lp;
        for (const auto& m : value.members) {
          lp.Append(m.member);
          lp.Append(ScoreText(m.score));
        }
        out->push_back(static_cast<char>(kTypeZSetListpack));
        AppendRdbString(out, lp.Finish());
        return;
      }
      // Redis saves its skiplist from the highest member down.
      out->push_back(static_cast<char>(kTypeZSet2));
      AppendLength(out, value.members.size());
      for (auto it = value.members.rbegin(); it != value.members.rend(); ++it) {
        AppendRdbString(out, it->member);
        AppendBinaryDouble(out, it->score);
      }
      return;
    }
    case KeyType::kStream:
      out->push_back(static_cast<char>(kTypeStreamListpacks2));
      AppendStream(out, value, limits);
      return;
    case KeyType::kNone:
      return;
  }
}

std::string DumpPayload(const KeyValue& value, const EncodingLimits& limits) {
  std::string payload;
  AppendObject(&payload, value, limits);
  AppendFooter(&payload);
  return payload;
}

// ---- decoding ----

namespace {

// The decoded collection under construction, with the duplicate checks Redis's deep
// sanitization makes (rockcache's storage needs distinct members).
struct Builder {
  KeyValue* value;
  DecodeBudget* budget;
  std::unordered_set<std::string> seen;

  bool Unique(const std::string& s) { return seen.insert(s).second; }
  bool Element(std::string s) {  // list
    if (!budget->Charge(s.size())) return false;
    value->elements.push_back(std::move(s));
    return true;
  }
  bool Member(std::string s) {  // set
    if (!budget->Charge(2 * s.size()) || !Unique(s)) return false;
    value->elements.push_back(std::move(s));
    return true;
  }
  bool Pair(std::string f, std::string v) {  // hash
    if (!budget->Charge(2 * f.size() + v.size()) || !Unique(f)) return false;
    value->pairs.emplace_back(std::move(f), std::move(v));
    return true;
  }
  bool Scored(std::string m, double score) {  // zset
    if (std::isnan(score) || !budget->Charge(2 * m.size() + 8) || !Unique(m)) return false;
    value->members.push_back(storage::ScoredMember{std::move(m), score == 0 ? 0.0 : score});
    return true;
  }
};

// A count read from the input: each counted item takes at least `min_bytes` more input.
bool ReadCount(Reader* r, uint64_t min_bytes, uint64_t* count) {
  bool encoded = false;
  if (!r->ReadLength(count, &encoded) || encoded) return false;
  return *count <= r->remaining() / min_bytes;
}

bool ReadBlob(Reader* r, DecodeBudget* budget, std::string* blob) {
  if (!r->ReadString(blob)) return false;
  return budget->Charge(blob->size());
}

bool ParseScore(const PackedValue& v, double* score) {
  if (v.is_int) return *score = static_cast<double>(v.number), true;
  const std::string text(v.text);
  if (text.empty()) return false;
  char* end = nullptr;
  *score = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && !std::isnan(*score);
}

bool PairsFromPacked(const std::vector<PackedValue>& values, bool zset, Builder* b) {
  if (values.empty() || values.size() % 2 != 0) return false;
  for (size_t i = 0; i < values.size(); i += 2) {
    if (zset) {
      double score = 0;
      if (!ParseScore(values[i + 1], &score) || !b->Scored(values[i].ToString(), score)) {
        return false;
      }
    } else if (!b->Pair(values[i].ToString(), values[i + 1].ToString())) {
      return false;
    }
  }
  return true;
}

bool ReadStreamId16(std::string_view key, StreamId* id) {
  if (key.size() != 16) return false;
  uint64_t ms = 0, seq = 0;
  for (int i = 0; i < 8; ++i) ms = (ms << 8) | static_cast<uint8_t>(key[i]);
  for (int i = 8; i < 16; ++i) seq = (seq << 8) | static_cast<uint8_t>(key[i]);
  *id = StreamId{ms, seq};
  return true;
}

bool IntOf(const std::vector<PackedValue>& v, size_t i, int64_t* n) {
  if (i >= v.size() || !v[i].is_int) return false;
  *n = v[i].number;
  return true;
}

// One stream node's live entries (streamIterator's walk of a listpack).
bool ReadStreamNode(StreamId master, const std::vector<PackedValue>& lp, DecodeBudget* budget,
                    std::vector<StreamEntry>* out) {
  int64_t count = 0, deleted = 0, master_fields = 0;
  if (!IntOf(lp, 0, &count) || !IntOf(lp, 1, &deleted) || !IntOf(lp, 2, &master_fields)) {
    return false;
  }
  if (count < 0 || deleted < 0 || master_fields < 0 ||
      static_cast<uint64_t>(master_fields) > lp.size())
    return false;
  size_t pos = 3 + static_cast<size_t>(master_fields);
  int64_t zero = -1;
  if (!IntOf(lp, pos, &zero) || zero != 0) return false;
  ++pos;
  int64_t live = 0;
  while (pos < lp.size()) {
    int64_t flags = 0, ms_diff = 0, seq_diff = 0;
    if (!IntOf(lp, pos, &flags) || !IntOf(lp, pos + 1, &ms_diff) ||
        !IntOf(lp, pos + 2, &seq_diff)) {
      return false;
    }
    pos += 3;
    const bool same = (flags & kStreamFlagSameFields) != 0;
    int64_t n = master_fields;
    if (!same && (!IntOf(lp, pos++, &n) || n < 0)) return false;
    const uint64_t values = same ? uint64_t(n) : 2 * uint64_t(n);
    if (values > lp.size() - pos) return false;
    StreamEntry entry;
    entry.id = StreamId{master.ms + static_cast<uint64_t>(ms_diff),
                        master.seq + static_cast<uint64_t>(seq_diff)};
    const bool live_entry = (flags & kStreamFlagDeleted) == 0;
    for (int64_t i = 0; i < n; ++i) {
      std::string field = same ? lp[3 + static_cast<size_t>(i)].ToString() : lp[pos++].ToString();
      std::string value = lp[pos++].ToString();
      if (live_entry) {
        if (!budget->Charge(field.size() + value.size())) return false;
        entry.fields.emplace_back(std::move(field), std::move(value));
      }
    }
    int64_t lp_count = 0;
    if (!IntOf(lp, pos++, &lp_count)) return false;
    if (lp_count != (same ? n + 3 : 2 * n + 4)) return false;
    if (live_entry) {
      if (!out->empty() && entry.id <= out->back().id) return false;
      out->push_back(std::move(entry));
      ++live;
    }
  }
  return live == count;
}

bool ReadStream(Reader* r, uint8_t type, DecodeBudget* budget, KeyValue* value) {
  value->type = KeyType::kStream;
  uint64_t nodes = 0;
  if (!ReadCount(r, 2, &nodes)) return false;
  std::set<std::string> node_keys;
  for (uint64_t i = 0; i < nodes; ++i) {
    std::string key, blob;
    StreamId master;
    if (!ReadBlob(r, budget, &key) || !ReadStreamId16(key, &master)) return false;
    if (!node_keys.insert(key).second) return false;
    if (!ReadBlob(r, budget, &blob)) return false;
    std::vector<PackedValue> lp;
    if (!DecodeListpack(blob, &lp) || lp.empty()) return false;
    if (!budget->Charge(lp.size() * sizeof(PackedValue))) return false;
    if (!value->entries.empty() && master <= value->entries.back().id) return false;
    if (!ReadStreamNode(master, lp, budget, &value->entries)) return false;
  }
  bool encoded = false;
  uint64_t length = 0, ms = 0, seq = 0;
  if (!r->ReadLength(&length, &encoded) || encoded) return false;
  if (!r->ReadLength(&ms, &encoded) || encoded || !r->ReadLength(&seq, &encoded) || encoded) {
    return false;
  }
  value->stream_last_id = StreamId{ms, seq};
  if (!value->entries.empty() && value->entries.back().id > value->stream_last_id) return false;
  const bool v2 = type == kTypeStreamListpacks2;
  if (v2) {
    uint64_t first_ms = 0, first_seq = 0, deleted_ms = 0, deleted_seq = 0, added = 0;
    for (uint64_t* field : {&first_ms, &first_seq, &deleted_ms, &deleted_seq, &added}) {
      if (!r->ReadLength(field, &encoded) || encoded) return false;
    }
    value->stream_max_deleted_id = StreamId{deleted_ms, deleted_seq};
    value->stream_entries_added = added;
  }
  // Consumer groups: each PEL entry must be owned by exactly one of the group's consumers (what
  // rockcache's storage holds; Redis checks it under sanitize-dump-payload).
  uint64_t groups = 0;
  if (!ReadCount(r, 4, &groups)) return false;
  std::set<std::string> group_names;
  for (uint64_t g = 0; g < groups; ++g) {
    storage::StreamFullInfo::Group& group = value->stream_groups.emplace_back();
    uint64_t last_ms = 0, last_seq = 0, pel = 0, consumers = 0;
    if (!ReadBlob(r, budget, &group.info.name)) return false;
    if (!group_names.insert(group.info.name).second) return false;
    if (!r->ReadLength(&last_ms, &encoded) || encoded || !r->ReadLength(&last_seq, &encoded) ||
        encoded) {
      return false;
    }
    group.info.last_id = StreamId{last_ms, last_seq};
    if (v2) {
      uint64_t entries_read = 0;
      if (!r->ReadLength(&entries_read, &encoded) || encoded) return false;
      group.info.entries_read = static_cast<int64_t>(entries_read);
      if (group.info.entries_read < storage::kInvalidEntriesRead) return false;
    }
    if (!ReadCount(r, 17, &pel)) return false;
    std::map<StreamId, size_t> pel_index;  // id -> position in group.pel
    for (uint64_t i = 0; i < pel; ++i) {
      std::string_view raw;
      uint64_t delivered = 0, delivery_count = 0;
      if (!r->ReadRaw(16, &raw) || !r->ReadLittleEndian(8, &delivered) ||
          !r->ReadLength(&delivery_count, &encoded) || encoded) {
        return false;
      }
      StreamId id;
      if (!budget->Charge(64) || !ReadStreamId16(raw, &id)) return false;
      if (!pel_index.emplace(id, group.pel.size()).second) return false;
      storage::StreamPendingEntry& entry = group.pel.emplace_back();
      entry.id = id;
      entry.delivery_time_ms = static_cast<int64_t>(delivered);
      entry.delivery_count = delivery_count;
    }
    if (!ReadCount(r, 10, &consumers)) return false;
    std::set<std::string> consumer_names;
    std::vector<bool> owned_flags(group.pel.size(), false);
    size_t owned_total = 0;
    for (uint64_t c = 0; c < consumers; ++c) {
      storage::StreamFullInfo::Consumer& consumer = group.consumers.emplace_back();
      uint64_t seen = 0, owned = 0;
      if (!ReadBlob(r, budget, &consumer.info.name) || !r->ReadLittleEndian(8, &seen)) {
        return false;
      }
      if (!consumer_names.insert(consumer.info.name).second) return false;
      consumer.info.seen_time_ms = static_cast<int64_t>(seen);
      if (!ReadCount(r, 16, &owned)) return false;
      for (uint64_t i = 0; i < owned; ++i) {
        std::string_view raw;
        StreamId id;
        if (!r->ReadRaw(16, &raw) || !ReadStreamId16(raw, &id)) return false;
        auto it = pel_index.find(id);
        if (it == pel_index.end()) return false;
        if (owned_flags[it->second]) return false;                     // owned twice
        if (!budget->Charge(consumer.info.name.size())) return false;  // the name's copy
        owned_flags[it->second] = true;
        group.pel[it->second].consumer = consumer.info.name;
        ++owned_total;
      }
    }
    if (owned_total != group.pel.size()) return false;
  }
  (void)length;
  return true;
}

bool ReadQuicklist(Reader* r, bool v2, Builder* b) {
  uint64_t nodes = 0;
  if (!ReadCount(r, v2 ? 2 : 1, &nodes)) return false;
  for (uint64_t i = 0; i < nodes; ++i) {
    uint64_t container = kQuicklistPacked;
    bool encoded = false;
    if (v2 && (!r->ReadLength(&container, &encoded) || encoded ||
               (container != kQuicklistPlain && container != kQuicklistPacked))) {
      return false;
    }
    std::string blob;
    if (!ReadBlob(r, b->budget, &blob)) return false;
    if (container == kQuicklistPlain) {
      if (!b->Element(std::move(blob))) return false;
      continue;
    }
    std::vector<PackedValue> values;
    const bool ok = v2 ? DecodeListpack(blob, &values) : DecodeZiplist(blob, &values);
    if (!ok || !b->budget->Charge(values.size() * sizeof(PackedValue))) return false;
    for (const auto& v : values) {
      if (!b->Element(v.ToString())) return false;
    }
  }
  return !b->value->elements.empty();
}

}  // namespace

bool ReadObject(Reader* r, uint8_t type, DecodeBudget* budget, KeyValue* value) {
  Builder b{value, budget, {}};
  bool encoded = false;
  uint64_t count = 0;
  switch (type) {
    case kTypeString:
      value->type = KeyType::kString;
      return ReadBlob(r, budget, &value->string);
    case kTypeList:
    case kTypeSet:
      value->type = type == kTypeList ? KeyType::kList : KeyType::kSet;
      if (!ReadCount(r, 1, &count) || count == 0) return false;
      for (uint64_t i = 0; i < count; ++i) {
        std::string s;
        if (!r->ReadString(&s)) return false;
        if (!(type == kTypeList ? b.Element(std::move(s)) : b.Member(std::move(s)))) return false;
      }
      return true;
    case kTypeZSet:
    case kTypeZSet2:
      value->type = KeyType::kZSet;
      if (!ReadCount(r, 2, &count) || count == 0) return false;
      for (uint64_t i = 0; i < count; ++i) {
        std::string m;
        double score = 0;
        if (!r->ReadString(&m)) return false;
        if (!(type == kTypeZSet2 ? r->ReadBinaryDouble(&score) : r->ReadTextDouble(&score))) {
          return false;
        }
        if (!b.Scored(std::move(m), score)) return false;
      }
      std::sort(value->members.begin(), value->members.end(), [](const auto& x, const auto& y) {
        return x.score < y.score || (x.score == y.score && x.member < y.member);
      });
      return true;
    case kTypeHash:
      value->type = KeyType::kHash;
      if (!ReadCount(r, 2, &count) || count == 0) return false;
      for (uint64_t i = 0; i < count; ++i) {
        std::string f, v;
        if (!r->ReadString(&f) || !r->ReadString(&v) || !b.Pair(std::move(f), std::move(v))) {
          return false;
        }
      }
      return true;
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      value->type = KeyType::kList;
      return ReadQuicklist(r, type == kTypeListQuicklist2, &b);
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
      return ReadStream(r, type, budget, value);
    default:
      break;
  }
  // The rest are one blob in a packed encoding.
  std::string blob;
  std::vector<PackedValue> values;
  switch (type) {
    case kTypeSetIntset: {
      value->type = KeyType::kSet;
      std::vector<int64_t> ints;
      if (!ReadBlob(r, budget, &blob) || !DecodeIntset(blob, &ints)) return false;
      for (int64_t n : ints) {
        if (!b.Member(std::to_string(n))) return false;
      }
      return true;
    }
    case kTypeListZiplist:
      value->type = KeyType::kList;
      if (!ReadBlob(r, budget, &blob) || !DecodeZiplist(blob, &values) || values.empty()) {
        return false;
      }
      break;
    case kTypeSetListpack:
      value->type = KeyType::kSet;
      if (!ReadBlob(r, budget, &blob) || !DecodeListpack(blob, &values) || values.empty()) {
        return false;
      }
      break;
    case kTypeHashZipmap:
    case kTypeHashZiplist:
    case kTypeHashListpack:
    case kTypeZSetZiplist:
    case kTypeZSetListpack: {
      const bool zset = type == kTypeZSetZiplist || type == kTypeZSetListpack;
      value->type = zset ? KeyType::kZSet : KeyType::kHash;
      if (!ReadBlob(r, budget, &blob)) return false;
      const bool ok = type == kTypeHashZipmap ? DecodeZipmap(blob, &values)
                      : type == kTypeHashListpack || type == kTypeZSetListpack
                          ? DecodeListpack(blob, &values)
                          : DecodeZiplist(blob, &values);
      if (!ok || !budget->Charge(values.size() * sizeof(PackedValue))) return false;
      if (!PairsFromPacked(values, zset, &b)) return false;
      if (zset) {
        std::sort(value->members.begin(), value->members.end(), [](const auto& x, const auto& y) {
          return x.score < y.score || (x.score == y.score && x.member < y.member);
        });
      }
      return true;
    }
    default:
      return false;  // modules, unknown types
  }
  if (!budget->Charge(values.size() * sizeof(PackedValue))) return false;
  for (const auto& v : values) {
    if (!(value->type == KeyType::kList ? b.Element(v.ToString()) : b.Member(v.ToString()))) {
      return false;
    }
  }
  (void)encoded;
  return true;
}

bool DecodeObject(std::string_view body, KeyValue* value) {
  Reader reader(body);
  uint8_t type = 0;
  if (!reader.ReadByte(&type)) return false;
  DecodeBudget budget(body.size());
  return ReadObject(&reader, type, &budget, value);
}

}  // namespace rockcache::server::rdb
