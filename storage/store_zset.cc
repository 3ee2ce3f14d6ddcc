// RocksStore: sorted sets. Entries: "zset" CF, DataKey(key, version, member) -> EncodeScore(score)
// and the score index "zscore" CF, DataKey(key, version, EncodeScore(score) + member) -> "".
// Rank operations walk the score index (O(rank)); lex ranges walk the member CF.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <set>

#include "storage/rocks_store.h"
#include "storage/zset_bounds.h"

namespace rockcache::storage {

namespace {

const char kErrNaN[] = "resulting score is not a number (NaN)";

bool ParseScoreBound(std::string_view text, double* value, bool* exclusive) {
  std::string buf(text);
  const char* p = buf.c_str();
  *exclusive = false;
  if (*p == '(') {
    ++p;
    *exclusive = true;
  }
  char* end = nullptr;
  *value = std::strtod(p, &end);
  return *end == '\0' && !std::isnan(*value);
}

bool ParseLexBound(std::string_view text, LexBound* bound) {
  if (text.empty()) return false;
  switch (text[0]) {
    case '+':
      if (text.size() != 1) return false;
      *bound = LexBound{LexBound::Kind::kPosInf, {}};
      return true;
    case '-':
      if (text.size() != 1) return false;
      *bound = LexBound{LexBound::Kind::kNegInf, {}};
      return true;
    case '(':
      *bound = LexBound{LexBound::Kind::kExclusive, std::string(text.substr(1))};
      return true;
    case '[':
      *bound = LexBound{LexBound::Kind::kInclusive, std::string(text.substr(1))};
      return true;
    default:
      return false;
  }
}

double Normalize(double score) { return score == 0 ? 0.0 : score; }  // -0 -> +0

}  // namespace

Status ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out) {
  if (!ParseScoreBound(min, &out->min, &out->min_exclusive) ||
      !ParseScoreBound(max, &out->max, &out->max_exclusive)) {
    return Status::InvalidArgument("min or max is not a float");
  }
  return Status::OK();
}

Status ParseLexRange(std::string_view min, std::string_view max, LexRange* out) {
  if (!ParseLexBound(min, &out->min) || !ParseLexBound(max, &out->max)) {
    return Status::InvalidArgument("min or max not valid string range item");
  }
  return Status::OK();
}

// ---- internals ----

void RocksStore::PutZMember(Records* batch, std::string_view key, uint64_t version,
                            std::string_view member, double score) {
  score = Normalize(score);  // -0 is stored as 0 (an aggregate's -0 included), as Redis's listpack
  PutEntry(batch, zset_cf_, key, version, member, EncodeScore(score));
  PutEntry(batch, zscore_cf_, key, version, ScoreIndexSubKey(score, member), "");
}

void RocksStore::DeleteZMember(Records* batch, std::string_view key, uint64_t version,
                               std::string_view member, double score) {
  batch->DeleteEntry(zset_cf_, key, version, member);
  batch->DeleteEntry(zscore_cf_, key, version, ScoreIndexSubKey(score, member));
}

Status RocksStore::GetZScore(const rocksdb::ReadOptions& ro, std::string_view key, uint64_t version,
                             std::string_view member, std::optional<double>* score) {
  std::string value;
  bool found = false;
  if (Status s = GetEntry(ro, zset_cf_, key, version, member, &value, &found); !s.ok()) return s;
  if (!found) {
    *score = std::nullopt;
    return Status::OK();
  }
  if (value.size() != 8) return Status::Corruption("bad zset score");
  *score = DecodeScore(value.data());
  return Status::OK();
}

