// Sorted-set commands: ZADD, ZINCRBY, ZSCORE, ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT, ZRANK, ZREVRANK,
// the ZRANGE family (ZRANGE, ZRANGESTORE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX,
// ZREVRANGEBYLEX, ZREVRANGE), ZREM, ZREMRANGEBYSCORE/RANK/LEX, ZPOPMIN, ZPOPMAX, ZSCAN.
// Arguments are checked in the order Redis 7 checks them, so that a command with several faults
// reports the same error. Scores are written as Redis 7.2 writes them (see AppendScore).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/commands/scan_args.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/slicing/sliced_read.h"
#include "server/slicing/sliced_scan.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using storage::ScoredMember;
using storage::ZRangeSpec;

// A score as Redis 7.2 writes it (storage::FormatScore): whole numbers as integers, others in
// the shortest round-trip form (0.1 -> "0.1", where Redis 7.0 wrote "0.10000000000000001"); a
// computed -0 (ZINCRBY -0 on a new member) as "-0", as Redis 7.0. A double under RESP3.
void AppendScore(std::string* out, double score) {
  AppendDoubleText(out, storage::FormatScore(score));
}

// ZPOPMIN / ZPOPMAX: member, score, member, score... in one array, or, under RESP3 when
// `pairs`, [member, score] pairs (Redis 7.0 nests them when a count was given).
void AppendPopped(std::string* out, const std::vector<ScoredMember>& items, bool pairs) {
  if (pairs) {
    AppendPairsHeader(out, static_cast<int64_t>(items.size()), true);
    for (const auto& item : items) {
      AppendScoredMember(out, item.member, storage::FormatScore(item.score), true);
    }
    return;
  }
  AppendArrayHeader(out, static_cast<int64_t>(items.size() * 2));
  for (const auto& item : items) {
    AppendBulk(out, item.member);
    AppendScore(out, item.score);
  }
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void ZAdd(CommandContext& ctx, Args& argv, std::string* out) {
  storage::ZAddOptions options;
  bool nx = false, xx = false;
  size_t i = 2;
  for (; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (Is(arg, "NX")) {
      nx = true;
    } else if (Is(arg, "XX")) {
      xx = true;
    } else if (Is(arg, "CH")) {
      options.ch = true;
    } else if (Is(arg, "INCR")) {
      options.incr = true;
    } else if (Is(arg, "GT")) {
      options.gt = true;
    } else if (Is(arg, "LT")) {
      options.lt = true;
    } else {
      break;
    }
  }
  size_t elements = argv.size() - i;
  if (elements == 0 || elements % 2 != 0) return out->append(kReplySyntaxError), void();
  if (nx && xx)
    return AppendError(out, "ERR XX and NX options at the same time are not compatible");
  if (((options.gt || options.lt) && nx) || (options.gt && options.lt)) {
    return AppendError(out, "ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (options.incr && elements > 2) {
    return AppendError(out, "ERR INCR option supports a single increment-element pair");
  }
  std::vector<std::pair<double, std::string_view>> members;
  members.reserve(elements / 2);
  for (; i < argv.size(); i += 2) {
    double score = 0;
    if (!storage::ParseDouble(argv[i], &score)) return AppendError(out, kNotFloat);
    members.emplace_back(score, argv[i + 1]);
  }
  using Condition = storage::ZAddOptions::Condition;
  options.condition = nx ? Condition::kIfAbsent : xx ? Condition::kIfPresent : Condition::kAlways;
  auto result = ctx.store->ZAdd(argv[1], members, options);
  if (!result.ok()) return AppendStatusError(out, result.status());
  // Without CH the store does not count updated scores: a plain ZADD always adds or updates.
  const bool plain = options.condition == Condition::kAlways && !options.gt && !options.lt;
  if (options.incr ? result->score.has_value() : result->count > 0 || plain)
    NotifyKeyspaceEvent(ctx, kNotifyZSet, options.incr ? "zincr" : "zadd", argv[1]);
  if (!options.incr) return AppendInteger(out, result->count);
  if (!result->score) return out->append(NullBulkReply()), void();
  AppendScore(out, *result->score);
}

void ZIncrBy(CommandContext& ctx, Args& argv, std::string* out) {
  double increment = 0;
  if (!storage::ParseDouble(argv[2], &increment)) return AppendError(out, kNotFloat);
  auto score = ctx.store->ZIncrBy(argv[1], increment, argv[3]);
  if (!score.ok()) return AppendStatusError(out, score.status());
  NotifyKeyspaceEvent(ctx, kNotifyZSet, "zincr", argv[1]);
  AppendScore(out, *score);
}

void ZScore(CommandContext& ctx, Args& argv, std::string* out) {
  auto score = ctx.store->ZScore(argv[1], argv[2]);
  if (!score.ok()) return AppendStatusError(out, score.status());
  if (!*score) return out->append(NullBulkReply()), void();
  AppendScore(out, **score);
}

void ZMScore(CommandContext& ctx, Args& argv, std::string* out) {
  auto scores = ctx.store->ZMScore(argv[1], ArgViews(argv, 2));
  if (!scores.ok()) return AppendStatusError(out, scores.status());
  AppendArrayHeader(out, static_cast<int64_t>(scores->size()));
  for (const auto& score : *scores) {
    if (score) {
      AppendScore(out, *score);
    } else {
      out->append(NullBulkReply());
    }
  }
}

void ZCard(CommandContext& ctx, Args& argv, std::string* out) {
  auto size = ctx.store->ZCard(argv[1]);
  if (!size.ok()) return AppendStatusError(out, size.status());
  AppendInteger(out, *size);
}

void ZCount(CommandContext& ctx, Args& argv, std::string* out) {
  storage::ScoreRange range;
  Status s = storage::ParseScoreRange(argv[2], argv[3], &range);
  if (!s.ok()) return AppendStatusError(out, s);
  auto count = ctx.store->ZCount(argv[1], range);
  if (!count.ok()) return AppendStatusError(out, count.status());
  AppendInteger(out, *count);
}

void ZLexCount(CommandContext& ctx, Args& argv, std::string* out) {
  storage::LexRange range;
  Status s = storage::ParseLexRange(argv[2], argv[3], &range);
  if (!s.ok()) return AppendStatusError(out, s);
  auto count = ctx.store->ZLexCount(argv[1], range);
  if (!count.ok()) return AppendStatusError(out, count.status());
  AppendInteger(out, *count);
}

// ZRANK / ZREVRANK key member
void ZRank(CommandContext& ctx, Args& argv, std::string* out) {
  auto rank = ctx.store->ZRank(argv[1], argv[2], Is(argv[0], "ZREVRANK"));
  if (!rank.ok()) return AppendStatusError(out, rank.status());
  if (!*rank) return out->append(NullBulkReply()), void();
  AppendInteger(out, **rank);
}

// What the command name fixes in the ZRANGE family; the rest comes from ZRANGE's options.
struct RangeForm {
  size_t key = 1;      // argv index of the source key (2 for ZRANGESTORE)
  bool store = false;  // ZRANGESTORE
  std::optional<ZRangeSpec::By> by;
  std::optional<bool> reverse;
};

// Reads `<key> <min> <max> [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]` (what `form`
// allows), as Redis zrangeGenericCommand, and replies.
void RangeGeneric(CommandContext& ctx, const Args& argv, const RangeForm& form, std::string* out) {
  using By = ZRangeSpec::By;
  ZRangeSpec spec;
  std::optional<By> by = form.by;
  std::optional<bool> reverse = form.reverse;
  bool with_scores = false;
  int64_t offset = 0, limit = -1;
  for (size_t i = form.key + 3; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (!form.store && Is(arg, "WITHSCORES")) {
      with_scores = true;
    } else if (Is(arg, "LIMIT") && i + 2 < argv.size()) {
      if (!ParseInteger(argv[i + 1], &offset) || !ParseInteger(argv[i + 2], &limit)) {
        return out->append(kReplyNotInteger), void();
      }
      i += 2;
    } else if (!reverse && Is(arg, "REV")) {
      reverse = true;
    } else if (!by && Is(arg, "BYLEX")) {
      by = By::kLex;
    } else if (!by && Is(arg, "BYSCORE")) {
      by = By::kScore;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  spec.by = by.value_or(By::kRank);
  spec.reverse = reverse.value_or(false);
  if (limit != -1 && spec.by == By::kRank) {
    return AppendError(
        out,
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (with_scores && spec.by == By::kLex) {
    return AppendError(out, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  const std::string* min = &argv[form.key + 1];
  const std::string* max = &argv[form.key + 2];
  if (spec.reverse && spec.by != By::kRank) std::swap(min, max);  // given as max min
  Status s;
  switch (spec.by) {
    case By::kRank:
      if (!ParseInteger(*min, &spec.start) || !ParseInteger(*max, &spec.stop)) {
        return out->append(kReplyNotInteger), void();
      }
      break;
    case By::kScore:
      s = storage::ParseScoreRange(*min, *max, &spec.score);
      break;
    case By::kLex:
      s = storage::ParseLexRange(*min, *max, &spec.lex);
      break;
  }
  if (!s.ok()) return AppendStatusError(out, s);
  if (spec.by != By::kRank) {
    spec.offset = offset;
    spec.limit = limit;
  }
  if (form.store) {
    const int64_t existed = LengthIfNotifying(ctx, [&] { return ctx.store->Exists({argv[1]}); });
    auto size = ctx.store->ZRangeStore(argv[1], argv[2], spec);
    if (!size.ok()) return AppendStatusError(out, size.status());
    NotifyStore(ctx, kNotifyZSet, "zrangestore", argv[1], existed, *size);
    return AppendInteger(out, *size);
  }
  storage::RangeQuery query;  // sliced when big (server/slicing/sliced_read.h)
  query.kind = storage::RangeQuery::Kind::kZSet;
  query.key = argv[form.key];
  query.zrange = spec;
  ReplyRange(ctx, query, with_scores ? ItemFormat::kMemberScore : ItemFormat::kKey, out);
}

void ZRange(CommandContext& ctx, Args& argv, std::string* out) { RangeGeneric(ctx, argv, {}, out); }

void ZRangeStore(CommandContext& ctx, Args& argv, std::string* out) {
  RangeGeneric(ctx, argv, {2, true, std::nullopt, std::nullopt}, out);
}

// ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREVRANGE.
void ZRangeBy(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& name = argv[0];
  RangeForm form;
  form.reverse =
      Is(name, "ZREVRANGEBYSCORE") || Is(name, "ZREVRANGEBYLEX") || Is(name, "ZREVRANGE");
  form.by = Is(name, "ZREVRANGE")                                   ? ZRangeSpec::By::kRank
            : Is(name, "ZRANGEBYLEX") || Is(name, "ZREVRANGEBYLEX") ? ZRangeSpec::By::kLex
                                                                    : ZRangeSpec::By::kScore;
  RangeGeneric(ctx, argv, form, out);
}

void ZRem(CommandContext& ctx, Args& argv, std::string* out) {
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->ZCard(argv[1]); });
  auto removed = ctx.store->ZRem(argv[1], ArgViews(argv, 2));
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyZSet, "zrem", argv[1]);
  NotifyIfEmptied(ctx, before, *removed, argv[1]);
  AppendInteger(out, *removed);
}

void ZRemRangeByScore(CommandContext& ctx, Args& argv, std::string* out) {
  storage::ScoreRange range;
  Status s = storage::ParseScoreRange(argv[2], argv[3], &range);
  if (!s.ok()) return AppendStatusError(out, s);
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->ZCard(argv[1]); });
  auto removed = ctx.store->ZRemRangeByScore(argv[1], range);
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyZSet, "zremrangebyscore", argv[1]);
  NotifyIfEmptied(ctx, before, *removed, argv[1]);
  AppendInteger(out, *removed);
}

void ZRemRangeByRank(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t start = 0, stop = 0;
  if (!ParseInteger(argv[2], &start) || !ParseInteger(argv[3], &stop)) {
    return out->append(kReplyNotInteger), void();
  }
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->ZCard(argv[1]); });
  auto removed = ctx.store->ZRemRangeByRank(argv[1], start, stop);
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyZSet, "zremrangebyrank", argv[1]);
  NotifyIfEmptied(ctx, before, *removed, argv[1]);
  AppendInteger(out, *removed);
}

