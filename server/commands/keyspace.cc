// Keyspace commands for every type: DEL, EXISTS, the EXPIRE and TTL families, PERSIST, TYPE,
// KEYS, SCAN.
#include <cctype>
#include <climits>
#include <cstdlib>
#include <unordered_set>

#include "cache/key_locks.h"
#include "server/clock.h"
#include "server/commands/args.h"
#include "server/commands/cache_access.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/commands/scan_args.h"
#include "server/executor.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/slicing/sliced_read.h"
#include "server/slicing/sliced_scan.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// DEL while generic events are on: key by key, to emit "del" for each key that existed.
void DelNotifying(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t total = 0;
  std::unordered_set<std::string_view> seen;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (!seen.insert(argv[i]).second) continue;
    auto removed = ctx.store->Del({std::string_view(argv[i])});
    if (!removed.ok()) return AppendStatusError(out, removed.status());
    if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyGeneric, "del", argv[i]);
    total += *removed;
  }
  AppendInteger(out, total);
}

void Del(CommandContext& ctx, Args& argv, std::string* out) {
  if (NotifyEnabled(ctx, kNotifyGeneric)) return DelNotifying(ctx, argv, out);
  auto removed = ctx.store->Del(ArgViews(argv, 1));
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  AppendInteger(out, *removed);
}

void Exists(CommandContext& ctx, Args& argv, std::string* out) {
  auto count = ctx.store->Exists(ArgViews(argv, 1));
  if (!count.ok()) return AppendStatusError(out, count.status());
  AppendInteger(out, *count);
  if (argv.size() == 2 && *count == 0) CachePutAbsent(ctx, argv[1]);
}

bool RtcExists(RtcContext& rtc, const Args& argv, std::string* out) {
  RtcContext ctx = NoTouch(rtc);
  CacheReadFence fence(ctx.key_locks());
  bool multi = argv.size() > 2;
  if (multi && !fence.Snapshot(argv, 1)) return false;
  int64_t count = 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    // A key the cache holds exists, a negative entry does not; any other must be asked of storage.
    bool known = CacheLookup(
        ctx, argv[i], [&count](const cache::Value&, int64_t) { ++count; }, [] {});
    if (!known) return false;
  }
  if (multi && !fence.Validate(argv, 1)) return false;
  AppendInteger(out, count);
  return true;
}

bool RtcTtl(RtcContext& rtc, const Args& argv, std::string* out) {
  RtcContext ctx = NoTouch(rtc);
  bool millis = Is(argv[0], "PTTL");
  int64_t now = ctx.now_ms;
  return CacheLookup(
      ctx, argv[1],
      [out, millis, now](const cache::Value&, int64_t expire_at) {
        int64_t ttl = CachedPttl(expire_at, now);
        AppendInteger(out, ttl < 0 || millis ? ttl : (ttl + 500) / 1000);
      },
      [out] { AppendInteger(out, -2); });
}

bool RtcType(RtcContext& rtc, const Args& argv, std::string* out) {
  RtcContext ctx = NoTouch(rtc);
  return CacheLookup(
      ctx, argv[1],
      [out](const cache::Value& value, int64_t) {
        AppendSimple(out, value.is_string() ? "string" : value.is_list() ? "list" : "hash");
      },
      [out] { AppendSimple(out, "none"); });
}

// Whether an EXPIRE with `cond` applies to a key whose TTL is `expire_at_ms` (0 = none), as
// Redis decides it: no TTL counts as infinite for GT and LT.
bool ExpireApplies(storage::ExpireCondition cond, int64_t expire_at_ms, int64_t at_ms) {
  switch (cond) {
    case storage::ExpireCondition::kNX:
      return expire_at_ms == 0;
    case storage::ExpireCondition::kXX:
      return expire_at_ms != 0;
    case storage::ExpireCondition::kGT:
      return expire_at_ms != 0 && at_ms > expire_at_ms;
    case storage::ExpireCondition::kLT:
      return expire_at_ms == 0 || at_ms < expire_at_ms;
    case storage::ExpireCondition::kAlways:
      break;
  }
  return true;
}

// EXPIRE of a string the cache holds, under its key lock (so the entry is what storage holds):
// its record is written again from the cached value with the new TTL, with no storage read (as
// IncrementCached). False, with nothing done, when the cache does not hold the key as a live
// string, its TTL is about to run out, or the new time is already past (the key is deleted: the
// storage path does that).
bool ExpireCached(CommandContext& ctx, const std::string& key, int64_t at_ms,
                  storage::ExpireCondition cond, std::string* out) {
  constexpr int64_t kTtlMargin = 1000;
  if (ctx.cache == nullptr || at_ms <= ctx.now_ms + kTtlMargin) return false;
  std::string value;
  int64_t expire_at = 0;
  bool is_string = false;
  const cache::Lookup found =
      ctx.cache->Peek(key, ctx.now_ms, [&](const cache::Value& v, int64_t at) {
        if (!v.is_string()) return;
        is_string = true;
        value = v.str;
        expire_at = at;
      });
  if (found != cache::Lookup::kHit || !is_string ||
      (expire_at != 0 && expire_at <= ctx.now_ms + kTtlMargin)) {
    return false;
  }
  if (!ExpireApplies(cond, expire_at, at_ms)) {
    AppendInteger(out, 0);
    return true;
  }
  storage::SetOptions options;
  options.known_present = true;
  options.known_expire_at_ms = expire_at;
  options.expiry.mode = storage::Expiry::Mode::kAt;
  options.expiry.at_ms = at_ms;
  auto written = ctx.store->Set(key, value, options);
  if (!written.ok()) {
    AppendStatusError(out, written.status());
    return true;
  }
  CacheUpdate(ctx, key, [at_ms](cache::Value&, int64_t& cached_expire_at) {
    cached_expire_at = at_ms;
    return true;
  });
  NotifyKeyspaceEvent(ctx, kNotifyGeneric, "expire", key);
  AppendInteger(out, 1);
  return true;
}

// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key time [NX | XX | GT | LT]
void Expire(CommandContext& ctx, Args& argv, std::string* out) {
  bool seconds = Is(argv[0], "EXPIRE") || Is(argv[0], "EXPIREAT");
  bool relative = Is(argv[0], "EXPIRE") || Is(argv[0], "PEXPIRE");
  int64_t when = 0;
  if (!ParseInteger(argv[2], &when)) return out->append(kReplyNotInteger), void();
  storage::ExpireCondition cond = storage::ExpireCondition::kAlways;
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t i = 3; i < argv.size(); ++i) {
    if (Is(argv[i], "NX")) {
      nx = true;
      cond = storage::ExpireCondition::kNX;
    } else if (Is(argv[i], "XX")) {
      xx = true;
      cond = storage::ExpireCondition::kXX;
    } else if (Is(argv[i], "GT")) {
      gt = true;
      cond = storage::ExpireCondition::kGT;
    } else if (Is(argv[i], "LT")) {
      lt = true;
      cond = storage::ExpireCondition::kLT;
    } else {
      return AppendError(out, "ERR Unsupported option " + argv[i]);
    }
  }
  if (nx && (xx || gt || lt)) {
    return AppendError(out, "ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if (gt && lt)
    return AppendError(out, "ERR GT and LT options at the same time are not compatible");
  bool overflow = seconds && (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000);
  int64_t at_ms = seconds && !overflow ? when * 1000 : when;
  if (!overflow && relative) {
    int64_t now = NowUnixMs();
    overflow = at_ms > 0 && at_ms > LLONG_MAX - now;
    if (!overflow) at_ms += now;
  }
  if (overflow) {
    std::string name = argv[0];
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return AppendError(out, "ERR invalid expire time in '" + name + "' command");
  }
  if (xx && lt) {
    // XX + LT: LT alone succeeds on a key without TTL (no TTL counts as infinite); XX adds that
    // the key must have one. (XX + GT needs nothing more: GT already fails without a TTL.)
    auto ttl = ctx.store->PTtl(argv[1]);
    if (!ttl.ok()) return AppendStatusError(out, ttl.status());
    if (*ttl < 0) return AppendInteger(out, 0);
  }
  if (ExpireCached(ctx, argv[1], at_ms, cond, out)) return;
  auto changed = ctx.store->ExpireAt(argv[1], at_ms, cond);
  if (!changed.ok()) return AppendStatusError(out, changed.status());
  if (*changed) {
    CacheUpdate(ctx, argv[1], [&](cache::Value&, int64_t& expire_at) {
      expire_at = at_ms;
      return at_ms > ctx.now_ms;  // a time already past deleted the key
    });
  }
  if (*changed)
    NotifyKeyspaceEvent(ctx, kNotifyGeneric, at_ms > NowUnixMs() ? "expire" : "del", argv[1]);
  AppendInteger(out, *changed ? 1 : 0);
}

void Ttl(CommandContext& ctx, Args& argv, std::string* out) {
  auto ttl = ctx.store->PTtl(argv[1]);
  if (!ttl.ok()) return AppendStatusError(out, ttl.status());
  if (*ttl == -2) CachePutAbsent(ctx, argv[1]);
  if (*ttl < 0 || Is(argv[0], "PTTL")) return AppendInteger(out, *ttl);
  AppendInteger(out, (*ttl + 500) / 1000);
}

void ExpireTime(CommandContext& ctx, Args& argv, std::string* out) {
  auto at = ctx.store->ExpireTimeMs(argv[1]);
  if (!at.ok()) return AppendStatusError(out, at.status());
  if (*at < 0 || Is(argv[0], "PEXPIRETIME")) return AppendInteger(out, *at);
  AppendInteger(out, *at / 1000);
}

void Persist(CommandContext& ctx, Args& argv, std::string* out) {
  auto changed = ctx.store->Persist(argv[1]);
  if (!changed.ok()) return AppendStatusError(out, changed.status());
  if (*changed) {
    CacheUpdate(ctx, argv[1], [](cache::Value&, int64_t& expire_at) {
      expire_at = 0;
      return true;
    });
  }
  if (*changed) NotifyKeyspaceEvent(ctx, kNotifyGeneric, "persist", argv[1]);
  AppendInteger(out, *changed ? 1 : 0);
}

void Type(CommandContext& ctx, Args& argv, std::string* out) {
  auto type = ctx.store->Type(argv[1]);
  if (!type.ok()) return AppendStatusError(out, type.status());
  AppendSimple(out, storage::KeyTypeName(*type));
  if (*type == storage::KeyType::kNone) CachePutAbsent(ctx, argv[1]);
}

void Keys(CommandContext& ctx, Args& argv, std::string* out) {
  storage::RangeQuery query;  // sliced when big (server/slicing/sliced_read.h)
  query.kind = storage::RangeQuery::Kind::kKeys;
  query.pattern = argv[1];
  ReplyRange(ctx, query, ItemFormat::kKey, out);
}

void Scan(CommandContext& ctx, Args& argv, std::string* out) {
  uint64_t cursor = 0;
  if (!ParseScanCursor(argv[1], &cursor)) return AppendError(out, "ERR invalid cursor");
  std::string pattern;
  int64_t count = 10;
  std::optional<storage::KeyType> type;
  for (size_t i = 2; i < argv.size(); i += 2) {
    if (i + 1 >= argv.size()) return out->append(kReplySyntaxError), void();
    if (Is(argv[i], "MATCH")) {
      pattern = argv[i + 1];
      if (pattern == "*") pattern.clear();
    } else if (Is(argv[i], "COUNT")) {
      if (!ParseInteger(argv[i + 1], &count)) return out->append(kReplyNotInteger), void();
      if (count < 1) return out->append(kReplySyntaxError), void();
    } else if (Is(argv[i], "TYPE")) {
      type = storage::ParseKeyTypeName(argv[i + 1]);
      if (!type) return AppendError(out, "ERR unknown type name '" + argv[i + 1] + "'");
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  ScanRequest request;  // sliced when COUNT is big (server/slicing/sliced_scan.h)
  request.target = ScanTarget::kKeys;
  request.cursor = cursor;
  request.pattern = pattern;
  request.count = static_cast<uint64_t>(count);
  request.type = type;
  ReplyScan(ctx, request, out);
}

void NotifyRename(CommandContext& ctx, std::string_view from, std::string_view to) {
  AnnounceNewKey(ctx, to);  // Redis adds the destination before announcing the rename
  NotifyKeyspaceEvent(ctx, kNotifyGeneric, "rename_from", from);
  NotifyKeyspaceEvent(ctx, kNotifyGeneric, "rename_to", to);
}

// RENAME / RENAMENX key newkey
void Rename(CommandContext& ctx, Args& argv, std::string* out) {
  bool nx = Is(argv[0], "RENAMENX");
  auto renamed = ctx.store->Rename(argv[1], argv[2], nx);
  if (!renamed.ok()) return AppendStatusError(out, renamed.status());
  if (*renamed && argv[1] != argv[2]) NotifyRename(ctx, argv[1], argv[2]);
  if (nx) return AppendInteger(out, *renamed ? 1 : 0);
  out->append(kReplyOk);
}

void RandomKey(CommandContext& ctx, Args& argv, std::string* out) {
  auto key = ctx.store->RandomKey();
  if (!key.ok()) return AppendStatusError(out, key.status());
  AppendOptionalBulk(out, *key);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kKeyspaceCommands = {
    {"del", -2, kWrite, 1, -1, 1, Del},
    {"unlink", -2, kWrite | kFast, 1, -1, 1, Del},
    {"exists", -2, kReadOnly | kFast | kCacheRead, 1, -1, 1, Exists, RtcExists},
    {"expire", -3, kWrite | kFast | kCacheAware, 1, 1, 1, Expire},
    {"pexpire", -3, kWrite | kFast | kCacheAware, 1, 1, 1, Expire},
    {"expireat", -3, kWrite | kFast | kCacheAware, 1, 1, 1, Expire},
    {"pexpireat", -3, kWrite | kFast | kCacheAware, 1, 1, 1, Expire},
    {"ttl", 2, kReadOnly | kFast | kCacheRead, 1, 1, 1, Ttl, RtcTtl},
    {"pttl", 2, kReadOnly | kFast | kCacheRead, 1, 1, 1, Ttl, RtcTtl},
    {"expiretime", 2, kReadOnly | kFast, 1, 1, 1, ExpireTime},
    {"pexpiretime", 2, kReadOnly | kFast, 1, 1, 1, ExpireTime},
    {"persist", 2, kWrite | kFast | kCacheAware, 1, 1, 1, Persist},
    {"type", 2, kReadOnly | kFast | kCacheRead, 1, 1, 1, Type, RtcType},
    {"keys", 2, kReadOnly, 0, 0, 0, Keys},
    {"scan", -2, kReadOnly, 0, 0, 0, Scan},
    {"rename", 3, kWrite, 1, 2, 1, Rename},
    {"renamenx", 3, kWrite | kFast, 1, 2, 1, Rename},
    {"randomkey", 1, kReadOnly, 0, 0, 0, RandomKey},
};
// clang-format on

}  // namespace rockcache::server