Status RocksStore::VisitZRange(const rocksdb::ReadOptions& ro, std::string_view key,
                               const Meta& meta, const ZRangeSpec& spec, const ZMemberFn& fn) {
  const bool rev = spec.reverse;
  if (spec.by == ZRangeSpec::By::kRank) {
    int64_t n = static_cast<int64_t>(meta.count);
    int64_t start = spec.start, stop = spec.stop;
    if (start < 0) start = n + start;
    if (stop < 0) stop = n + stop;
    if (start < 0) start = 0;
    if (start > stop || start >= n) return Status::OK();
    if (stop >= n) stop = n - 1;
    int64_t rank = 0;
    return ForEachEntry(
        ro, zscore_cf_, key, meta.version,
        [&](std::string_view sub, std::string_view) {
          if (rank > stop) return false;
          if (rank++ < start) return true;
          if (sub.size() < 8) return true;
          return fn(sub.substr(8), DecodeScore(sub.data()));
        },
        std::nullopt, rev, HintOf(meta));
  }
  if (spec.offset < 0) return Status::OK();
  int64_t skip = spec.offset;
  int64_t left = spec.limit;  // < 0: no limit
  auto emit = [&](std::string_view member, double score) {
    if (skip > 0) {
      --skip;
      return true;
    }
    if (left == 0) return false;
    if (left > 0) --left;
    return fn(member, score) && left != 0;
  };
  if (spec.by == ZRangeSpec::By::kScore) {
    const ScoreRange& r = spec.score;
    std::string from = rev ? PrefixSuccessor(EncodeScore(r.max)) : EncodeScore(r.min);
    return ForEachEntry(
        ro, zscore_cf_, key, meta.version,
        [&](std::string_view sub, std::string_view) {
          if (sub.size() < 8) return true;
          double score = DecodeScore(sub.data());
          if (rev ? !LteMax(score, r) : !GteMin(score, r)) return true;   // before the range
          if (rev ? !GteMin(score, r) : !LteMax(score, r)) return false;  // past it
          return emit(sub.substr(8), score);
        },
        from, rev, HintOf(meta));
  }
  // kLex: the member CF is in member order.
  const LexRange& r = spec.lex;
  std::optional<std::string_view> from;
  const LexBound& start = rev ? r.max : r.min;
  if (start.kind == (rev ? LexBound::Kind::kNegInf : LexBound::Kind::kPosInf)) {
    return Status::OK();  // nothing is beyond the far end
  }
  if (start.kind == LexBound::Kind::kInclusive || start.kind == LexBound::Kind::kExclusive) {
    from = start.value;
  }
  return ForEachEntry(
      ro, zset_cf_, key, meta.version,
      [&](std::string_view member, std::string_view value) {
        if (rev ? !LteMax(member, r.max) : !GteMin(member, r.min)) return true;
        if (rev ? !GteMin(member, r.min) : !LteMax(member, r.max)) return false;
        if (value.size() != 8) return true;
        return emit(member, DecodeScore(value.data()));
      },
      from, rev);
}

// ---- commands ----

StatusOr<ZAddResult> RocksStore::ZAdd(
    std::string_view key, const std::vector<std::pair<double, std::string_view>>& members,
    const ZAddOptions& options) {
  const bool nx = options.condition == ZAddOptions::Condition::kIfAbsent;
  const bool xx = options.condition == ZAddOptions::Condition::kIfPresent;
  if (options.incr && members.size() != 1) {
    return Status::InvalidArgument("INCR option supports a single increment-element pair");
  }
  for (const auto& m : members) {
    if (std::isnan(m.first)) return Status::InvalidArgument("value is not a valid float");
  }
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kZSet, &hold, &old, &meta); !s.ok()) return s;
  ZAddResult result;
  if (meta.version == 0 && xx) return result;  // no key + XX: nothing to do
  bool existed = meta.version != 0;
  struct Pending {
    std::optional<double> orig;  // in the database before this call
    std::optional<double> now;   // after the pairs seen so far
  };
  std::map<std::string_view, Pending> touched;
  int64_t added = 0, updated = 0;
  for (const auto& [given, member] : members) {
    auto it = touched.find(member);
    if (it == touched.end()) {
      Pending p;
      if (existed) {
        Status s = GetZScore(rocksdb::ReadOptions(), key, meta.version, member, &p.orig);
        if (!s.ok()) return s;
      }
      p.now = p.orig;
      it = touched.emplace(member, p).first;
    }
    Pending& p = it->second;
    double score = Normalize(given);
    if (p.now) {
      if (nx) continue;
      if (options.incr) {
        score = *p.now + score;
        if (std::isnan(score)) return Status::InvalidArgument(kErrNaN);
        score = Normalize(score);
      }
      if ((options.lt && score >= *p.now) || (options.gt && score <= *p.now)) continue;
      result.score = score;
      if (score != *p.now) {
        p.now = score;
        ++updated;
      }
    } else if (!xx) {
      p.now = score;
      // INCR on a new member replies the increment as given (-0 prints "-0", as Redis); the
      // stored score is normalized.
      result.score = options.incr ? given : score;
      ++added;
    }
  }
  result.count = added + (options.ch ? updated : 0);
  if (!options.incr) result.score.reset();
  if (added == 0 && updated == 0) return result;
  if (Status s = EnsureVersion(&meta); !s.ok()) return s;
  Records batch;
  for (const auto& [member, p] : touched) {
    if (p.orig == p.now) continue;
    if (p.orig) DeleteZMember(&batch, key, meta.version, member, *p.orig);
    PutZMember(&batch, key, meta.version, member, *p.now);
    meta.CoverInHint(ScoreIndexSubKey(*p.now, member));
  }
  meta.count += static_cast<uint64_t>(added);
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return result;
}

