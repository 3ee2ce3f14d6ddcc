// client-output-buffer-limit: Redis's per-class limits on a client's pending reply bytes.
//
// Syntax, as redis.conf and CONFIG SET accept it: one or more `<class> <hard> <soft> <seconds>`
// groups, class one of normal | replica (alias slave) | pubsub, hard and soft memory values
// ("256mb", 0 = no limit), seconds an integer. Each group replaces its class and leaves the other
// classes as they were. rockcache also accepts a single memory value, its older syntax: the hard
// limit of the normal class.
//
// A client is closed when its pending replies exceed `hard`, or have stayed above `soft` for more
// than `soft_seconds` seconds (Redis's rule). Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/status.h"

namespace rockcache::config {

struct BufferLimit {
  int64_t hard = 0;  // bytes; 0 = none
  int64_t soft = 0;  // bytes; 0 = none
  int64_t soft_seconds = 0;
  friend bool operator==(const BufferLimit& a, const BufferLimit& b) {
    return a.hard == b.hard && a.soft == b.soft && a.soft_seconds == b.soft_seconds;
  }
};

struct ClientBufferLimits {
  BufferLimit normal;
  BufferLimit replica;
  BufferLimit pubsub;
};

// Parses `text` over `base` (the classes it does not name keep base's values). Errors carry
// Redis's wording ("Wrong number of arguments in buffer limit configuration." ...).
[[nodiscard]] Status ParseClientBufferLimits(std::string_view text, const ClientBufferLimits& base,
                                             ClientBufferLimits* out);

// Redis's CONFIG GET form: "normal <h> <s> <n> slave <h> <s> <n> pubsub <h> <s> <n>", bytes.
std::string FormatClientBufferLimits(const ClientBufferLimits& limits);

}  // namespace rockcache::config
