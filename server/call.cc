#include "server/call.h"

#include <optional>
#include <utility>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "server/blocking/serve.h"
#include "server/commands/command_docs.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/replication/replication.h"
#include "server/server.h"
#include "server/unit_cache.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// After a write: somebody is blocked (one relaxed load), and the write was not a blocking pop
// that just queued its client (it wrote nothing).
bool ShouldServe(Server& server, const std::shared_ptr<Waiter>* waiter) {
  return server.blocking().any() && (waiter == nullptr || !(*waiter)->queued);
}

// A write command's keys and their distinct stripes, in two vectors the thread keeps between
// commands, so a write allocates nothing for them (two allocations and frees per command
// before: ~5% of a pipelined SET). A call inside another one on the same thread (a nested Call)
// uses vectors of its own. Vectors grown past kKeepKeys entries (a DEL of many keys) are freed
// rather than kept.
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

// What Call does around a handler in kWorker and kAtomic modes (nothing in kLoop): the cache
// discipline of server/executor.h before it, WATCH and blocked clients after it.
class Discipline {
 public:
  Discipline(Server& server, const CallRequest& request, CommandContext* ctx)
      : server_(server), request_(request), spec_(*request.spec), ctx_(*ctx) {}
  Discipline(const Discipline&) = delete;
  Discipline& operator=(const Discipline&) = delete;

  // Before the handler. False when the command was answered without it (a cache hit).
  bool Before() {
    if (request_.mode == CallMode::kLoop) return true;
    BeforeCommand(ctx_, spec_, *request_.argv, &new_keys_);  // keymiss / new (pubsub/notify.h)
    // The discipline holds even while cache-maxmemory is 0: a write that skipped the window
    // could race a fill that started just after CONFIG SET turned the cache back on.
    cache::Cache* cache = server_.cache();
    if (request_.mode == CallMode::kAtomic) return BeforeInUnit(cache);
    if (spec_.flags & kWrite) {
      reply_start_ = request_.out->size();
      if (cache == nullptr) return true;
      cache::KeyLocks& locks = server_.key_locks();
      if (spec_.flags & kAllKeys) {
        std::vector<uint32_t> all(locks.stripe_count());
        for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);
        window_ = cache::KeyLocks::WriteWindow(locks, std::move(all));
        // kCacheAware: the handler fixes the cache itself (FLUSHDB clears one database, SWAPDB
        // needs nothing: the cache is keyed by physical database). Clear is O(databases): it
        // advances generations ("Flushes" in cache/cache.h).
        if (!(spec_.flags & kCacheAware)) cache->Clear();
      } else {
        write_keys_.emplace(spec_, *request_.argv, locks);
        if (!request_.in_write_window) {
          window_ = cache::KeyLocks::WriteWindow(locks, &write_keys_->stripes());
        }
        if (!(spec_.flags & kCacheAware)) {
          for (auto key : write_keys_->keys()) cache->Erase(key);
        }
      }
      ctx_.cache = cache;
      ctx_.cache_generation = cache->generation();
      return true;
    }
    if (request_.mode == CallMode::kWorker && (spec_.flags & kCacheRead) && cache != nullptr) {
      RtcContext rtc{cache, request_.now_ms, /*count_stats=*/!request_.rtc_missed,
                     &server_.services(), request_.db};
      if (spec_.rtc(rtc, *request_.argv, request_.out)) {
        // After a miss in the network thread, a hit here means another worker filled the key
        // while this one waited for its lock: one RocksDB read served both.
        if (request_.rtc_missed) {
          server_.stats().coalesced_misses.fetch_add(1, std::memory_order_relaxed);
        }
        return false;
      }
      ctx_.cache = cache;
      ctx_.cache_generation = cache->generation();
    }
    return true;
  }

  // kAtomic: the unit's locks and window are its caller's; its commands see the cache through
  // the unit's (server/unit_cache.h): a write stages its keys and runs against the staging
  // cache, a read of no staged key against the shared one, as a worker's.
  bool BeforeInUnit(cache::Cache* cache) {
    const bool write = (spec_.flags & kWrite) != 0;
    if (write) reply_start_ = request_.out->size();
    UnitCache* unit = UnitCache::Current();
    if (cache == nullptr || unit == nullptr || !(write || (spec_.flags & kCacheRead))) {
      // No unit cache (the cache is off): a write's keys only leave the cache; reads read
      // storage.
      if (write && cache != nullptr) EraseFrom(cache);
      return true;
    }
    if (spec_.flags & kAllKeys) {
      if (write) unit->DropAll();  // FLUSHALL, FLUSHDB, SWAPDB: the unit committed before
      return true;
    }
    cache::Cache* view = unit->Enter(Keys(), write, request_.now_ms);
    if (write) {
      if (!(spec_.flags & kCacheAware)) EraseFrom(view);
    } else {
      // A script's or transaction's read is a client's read: counted (a staged key's lookup in
      // the staging cache is not).
      RtcContext rtc{view, request_.now_ms, /*count_stats=*/view == cache, &server_.services(),
                     request_.db};
      if (spec_.rtc(rtc, *request_.argv, request_.out)) return false;
    }
    ctx_.cache = view;
    ctx_.cache_generation = view->generation();
    return true;
  }

  // A write that does not keep the cache right itself: its keys leave `cache` first.
  void EraseFrom(cache::Cache* cache) {
    if (spec_.flags & kAllKeys) {
      cache->Clear();
    } else {
      for (auto key : Keys()) cache->Erase(key);
    }
  }

  // The command's keys: the caller's when it passed them (CallRequest::keys), else found once.
  const std::vector<std::string_view>& Keys() {
    if (request_.keys != nullptr) return *request_.keys;
    if (!own_keys_) own_keys_ = CommandKeys(spec_, *request_.argv);
    return *own_keys_;
  }

  // After the handler.
  void After() {
    if (request_.mode == CallMode::kLoop || !(spec_.flags & kWrite)) return;
    NoteWriteForWatch(server_.watches(), spec_, *request_.argv, *request_.out, reply_start_);
    if (server_.tracking().active()) {  // client-side caches: after the write (tracking.h)
      if (spec_.flags & kAllKeys) {
        server_.tracking().InvalidateAll();
      } else {
        server_.tracking().Invalidate(Keys());
      }
    }
    // kAtomic: the caller serves after its commit. kAllKeys writes (FLUSHALL...) push nothing,
    // but wake blocked XREADGROUPs (ServeBlockedAfterCommand).
    if (request_.mode == CallMode::kAtomic) return;
    if (ShouldServe(server_, request_.waiter)) {
      ServeBlockedAfterCommand(server_, spec_, *request_.argv,
                               /*in_write_window=*/server_.cache() != nullptr);
    }
  }

 private:
  Server& server_;
  const CallRequest& request_;
  const CommandSpec& spec_;
  CommandContext& ctx_;
  NewKeyWatch new_keys_;
  size_t reply_start_ = 0;
  std::optional<WriteKeys> write_keys_;
  std::optional<std::vector<std::string_view>> own_keys_;  // Keys() when the caller had none
  cache::KeyLocks::WriteWindow window_;  // declared after write_keys_: closes before it goes
};

}  // namespace