StatusOr<double> RocksStore::ZIncrBy(std::string_view key, double increment,
                                     std::string_view member) {
  ZAddOptions options;
  options.incr = true;
  auto r = ZAdd(key, {{increment, member}}, options);
  if (!r.ok()) return r.status();
  if (!r->score) return Status::Corruption("ZINCRBY produced no score");
  return *r->score;
}

StatusOr<std::optional<double>> RocksStore::ZScore(std::string_view key, std::string_view member) {
  auto r = ZMScore(key, {member});
  if (!r.ok()) return r.status();
  return (*r)[0];
}

StatusOr<std::vector<std::optional<double>>> RocksStore::ZMScore(
    std::string_view key, const std::vector<std::string_view>& members) {
  Hold hold;
  SnapshotRead snap;
  std::vector<std::optional<double>> out(members.size());
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kZSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  for (size_t i = 0; i < members.size(); ++i) {
    if (Status s = GetZScore(snap.options, key, meta.version, members[i], &out[i]); !s.ok()) {
      return s;
    }
  }
  return out;
}

StatusOr<int64_t> RocksStore::ZCard(std::string_view key) {
  return CollectionCount(key, MetaType::kZSet);
}

StatusOr<int64_t> RocksStore::CountZRange(std::string_view key, const ZRangeSpec& spec) {
  Hold hold;
  SnapshotRead snap;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kZSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return int64_t{0};
  }
  int64_t n = 0;
  Status s = VisitZRange(snap.options, key, meta, spec, [&](std::string_view, double) {
    ++n;
    return true;
  });
  if (!s.ok()) return s;
  return n;
}

StatusOr<int64_t> RocksStore::ZCount(std::string_view key, const ScoreRange& range) {
  ZRangeSpec spec;
  spec.by = ZRangeSpec::By::kScore;
  spec.score = range;
  return CountZRange(key, spec);
}

StatusOr<int64_t> RocksStore::ZLexCount(std::string_view key, const LexRange& range) {
  ZRangeSpec spec;
  spec.by = ZRangeSpec::By::kLex;
  spec.lex = range;
  return CountZRange(key, spec);
}

StatusOr<std::optional<int64_t>> RocksStore::ZRank(std::string_view key, std::string_view member,
                                                   bool reverse) {
  using Result = std::optional<int64_t>;
  Hold hold;
  SnapshotRead snap;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kZSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return Result();
  }
  std::optional<double> score;
  if (Status s = GetZScore(snap.options, key, meta.version, member, &score); !s.ok()) return s;
  if (!score) return Result();
  std::string target = ScoreIndexSubKey(*score, member);
  int64_t rank = 0;
  Status s = ForEachEntry(
      snap.options, zscore_cf_, key, meta.version,
      [&](std::string_view sub, std::string_view) {
        if (sub == target) return false;
        ++rank;
        return true;
      },
      std::nullopt, false, HintOf(meta));
  if (!s.ok()) return s;
  return Result(reverse ? static_cast<int64_t>(meta.count) - 1 - rank : rank);
}

StatusOr<std::vector<ScoredMember>> RocksStore::ZRange(std::string_view key, const ZRangeSpec& spec,
                                                       uint64_t max_bytes) {
  Hold hold;
  SnapshotRead snap;
  std::vector<ScoredMember> out;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kZSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return out;
  }
  ResultBytes bytes(max_bytes);  // a score's reply is up to ~24 bytes more: in the overhead
  Status s = VisitZRange(snap.options, key, meta, spec, [&](std::string_view m, double score) {
    if (!bytes.Add(m.size() + 24)) return false;
    out.push_back(ScoredMember{std::string(m), score});
    return true;
  });
  if (!s.ok()) return s;
  if (bytes.over()) return Status::OverLimit();
  return out;
}

