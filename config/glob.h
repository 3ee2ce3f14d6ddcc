// Redis-compatible glob matching (the pattern language of KEYS, SCAN MATCH and CONFIG GET):
// `*`, `?`, `[abc]`, `[^a-z]`, and `\` escapes. Binary safe. Pure function, any thread.
#pragma once

#include <string_view>

namespace rockcache {

// True when `text` matches `pattern`. With `nocase`, ASCII letters compare case-insensitively.
bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace rockcache
