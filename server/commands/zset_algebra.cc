// Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms (WEIGHTS, AGGREGATE SUM|MIN|MAX,
// WITHSCORES), ZINTERCARD, and ZRANDMEMBER. As Redis (zunionInterDiffGenericCommand), a plain
// set is accepted wherever a sorted set is (each member scoring 1), the keys are type-checked
// before the options are parsed, and the inputs of ZUNION/ZINTER are taken smallest first (a
// stable order, as glibc's qsort gives), which fixes the order of the aggregation (it matters
// for +inf + -inf, which Redis reads as 0).
//
// Sliced: the read-only forms with big inputs run in steps (server/slicing/sliced_algebra.h,
// SlicedAlgebraIfBig); what follows is the unsliced path, which small inputs take.
//
// Memory and work: ZINTER and ZDIFF read their first input (ZINTER: the smallest) whole and probe
// the others in batches (ZMSCORE/SMISMEMBER), so they hold O(first input). ZUNION holds the
// union; its reply forms read each input against the reply budget (every input member is in the
// reply). STORE forms build the result in memory, as Redis does, and replace the destination
// (deleted when the result is empty; TTL cleared).
#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/numkeys.h"
#include "server/commands/reply_budget.h"
#include "server/protocol/reply.h"
#include "server/settings.h"
#include "server/slicing/sliced_algebra.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using storage::KeyType;
using storage::ScoredMember;

constexpr size_t kProbeBatch = 1024;

enum class Op { kUnion, kInter, kDiff };
using Aggregate = ScoreAggregate;

struct Source {
  std::string_view key;
  KeyType type = KeyType::kNone;
  int64_t card = 0;
  double weight = 1;
};

// A score's reply text (storage::FormatScore), or "" when the reply has no scores.
std::string ScoreText(double score, bool with_scores) {
  return with_scores ? storage::FormatScore(score) : std::string();
}

// Every member of `src` with its score (1 for a set). max_bytes as the store's reads.
StatusOr<std::vector<ScoredMember>> ReadAll(CommandContext& ctx, const Source& src,
                                            uint64_t max_bytes) {
  if (src.type == KeyType::kZSet) return ctx.store->ZRange(src.key, {}, max_bytes);
  std::vector<ScoredMember> items;
  if (src.type != KeyType::kSet) return items;
  auto members = ctx.store->SMembers(src.key, max_bytes);
  if (!members.ok()) return members.status();
  items.reserve(members->size());
  for (auto& m : *members) items.push_back(ScoredMember{std::move(m), 1.0});
  return items;
}

// The score in `src` of each of `members` (nullopt when absent; 1 for a set member).
StatusOr<std::vector<std::optional<double>>> Probe(CommandContext& ctx, const Source& src,
                                                   const std::vector<std::string_view>& members) {
  if (src.type == KeyType::kZSet) return ctx.store->ZMScore(src.key, members);
  std::vector<std::optional<double>> scores(members.size());
  if (src.type != KeyType::kSet) return scores;
  auto found = ctx.store->SMIsMember(src.key, members);
  if (!found.ok()) return found.status();
  for (size_t i = 0; i < members.size(); ++i) {
    if ((*found)[i]) scores[i] = 1.0;
  }
  return scores;
}

// Type and size of each key; WRONGTYPE unless a sorted set, a set or absent.
Status LoadSources(CommandContext& ctx, std::vector<Source>* sources) {
  for (Source& src : *sources) {
    auto type = ctx.store->Type(src.key);
    if (!type.ok()) return type.status();
    src.type = *type;
    StatusOr<int64_t> card = int64_t{0};
    if (src.type == KeyType::kZSet) {
      card = ctx.store->ZCard(src.key);
    } else if (src.type == KeyType::kSet) {
      card = ctx.store->SCard(src.key);
    } else if (src.type != KeyType::kNone) {
      return Status::WrongType();
    }
    if (!card.ok()) return card.status();
    src.card = *card;
  }
  return Status::OK();
}

struct Options {
  Op op = Op::kUnion;
  Aggregate aggregate = Aggregate::kSum;
  bool with_scores = false;
  bool cardinality_only = false;
  uint64_t limit = 0;  // ZINTERCARD LIMIT; 0 = none
};

