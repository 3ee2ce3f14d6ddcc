// storage/result_bytes — the output-buffer bound of the Store's large reads (`max_bytes`): how
// a result's bytes are counted against it (ResultBytes), kNoByteLimit and kResultItemOverhead.
// The server's sliced reads (server/slicing/) count their items by the same rule.
//
// Header-only, pure. Included by store.h.
#pragma once

#include <cstdint>
#include <limits>

namespace rockcache::storage {

// Reads whose result can be large (KEYS, LRANGE, ZRANGE, HGETALL/HKEYS/HVALS, SMEMBERS,
// SRANDMEMBER/HRANDFIELD) take `max_bytes`: the room left under the client's output-buffer limit.
// They stop as soon as the result passes it — each item counted as its bytes plus
// kResultItemOverhead (its std::string and its RESP framing) — and return Status::OverLimit(), so
// what they hold never exceeds max_bytes by more than one item. kNoByteLimit: no bound.
inline constexpr uint64_t kNoByteLimit = std::numeric_limits<uint64_t>::max();
inline constexpr uint64_t kResultItemOverhead = 48;

// Counts a result's bytes against max_bytes (see above). Not thread-safe; one per call.
class ResultBytes {
 public:
  explicit ResultBytes(uint64_t max_bytes) : left_(max_bytes) {}
  // Counts one item of `size` bytes; false once the result has passed the limit.
  bool Add(uint64_t size) {
    uint64_t charge = size + kResultItemOverhead;
    if (over_ || charge > left_) {
      over_ = true;
      return false;
    }
    left_ -= charge;
    return true;
  }
  bool over() const { return over_; }

 private:
  uint64_t left_;
  bool over_ = false;
};

}  // namespace rockcache::storage
