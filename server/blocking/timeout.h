// The timeout argument of the blocking pops, parsed as Redis 7.0 parses it
// (getTimeoutFromObjectOrReply): seconds as a long double, fractional allowed, rounded up to
// milliseconds; 0 waits forever. Pure, any thread (the network thread arms its timer with it,
// the worker reports the errors).
#pragma once

#include <strings.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace rockcache::server {

inline constexpr std::string_view kTimeoutNotFloat = "ERR timeout is not a float or out of range";
inline constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";

// Parses `arg`; on success sets *ms (0 = forever) and returns an empty view, else the error.
inline std::string_view ParseBlockTimeout(const std::string& arg, int64_t* ms) {
  // string2ld: no leading space, the whole string, no NaN, no overflow to +-HUGE_VAL or 0.
  if (arg.empty() || arg.size() >= 5 * 1024 || std::isspace(static_cast<unsigned char>(arg[0]))) {
    return kTimeoutNotFloat;
  }
  errno = 0;
  char* end = nullptr;
  long double seconds = std::strtold(arg.c_str(), &end);
  if (*end != '\0' || std::isnan(seconds) ||
      (errno == ERANGE && (seconds == HUGE_VALL || seconds == -HUGE_VALL || seconds == 0))) {
    return kTimeoutNotFloat;
  }
  long double millis = std::ceil(seconds * 1000.0L);
  // Redis converts to long long; a value that does not fit (inf included) comes out negative.
  if (!(millis < 9223372036854775807.0L) || millis < -9223372036854775807.0L) {
    return kTimeoutNegative;
  }
  auto value = static_cast<int64_t>(millis);
  if (value < 0) return kTimeoutNegative;
  *ms = value;
  return {};
}

// The index of the timeout argument: first for BLMPOP/BZMPOP, last otherwise.
inline size_t BlockTimeoutIndex(const std::string& name, size_t argc) {
  return strcasecmp(name.c_str(), "BLMPOP") == 0 || strcasecmp(name.c_str(), "BZMPOP") == 0
             ? 1
             : argc - 1;
}

inline constexpr std::string_view kTimeoutNotInteger =
    "ERR timeout is not an integer or out of range";

// XREAD / XREADGROUP: the BLOCK option's milliseconds, parsed as Redis 7.0 parses it
// (getTimeoutFromObjectOrReply in milliseconds: a strict integer, >= 0; 0 waits forever). Sets
// *ms and returns an empty view, or returns the error.
inline std::string_view ParseBlockMillis(const std::string& arg, int64_t* ms) {
  char* end = nullptr;
  errno = 0;
  if (arg.empty() || arg.size() > 20 || std::isspace(static_cast<unsigned char>(arg[0]))) {
    return kTimeoutNotInteger;
  }
  long long v = std::strtoll(arg.c_str(), &end, 10);
  // string2ll: no '+', no leading zeros ("0" itself aside), the whole string.
  if (*end != '\0' || errno == ERANGE || arg[0] == '+' ||
      (arg.size() > 1 && (arg[0] == '0' || (arg[0] == '-' && arg[1] == '0')))) {
    return kTimeoutNotInteger;
  }
  if (v < 0) return kTimeoutNegative;
  *ms = v;
  return {};
}

// Whether argv is XREAD / XREADGROUP.
inline bool IsStreamRead(const std::string& name) {
  return strcasecmp(name.c_str(), "XREAD") == 0 || strcasecmp(name.c_str(), "XREADGROUP") == 0;
}

// XREAD / XREADGROUP: the index of the BLOCK option's value, as the handler's parse reaches it
// (options before STREAMS), or 0 when the command has no BLOCK.
inline size_t StreamReadBlockIndex(const std::vector<std::string>& argv) {
  size_t block = 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    const size_t more = argv.size() - i - 1;
    const char* o = argv[i].c_str();
    if (strcasecmp(o, "BLOCK") == 0 && more > 0) {
      block = ++i;
    } else if (strcasecmp(o, "COUNT") == 0 && more > 0) {
      ++i;
    } else if (strcasecmp(o, "GROUP") == 0 && more >= 2) {
      i += 2;
    } else if (strcasecmp(o, "NOACK") == 0) {
      continue;
    } else {
      break;  // STREAMS, or an error the handler reports
    }
  }
  return block;
}

}  // namespace rockcache::server
