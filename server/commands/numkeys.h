// Key finders (CommandSpec::find_keys) of commands whose keys follow a numkeys argument
// (ZUNION, ZINTERCARD, SINTERCARD, LMPOP, ZMPOP; ZUNIONSTORE... with a destination first).
// Pure, any thread. A numkeys that is not a positive integer, or larger than what follows it,
// yields the keys that are there: the handler reports the error.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "server/commands/args.h"
#include "server/commands/command.h"

namespace rockcache::server {

// argv[index] is numkeys; the keys follow it.
inline std::vector<std::string_view> KeysAfterNumKeys(const Args& argv, size_t index) {
  std::vector<std::string_view> keys;
  int64_t numkeys = 0;
  if (index >= argv.size() || !ParseInteger(argv[index], &numkeys) || numkeys < 1) return keys;
  for (size_t i = index + 1; i < argv.size() && i <= index + static_cast<uint64_t>(numkeys); ++i) {
    keys.emplace_back(argv[i]);
  }
  return keys;
}

// ZUNION numkeys key..., LMPOP numkeys key..., SINTERCARD numkeys key...
inline std::vector<std::string_view> NumKeysAt1(const Args& argv) {
  return KeysAfterNumKeys(argv, 1);
}

// ZUNIONSTORE destination numkeys key...
inline std::vector<std::string_view> DestinationAndNumKeysAt2(const Args& argv) {
  std::vector<std::string_view> keys = KeysAfterNumKeys(argv, 2);
  keys.insert(keys.begin(), argv[1]);
  return keys;
}

}  // namespace rockcache::server
