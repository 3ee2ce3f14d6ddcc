// storage/zset_types — the sorted-set types of the Store API (store.h): scored members, ZSCAN's
// result, ZADD's options and result, score and lex intervals with their parsers, and ZRANGE's
// general spec (also what a sliced ZRANGE reads, range_read.h).
//
// Plain values; ParseScoreRange / ParseLexRange are pure, any thread (defined in store_zset.cc).
// Included by store.h; include this alone when only the types are needed.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "config/status.h"

namespace rockcache::storage {

// A sorted-set member with its score.
struct ScoredMember {
  std::string member;
  double score = 0;
  bool operator==(const ScoredMember& o) const { return member == o.member && score == o.score; }
};

// ZSCAN: members with their scores.
struct ZScanResult {
  uint64_t next_cursor = 0;
  std::vector<ScoredMember> items;
};

// ZADD's flags. REQUIRES (the server reports the Redis errors): not NX with XX, not GT/LT with
// NX, not GT with LT, INCR with exactly one score/member pair.
struct ZAddOptions {
  enum class Condition { kAlways, kIfAbsent /* NX */, kIfPresent /* XX */ };
  Condition condition = Condition::kAlways;
  bool gt = false;    // update only when the new score is greater (new members still added)
  bool lt = false;    // update only when the new score is less
  bool ch = false;    // count changed members as well as added ones
  bool incr = false;  // ZINCRBY-like: add the score to the current one
};

struct ZAddResult {
  int64_t count = 0;            // members added (+ changed with CH); not meaningful with INCR
  std::optional<double> score;  // with INCR: the new score; nullopt when NX/XX/GT/LT blocked it
};

// A score interval (ZRANGEBYSCORE, ZCOUNT...), always min <= max in the logical sense; REV only
// changes the order of the result. Infinite bounds are ±infinity.
struct ScoreRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  bool max_exclusive = false;
};

// One end of a lex interval (ZRANGEBYLEX): "-", "+", "[member" or "(member".
struct LexBound {
  enum class Kind { kNegInf, kPosInf, kInclusive, kExclusive };
  Kind kind = Kind::kNegInf;
  std::string value;  // kInclusive / kExclusive
};

struct LexRange {
  LexBound min{LexBound::Kind::kNegInf, {}};
  LexBound max{LexBound::Kind::kPosInf, {}};
};

// Parses ZRANGEBYSCORE-style bounds ("1.5", "(1.5", "-inf", "+inf"), as Redis zslParseRange.
// Error: InvalidArgument "min or max is not a float".
Status ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out);
// Parses ZRANGEBYLEX-style bounds ("-", "+", "[a", "(a"), as Redis zslParseLexRange.
// Error: InvalidArgument "min or max not valid string range item".
Status ParseLexRange(std::string_view min, std::string_view max, LexRange* out);

// The general ZRANGE: by rank, by score or by lex; REV; LIMIT offset count (score/lex only).
struct ZRangeSpec {
  enum class By { kRank, kScore, kLex };
  By by = By::kRank;
  bool reverse = false;  // ZREVRANGE / REV: highest first (rank 0 = highest score)
  int64_t start = 0;     // kRank: Redis indexes, negative from the end
  int64_t stop = -1;
  ScoreRange score;    // kScore
  LexRange lex;        // kLex (assumes equal scores, as Redis; ordered by member)
  int64_t offset = 0;  // LIMIT: skip `offset` matches (negative offset = empty result)
  int64_t limit = -1;  // LIMIT: at most `limit` results; negative = no limit
};

}  // namespace rockcache::storage