// ZINTER: the members of every source (sources[0] the smallest), aggregated. With
// cardinality_only, only counts (up to limit) into *card.
Status Intersect(CommandContext& ctx, const std::vector<Source>& sources, const Options& opt,
                 std::vector<ScoredMember>* result, int64_t* card) {
  if (sources[0].card == 0) return Status::OK();
  auto first = ReadAll(ctx, sources[0], storage::kNoByteLimit);
  if (!first.ok()) return first.status();
  for (size_t begin = 0; begin < first->size(); begin += kProbeBatch) {
    size_t end = std::min(first->size(), begin + kProbeBatch);
    std::vector<std::string_view> members;
    std::vector<double> scores;
    for (size_t i = begin; i < end; ++i) {
      members.emplace_back((*first)[i].member);
      double score = sources[0].weight * (*first)[i].score;
      scores.push_back(std::isnan(score) ? 0 : score);
    }
    std::vector<bool> in_all(members.size(), true);
    for (size_t j = 1; j < sources.size(); ++j) {
      auto found = Probe(ctx, sources[j], members);
      if (!found.ok()) return found.status();
      for (size_t i = 0; i < members.size(); ++i) {
        if (!in_all[i]) continue;
        if (!(*found)[i]) {
          in_all[i] = false;
          continue;
        }
        AggregateScore(&scores[i], *(*found)[i] * sources[j].weight, opt.aggregate);
      }
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (!in_all[i]) continue;
      if (opt.cardinality_only) {
        ++*card;
        if (opt.limit != 0 && static_cast<uint64_t>(*card) >= opt.limit) return Status::OK();
      } else {
        result->push_back(ScoredMember{std::move((*first)[begin + i].member), scores[i]});
      }
    }
  }
  return Status::OK();
}

// ZDIFF: the members of sources[0] in no other source, with their scores.
Status Difference(CommandContext& ctx, const std::vector<Source>& sources,
                  std::vector<ScoredMember>* result) {
  if (sources[0].card == 0) return Status::OK();
  auto first = ReadAll(ctx, sources[0], storage::kNoByteLimit);
  if (!first.ok()) return first.status();
  for (size_t begin = 0; begin < first->size(); begin += kProbeBatch) {
    size_t end = std::min(first->size(), begin + kProbeBatch);
    std::vector<std::string_view> members;
    for (size_t i = begin; i < end; ++i) members.emplace_back((*first)[i].member);
    std::vector<bool> keep(members.size(), true);
    for (size_t j = 1; j < sources.size(); ++j) {
      auto found = Probe(ctx, sources[j], members);
      if (!found.ok()) return found.status();
      for (size_t i = 0; i < members.size(); ++i) {
        if ((*found)[i]) keep[i] = false;
      }
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (keep[i]) result->push_back(std::move((*first)[begin + i]));
    }
  }
  return Status::OK();
}

// ZUNION: every member of any source, aggregated in source order. `max_bytes` bounds each read.
Status Union(CommandContext& ctx, const std::vector<Source>& sources, const Options& opt,
             uint64_t max_bytes, std::vector<ScoredMember>* result) {
  std::unordered_map<std::string, double> accumulator;
  for (const Source& src : sources) {
    if (src.card == 0) continue;
    auto items = ReadAll(ctx, src, max_bytes);
    if (!items.ok()) return items.status();
    for (auto& item : *items) {
      double score = src.weight * item.score;
      if (std::isnan(score)) score = 0;
      auto [it, added] = accumulator.try_emplace(std::move(item.member), score);
      if (!added) AggregateScore(&it->second, score, opt.aggregate);
    }
  }
  result->reserve(accumulator.size());
  for (auto& [member, score] : accumulator) result->push_back(ScoredMember{member, score});
  return Status::OK();
}

// Replaces `dst` with the sorted set `items` (deletes it when empty); replies its size.
void StoreResult(CommandContext& ctx, const std::string& dst,
                 const std::vector<ScoredMember>& items, std::string* out) {
  auto deleted = ctx.store->Del({dst});
  if (!deleted.ok()) return AppendStatusError(out, deleted.status());
  if (!items.empty()) {
    // Group commit defers the delete; the ZADD below reads the key and must see it.
    if (Status s = ctx.store->FlushThreadWriteGroup(); !s.ok()) return AppendStatusError(out, s);
    std::vector<std::pair<double, std::string_view>> members;
    members.reserve(items.size());
    for (const auto& item : items) members.emplace_back(item.score, item.member);
    auto added = ctx.store->ZAdd(dst, members, storage::ZAddOptions{});
    if (!added.ok()) return AppendStatusError(out, added.status());
  }
  AppendInteger(out, static_cast<int64_t>(items.size()));
}

