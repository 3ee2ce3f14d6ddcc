#include "server/executor.h"

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "server/server.h"

namespace rockcache::server {

bool TryAnswerFromCache(Server& server, const CommandSpec& spec, const Args& argv, int64_t now_ms,
                        std::string* out) {
  cache::Cache* cache = server.cache();
  if (spec.rtc == nullptr || cache == nullptr || !cache->enabled()) return false;
  RtcContext ctx{cache, now_ms, /*count_stats=*/true, &server};
  return spec.rtc(ctx, argv, out);
}

void ExecuteOnWorker(Server& server, const CommandSpec& spec, Args& argv, int64_t now_ms,
                     bool rtc_missed, std::string* out) {
  CommandContext ctx{&server, server.store(), nullptr, nullptr, now_ms};
  cache::Cache* cache = server.cache();
  // The discipline holds even while cache-maxmemory is 0: a write that skipped the key lock
  // could race a fill that started just after CONFIG SET turned the cache back on.
  bool cache_on = cache != nullptr;

  if (spec.flags & kWrite) {
    if (!cache_on) {
      spec.handler(ctx, argv, out);
      return;
    }
    CacheWriteFence& fence = server.cache_write_fence();
    if (spec.flags & kAllKeys) {
      auto guard = server.key_locks().LockAll();
      fence.BeginWrite();
      cache->Clear();
      spec.handler(ctx, argv, out);
      fence.EndWrite();
      return;
    }
    std::vector<std::string_view> keys = CommandKeys(spec, argv);
    auto guard = server.key_locks().Lock(keys);
    fence.BeginWrite();
    if (!(spec.flags & kCacheAware) || keys.size() > 1) {
      for (auto key : keys) cache->Erase(key);
    }
    ctx.cache = cache;
    spec.handler(ctx, argv, out);
    fence.EndWrite();
    return;
  }

  if ((spec.flags & kCacheRead) && cache_on) {
    std::vector<std::string_view> keys = CommandKeys(spec, argv);
    auto guard = server.key_locks().Lock(keys);
    RtcContext rtc{cache, now_ms, /*count_stats=*/!rtc_missed, &server};
    if (spec.rtc(rtc, argv, out)) {
      // After a miss in the network thread, a hit here means another worker filled the key
      // while this one waited for its lock: one RocksDB read served both.
      if (rtc_missed) server.stats().coalesced_misses.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    ctx.cache = cache;
    spec.handler(ctx, argv, out);
    return;
  }

  spec.handler(ctx, argv, out);
}

}  // namespace rockcache::server
