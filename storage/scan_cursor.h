// storage/scan_cursor — the SCAN-family cursor: a 64-bit number that carries its own resume
// position, plus a bounded table that sharpens it. Pure (no RocksDB); thread-safe where noted.
//
// Layout of a cursor c != 0 (0 starts and ends an iteration, as in Redis):
//   bits 63..24  the first bytes (up to kCursorPrefixBytes = 5, zero-padded) of a position P
//   bits 23..21  P's length, 1..5 (0 is never produced: such a cursor is garbage -> restart)
//   bits 20..0   a ResumeTable id, or 0 when P alone is exact
//
// What a scan step does (storage/store_collections.cc, RocksStore::ScanStep), with K the last
// item it examined and N the next one in the same iterator view:
//   - T = N's first min(5, |N|) bytes. If T > K, the cursor is (T, id 0): resuming at Seek(T)
//     lands on N exactly, since no item lies between K and N. No state anywhere.
//   - Otherwise K and N share their first 5 bytes (T = N[0,5) <= K < N forces it): the cursor is
//     (T, id) and the table maps id -> K; resuming with the entry seeks just past K.
//   - Resuming a cursor whose table entry is gone (overwritten by 65536 younger cursors) seeks to
//     T <= K: items in [T, K] come again (Redis allows duplicates), and that step does not stop
//     inside the run of items starting with T, whatever COUNT says, so it ends with a pure
//     cursor past the run: progress without the table.
// Guarantee (Redis's): an item present from the first call to the last is returned at least
// once, because every step starts at or before the point just after the previous step's K, and
// a step examines a contiguous run of its iterator's view. Termination: every step ends strictly
// past the position it resumed from (past K, past T with T > K, or past the whole T run), so with
// no endless inserts ahead of the cursor the iteration ends. No cursor ever silently restarts;
// only a garbage number (length bits 0) reads as 0.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "config/mutex.h"

namespace rockcache::storage {

inline constexpr size_t kCursorPrefixBytes = 5;
inline constexpr int kCursorIdBits = 21;

struct DecodedCursor {
  bool valid = false;  // false for 0 and for garbage: start from the beginning
  std::string prefix;  // P (1..5 bytes)
  uint32_t id = 0;     // ResumeTable id; 0 = P is exact
};

// REQUIRES: 1 <= prefix.size() <= kCursorPrefixBytes, id < 2^kCursorIdBits. Never returns 0.
uint64_t EncodeScanCursor(std::string_view prefix, uint32_t id);
DecodedCursor DecodeScanCursor(uint64_t cursor);

// Maps cursor ids to the exact last item of a step. Bounded: 65536 slots, each reused by the
// 65536th younger cursor (an entry that is gone only costs duplicates, see above). Thread-safe.
class ResumeTable {
 public:
  // Stores `last` for `scope` and returns the cursor (prefix, new id).
  uint64_t Put(std::string_view scope, std::string_view prefix, std::string_view last);
  // The `last` stored for exactly this cursor and scope; false when it was overwritten.
  bool Get(uint64_t cursor, std::string_view scope, std::string* last);

 private:
  static constexpr size_t kSlots = 1 << 16;
  static constexpr size_t kLocks = 64;
  struct Slot {
    uint64_t cursor = 0;
    std::string scope;
    std::string last;
  };
  // Slot i is slots[i / kLocks] of stripes_[i % kLocks], under that stripe's mutex.
  struct Stripe {
    Mutex mu;
    std::array<Slot, kSlots / kLocks> slots GUARDED_BY(mu);
  };
  std::atomic<uint32_t> next_id_{1};
  std::array<Stripe, kLocks> stripes_;
};

}  // namespace rockcache::storage