// True when the read-only command over `sources` (in the order the algorithms use them) is big
// enough to slice (server/slicing/sliced_algebra.h): then ReplyAlgebra replied or deferred it.
bool SlicedAlgebraIfBig(CommandContext& ctx, const std::vector<Source>& sources, const Options& opt,
                        std::string* out) {
  if (ctx.slices == nullptr) return false;
  AlgebraRequest request;
  request.op = opt.cardinality_only   ? AlgebraOp::kZInterCard
               : opt.op == Op::kInter ? AlgebraOp::kZInter
               : opt.op == Op::kDiff  ? AlgebraOp::kZDiff
                                      : AlgebraOp::kZUnion;
  std::vector<int64_t> sizes;
  sizes.reserve(sources.size());
  for (const Source& src : sources) sizes.push_back(src.card);
  if (AlgebraWork(request.op, sizes) <=
      ctx.settings().slice_items.load(std::memory_order_relaxed)) {
    return false;
  }
  request.aggregate = opt.aggregate;
  request.with_scores = opt.with_scores;
  request.limit = opt.limit;
  for (const Source& src : sources) {
    request.inputs.push_back(
        AlgebraInput{std::string(src.key), src.type == KeyType::kZSet, src.weight});
  }
  ReplyAlgebra(ctx, request, out);
  return true;
}

