// Helpers for handlers that read or maintain the cache. Header-only, any thread; what each may
// do depends on the context it is given (see server/commands/command.h and server/executor.h).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "cache/cache.h"
#include "server/commands/command.h"

namespace rockcache::server {

// The lookup an RtcContext asks for: counted (Visit; VisitNoTouch for a command that does not
// touch, see NoTouch), a worker's re-check (Peek), or the answer to the request that just filled
// the entry (Inspect: not a second access).
template <typename Visitor>
cache::Lookup Lookup(RtcContext& ctx, std::string_view key, Visitor&& visit) {
  if (ctx.count_stats) {
    if (!ctx.touch) return ctx.cache->VisitNoTouch(key, ctx.now_ms, std::forward<Visitor>(visit));
    return ctx.cache->Visit(key, ctx.now_ms, std::forward<Visitor>(visit));
  }
  if (ctx.touch) return ctx.cache->Peek(key, ctx.now_ms, std::forward<Visitor>(visit));
  return ctx.cache->Inspect(key, ctx.now_ms, std::forward<Visitor>(visit));
}

// The context of a read that is no access of its key (TTL, TYPE, EXISTS: Redis's
// LOOKUP_NOTOUCH): counted as a hit or miss, recency left as it was.
inline RtcContext NoTouch(const RtcContext& ctx) {
  RtcContext copy = ctx;
  copy.touch = false;
  return copy;
}

// RTC lookup of one key: runs `visit(const cache::Value&, int64_t expire_at_ms)` under the shard
// lock on a hit. Counts the hit or miss unless the context says not to. Never blocks. A negative
// entry returns false here (as a miss): use the overload below to answer from it.
template <typename Visitor>
bool CacheLookup(RtcContext& ctx, std::string_view key, Visitor&& visit) {
  const cache::Lookup result = Lookup(ctx, key, std::forward<Visitor>(visit));
  return result == cache::Lookup::kHit;
}

// RTC lookup of one key that also answers for a key the cache knows absent (a negative entry):
// runs `visit` on a hit or `absent()` on a negative entry, under the shard lock, and returns
// true for either; false on a miss. Never blocks.
template <typename Visitor, typename OnAbsent>
bool CacheLookup(RtcContext& ctx, std::string_view key, Visitor&& visit, OnAbsent&& absent) {
  const cache::Lookup result = Lookup(ctx, key, std::forward<Visitor>(visit));
  if (result == cache::Lookup::kAbsent) absent();
  return result != cache::Lookup::kMiss;
}

// Every Put below passes ctx.cache_generation (taken before the handler read storage): a fill
// that raced a flush of its database is not cached.

// Worker, under the key lock (ctx.cache set), right after storage answered that `key` does not
// exist: caches that absence (a negative entry), so the next read is answered without storage.
// Writes replace or drop it like any entry (see cache/cache.h, "Negative entries").
inline void CachePutAbsent(CommandContext& ctx, std::string_view key) {
  if (ctx.cache == nullptr) return;
  ctx.cache->Put(key, cache::Value::Absent(), 0, ctx.now_ms, ctx.cache_generation);
}

// Remaining TTL in ms of a cached entry, as PTTL replies: -1 when it has none.
inline int64_t CachedPttl(int64_t expire_at_ms, int64_t now_ms) {
  return expire_at_ms == 0 ? -1 : expire_at_ms - now_ms;
}

// Worker, under the key lock (ctx.cache set): installs a string value with its expire-at (0 =
// none); an expire-at already past erases instead.
inline void CachePutString(CommandContext& ctx, std::string_view key, std::string value,
                           int64_t expire_at_ms) {
  if (ctx.cache == nullptr) return;
  if (expire_at_ms != 0 && expire_at_ms <= ctx.now_ms) {
    ctx.cache->Erase(key);
    return;
  }
  ctx.cache->Put(key, cache::Value::String(std::move(value)), expire_at_ms, ctx.now_ms,
                 ctx.cache_generation);
}

// CachePutString for a key the caller found cached under the same key lock (a Peek hit): the
// entry is rewritten in place (Cache::Update) instead of replaced, which spares a new entry and
// unlinking the old one from the shard's table, LRU list and entry array (random neighbours,
// likely cache misses on a hot key's pipelined SETs).
// Falls back to CachePutString when the entry is gone or is a negative one.
inline void CacheOverwriteString(CommandContext& ctx, std::string_view key, std::string_view value,
                                 int64_t expire_at_ms) {
  if (ctx.cache == nullptr) return;
  // Built before the shard lock; after a rewrite it holds the old value, freed after the lock.
  // Swapped in rather than assigned: an assignment keeps the old buffer's capacity, which the
  // entry's charge (by size) would not count.
  std::string fresh(value);
  if (expire_at_ms == 0 || expire_at_ms > ctx.now_ms) {
    const bool rewritten =
        ctx.cache->Update(key, ctx.now_ms, [&](cache::Value& cached, int64_t& expire_at) {
          if (cached.is_string()) {
            cached.str.swap(fresh);
          } else {
            cached = cache::Value::String(std::move(fresh));
          }
          expire_at = expire_at_ms;
          return true;
        });
    if (rewritten) return;
  }
  CachePutString(ctx, key, std::move(fresh), expire_at_ms);
}

// Worker, under the key lock: changes a cached entry in place with `mutate(cache::Value&,
// int64_t& expire_at_ms) -> bool` (false erases it). Nothing happens when the key is not cached.
template <typename Mutator>
void CacheUpdate(CommandContext& ctx, std::string_view key, Mutator&& mutate) {
  if (ctx.cache == nullptr) return;
  ctx.cache->Update(key, ctx.now_ms, std::forward<Mutator>(mutate));
}

}  // namespace rockcache::server