StatusOr<int64_t> RocksStore::ZRangeStore(std::string_view dst, std::string_view src,
                                          const ZRangeSpec& spec) {
  Hold hold;
  std::vector<ScoredMember> items;
  Meta src_meta;
  bool found = false;
  // The stripes of both keys are held: the latest state is a consistent view.
  if (Status s = BeginRead(src, MetaType::kZSet, &hold, /*snap=*/nullptr, &src_meta, &found);
      !s.ok()) {
    return s;
  }
  if (found) {
    Status s = VisitZRange(rocksdb::ReadOptions(), src, src_meta, spec,
                           [&](std::string_view m, double score) {
                             items.push_back(ScoredMember{std::string(m), score});
                             return true;
                           });
    if (!s.ok()) return s;
  }
  MetaLookup old;
  if (Status s = ReadMeta(rocksdb::ReadOptions(), dst, &old, /*full=*/false); !s.ok()) return s;
  Meta meta;
  meta.type = MetaType::kZSet;
  meta.count = items.size();
  Records batch;
  if (!items.empty()) {
    if (Status s = EnsureVersion(&meta); !s.ok()) return s;
    for (const auto& item : items) PutZMember(&batch, dst, meta.version, item.member, item.score);
  }
  if (Status s = Commit(&batch, dst, old, meta); !s.ok()) return s;
  return static_cast<int64_t>(items.size());
}

StatusOr<int64_t> RocksStore::ZRem(std::string_view key,
                                   const std::vector<std::string_view>& members) {
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kZSet, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return int64_t{0};
  std::set<std::string_view> unique(members.begin(), members.end());
  Records batch;
  std::vector<std::string> gone;  // score-index sub-keys
  for (auto m : unique) {
    std::optional<double> score;
    if (Status s = GetZScore(rocksdb::ReadOptions(), key, meta.version, m, &score); !s.ok()) {
      return s;
    }
    if (!score) continue;
    DeleteZMember(&batch, key, meta.version, m, *score);
    gone.push_back(ScoreIndexSubKey(*score, m));
  }
  const auto removed = static_cast<int64_t>(gone.size());
  if (removed == 0) return int64_t{0};
  if (Status s = TightenHint(zscore_cf_, key, &meta, gone, true, true); !s.ok()) return s;
  meta.count -= static_cast<uint64_t>(removed);
  if (Status s = Commit(&batch, key, old, meta); !s.ok()) return s;
  return removed;
}

StatusOr<std::vector<ScoredMember>> RocksStore::RemoveZRange(std::string_view key,
                                                             const ZRangeSpec& spec) {
  std::vector<ScoredMember> removed;
  Hold hold;
  MetaLookup old;
  Meta meta;
  if (Status s = BeginWrite(key, MetaType::kZSet, &hold, &old, &meta); !s.ok()) return s;
  if (meta.version == 0) return removed;
  // ZPOPMIN (and ZREMRANGEBYRANK from 0) of a few: in a group or a transaction, from what the
  // pop before read ahead and did not take (FrontEntries), while nothing else was written.
  std::vector<std::string>* kept = nullptr;
  if (spec.by == ZRangeSpec::By::kRank && spec.start == 0 && !spec.reverse && spec.stop >= 0 &&
      static_cast<uint64_t>(spec.stop) < kFrontReadAhead) {
    const uint64_t want = std::min(static_cast<uint64_t>(spec.stop) + 1, meta.count);
    auto front_entries = FrontEntries(zscore_cf_, key, meta, want);
    if (!front_entries.ok()) return front_entries.status();
    kept = *front_entries;
    if (kept != nullptr) {
      if (kept->size() < want) return Status::Corruption("zset shorter than its meta");
      for (uint64_t i = 0; i < want; ++i) {
        const std::string& sub = (*kept)[i];
        if (sub.size() < 8) return Status::Corruption("bad zset score index entry");
        removed.push_back(ScoredMember{sub.substr(8), DecodeScore(sub.data())});
      }
      kept->erase(kept->begin(), kept->begin() + static_cast<std::ptrdiff_t>(want));
    }
  }
  if (kept == nullptr) {
    Status s =
        VisitZRange(rocksdb::ReadOptions(), key, meta, spec, [&](std::string_view m, double score) {
          removed.push_back(ScoredMember{std::string(m), score});
          return true;
        });
    if (!s.ok()) return s;
  }
  if (removed.empty()) return removed;
  Records batch;
  if (removed.size() < meta.count) {  // else the meta goes, O(1)
    std::vector<std::string> gone;
    gone.reserve(removed.size());
    for (const auto& r : removed) {
      DeleteZMember(&batch, key, meta.version, r.member, r.score);
      gone.push_back(ScoreIndexSubKey(r.score, r.member));
    }
    if (spec.by == ZRangeSpec::By::kRank && spec.start == 0) {
      // A pop: everything before (after) the last member removed is gone, so that end of the
      // hint moves just past it, without another seek.
      if (spec.reverse) {
        meta.hi = gone.back();
      } else {
        meta.RaiseLo(ImmediateSuccessor(gone.back()));
      }
    } else if (Status t = TightenHint(zscore_cf_, key, &meta, gone, true, true); !t.ok()) {
      return t;
    }
  }
  meta.count -= removed.size();
  if (Status c = Commit(&batch, key, old, meta); !c.ok()) return c;
  if (kept != nullptr) KeepFront();
  return removed;
}