void ZRemRangeByLex(CommandContext& ctx, Args& argv, std::string* out) {
  storage::LexRange range;
  Status s = storage::ParseLexRange(argv[2], argv[3], &range);
  if (!s.ok()) return AppendStatusError(out, s);
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->ZCard(argv[1]); });
  auto removed = ctx.store->ZRemRangeByLex(argv[1], range);
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyZSet, "zremrangebylex", argv[1]);
  NotifyIfEmptied(ctx, before, *removed, argv[1]);
  AppendInteger(out, *removed);
}

// ZPOPMIN / ZPOPMAX key [count]: a flat member/score array (pairs under RESP3 with a count).
void ZPop(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 3) return out->append(kReplySyntaxError), void();
  int64_t count = 1;
  if (argv.size() == 3 && (!ParseInteger(argv[2], &count) || count < 0)) {
    return AppendError(out, "ERR value is out of range, must be positive");
  }
  auto n = static_cast<uint64_t>(count);
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->ZCard(argv[1]); });
  auto popped =
      Is(argv[0], "ZPOPMIN") ? ctx.store->ZPopMin(argv[1], n) : ctx.store->ZPopMax(argv[1], n);
  if (!popped.ok()) return AppendStatusError(out, popped.status());
  if (!popped->empty())
    NotifyKeyspaceEvent(ctx, kNotifyZSet, Is(argv[0], "ZPOPMIN") ? "zpopmin" : "zpopmax", argv[1]);
  NotifyIfEmptied(ctx, before, static_cast<int64_t>(popped->size()), argv[1]);
  AppendPopped(out, *popped, /*pairs=*/argv.size() == 3);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kZSetCommands = {
    {"zadd", -4, kWrite | kFast, 1, 1, 1, ZAdd},
    {"zincrby", 4, kWrite | kFast, 1, 1, 1, ZIncrBy},
    {"zscore", 3, kReadOnly | kFast, 1, 1, 1, ZScore},
    {"zmscore", -3, kReadOnly | kFast, 1, 1, 1, ZMScore},
    {"zcard", 2, kReadOnly | kFast, 1, 1, 1, ZCard},
    {"zcount", 4, kReadOnly | kFast, 1, 1, 1, ZCount},
    {"zlexcount", 4, kReadOnly | kFast, 1, 1, 1, ZLexCount},
    {"zrank", 3, kReadOnly | kFast, 1, 1, 1, ZRank},
    {"zrevrank", 3, kReadOnly | kFast, 1, 1, 1, ZRank},
    {"zrange", -4, kReadOnly, 1, 1, 1, ZRange},
    {"zrangestore", -5, kWrite, 1, 2, 1, ZRangeStore},
    {"zrangebyscore", -4, kReadOnly, 1, 1, 1, ZRangeBy},
    {"zrevrangebyscore", -4, kReadOnly, 1, 1, 1, ZRangeBy},
    {"zrangebylex", -4, kReadOnly, 1, 1, 1, ZRangeBy},
    {"zrevrangebylex", -4, kReadOnly, 1, 1, 1, ZRangeBy},
    {"zrevrange", -4, kReadOnly, 1, 1, 1, ZRangeBy},
    {"zrem", -3, kWrite | kFast, 1, 1, 1, ZRem},
    {"zremrangebyscore", 4, kWrite, 1, 1, 1, ZRemRangeByScore},
    {"zremrangebyrank", 4, kWrite, 1, 1, 1, ZRemRangeByRank},
    {"zremrangebylex", 4, kWrite, 1, 1, 1, ZRemRangeByLex},
    {"zpopmin", -2, kWrite | kFast, 1, 1, 1, ZPop},
    {"zpopmax", -2, kWrite | kFast, 1, 1, 1, ZPop},
    {"zscan", -3, kReadOnly, 1, 1, 1, CollectionScan},
};
// clang-format on

}  // namespace rockcache::server
