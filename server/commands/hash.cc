// Hash commands: HSET/HMSET, HSETNX, HGET, HMGET, HGETALL, HDEL, HLEN, HEXISTS, HKEYS, HVALS,
// HINCRBY, HINCRBYFLOAT, HSTRLEN, HRANDFIELD, HSCAN. Arguments are checked in the order Redis 7
// checks them, so that a command with several faults reports the same error.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "server/commands/args.h"
#include "server/commands/cache_access.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/commands/scan_args.h"
#include "server/commands/write_run.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/slicing/sliced_read.h"
#include "server/slicing/sliced_scan.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using FieldValues = std::vector<std::pair<std::string_view, std::string_view>>;

const cache::Value kEmptyHash = cache::Value::Hash({});  // how RTC sees an absent key

storage::RangeQuery HashQuery(std::string_view key) {
  storage::RangeQuery query;
  query.kind = storage::RangeQuery::Kind::kHash;
  query.key = std::string(key);
  return query;
}

// ---- the cache: whole hashes up to cache-max-hash-fields fields ----

// Worker, after a read missed the cache, under the key lock: caches the whole hash if it is
// small enough. Costs a meta read, and for a small hash its scan and its TTL.
void FillHash(CommandContext& ctx, std::string_view key) {
  if (ctx.cache == nullptr) return;
  auto length = ctx.store->HLen(key);
  if (length.ok() && *length == 0) return CachePutAbsent(ctx, key);  // no such key
  if (!length.ok() || static_cast<uint64_t>(*length) > ctx.cache->max_hash_fields()) {
    return;
  }
  auto fields = ctx.store->HGetAll(key);
  auto expire_at = ctx.store->ExpireTimeMs(key);
  if (!fields.ok() || !expire_at.ok() || *expire_at == -2) return;
  ctx.cache->Put(key, cache::Value::Hash(std::move(*fields)), *expire_at < 0 ? 0 : *expire_at,
                 ctx.now_ms, ctx.cache_generation);
}

// Runs `visit(const cache::Value& hash)` on a cached hash; a cached string answers WRONGTYPE; a
// key the cache knows absent is visited as an empty hash (Redis answers an absent key so).
template <typename Visitor>
bool RtcHash(RtcContext& ctx, std::string_view key, std::string* out, Visitor&& visit) {
  return CacheLookup(
      ctx, key,
      [&](const cache::Value& value, int64_t) {
        if (value.type != cache::Value::Type::kHash) {
          out->append(kReplyWrongType);
          return;
        }
        visit(value);
      },
      [&] { visit(kEmptyHash); });
}

bool RtcHGet(RtcContext& ctx, const Args& argv, std::string* out) {
  return RtcHash(ctx, argv[1], out, [&](const cache::Value& hash) {
    const std::string* value = hash.FindField(argv[2]);
    if (value == nullptr) {
      out->append(NullBulkReply());
    } else {
      AppendBulk(out, *value);
    }
  });
}

bool RtcHMGet(RtcContext& ctx, const Args& argv, std::string* out) {
  return RtcHash(ctx, argv[1], out, [&](const cache::Value& hash) {
    AppendArrayHeader(out, static_cast<int64_t>(argv.size() - 2));
    for (size_t i = 2; i < argv.size(); ++i) {
      const std::string* value = hash.FindField(argv[i]);
      if (value == nullptr) {
        out->append(NullBulkReply());
      } else {
        AppendBulk(out, *value);
      }
    }
  });
}

bool RtcHGetAll(RtcContext& ctx, const Args& argv, std::string* out) {
  return RtcHash(ctx, argv[1], out, [&](const cache::Value& hash) {
    AppendMapHeader(out, static_cast<int64_t>(hash.fields.size()));
    for (const auto& [field, value] : hash.fields) {
      AppendBulk(out, field);
      AppendBulk(out, value);
    }
  });
}

bool RtcHLen(RtcContext& ctx, const Args& argv, std::string* out) {
  return RtcHash(ctx, argv[1], out, [&](const cache::Value& hash) {
    AppendInteger(out, static_cast<int64_t>(hash.fields.size()));
  });
}

bool RtcHExists(RtcContext& ctx, const Args& argv, std::string* out) {
  return RtcHash(ctx, argv[1], out, [&](const cache::Value& hash) {
    AppendInteger(out, hash.FindField(argv[2]) != nullptr ? 1 : 0);
  });
}

bool RtcHStrLen(RtcContext& ctx, const Args& argv, std::string* out) {
  return RtcHash(ctx, argv[1], out, [&](const cache::Value& hash) {
    const std::string* value = hash.FindField(argv[2]);
    AppendInteger(out, value == nullptr ? 0 : static_cast<int64_t>(value->size()));
  });
}

