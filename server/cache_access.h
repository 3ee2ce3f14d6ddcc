// Helpers for handlers that read or maintain the cache. Header-only, any thread; what each may
// do depends on the context it is given (see server/command.h and server/executor.h).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "cache/cache.h"
#include "server/command.h"

namespace rockcache::server {

// RTC lookup of one key: runs `visit(const cache::Value&, int64_t expire_at_ms)` under the shard
// lock on a hit. Counts the hit or miss unless the context says not to. Never blocks.
template <typename Visitor>
bool CacheLookup(RtcContext& ctx, std::string_view key, Visitor&& visit) {
  cache::Lookup result = ctx.count_stats
                             ? ctx.cache->Visit(key, ctx.now_ms, std::forward<Visitor>(visit))
                             : ctx.cache->Peek(key, ctx.now_ms, std::forward<Visitor>(visit));
  return result == cache::Lookup::kHit;
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
  ctx.cache->Put(key, cache::Value::String(std::move(value)), expire_at_ms, ctx.now_ms);
}

// Worker, under the key lock: changes a cached entry in place with `mutate(cache::Value&,
// int64_t& expire_at_ms) -> bool` (false erases it). Nothing happens when the key is not cached.
template <typename Mutator>
void CacheUpdate(CommandContext& ctx, std::string_view key, Mutator&& mutate) {
  if (ctx.cache == nullptr) return;
  ctx.cache->Update(key, ctx.now_ms, std::forward<Mutator>(mutate));
}

}  // namespace rockcache::server
