// Set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE,
// SINTER/SUNION/SDIFF (+STORE), SINTERCARD, SSCAN. Arguments are checked in the order Redis 7
// checks them, so that a command with several faults reports the same error.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/numkeys.h"
#include "server/commands/reply_budget.h"
#include "server/commands/scan_args.h"
#include "server/commands/write_run.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/settings.h"
#include "server/slicing/sliced_algebra.h"
#include "server/slicing/sliced_read.h"
#include "server/slicing/sliced_scan.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using KeyViews = std::vector<std::string_view>;

// Members as an array, or as a set under RESP3 when `as_set` (SPOP with a count, SINTER...).
void AppendMembers(std::string* out, const std::vector<std::string>& members, bool as_set) {
  if (as_set) {
    AppendSetHeader(out, static_cast<int64_t>(members.size()));
  } else {
    AppendArrayHeader(out, static_cast<int64_t>(members.size()));
  }
  for (const auto& member : members) AppendBulk(out, member);
}

void SAdd(CommandContext& ctx, Args& argv, std::string* out) {
  auto added = ctx.store->SAdd(argv[1], ArgViews(argv, 2));
  if (!added.ok()) return AppendStatusError(out, added.status());
  if (*added > 0) NotifyKeyspaceEvent(ctx, kNotifySet, "sadd", argv[1]);
  AppendInteger(out, *added);
}

// A run of SADDs is one SADD of all their members; each command counts the members it was the
// first to add (AppendCreatedCounts).
bool SAddJoinsRun(const Args&) { return true; }
void SAddRun(CommandContext& ctx, const WriteRun& run) {
  std::vector<uint8_t> added;
  auto count = ctx.store->SAdd((*run.argvs.front())[1], RunArgViews(run, 2), &added);
  if (!count.ok()) return AppendStatusErrorToAll(run, count.status());
  AppendCreatedCounts(run, added, /*step=*/1);
}
const WriteRunSpec kSAddRun{SAddJoinsRun, SAddRun};

void SRem(CommandContext& ctx, Args& argv, std::string* out) {
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->SCard(argv[1]); });
  auto removed = ctx.store->SRem(argv[1], ArgViews(argv, 2));
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifySet, "srem", argv[1]);
  NotifyIfEmptied(ctx, before, *removed, argv[1]);
  AppendInteger(out, *removed);
}

// Sliced when big (server/slicing/sliced_read.h).
void SMembers(CommandContext& ctx, Args& argv, std::string* out) {
  storage::RangeQuery query;
  query.kind = storage::RangeQuery::Kind::kSet;
  query.key = argv[1];
  ReplyRange(ctx, query, ItemFormat::kSetMember, out);
}

void SIsMember(CommandContext& ctx, Args& argv, std::string* out) {
  auto is_member = ctx.store->SIsMember(argv[1], argv[2]);
  if (!is_member.ok()) return AppendStatusError(out, is_member.status());
  AppendInteger(out, *is_member ? 1 : 0);
}

void SMIsMember(CommandContext& ctx, Args& argv, std::string* out) {
  auto are_members = ctx.store->SMIsMember(argv[1], ArgViews(argv, 2));
  if (!are_members.ok()) return AppendStatusError(out, are_members.status());
  AppendArrayHeader(out, static_cast<int64_t>(are_members->size()));
  for (bool is_member : *are_members) AppendInteger(out, is_member ? 1 : 0);
}

void SCard(CommandContext& ctx, Args& argv, std::string* out) {
  auto size = ctx.store->SCard(argv[1]);
  if (!size.ok()) return AppendStatusError(out, size.status());
  AppendInteger(out, *size);
}

// SPOP key [count]: without a count a bulk (nil when absent); with one an array.
void SPop(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 3) return out->append(kReplySyntaxError), void();
  int64_t count = 1;
  if (argv.size() == 3 && (!ParseInteger(argv[2], &count) || count < 0)) {
    return AppendError(out, "ERR value is out of range, must be positive");
  }
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->SCard(argv[1]); });
  auto members = ctx.store->SPop(argv[1], static_cast<uint64_t>(count));
  if (!members.ok()) return AppendStatusError(out, members.status());
  if (!members->empty()) NotifyKeyspaceEvent(ctx, kNotifySet, "spop", argv[1]);
  NotifyIfEmptied(ctx, before, static_cast<int64_t>(members->size()), argv[1]);
  if (argv.size() == 3) return AppendMembers(out, *members, /*as_set=*/true);
  if (members->empty()) return out->append(NullBulkReply()), void();
  AppendBulk(out, members->front());
}

