// storage::StreamId — the id of a stream entry (<ms>-<seq>), shared by storage and the server.
// Header-only, pure.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace rockcache::storage {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;

  static constexpr StreamId Min() { return StreamId{0, 0}; }
  static constexpr StreamId Max() {
    return StreamId{std::numeric_limits<uint64_t>::max(), std::numeric_limits<uint64_t>::max()};
  }
  bool operator==(const StreamId& o) const { return ms == o.ms && seq == o.seq; }
  bool operator!=(const StreamId& o) const { return !(*this == o); }
  bool operator<(const StreamId& o) const { return ms < o.ms || (ms == o.ms && seq < o.seq); }
  bool operator<=(const StreamId& o) const { return !(o < *this); }
  bool operator>(const StreamId& o) const { return o < *this; }
  bool operator>=(const StreamId& o) const { return !(*this < o); }
  // The next id (false at Max, as Redis's streamIncrID) / the previous one (false at Min).
  bool Incr() {
    if (seq != std::numeric_limits<uint64_t>::max()) return ++seq, true;
    if (ms == std::numeric_limits<uint64_t>::max()) return false;
    return ++ms, seq = 0, true;
  }
  bool Decr() {
    if (seq != 0) return --seq, true;
    if (ms == 0) return false;
    return --ms, seq = std::numeric_limits<uint64_t>::max(), true;
  }
  std::string ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }
};

}  // namespace rockcache::storage
