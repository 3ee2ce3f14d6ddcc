// storage/stream_types — the stream types of the Store API (store.h): an entry as XRANGE returns
// it, XADD / XTRIM's trimming and XADD's spec, and the consumer groups' records as the XINFO,
// XPENDING, XREADGROUP, XCLAIM and XAUTOCLAIM methods return them. Entry ids are
// storage::StreamId (stream_id.h).
//
// Plain values. Included by store.h; include this alone when only the types are needed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/stream_id.h"

namespace rockcache::storage {

// A stream entry: its id and its field/value pairs in the order XADD gave them.
struct StreamEntry {
  StreamId id;
  std::vector<std::pair<std::string, std::string>> fields;
  // A pending entry whose stream entry was deleted (XREADGROUP's history read): Redis replies
  // the id with a null field array.
  bool deleted = false;
};

// XADD's / XTRIM's trimming. `limit` 0 = no limit, else at most `limit` entries are removed
// (the server passes Redis's LIMIT, or its default 10000 for `~` without LIMIT). `~` trims
// exactly here (Redis may trim less).
struct StreamTrim {
  enum class Strategy { kNone, kMaxLen, kMinId };
  Strategy strategy = Strategy::kNone;
  uint64_t maxlen = 0;  // kMaxLen: keep at most this many (the newest)
  StreamId minid;       // kMinId: remove the entries with an id < minid
  uint64_t limit = 0;
};

struct XAddSpec {
  enum class IdKind { kAuto /* * */, kAutoSeq /* ms-* */, kExplicit /* ms-seq */ };
  IdKind id_kind = IdKind::kAuto;
  StreamId id;  // kAutoSeq: the ms; kExplicit: the id (REQUIRES > 0-0, the server checks)
  bool nomkstream = false;
  StreamTrim trim;
};

// ---- consumer groups (store_stream_group.cc) ----

// What storage returns as the status message when the key or the group is missing
// (Status::NotFound): the server writes the command's own Redis error for each.
inline constexpr char kNoStreamKey[] = "no such key";
inline constexpr char kNoStreamGroup[] = "no such group";
// A group's entries-read counter that is not known (Redis's SCG_INVALID_ENTRIES_READ).
inline constexpr int64_t kInvalidEntriesRead = -1;

// The stream's own figures (XINFO STREAM, XREAD's `$`).
struct StreamInfo {
  uint64_t length = 0;
  StreamId last_id;         // last-generated-id
  StreamId max_deleted_id;  // max-deleted-entry-id
  uint64_t entries_added = 0;
  StreamId first_id;  // recorded-first-entry-id: the first live entry, 0-0 when empty
  StreamId top_id;    // the last live entry, 0-0 when empty
  uint64_t groups = 0;
};

struct StreamGroupInfo {
  std::string name;
  StreamId last_id;                            // last-delivered-id
  int64_t entries_read = kInvalidEntriesRead;  // kInvalidEntriesRead: Redis replies nil
  uint64_t pending = 0;
  uint64_t consumers = 0;
  std::optional<int64_t> lag;  // nullopt: not computable (Redis replies nil)
};

struct StreamConsumerInfo {
  std::string name;
  int64_t seen_time_ms = 0;
  uint64_t pending = 0;
};

// One entry of a group's pending entries list (PEL).
struct StreamPendingEntry {
  StreamId id;
  std::string consumer;
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 0;
};

// XPENDING's summary form.
struct StreamPendingSummary {
  uint64_t count = 0;
  StreamId min_id, max_id;                                  // with count > 0
  std::vector<std::pair<std::string, uint64_t>> consumers;  // by name; pending > 0 only
};

// XPENDING's extended form: the PEL entries with start <= id <= end, at most `count`, only those
// idle at least `min_idle_ms` (0 = all), only `consumer`'s when set.
struct StreamPendingQuery {
  StreamId start = StreamId::Min();
  StreamId end = StreamId::Max();
  uint64_t count = 0;
  int64_t min_idle_ms = 0;
  std::optional<std::string> consumer;
};

// XREADGROUP on one key: `after` nullopt = `>` (new entries, added to the PEL unless noack),
// else the consumer's own pending entries with an id > *after (history).
struct StreamGroupReadSpec {
  std::string_view group;
  std::string_view consumer;
  std::optional<StreamId> after;
  uint64_t count = 0;  // 0 = all
  bool noack = false;
  // Serving a client blocked on `>`: served when the stream's last id is past the group's (not
  // only its last live entry, as Redis). With `probe` nothing is written: an empty vector says
  // it would be served.
  bool blocked = false;
  bool probe = false;
};

struct StreamClaimSpec {
  std::string_view group;
  std::string_view consumer;
  int64_t min_idle_ms = 0;
  std::vector<StreamId> ids;
  int64_t delivery_time_ms = 0;  // the claimed entries' new delivery time (IDLE / TIME / now)
  int64_t retry_count = -1;      // -1: incremented (unless justid)
  bool force = false;
  bool justid = false;
  std::optional<StreamId> last_id;  // LASTID
};

// XCLAIM's / XAUTOCLAIM's result: the claimed entries (ids only with justid), in order.
struct StreamClaimResult {
  std::vector<StreamEntry> claimed;
  std::vector<StreamId> deleted;  // XAUTOCLAIM: PEL entries dropped because the entry is gone
  StreamId next;                  // XAUTOCLAIM's cursor (0-0 at the end)
};

// XINFO STREAM FULL: the stream, each group with at most `count` PEL entries (0 = all), and its
// consumers with at most `count` of their pending entries each.
struct StreamFullInfo {
  StreamInfo stream;
  std::vector<StreamEntry> entries;  // at most count, from the first
  struct Consumer {
    StreamConsumerInfo info;
    std::vector<StreamPendingEntry> pending;
  };
  struct Group {
    StreamGroupInfo info;
    std::vector<StreamPendingEntry> pel;
    std::vector<Consumer> consumers;
  };
  std::vector<Group> groups;
};

}  // namespace rockcache::storage