void HSet(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() % 2 != 0) return AppendArityError(out, argv[0]);
  FieldValues pairs;
  pairs.reserve(argv.size() / 2);
  for (size_t i = 2; i + 1 < argv.size(); i += 2) pairs.emplace_back(argv[i], argv[i + 1]);
  auto added = ctx.store->HSet(argv[1], pairs);
  if (!added.ok()) return AppendStatusError(out, added.status());
  CacheUpdate(ctx, argv[1], [&](cache::Value& hash, int64_t&) {
    for (const auto& [field, value] : pairs) hash.SetField(field, value);
    return hash.fields.size() <= ctx.cache->max_hash_fields();
  });
  NotifyKeyspaceEvent(ctx, kNotifyHash, "hset", argv[1]);
  if (Is(argv[0], "HMSET")) return out->append(kReplyOk), void();
  AppendInteger(out, *added);
}

// A run of HSETs (HMSETs) is one HSET of all their pairs, in order (a later pair of a field
// wins, as the later command would); each HSET counts the fields it was the first to create
// (AppendCreatedCounts), each HMSET answers OK.
bool HSetJoinsRun(const Args& argv) { return argv.size() % 2 == 0; }
void HSetRun(CommandContext& ctx, const WriteRun& run) {
  const std::string& key = (*run.argvs.front())[1];
  FieldValues pairs;
  for (const Args* argv : run.argvs) {
    for (size_t i = 2; i + 1 < argv->size(); i += 2) pairs.emplace_back((*argv)[i], (*argv)[i + 1]);
  }
  std::vector<uint8_t> created;
  auto count = ctx.store->HSet(key, pairs, &created);
  if (!count.ok()) return AppendStatusErrorToAll(run, count.status());
  CacheUpdate(ctx, key, [&](cache::Value& hash, int64_t&) {
    for (const auto& [field, value] : pairs) hash.SetField(field, value);
    return hash.fields.size() <= ctx.cache->max_hash_fields();
  });
  if (Is((*run.argvs.front())[0], "HMSET")) {
    for (std::string* reply : run.replies) reply->append(kReplyOk);
    return;
  }
  AppendCreatedCounts(run, created, /*step=*/2);
}
const WriteRunSpec kHSetRun{HSetJoinsRun, HSetRun};

void HSetNx(CommandContext& ctx, Args& argv, std::string* out) {
  auto created = ctx.store->HSetNx(argv[1], argv[2], argv[3]);
  if (!created.ok()) return AppendStatusError(out, created.status());
  if (*created) NotifyKeyspaceEvent(ctx, kNotifyHash, "hset", argv[1]);
  AppendInteger(out, *created ? 1 : 0);
}

void HGet(CommandContext& ctx, Args& argv, std::string* out) {
  auto value = ctx.store->HGet(argv[1], argv[2]);
  if (!value.ok()) return AppendStatusError(out, value.status());
  AppendOptionalBulk(out, *value);
  FillHash(ctx, argv[1]);
}

void HMGet(CommandContext& ctx, Args& argv, std::string* out) {
  auto values = ctx.store->HMGet(argv[1], ArgViews(argv, 2));
  if (!values.ok()) return AppendStatusError(out, values.status());
  AppendArrayHeader(out, static_cast<int64_t>(values->size()));
  for (const auto& value : *values) AppendOptionalBulk(out, value);
  FillHash(ctx, argv[1]);
}

// Sliced when big (server/slicing/sliced_read.h); a reply that took one step fills the cache.
void HGetAll(CommandContext& ctx, Args& argv, std::string* out) {
  if (ReplyRange(ctx, HashQuery(argv[1]), ItemFormat::kKeyValue, out)) FillHash(ctx, argv[1]);
}

void HDel(CommandContext& ctx, Args& argv, std::string* out) {
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->HLen(argv[1]); });
  auto removed = ctx.store->HDel(argv[1], ArgViews(argv, 2));
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  CacheUpdate(ctx, argv[1], [&](cache::Value& hash, int64_t&) {
    for (size_t i = 2; i < argv.size(); ++i) hash.EraseField(argv[i]);
    return !hash.fields.empty();  // the last field gone: the key is gone
  });
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyHash, "hdel", argv[1]);
  NotifyIfEmptied(ctx, before, *removed, argv[1]);
  AppendInteger(out, *removed);
}

void HLen(CommandContext& ctx, Args& argv, std::string* out) {
  auto length = ctx.store->HLen(argv[1]);
  if (!length.ok()) return AppendStatusError(out, length.status());
  AppendInteger(out, *length);
  FillHash(ctx, argv[1]);
}

void HExists(CommandContext& ctx, Args& argv, std::string* out) {
  auto exists = ctx.store->HExists(argv[1], argv[2]);
  if (!exists.ok()) return AppendStatusError(out, exists.status());
  AppendInteger(out, *exists ? 1 : 0);
  FillHash(ctx, argv[1]);
}

// HKEYS / HVALS.
void HKeysOrVals(CommandContext& ctx, Args& argv, std::string* out) {
  ReplyRange(ctx, HashQuery(argv[1]), Is(argv[0], "HKEYS") ? ItemFormat::kKey : ItemFormat::kValue,
             out);
}

