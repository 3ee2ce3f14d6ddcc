// storage::KeyValue — a whole key (type, value, expiry) as one plain value: what DUMP reads
// (Store::ReadValue) and RESTORE / an RDB import writes (Store::WriteValue). Plain data, any
// thread; include store.h for the methods.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "storage/store_types.h"
#include "storage/stream_types.h"
#include "storage/zset_types.h"

namespace rockcache::storage {

struct KeyValue {
  KeyType type = KeyType::kNone;
  int64_t expire_at_ms = 0;                                // 0 = no TTL
  std::string string;                                      // kString
  std::vector<std::string> elements;                       // kList (head to tail), kSet
  std::vector<std::pair<std::string, std::string>> pairs;  // kHash: field, value
  std::vector<ScoredMember> members;                       // kZSet: by (score, member)
  std::vector<StreamEntry> entries;                        // kStream: ascending ids
  StreamId stream_last_id;                                 // kStream: the last id ever added
  // kStream, as XINFO STREAM shows them: max-deleted-entry-id, entries-added (0 with entries:
  // unknown, taken as the number of entries).
  StreamId stream_max_deleted_id;
  uint64_t stream_entries_added = 0;
  // kStream: the consumer groups, by name: each one's name, last id and entries-read
  // (`info`; its pending, consumers and lag are not used), its whole PEL by ascending id (each
  // entry naming the consumer that owns it) and its consumers by name (name and seen time;
  // `info.pending` and `pending` are not used: the PEL says what each one owns).
  std::vector<StreamFullInfo::Group> stream_groups;
};

}  // namespace rockcache::storage
