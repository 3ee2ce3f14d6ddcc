// Small helpers shared by command handlers for reading arguments. Pure, any thread.
#pragma once

#include <strings.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/numbers.h"

namespace rockcache::server {

// Case-insensitive comparison of an argument with an ASCII keyword ("EX", "NX", ...).
inline bool Is(const std::string& arg, const char* keyword) {
  return strcasecmp(arg.c_str(), keyword) == 0;
}

// Redis's strict integer parsing (string2ll).
inline bool ParseInteger(const std::string& arg, int64_t* out) {
  return storage::ParseInt64(arg, out);
}

// The error of an argument that should be a float (ZADD, GEOADD...).
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";

// Most elements a random-sampling command (HRANDFIELD, SRANDMEMBER with a negative count) may be
// asked for: its reply is built in memory, so an absurd count must not take the server down.
inline constexpr int64_t kMaxRandomCount = 100'000'000;

// Views of argv[first..] stepping by `step` (keys of MGET/DEL/EXISTS, ...).
inline std::vector<std::string_view> ArgViews(const std::vector<std::string>& argv, size_t first,
                                              size_t step = 1) {
  std::vector<std::string_view> views;
  views.reserve((argv.size() - first + step - 1) / step);
  for (size_t i = first; i < argv.size(); i += step) views.emplace_back(argv[i]);
  return views;
}

}  // namespace rockcache::server
