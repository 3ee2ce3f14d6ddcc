// storage/zset_bounds — whether a score or a member lies within a ZRANGEBYSCORE / ZRANGEBYLEX
// bound. Internal to storage/ (store_zset.cc, store_range_read.cc). Pure; any thread.
#pragma once

#include <string_view>

#include "storage/zset_types.h"

namespace rockcache::storage {

inline bool GteMin(double score, const ScoreRange& r) {
  return r.min_exclusive ? score > r.min : score >= r.min;
}
inline bool LteMax(double score, const ScoreRange& r) {
  return r.max_exclusive ? score < r.max : score <= r.max;
}
inline bool GteMin(std::string_view m, const LexBound& b) {
  switch (b.kind) {
    case LexBound::Kind::kNegInf:
      return true;
    case LexBound::Kind::kPosInf:
      return false;
    case LexBound::Kind::kInclusive:
      return m >= b.value;
    case LexBound::Kind::kExclusive:
      return m > b.value;
  }
  return false;
}
inline bool LteMax(std::string_view m, const LexBound& b) {
  switch (b.kind) {
    case LexBound::Kind::kNegInf:
      return false;
    case LexBound::Kind::kPosInf:
      return true;
    case LexBound::Kind::kInclusive:
      return m <= b.value;
    case LexBound::Kind::kExclusive:
      return m < b.value;
  }
  return false;
}

}  // namespace rockcache::storage
