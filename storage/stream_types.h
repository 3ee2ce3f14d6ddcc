// storage/stream_types — the stream types of the Store API (store.h): an entry as XRANGE returns
// it, XADD / XTRIM's trimming and XADD's spec. Entry ids are storage::StreamId (stream_id.h).
//
// Plain values. Included by store.h; include this alone when only the types are needed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "storage/stream_id.h"

namespace rockcache::storage {

// A stream entry: its id and its field/value pairs in the order XADD gave them.
struct StreamEntry {
  StreamId id;
  std::vector<std::pair<std::string, std::string>> fields;
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

}  // namespace rockcache::storage
