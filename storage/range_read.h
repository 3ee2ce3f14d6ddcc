// storage/range_read — sliced reads: RangeQuery (what to read), RangeItem (one item of the
// result) and RangeRead (the resumable read over one RocksDB snapshot that
// Store::OpenRangeRead, store.h, makes; implemented in store_range_read.cc).
//
// Contract: see RangeQuery and RangeRead below (threads, blocking, lifetime). Included by
// store.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/status.h"
#include "storage/zset_types.h"

namespace rockcache::storage {

// Sliced reads (server/slicing/): a big read done in steps of bounded cost over ONE RocksDB
// snapshot, so that the steps together return exactly what a single read at the moment of
// OpenRangeRead would have returned, whatever writes happen between the steps.
struct RangeQuery {
  enum class Kind {
    kHash,  // every field of a hash with its value (HGETALL / HKEYS / HVALS)
    kSet,   // every member of a set (SMEMBERS), in byte order
    kList,  // LRANGE key start stop (Redis's index rules)
    kZSet,  // ZRANGE in all its forms (`zrange`)
    kKeys,  // KEYS pattern: live keys of the current database, in key order
  };
  Kind kind = Kind::kHash;
  std::string key;      // kHash, kSet, kList, kZSet
  int64_t start = 0;    // kList
  int64_t stop = -1;    // kList
  ZRangeSpec zrange;    // kZSet
  std::string pattern;  // kKeys (glob, config/glob.h)
};

// One item of a sliced read: hash field + value; set member, list element or key in `key`;
// zset member in `key` with its `score`.
struct RangeItem {
  std::string key;
  std::string value;
  double score = 0;
};

// A resumable read (see RangeQuery), made by Store::OpenRangeRead. It holds a RocksDB snapshot
// from its creation to its destruction: while it lives, the versions it needs are pinned (not
// compacted away), which is the price of the consistent view; sliced commands keep it for the
// few milliseconds to seconds their steps take.
// Threads: not thread-safe, but it may move between threads between calls (one thread at a
// time: a sliced command's steps run on whichever worker takes them). Every call may block on
// disk. REQUIRES: destroyed before Store::Close() (the server's pool runs or cancels every task
// before the store closes).
class RangeRead {
 public:
  virtual ~RangeRead() = default;
  // How many items the whole read returns, when the snapshot's meta tells (kHash, kSet, kList,
  // kZSet by rank); -1 when only a pass can tell (kKeys, kZSet by score or lex): count with a
  // pass of Next(out = nullptr), then Restart().
  virtual int64_t total() const = 0;
  // One step: visits at most `max_visits` entries (the step's cost bound; entries outside the
  // range that must be stepped over count too), appends the items found to *out (nullptr: only
  // counts them), adds their number to *emitted and sets *done when the read is complete.
  [[nodiscard]] virtual Status Next(uint64_t max_visits, std::vector<RangeItem>* out,
                                    uint64_t* emitted, bool* done) = 0;
  // As Next(out != nullptr), without copies: hands each item to `visit` (key: the field / member
  // / element / key; value: a hash field's value; score: a zset member's), whose views are valid
  // during that call only. `visit` returns false to end this call after that item: the next call
  // resumes at the item after it (a caller bounding the bytes it takes per call).
  using ItemVisitor =
      std::function<bool(std::string_view key, std::string_view value, double score)>;
  [[nodiscard]] virtual Status Visit(uint64_t max_visits, const ItemVisitor& visit,
                                     uint64_t* emitted, bool* done) = 0;
  // Back to the beginning, on the same snapshot (after a counting pass).
  virtual void Restart() = 0;
  // Point reads on the same snapshot, independent of the position (kSet and kZSet reads only;
  // InvalidArgument otherwise): sets (*scores)[i] to members[i]'s score (kZSet) or 1 (kSet) when
  // it is in the collection, nullopt when not (all nullopt when the key is absent). Used by the
  // sliced set / sorted-set algebra (server/slicing/sliced_algebra.h) to probe its inputs.
  [[nodiscard]] virtual Status Lookup(const std::vector<std::string_view>& members,
                                      std::vector<std::optional<double>>* scores) = 0;
  // Point reads of OTHER keys on the same snapshot, any kind of read, in the read's database,
  // expiry judged at OpenRangeRead: what plain reads at that moment would have returned. Used by
  // the sliced SORT (server/slicing/sliced_sort.h) for its BY / GET patterns. One batched
  // lookup per call (the caller bounds the batch). GetStrings: (*values)[i] = keys[i]'s string
  // value, nullopt when absent or of another type (as MGET). GetHashField: (*values)[i] = field
  // `field` of the hash keys[i], nullopt when the key is absent, not a hash, or lacks the field.
  [[nodiscard]] virtual Status GetStrings(const std::vector<std::string_view>& keys,
                                          std::vector<std::optional<std::string>>* values) = 0;
  [[nodiscard]] virtual Status GetHashField(const std::vector<std::string_view>& keys,
                                            std::string_view field,
                                            std::vector<std::optional<std::string>>* values) = 0;
};

}  // namespace rockcache::storage