// The generic command: numkeys at argv[numkeys_index], the destination (STORE forms) before it.
void Generic(CommandContext& ctx, const Args& argv, size_t numkeys_index, Options opt,
             std::string* out) {
  const bool store = numkeys_index == 2;
  int64_t numkeys = 0;
  if (!ParseInteger(argv[numkeys_index], &numkeys)) return out->append(kReplyNotInteger), void();
  if (numkeys < 1) {
    std::string name;
    for (char c : argv[0]) name.push_back(static_cast<char>(std::tolower(c)));
    return AppendError(out, "ERR at least 1 input key is needed for '" + name + "' command");
  }
  if (numkeys > static_cast<int64_t>(argv.size() - numkeys_index - 1)) {
    return out->append(kReplySyntaxError), void();
  }
  std::vector<Source> sources(static_cast<size_t>(numkeys));
  size_t j = numkeys_index + 1;
  for (auto& src : sources) src.key = argv[j++];
  if (Status s = LoadSources(ctx, &sources); !s.ok()) return AppendStatusError(out, s);
  while (j < argv.size()) {
    size_t remaining = argv.size() - j;
    bool algebra = opt.op != Op::kDiff && !opt.cardinality_only;
    if (algebra && remaining >= sources.size() + 1 && Is(argv[j], "WEIGHTS")) {
      ++j;
      for (auto& src : sources) {
        if (!storage::ParseDouble(argv[j++], &src.weight)) {
          return AppendError(out, "ERR weight value is not a float");
        }
      }
    } else if (algebra && remaining >= 2 && Is(argv[j], "AGGREGATE")) {
      const std::string& how = argv[j + 1];
      if (Is(how, "SUM")) {
        opt.aggregate = Aggregate::kSum;
      } else if (Is(how, "MIN")) {
        opt.aggregate = Aggregate::kMin;
      } else if (Is(how, "MAX")) {
        opt.aggregate = Aggregate::kMax;
      } else {
        return out->append(kReplySyntaxError), void();
      }
      j += 2;
    } else if (!store && !opt.cardinality_only && Is(argv[j], "WITHSCORES")) {
      opt.with_scores = true;
      ++j;
    } else if (opt.cardinality_only && remaining >= 2 && Is(argv[j], "LIMIT")) {
      int64_t limit = 0;
      if (!ParseInteger(argv[j + 1], &limit) || limit < 0) {
        return AppendError(out, "ERR LIMIT can't be negative");
      }
      opt.limit = static_cast<uint64_t>(limit);
      j += 2;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  if (opt.op != Op::kDiff) {
    std::stable_sort(sources.begin(), sources.end(),
                     [](const Source& a, const Source& b) { return a.card < b.card; });
  }
  if (!store && SlicedAlgebraIfBig(ctx, sources, opt, out)) return;
  std::vector<ScoredMember> result;
  int64_t card = 0;
  Status s;
  switch (opt.op) {
    case Op::kInter:
      s = Intersect(ctx, sources, opt, &result, &card);
      break;
    case Op::kDiff:
      s = Difference(ctx, sources, &result);
      break;
    case Op::kUnion:
      s = Union(ctx, sources, opt, store ? storage::kNoByteLimit : ReplyRoom(ctx, *out), &result);
      break;
  }
  if (!store && ReplyOverBudget(ctx, *out, s)) return;
  if (!s.ok()) return AppendStatusError(out, s);
  if (opt.cardinality_only) return AppendInteger(out, card);
  std::sort(result.begin(), result.end(), [](const ScoredMember& a, const ScoredMember& b) {
    return a.score < b.score || (a.score == b.score && a.member < b.member);
  });
  if (store) return StoreResult(ctx, argv[1], result, out);
  size_t bytes = 0;
  for (const auto& item : result) bytes += item.member.size() + storage::kResultItemOverhead;
  if (ReplyOverBudget(ctx, *out, bytes)) return;
  AppendPairsHeader(out, static_cast<int64_t>(result.size()), opt.with_scores);
  for (const auto& item : result) {
    AppendScoredMember(out, item.member, ScoreText(item.score, opt.with_scores), opt.with_scores);
  }
}

Op OpOf(const std::string& name) {
  if (Is(name, "ZINTER") || Is(name, "ZINTERSTORE") || Is(name, "ZINTERCARD")) return Op::kInter;
  if (Is(name, "ZDIFF") || Is(name, "ZDIFFSTORE")) return Op::kDiff;
  return Op::kUnion;
}

// ZUNION / ZINTER / ZDIFF numkeys key [key ...] [WEIGHTS ...] [AGGREGATE ...] [WITHSCORES]
void ZAlgebra(CommandContext& ctx, Args& argv, std::string* out) {
  Options opt;
  opt.op = OpOf(argv[0]);
  Generic(ctx, argv, 1, opt, out);
}

// ZUNIONSTORE / ZINTERSTORE / ZDIFFSTORE destination numkeys key [key ...] ...
void ZAlgebraStore(CommandContext& ctx, Args& argv, std::string* out) {
  Options opt;
  opt.op = OpOf(argv[0]);
  Generic(ctx, argv, 2, opt, out);
}

// ZINTERCARD numkeys key [key ...] [LIMIT limit]
void ZInterCard(CommandContext& ctx, Args& argv, std::string* out) {
  Options opt;
  opt.op = Op::kInter;
  opt.cardinality_only = true;
  Generic(ctx, argv, 1, opt, out);
}

// ZRANDMEMBER key [count [WITHSCORES]]
void ZRandMember(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t count = 1;
  bool with_scores = false;
  if (argv.size() >= 3) {
    if (!ParseInteger(argv[2], &count)) return out->append(kReplyNotInteger), void();
    if (count == LLONG_MIN) {
      return AppendError(out,
                         "ERR value is out of range, value must between -9223372036854775807 and "
                         "9223372036854775807");
    }
    if (argv.size() > 4 || (argv.size() == 4 && !Is(argv[3], "WITHSCORES"))) {
      return out->append(kReplySyntaxError), void();
    }
    if (argv.size() == 4) {
      with_scores = true;
      if (count < -LLONG_MAX / 2 || count > LLONG_MAX / 2) {
        return AppendError(out, "ERR value is out of range");
      }
    }
    if (count < -kMaxRandomCount || count > kMaxRandomCount) {
      return AppendError(out, "ERR value is out of range");
    }
  }
  auto items = ctx.store->ZRandMember(argv[1], count, ReplyRoom(ctx, *out));
  if (ReplyOverBudget(ctx, *out, items.status())) return;
  if (!items.ok()) return AppendStatusError(out, items.status());
  if (argv.size() == 2) {
    if (items->empty()) return out->append(NullBulkReply()), void();
    return AppendBulk(out, items->front().member);
  }
  AppendPairsHeader(out, static_cast<int64_t>(items->size()), with_scores);
  for (const auto& item : *items) {
    AppendScoredMember(out, item.member, ScoreText(item.score, with_scores), with_scores);
    if (ReplyOverBudget(ctx, *out)) return;
  }
}

}  // namespace

// The numkeys forms list no fixed keys (as Redis's legacy key range) but find them all.
// clang-format off
const std::vector<CommandSpec> kZSetAlgebraCommands = {
    {"zunion", -3, kReadOnly, 0, 0, 0, ZAlgebra, nullptr, nullptr, NumKeysAt1},
    {"zinter", -3, kReadOnly, 0, 0, 0, ZAlgebra, nullptr, nullptr, NumKeysAt1},
    {"zdiff", -3, kReadOnly, 0, 0, 0, ZAlgebra, nullptr, nullptr, NumKeysAt1},
    {"zunionstore", -4, kWrite, 1, 1, 1, ZAlgebraStore, nullptr, nullptr,
     DestinationAndNumKeysAt2},
    {"zinterstore", -4, kWrite, 1, 1, 1, ZAlgebraStore, nullptr, nullptr,
     DestinationAndNumKeysAt2},
    {"zdiffstore", -4, kWrite, 1, 1, 1, ZAlgebraStore, nullptr, nullptr, DestinationAndNumKeysAt2},
    {"zintercard", -3, kReadOnly, 0, 0, 0, ZInterCard, nullptr, nullptr, NumKeysAt1},
    {"zrandmember", -2, kReadOnly, 1, 1, 1, ZRandMember},
};
// clang-format on

}  // namespace rockcache::server