// SRANDMEMBER key [count]: as SPOP; a negative count allows repeats.
void SRandMember(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 3) return out->append(kReplySyntaxError), void();
  int64_t count = 1;
  if (argv.size() == 3) {
    if (!ParseInteger(argv[2], &count)) return out->append(kReplyNotInteger), void();
    if (count == LLONG_MIN) {
      return AppendError(out,
                         "ERR value is out of range, value must between -9223372036854775807 and "
                         "9223372036854775807");
    }
  }
  if (count < -kMaxRandomCount || count > kMaxRandomCount) {
    return AppendError(out, "ERR value is out of range");
  }
  auto members = ctx.store->SRandMember(argv[1], count, ReplyRoom(ctx, *out));
  if (ReplyOverBudget(ctx, *out, members.status())) return;
  if (!members.ok()) return AppendStatusError(out, members.status());
  if (argv.size() == 3) return AppendMembers(out, *members, /*as_set=*/false);
  if (members->empty()) return out->append(NullBulkReply()), void();
  AppendBulk(out, members->front());
}

bool IsMember(CommandContext& ctx, std::string_view key, std::string_view member) {
  auto is_member = ctx.store->SIsMember(key, member);
  return is_member.ok() && *is_member;
}

void SMove(CommandContext& ctx, Args& argv, std::string* out) {
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->SCard(argv[1]); });
  const bool was_in_dst =
      NotifyEnabled(ctx, kNotifySet) && argv[1] != argv[2] && IsMember(ctx, argv[2], argv[3]);
  auto moved = ctx.store->SMove(argv[1], argv[2], argv[3]);
  if (!moved.ok()) return AppendStatusError(out, moved.status());
  if (*moved && argv[1] != argv[2]) {  // as Redis: srem on the source, its "del", sadd
    NotifyKeyspaceEvent(ctx, kNotifySet, "srem", argv[1]);
    NotifyIfEmptied(ctx, before, 1, argv[1]);
    if (!was_in_dst) NotifyKeyspaceEvent(ctx, kNotifySet, "sadd", argv[2]);
  }
  AppendInteger(out, *moved ? 1 : 0);
}

// True when SINTER / SUNION / SDIFF / SINTERCARD over `keys` is big enough to slice
// (server/slicing/sliced_algebra.h): then it was replied (or deferred) by ReplyAlgebra. The sizes
// cost a meta read per key; a key of another type takes the unsliced path, which replies the
// error.
bool SlicedSetAlgebra(CommandContext& ctx, AlgebraOp op, const KeyViews& keys, uint64_t limit,
                      std::string* out) {
  if (ctx.slices == nullptr) return false;
  std::vector<int64_t> sizes;
  sizes.reserve(keys.size());
  for (auto key : keys) {
    auto size = ctx.store->SCard(key);
    if (!size.ok()) return false;
    sizes.push_back(*size);
  }
  const uint64_t step_items = ctx.settings().slice_items.load(std::memory_order_relaxed);
  if (AlgebraWork(op, sizes) <= step_items) return false;
  AlgebraRequest request;
  request.op = op;
  request.limit = limit;
  for (auto key : keys) request.inputs.push_back(AlgebraInput{std::string(key), false, 1});
  ReplyAlgebra(ctx, request, out);
  return true;
}

// SINTER / SUNION / SDIFF key... Sliced when big (server/slicing/sliced_algebra.h).
void SetAlgebra(CommandContext& ctx, Args& argv, std::string* out) {
  KeyViews keys = ArgViews(argv, 1);
  const AlgebraOp op = Is(argv[0], "SINTER")   ? AlgebraOp::kSInter
                       : Is(argv[0], "SUNION") ? AlgebraOp::kSUnion
                                               : AlgebraOp::kSDiff;
  if (SlicedSetAlgebra(ctx, op, keys, 0, out)) return;
  auto members = Is(argv[0], "SINTER")   ? ctx.store->SInter(keys)
                 : Is(argv[0], "SUNION") ? ctx.store->SUnion(keys)
                                         : ctx.store->SDiff(keys);
  // The result is no larger than its input sets (no amplification); checked once it is built.
  if (ReplyOverBudget(ctx, *out,
                      members.ok() ? members->size() * storage::kResultItemOverhead : 0)) {
    return;
  }
  if (!members.ok()) return AppendStatusError(out, members.status());
  AppendMembers(out, *members, /*as_set=*/true);
}