void Call(Server& server, const CallRequest& request) {
  const CommandSpec& spec = *request.spec;
  // A read-only replica: its data changes only through the replication link, never by a command.
  // A primary with min-replicas-to-write: not enough replicas acknowledged lately. (Container
  // subcommands that write, FUNCTION LOAD..., are looked up only then.)
  const replication::Replication& repl = server.replication();
  if ((repl.RefusesWrites() || repl.LacksGoodReplicas()) &&
      ((spec.flags & kWrite) || (spec.subcommands != nullptr && request.argv->size() >= 2 &&
                                 SubcommandWrites(spec, (*request.argv)[1])))) {
    AppendError(request.out, repl.RefusesWrites()
                                 ? "READONLY You can't write against a read only replica."
                                 : "NOREPLICAS Not enough good replicas to write.");
    return;
  }
  if ((spec.flags & kReadOnly) && server.replication().RefusesStaleReads()) {
    AppendError(request.out,
                "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
    return;
  }
  // The one place a command's database is applied: storage and cache calls below this point go
  // to its physical database. On a worker it is resolved under the command's key locks, so a
  // SWAPDB (which holds all of them) never lands in the middle of a command.
  DbScope scope(server.store()->PhysicalDb(request.db));
  CommandContext ctx{&server.services(), request.mode == CallMode::kLoop ? nullptr : server.store(),
                     request.conn, nullptr, request.now_ms};
  ctx.reply_budget = request.budget;
  ctx.db = request.db;
  ctx.in_exec = request.mode == CallMode::kAtomic || request.in_exec;
  ctx.waiter = request.waiter;
  ctx.in_script = request.in_script;
  ctx.slices = request.slices;
  ctx.held_stripes = request.held_stripes;
  // A read of a script whose caller tracks its reads (Tracking::ReaderScope): recorded before
  // it reads, under the script's locks of its keys (the coherence order of tracking.h).
  if (request.in_script && (spec.flags & kReadOnly) && Tracking::ReaderScope::current() != 0 &&
      server.tracking().active()) {
    const std::vector<std::string_view> keys = CommandKeys(spec, *request.argv);
    if (!keys.empty()) server.tracking().Record(Tracking::ReaderScope::current(), keys);
  }
  Discipline discipline(server, request, &ctx);
  if (!discipline.Before()) return;
  spec.handler(ctx, *request.argv, request.out);
  discipline.After();
}

void CallNested(const CommandContext& ctx, const CallRequest& request) {
  Call(*ctx.services->calls, request);
}

void CallWithLocks(Server& server, const CallRequest& request) {
  const CommandSpec& spec = *request.spec;
  cache::KeyLocks::Guard guard;
  if (spec.flags & kAllKeys) {
    guard = server.key_locks().LockAll();
  } else if (spec.first_key != 0 || spec.find_keys != nullptr) {
    guard = server.key_locks().Lock(CommandKeys(spec, *request.argv));
  }
  Call(server, request);
}

bool WriteRunsAllowed(Server& server) {
  return server.settings().write_coalescing.load(std::memory_order_relaxed) &&
         !server.blocking().any() && server.pubsub().notify_flags() == 0 &&
         // a replica's writes, and a primary's without enough replicas, go through Call's checks
         !server.replication().RefusesWrites() && !server.replication().LacksGoodReplicas();
}

void CallRun(Server& server, const CommandSpec& spec, const WriteRun& run, int64_t now_ms, int db) {
  DbScope scope(server.store()->PhysicalDb(db));
  CommandContext ctx{&server.services(), server.store(), nullptr, nullptr, now_ms};
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
  if (server.tracking().active()) server.tracking().Invalidate({(*run.argvs.front())[1]});
  server.stats().write_runs.fetch_add(1, std::memory_order_relaxed);
  server.stats().write_run_commands.fetch_add(run.argvs.size(), std::memory_order_relaxed);
}

}  // namespace rockcache::server
