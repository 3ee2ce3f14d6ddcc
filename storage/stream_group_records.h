// Stream consumer group records (storage-internal: store_stream_group*.cc, store_value.cc).
// Records (sub-keys of the stream's DataPrefix in the "stream" column family, after every entry:
// kSpace is 16 x 0xff, longer sub-keys than any entry id so that entry iterators bounded by ids
// never meet them; encoding.h):
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
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/status.h"
#include "storage/encoding.h"
#include "storage/stream_types.h"

namespace rockcache::storage {

// The 16 x 0xff that every group record's sub-key starts with.
const std::string& GroupSpace();
// kSpace 'G' name: the group `name`.
std::string GroupSub(std::string_view name);
// kSpace tag BE64(gid): the records of kind `tag` ('P', 'C', 'N') of group `gid`.
std::string GroupScope(char tag, uint64_t gid);
// kSpace 'C' BE64(gid) [u32 len] consumer: the consumer's own PEL index.
std::string ConsumerPelScope(uint64_t gid, std::string_view consumer);

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

std::string EncodeGroup(const GroupRec& g);
bool DecodeGroup(std::string_view v, GroupRec* g);
constexpr size_t kGroupBytes = 8 + 16 + 8 + 8 + 8 + 32 + 1 + 32;

struct ConsumerRec {
  int64_t seen_ms = 0;
  uint64_t pending = 0;
  StreamId lo;  // with pending > 0: its first pending id
};

std::string EncodeConsumer(const ConsumerRec& c);
bool DecodeConsumer(std::string_view v, ConsumerRec* c);

struct Nack {
  int64_t time_ms = 0;
  uint64_t count = 0;
  std::string consumer;
};

std::string EncodeNack(const Nack& n);
bool DecodeNack(std::string_view v, Nack* n);

Status CorruptGroupRecord();

// Redis 7.0's streamRangeHasTombstones(s, start, NULL).
bool HasTombstonesFrom(const Meta& m, StreamId start);
// Redis 7.0's streamEstimateDistanceFromFirstEverEntry.
int64_t EstimateDistance(const Meta& m, StreamId id);
// Redis 7.0's XINFO lag (streamReplyWithCGLag); nullopt = nil.
std::optional<int64_t> Lag(const Meta& m, const GroupRec& g);
// XINFO STREAM's figures of a stream meta.
StreamInfo InfoOf(const Meta& m);

}  // namespace rockcache::storage