void HIncrBy(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t delta = 0;
  if (!ParseInteger(argv[3], &delta)) return out->append(kReplyNotInteger), void();
  auto value = ctx.store->HIncrBy(argv[1], argv[2], delta);
  if (!value.ok()) return AppendStatusError(out, value.status());
  NotifyKeyspaceEvent(ctx, kNotifyHash, "hincrby", argv[1]);
  AppendInteger(out, *value);
}

void HIncrByFloat(CommandContext& ctx, Args& argv, std::string* out) {
  long double delta = 0;
  if (!storage::ParseLongDouble(argv[3], &delta)) {
    return AppendError(out, "ERR value is not a valid float");
  }
  if (std::isinf(delta)) return AppendError(out, "ERR value is NaN or Infinity");
  auto value = ctx.store->HIncrByFloat(argv[1], argv[2], delta);
  if (!value.ok()) return AppendStatusError(out, value.status());
  NotifyKeyspaceEvent(ctx, kNotifyHash, "hincrbyfloat", argv[1]);
  AppendBulk(out, *value);
}

void HStrLen(CommandContext& ctx, Args& argv, std::string* out) {
  auto length = ctx.store->HStrLen(argv[1], argv[2]);
  if (!length.ok()) return AppendStatusError(out, length.status());
  AppendInteger(out, *length);
}

// HRANDFIELD key [count [WITHVALUES]]
void HRandField(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() == 2) {
    auto pairs = ctx.store->HRandField(argv[1], 1);
    if (!pairs.ok()) return AppendStatusError(out, pairs.status());
    if (pairs->empty()) return out->append(NullBulkReply()), void();
    return AppendBulk(out, pairs->front().first);
  }
  int64_t count = 0;
  if (!ParseInteger(argv[2], &count)) return out->append(kReplyNotInteger), void();
  if (count == LLONG_MIN) {
    return AppendError(out,
                       "ERR value is out of range, value must between -9223372036854775807 and "
                       "9223372036854775807");
  }
  if (argv.size() > 4 || (argv.size() == 4 && !Is(argv[3], "WITHVALUES"))) {
    return out->append(kReplySyntaxError), void();
  }
  bool with_values = argv.size() == 4;
  if (with_values && (count < -LLONG_MAX / 2 || count > LLONG_MAX / 2)) {
    return AppendError(out, "ERR value is out of range");
  }
  if (count < -kMaxRandomCount || count > kMaxRandomCount) {
    return AppendError(out, "ERR value is out of range");
  }
  auto pairs = ctx.store->HRandField(argv[1], count, ReplyRoom(ctx, *out));
  if (ReplyOverBudget(ctx, *out, pairs.status())) return;
  if (!pairs.ok()) return AppendStatusError(out, pairs.status());
  AppendPairsHeader(out, static_cast<int64_t>(pairs->size()), with_values);
  for (const auto& [field, value] : *pairs) {
    if (with_values) {
      AppendPair(out, field, value);
    } else {
      AppendBulk(out, field);
    }
  }
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kHashCommands = {
    {"hset", -4, kWrite | kFast | kCacheAware, 1, 1, 1, HSet, nullptr, nullptr, nullptr, &kHSetRun},
    {"hmset", -4, kWrite | kFast | kCacheAware, 1, 1, 1, HSet, nullptr, nullptr, nullptr, &kHSetRun},
    {"hsetnx", 4, kWrite | kFast, 1, 1, 1, HSetNx},
    {"hget", 3, kReadOnly | kFast | kCacheRead, 1, 1, 1, HGet, RtcHGet},
    {"hmget", -3, kReadOnly | kFast | kCacheRead, 1, 1, 1, HMGet, RtcHMGet},
    {"hgetall", 2, kReadOnly | kCacheRead, 1, 1, 1, HGetAll, RtcHGetAll},
    {"hdel", -3, kWrite | kFast | kCacheAware, 1, 1, 1, HDel},
    {"hlen", 2, kReadOnly | kFast | kCacheRead, 1, 1, 1, HLen, RtcHLen},
    {"hexists", 3, kReadOnly | kFast | kCacheRead, 1, 1, 1, HExists, RtcHExists},
    {"hkeys", 2, kReadOnly, 1, 1, 1, HKeysOrVals},
    {"hvals", 2, kReadOnly, 1, 1, 1, HKeysOrVals},
    {"hincrby", 4, kWrite | kFast, 1, 1, 1, HIncrBy},
    {"hincrbyfloat", 4, kWrite | kFast, 1, 1, 1, HIncrByFloat},
    {"hstrlen", 3, kReadOnly | kFast | kCacheRead, 1, 1, 1, HStrLen, RtcHStrLen},
    {"hrandfield", -2, kReadOnly, 1, 1, 1, HRandField},
    {"hscan", -3, kReadOnly, 1, 1, 1, CollectionScan},
};
// clang-format on

}  // namespace rockcache::server
