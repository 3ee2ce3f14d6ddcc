#include "server/executor.h"

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "server/blocking/serve.h"
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

namespace {
// After a write: somebody is blocked (one relaxed load), and the write was not a blocking pop
// that just queued its client (it wrote nothing).
bool ShouldServe(Server& server, const std::shared_ptr<Waiter>* waiter) {
  return server.blocking().any() && (waiter == nullptr || !(*waiter)->queued);
}

// A write command's keys and their distinct stripes, in two vectors the thread keeps between
// commands, so a write allocates nothing for them (two allocations and frees per command
// before: ~5% of a pipelined SET). A write run inside another one on the same thread (nested
// ExecuteLocked) uses vectors of its own. Vectors grown past kKeepKeys entries (a DEL of many
// keys) are freed rather than kept.
class WriteKeys {
 public:
  WriteKeys(const CommandSpec& spec, const Args& argv, const cache::KeyLocks& locks)
      : nested_(tls_depth++ > 0),
        keys_(nested_ ? &own_keys_ : &tls_keys),
        stripes_(nested_ ? &own_stripes_ : &tls_stripes) {
    keys_->clear();
    AppendCommandKeys(spec, argv, keys_);
    locks.StripesOf(*keys_, stripes_);
  }
  ~WriteKeys() {
    --tls_depth;
    if (keys_->capacity() > kKeepKeys) std::vector<std::string_view>().swap(*keys_);
    if (stripes_->capacity() > kKeepKeys) std::vector<uint32_t>().swap(*stripes_);
  }
  WriteKeys(const WriteKeys&) = delete;
  WriteKeys& operator=(const WriteKeys&) = delete;

  const std::vector<std::string_view>& keys() const { return *keys_; }
  const std::vector<uint32_t>& stripes() const { return *stripes_; }

 private:
  static constexpr size_t kKeepKeys = 1024;
  static inline thread_local int tls_depth = 0;
  static inline thread_local std::vector<std::string_view> tls_keys;
  static inline thread_local std::vector<uint32_t> tls_stripes;
  const bool nested_;
  std::vector<std::string_view> own_keys_;
  std::vector<uint32_t> own_stripes_;
  std::vector<std::string_view>* const keys_;
  std::vector<uint32_t>* const stripes_;
};
}  // namespace

bool TryAnswerFromCache(Server& server, const CommandSpec& spec, const Args& argv, int64_t now_ms,
                        std::string* out, int db) {
  cache::Cache* cache = server.cache();
  if (spec.rtc == nullptr || cache == nullptr || !cache->enabled()) return false;
  DbScope scope(server.store()->PhysicalDb(db));
  RtcContext ctx{cache, now_ms, /*count_stats=*/true, &server, db};
  if (!spec.rtc(ctx, argv, out)) return false;
  NotifyCacheMisses(server, spec, argv, now_ms, db);
  return true;
}

bool TryAnswerFromMemory(Server& server, const CommandSpec& spec, const Args& argv, int64_t now_ms,
                         std::string* out, int db, uint64_t max_value_bytes) {
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
  storage::MemoryRead read = server.store()->TryGetString(key, max_value_bytes);
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
  RtcContext ctx{cache, now_ms, /*count_stats=*/false, &server, db};
  ctx.touch = false;
  if (!spec.rtc(ctx, argv, out)) return false;
  NotifyCacheMisses(server, spec, argv, now_ms, db);
  return true;
}

