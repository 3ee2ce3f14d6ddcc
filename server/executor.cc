#include "server/executor.h"

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "server/pubsub/notify.h"
#include "server/server.h"
#include "storage/store.h"

namespace rockcache::server {

bool CacheReadFence::Snapshot(const Args& argv, size_t first) {
  seqs_.clear();
  seqs_.reserve(argv.size() - first);
  for (size_t i = first; i < argv.size(); ++i) {
    uint64_t seq = locks_.WriteSeq(argv[i]);
    if (seq & 1) return false;
    seqs_.push_back(seq);
  }
  return true;
}

bool CacheReadFence::Validate(const Args& argv, size_t first) const {
  // Orders the lookups (done under shard mutexes) before the re-reads below.
  std::atomic_thread_fence(std::memory_order_acquire);
  for (size_t i = first; i < argv.size(); ++i) {
    if (locks_.WriteSeq(argv[i]) != seqs_[i - first]) return false;
  }
  return true;
}

bool TryAnswerFromCache(Server& server, const CommandSpec& spec, const Args& argv, int64_t now_ms,
                        std::string* out, int db) {
  cache::Cache* cache = server.cache();
  if (spec.rtc == nullptr || cache == nullptr || !cache->enabled()) return false;
  DbScope scope(server.store()->PhysicalDb(db));
  RtcContext ctx{cache, now_ms, /*count_stats=*/true, &server.services(), db};
  if (!spec.rtc(ctx, argv, out)) return false;
  NotifyCacheMisses(server.pubsub(), *cache, spec, argv, now_ms, db);
  return true;
}

bool TryAnswerFromMemory(Server& server, const CommandSpec& spec, const Args& argv, int64_t now_ms,
                         std::string* out, int db, uint64_t max_value_bytes,
                         storage::MemoryReach reach) {
  cache::Cache* cache = server.cache();
  if (!(spec.flags & kStringRead) || spec.rtc == nullptr || cache == nullptr || !cache->enabled() ||
      max_value_bytes == 0) {
    return false;
  }
  // One key, argv[1] (GET, STRLEN, GETBIT, and MGET of one key).
  if (spec.first_key != 1 || spec.find_keys != nullptr || argv.size() < 2) return false;
  if (spec.last_key != 1 && !(spec.last_key == -1 && argv.size() == 2)) return false;
  const std::string& key = argv[1];
  DbScope scope(server.store()->PhysicalDb(db));
  // Taken before the storage read (cache/cache.h, "Fills without the stripe").
  const cache::KeyLocks::FillTicket ticket = server.key_locks().TicketFor(key);
  if (!ticket.usable()) return false;
  const cache::Generation generation = cache->generation();
  storage::MemoryRead read = server.store()->TryGetString(key, max_value_bytes, reach);
  cache::Value value;
  int64_t expire_at_ms = 0;
  switch (read.outcome) {
    case storage::MemoryRead::Outcome::kAbsent:
      value = cache::Value::Absent();
      break;
    case storage::MemoryRead::Outcome::kString:
      if (read.expire_at_ms != 0 && read.expire_at_ms <= now_ms) return false;
      value = cache::Value::String(std::move(read.value));
      expire_at_ms = read.expire_at_ms;
      break;
    case storage::MemoryRead::Outcome::kNeedsStorage:
    case storage::MemoryRead::Outcome::kOtherType:
      return false;
  }
  if (!cache->Put(key, std::move(value), expire_at_ms, now_ms, generation, &ticket)) return false;
  // The lookup that missed was counted; this one answers it (no second access: the entry stays
  // on probation until another read).
  RtcContext ctx{cache, now_ms, /*count_stats=*/false, &server.services(), db};
  ctx.touch = false;
  if (!spec.rtc(ctx, argv, out)) return false;
  NotifyCacheMisses(server.pubsub(), *cache, spec, argv, now_ms, db);
  return true;
}

}  // namespace rockcache::server
