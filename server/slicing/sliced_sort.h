// Sliced SORT: SORT and SORT_RO *without STORE* over a big list, set or sorted set run as a
// sliced command (server/slicing/sliced_read.h) instead of holding a worker while every element
// is read, weighed, sorted and looked up. SORT ... STORE is not sliced: it writes its
// destination under its key locks, in one go, as before.
//
// When. The handler (server/commands/sort.cc) parses the command and checks the key's type, as
// before; then ReplySort opens a storage::RangeRead on the key (one snapshot) and estimates the
// unsliced code's work from its size: elements read, plus one BY lookup per element when it
// sorts by a pattern, plus one GET lookup per replied element and pattern. Work within one step
// (`slice-items`), or a caller that cannot continue (no ctx.slices: inside EXEC), takes the
// unsliced code, unchanged (it then paid one snapshot and one meta read more than before).
//
// How. The steps, each of at most `slice-items` units of work or `slice-usec` microseconds:
// 1. Load: the elements from the snapshot (RangeRead::Next) in their natural order (a set's in
//    byte order), 128 at a time, each batch weighed at once: with a BY pattern, its weights read
//    on the same snapshot (RangeRead::GetStrings / GetHashField, one batched lookup per batch);
//    without ALPHA, the weights (or the elements) parsed as doubles. An entry read and a lookup
//    count one unit each. With BY nosort (a constant pattern) only the LIMIT window is read (a
//    list or sorted set: the read is opened on the window's ranks; a set: the read stops after
//    the window).
// 2. Sort: the elements are sorted by index, as a bottom-up merge sort: runs of `slice-items`
//    elements sorted with std::sort (a run counts as `slice-items` units), then merged two by
//    two, each move one eighth of a unit (a compare and a 4-byte copy, against a RocksDB entry).
//    The order compares as the unsliced code (CompareSortItems) and breaks its ties by input
//    index, so it is exactly std::stable_sort's order: ties keep the input order. Total cost is
//    the unsliced O(N log N), in bounded steps. Skipped with BY nosort, or when LIMIT selects
//    nothing.
// 3. Reply: the array header, then the window's elements (or their GET values, looked up on the
//    snapshot in batches, one unit per lookup), streamed chunk by chunk as ReplyRange streams
//    (each step's bytes also capped at kSortChunkBytes).
// Nothing is sent before step 3, so an error found before it (the conversion error, found at
// the first weight that is not a number, or a storage error) is the reply, byte for byte what
// the unsliced code replies; a storage error in step 3 closes the client (its reply began).
//
// One consistent view. The read is opened in the first step, in the handler, under the sorted
// key's lock; every later read — the elements and every BY / GET key, which SORT does not lock —
// is on its snapshot, so the reply is one state of the whole database, that of the command's
// start: a writer changing BY or GET keys between steps does not change it. The unsliced code
// reads the pattern keys after the element, without a snapshot (one MGET per pattern).
//
// Memory. As the unsliced code, the elements (and their ALPHA weights) are held in memory for
// the whole command, plus 8 bytes per element of sort indexes; the reply is not (it is streamed
// under client-output-buffer-limit: a step first checks the client's pending and queued bytes,
// server/slicing/slice_task.cc).
//
// Steps hold no key lock and never touch the cache; every storage call goes through the
// RangeRead, which sets the command's physical database itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/commands/command.h"
#include "storage/store.h"

namespace rockcache::server {

// A BY or GET pattern, split once: "#", a constant (no '*': names nothing), or
// prefix*suffix[->field].
struct SortPattern {
  bool self = false;      // "#"
  bool constant = false;  // no '*'
  std::string prefix, suffix, field;
  bool hash_field = false;

  explicit SortPattern(const std::string& p);
  // The key this pattern names for `element` (REQUIRES: neither self nor constant).
  std::string KeyFor(const std::string& element) const { return prefix + element + suffix; }
};

// One element being sorted, and what it is compared by.
struct SortItem {
  std::string element;
  double score = 0;                   // numeric sort: the weight (or the element) as a double
  std::optional<std::string> weight;  // ALPHA with BY: the value compared (nullopt: missing)
};

// How SORT compares two items (before ASC/DESC): negative, zero or positive. Numeric: by score,
// equal scores by element bytes; ALPHA with BY: missing weights first, then strcoll (`binary`:
// byte order, as STORE does); ALPHA: the elements by strcoll (`binary`: bytes).
int CompareSortItems(const SortItem& a, const SortItem& b, bool alpha, bool by_pattern,
                     bool binary);

// A weight as Redis reads it for a numeric sort: strtod over the whole (NUL-terminated) string.
bool ParseSortWeight(const std::string& text, double* score);

// SORT's reply to a weight that is not a number.
inline constexpr char kSortNotDouble[] = "ERR One or more scores can't be converted into double";

// LIMIT offset count over `len` elements, as Redis: the window [*start, *end] of the sorted
// order (empty when *end < *start).
void SortWindow(int64_t len, int64_t limit_start, int64_t limit_count, int64_t* start,
                int64_t* end);

// A parsed SORT / SORT_RO without STORE, over a key of type list, set or sorted set.
struct SortRequest {
  std::string key;
  storage::KeyType type = storage::KeyType::kList;
  bool desc = false;
  bool alpha = false;
  bool dontsort = false;          // BY a constant pattern
  std::optional<SortPattern> by;  // a BY pattern with '*' (unset when dontsort)
  int64_t limit_start = 0;        // LIMIT as given
  int64_t limit_count = -1;
  std::vector<SortPattern> gets;  // GET patterns, in order
};

// Worker, in the SORT handler holding the sorted key's lock: replies `request` sliced as
// described at the top when its work is more than one step and ctx.slices is set; returns false
// without appending anything otherwise (the caller runs the unsliced code). True: the command
// was handled — the whole reply (or an error) appended, the rest deferred to ctx.slices
// (nothing appended yet), or the reply budget passed (ctx.reply_budget marked exceeded).
bool ReplySort(CommandContext& ctx, const SortRequest& request, std::string* out);

}  // namespace rockcache::server