StatusOr<int64_t> RocksStore::ZRemRangeByScore(std::string_view key, const ScoreRange& range) {
  ZRangeSpec spec;
  spec.by = ZRangeSpec::By::kScore;
  spec.score = range;
  auto r = RemoveZRange(key, spec);
  if (!r.ok()) return r.status();
  return static_cast<int64_t>(r->size());
}

StatusOr<int64_t> RocksStore::ZRemRangeByRank(std::string_view key, int64_t start, int64_t stop) {
  ZRangeSpec spec;
  spec.start = start;
  spec.stop = stop;
  auto r = RemoveZRange(key, spec);
  if (!r.ok()) return r.status();
  return static_cast<int64_t>(r->size());
}

StatusOr<int64_t> RocksStore::ZRemRangeByLex(std::string_view key, const LexRange& range) {
  ZRangeSpec spec;
  spec.by = ZRangeSpec::By::kLex;
  spec.lex = range;
  auto r = RemoveZRange(key, spec);
  if (!r.ok()) return r.status();
  return static_cast<int64_t>(r->size());
}

StatusOr<std::vector<ScoredMember>> RocksStore::ZPopMin(std::string_view key, uint64_t count) {
  if (count == 0) {
    // Still type-checks the key, as Redis.
    auto card = ZCard(key);
    if (!card.ok()) return card.status();
    return std::vector<ScoredMember>();
  }
  ZRangeSpec spec;
  spec.start = 0;
  spec.stop =
      count > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(count - 1);
  return RemoveZRange(key, spec);
}

StatusOr<std::vector<ScoredMember>> RocksStore::ZPopMax(std::string_view key, uint64_t count) {
  if (count == 0) {
    auto card = ZCard(key);
    if (!card.ok()) return card.status();
    return std::vector<ScoredMember>();
  }
  ZRangeSpec spec;
  spec.reverse = true;
  spec.start = 0;
  spec.stop =
      count > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(count - 1);
  return RemoveZRange(key, spec);
}

StatusOr<ZScanResult> RocksStore::ZScan(std::string_view key, uint64_t cursor,
                                        std::string_view pattern, uint64_t count) {
  Hold hold;
  SnapshotRead snap;
  ZScanResult result;
  Meta meta;
  bool found = false;
  if (Status s = BeginRead(key, MetaType::kZSet, &hold, &snap, &meta, &found); !s.ok() || !found) {
    if (!s.ok()) return s;
    return result;
  }
  Status s = ScanEntries(
      snap.options, zset_cf_, 'z', key, meta.version, EntryBounds(), cursor, pattern, count,
      [&](std::string_view m, std::string_view v) {
        if (v.size() == 8)
          result.items.push_back(ScoredMember{std::string(m), DecodeScore(v.data())});
      },
      &result.next_cursor);
  if (!s.ok()) return s;
  return result;
}

}  // namespace rockcache::storage