void ExecuteLocked(Server& server, const CommandSpec& spec, Args& argv, int64_t now_ms,
                   bool rtc_missed, std::string* out, ReplyBudget* budget, int db,
                   const std::shared_ptr<Waiter>* waiter, SliceSink* slices, bool in_write_window) {
  // The one place a command's database is applied: storage and cache calls below this point go
  // to its physical database. Resolved under the command's key locks, so a SWAPDB (which holds
  // all of them) never lands in the middle of a command.
  DbScope scope(server.store()->PhysicalDb(db));
  CommandContext ctx{&server, server.store(), nullptr, nullptr, now_ms};
  ctx.reply_budget = budget;
  ctx.db = db;
  ctx.waiter = waiter;
  ctx.slices = slices;
  NewKeyWatch new_keys;
  BeforeCommand(ctx, spec, argv, &new_keys);  // keymiss / new events (server/pubsub/notify.h)
  cache::Cache* cache = server.cache();
  // The discipline holds even while cache-maxmemory is 0: a write that skipped the fence could
  // race a fill that started just after CONFIG SET turned the cache back on.
  bool cache_on = cache != nullptr;
  cache::KeyLocks& locks = server.key_locks();

  if (spec.flags & kWrite) {
    const size_t reply_start = out->size();
    WatchRegistry& watches = server.watches();
    if (!cache_on) {
      spec.handler(ctx, argv, out);
      NoteWriteForWatch(watches, spec, argv, *out, reply_start);
      if (ShouldServe(server, waiter)) ServeBlockedAfterCommand(server, spec, argv, false);
      return;
    }
    if (spec.flags & kAllKeys) {
      std::vector<uint32_t> all(locks.stripe_count());
      for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);
      locks.BeginWrite(all);
      // kCacheAware: the handler fixes the cache itself (FLUSHDB clears one database, SWAPDB
      // needs nothing: the cache is keyed by physical database). Clear is O(databases): it
      // advances generations ("Flushes" in cache/cache.h).
      if (!(spec.flags & kCacheAware)) cache->Clear();
      ctx.cache = cache;
      ctx.cache_generation = cache->generation();
      spec.handler(ctx, argv, out);
      NoteWriteForWatch(watches, spec, argv, *out, reply_start);
      locks.EndWrite(all);
      return;
    }
    const WriteKeys write_keys(spec, argv, locks);
    const std::vector<uint32_t>& stripes = write_keys.stripes();
    if (!in_write_window) locks.BeginWrite(stripes);
    if (!(spec.flags & kCacheAware)) {
      for (auto key : write_keys.keys()) cache->Erase(key);
    }
    ctx.cache = cache;
    ctx.cache_generation = cache->generation();
    spec.handler(ctx, argv, out);
    NoteWriteForWatch(watches, spec, argv, *out, reply_start);
    if (ShouldServe(server, waiter)) ServeBlockedAfterCommand(server, spec, argv, true);
    if (!in_write_window) locks.EndWrite(stripes);
    return;
  }

  if ((spec.flags & kCacheRead) && cache_on) {
    RtcContext rtc{cache, now_ms, /*count_stats=*/!rtc_missed, &server, db};
    if (spec.rtc(rtc, argv, out)) {
      // After a miss in the network thread, a hit here means another worker filled the key
      // while this one waited for its lock: one RocksDB read served both.
      if (rtc_missed) server.stats().coalesced_misses.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    ctx.cache = cache;
    ctx.cache_generation = cache->generation();
    spec.handler(ctx, argv, out);
    return;
  }

  spec.handler(ctx, argv, out);
}

bool WriteRunsAllowed(Server& server) {
  return server.settings().write_coalescing.load(std::memory_order_relaxed) &&
         !server.blocking().any() && server.pubsub().notify_flags() == 0;
}

void ExecuteRunLocked(Server& server, const CommandSpec& spec, const WriteRun& run, int64_t now_ms,
                      int db) {
  DbScope scope(server.store()->PhysicalDb(db));
  CommandContext ctx{&server, server.store(), nullptr, nullptr, now_ms};
  ctx.db = db;
  cache::Cache* cache = server.cache();
  if (cache != nullptr) {
    if (!(spec.flags & kCacheAware)) cache->Erase((*run.argvs.front())[1]);
    ctx.cache = cache;
    ctx.cache_generation = cache->generation();
  }
  WatchRegistry& watches = server.watches();
  if (!watches.active()) {
    spec.write_run->run(ctx, run);
  } else {
    std::vector<size_t> reply_starts(run.replies.size());
    for (size_t i = 0; i < run.replies.size(); ++i) reply_starts[i] = run.replies[i]->size();
    spec.write_run->run(ctx, run);
    for (size_t i = 0; i < run.argvs.size(); ++i) {
      NoteWriteForWatch(watches, spec, *run.argvs[i], *run.replies[i], reply_starts[i]);
    }
  }
  server.stats().write_runs.fetch_add(1, std::memory_order_relaxed);
  server.stats().write_run_commands.fetch_add(run.argvs.size(), std::memory_order_relaxed);
}

void ExecuteOnWorker(Server& server, const CommandSpec& spec, Args& argv, int64_t now_ms,
                     bool rtc_missed, std::string* out, ReplyBudget* budget, int db,
                     SliceSink* slices) {
  cache::KeyLocks::Guard guard;
  if (spec.flags & kAllKeys) {
    guard = server.key_locks().LockAll();
  } else if (spec.first_key != 0 || spec.find_keys != nullptr) {
    guard = server.key_locks().Lock(CommandKeys(spec, argv));
  }
  ExecuteLocked(server, spec, argv, now_ms, rtc_missed, out, budget, db, nullptr, slices);
}

}  // namespace rockcache::server