// SINTERSTORE / SUNIONSTORE / SDIFFSTORE destination key...
void SetAlgebraStore(CommandContext& ctx, Args& argv, std::string* out) {
  const int64_t existed = LengthIfNotifying(ctx, [&] { return ctx.store->Exists({argv[1]}); });
  KeyViews keys = ArgViews(argv, 2);
  auto size = Is(argv[0], "SINTERSTORE")   ? ctx.store->SInterStore(argv[1], keys)
              : Is(argv[0], "SUNIONSTORE") ? ctx.store->SUnionStore(argv[1], keys)
                                           : ctx.store->SDiffStore(argv[1], keys);
  if (!size.ok()) return AppendStatusError(out, size.status());
  NotifyStore(ctx, kNotifySet,
              Is(argv[0], "SINTERSTORE")   ? "sinterstore"
              : Is(argv[0], "SUNIONSTORE") ? "sunionstore"
                                           : "sdiffstore",
              argv[1], existed, *size);
  AppendInteger(out, *size);
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]. Sliced when big.
void SInterCard(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t numkeys = 0;
  if (!ParseInteger(argv[1], &numkeys) || numkeys < 1) {
    return AppendError(out, "ERR numkeys should be greater than 0");
  }
  if (numkeys > static_cast<int64_t>(argv.size()) - 2) {
    return AppendError(out, "ERR Number of keys can't be greater than number of args");
  }
  size_t end = 2 + static_cast<size_t>(numkeys);
  int64_t limit = 0;
  for (size_t i = end; i < argv.size(); i += 2) {
    if (!Is(argv[i], "LIMIT") || i + 1 >= argv.size()) {
      return out->append(kReplySyntaxError), void();
    }
    if (!ParseInteger(argv[i + 1], &limit) || limit < 0) {
      return AppendError(out, "ERR LIMIT can't be negative");
    }
  }
  KeyViews keys(argv.begin() + 2, argv.begin() + static_cast<std::ptrdiff_t>(end));
  if (SlicedSetAlgebra(ctx, AlgebraOp::kSInterCard, keys, static_cast<uint64_t>(limit), out)) {
    return;
  }
  auto size = ctx.store->SInterCard(keys, static_cast<uint64_t>(limit));
  if (!size.ok()) return AppendStatusError(out, size.status());
  AppendInteger(out, *size);
}

}  // namespace

// SINTERCARD's keys are movable (after numkeys): its row lists none, as Redis's does, and
// NumKeysAt1 finds them.
// clang-format off
const std::vector<CommandSpec> kSetCommands = {
    {"sadd", -3, kWrite | kFast, 1, 1, 1, SAdd, nullptr, nullptr, nullptr, &kSAddRun},
    {"srem", -3, kWrite | kFast, 1, 1, 1, SRem},
    {"smembers", 2, kReadOnly, 1, 1, 1, SMembers},
    {"sismember", 3, kReadOnly | kFast, 1, 1, 1, SIsMember},
    {"smismember", -3, kReadOnly | kFast, 1, 1, 1, SMIsMember},
    {"scard", 2, kReadOnly | kFast, 1, 1, 1, SCard},
    {"spop", -2, kWrite | kFast, 1, 1, 1, SPop},
    {"srandmember", -2, kReadOnly, 1, 1, 1, SRandMember},
    {"smove", 4, kWrite | kFast, 1, 2, 1, SMove},
    {"sinter", -2, kReadOnly, 1, -1, 1, SetAlgebra},
    {"sunion", -2, kReadOnly, 1, -1, 1, SetAlgebra},
    {"sdiff", -2, kReadOnly, 1, -1, 1, SetAlgebra},
    {"sintercard", -3, kReadOnly, 0, 0, 0, SInterCard, nullptr, nullptr, NumKeysAt1},
    {"sinterstore", -3, kWrite, 1, -1, 1, SetAlgebraStore},
    {"sunionstore", -3, kWrite, 1, -1, 1, SetAlgebraStore},
    {"sdiffstore", -3, kWrite, 1, -1, 1, SetAlgebraStore},
    {"sscan", -3, kReadOnly, 1, 1, 1, CollectionScan},
};
// clang-format on

}  // namespace rockcache::server
