// Redis-compatible glob matching (the pattern language of KEYS, SCAN MATCH, CONFIG GET and
// PSUBSCRIBE): `*`, `?`, `[abc]`, `[^a-z]`, and `\` escapes. Binary safe. Pure function, any
// thread.
//
// Results are those of Redis 7.0's stringmatchlen(), quirks included:
//  * an empty text matches only the empty pattern (`*` does not match ""; callers that treat
//    `*` as "everything" short-circuit before calling, as Redis's KEYS and SCAN do);
//  * ranges compare bytes as signed chars (`[a-\xff]` is the range -1..'a'), reversed ranges
//    are swapped, and a `-` right before the class's `]` makes `]` the range's end;
//  * an unterminated `[` class ends at the end of the pattern; a trailing `\` is a literal `\`;
//  * inside a class, `\x` compares x case-sensitively even with `nocase`.
//
// Cost: O(pattern * text) in the worst case, no recursion (every token but `*` consumes exactly
// one byte, so backtracking to the most recent `*` only is enough; this is the bound Redis got
// from its CVE-2022-36021 fix). Pattern length does not grow the stack.
#pragma once

#include <string_view>

namespace rockcache {

// True when `text` matches `pattern`. With `nocase`, ASCII letters compare case-insensitively.
bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace rockcache
