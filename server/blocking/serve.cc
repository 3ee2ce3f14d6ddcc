#include "server/blocking/serve.h"

#include <algorithm>
#include <deque>
#include <memory>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "pool/worker_pool.h"
#include "server/clock.h"
#include "server/commands/args.h"
#include "server/net_loop.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/server.h"
#include "storage/numbers.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using storage::KeyType;

KeyType TypeFor(const WaitOp& op) {
  switch (op.kind) {
    case WaitOp::Kind::kZSetPop:
      return KeyType::kZSet;
    case WaitOp::Kind::kStreamRead:
    case WaitOp::Kind::kStreamGroupRead:
      return KeyType::kStream;
    default:
      return KeyType::kList;
  }
}

bool IsStreamWait(const WaitOp& op) {
  return op.kind == WaitOp::Kind::kStreamRead || op.kind == WaitOp::Kind::kStreamGroupRead;
}

// One pass of serving: the keys to serve, the stripes held, the replies to post.
class Serving {
 public:
  Serving(Server& server, std::vector<uint32_t> held, bool in_write_window)
      : server_(server),
        store_(*server.store()),
        cache_(server.cache()),
        locks_(server.key_locks()),
        registry_(server.blocking()),
        held_(std::move(held)) {
    if (cache_ != nullptr && !in_write_window)
      window_ = cache::KeyLocks::WriteWindow(locks_, &held_);
  }

  void Run(std::deque<std::string> ready) {
    // Bounded: every step serves or skips a waiter, and each waiter is served once.
    while (!ready.empty() && !failed_) {
      std::string key = std::move(ready.front());
      ready.pop_front();
      ServeKey(key, &ready);
    }
    Finish();
  }

 private:
  struct Served {
    std::shared_ptr<Waiter> waiter;
    std::string reply;
    uint64_t ns = 0;  // the serving's time (INFO commandstats, SLOWLOG)
  };

  bool Holds(uint32_t stripe) const {
    return std::find(held_.begin(), held_.end(), stripe) != held_.end() ||
           std::find(extra_stripes_.begin(), extra_stripes_.end(), stripe) != extra_stripes_.end();
  }

  void ServeKey(const std::string& key, std::deque<std::string>* ready) {
    const int db = WaitDb();
    // The write that made the key ready may still be pending in this thread's WriteGroup, where
    // reads do not see it: make it durable first (a failure fails the group's commit too).
    if (!store_.FlushThreadWriteGroup().ok()) {
      failed_ = true;
      return;
    }
    // Groups of this key with nothing left to deliver in this pass: one reader of a group took
    // what there was (or found nothing), so its other readers are not probed again.
    std::vector<std::string> drained_groups;
    for (const auto& waiter : registry_.WaitersOn(db, key)) {
      if (waiter->state.load() != WaitState::kWaiting) continue;
      if (IsStreamWait(waiter->op)) {
        const bool group = waiter->op.kind == WaitOp::Kind::kStreamGroupRead;
        if (group && std::find(drained_groups.begin(), drained_groups.end(), waiter->op.group) !=
                         drained_groups.end()) {
          continue;
        }
        if (ServeStreamWaiter(waiter, key) && group) drained_groups.push_back(waiter->op.group);
        if (failed_) return;
        continue;
      }
      auto type = store_.Type(key);
      if (!type.ok() || *type == KeyType::kNone) return;
      if (*type != TypeFor(waiter->op)) continue;  // waits for another type: stays blocked
      const bool move = waiter->op.kind == WaitOp::Kind::kListMove;
      if (move) {
        const auto stripe = static_cast<uint32_t>(locks_.StripeOf(waiter->op.dst));
        if (!Holds(stripe)) {
          // The stripe may be one this thread holds for another command of its group (held_
          // lists only this command's): try_lock then fails (glibc: EBUSY, no deadlock) and
          // the pool task serves the key instead.
          auto guard = locks_.TryLockStripe(stripe);
          if (!guard.owns_lock()) {
            deferred_.push_back(key);  // the rest of this queue, in order, by a pool task
            return;
          }
          extra_stripes_.push_back(stripe);
          extra_.push_back(std::move(guard));
          if (cache_ != nullptr) {
            extra_windows_.emplace_back(locks_, std::vector<uint32_t>{stripe});
          }
        }
        auto dst_type = store_.Type(waiter->op.dst);
        if (!dst_type.ok()) return;
        if (*dst_type != KeyType::kNone && *dst_type != KeyType::kList) {
          // As Redis 7.0: the waiter gets WRONGTYPE and the element stays.
          if (registry_.Finish(waiter.get(), WaitState::kServed)) {
            served_.push_back({waiter, std::string(kReplyWrongType)});
          }
          continue;
        }
      }
      if (!registry_.Finish(waiter.get(), WaitState::kServed)) continue;
      const uint64_t start = Clock::Now();
      std::string reply;
      Status s = ServePop(*waiter, key, &reply);
      // The next waiter's reads must see this pop: make it durable now (one WAL write per served
      // waiter; only ever paid while somebody is blocked).
      if (s.ok()) s = store_.FlushThreadWriteGroup();
      if (!s.ok()) {
        reply.clear();
        AppendStatusError(&reply, s);
        failed_ = true;
      }
      if (cache_ != nullptr) {
        cache_->Erase(key);
        if (move) cache_->Erase(waiter->op.dst);
      }
      served_.push_back({waiter, std::move(reply), Clock::NanosBetween(start, Clock::Now())});
      if (failed_) return;
      if (move && registry_.HasWaiters(db, waiter->op.dst)) ready->push_back(waiter->op.dst);
    }
  }

  // XREAD / XREADGROUP waiters (under the key lock): served when the key has entries past what
  // they wait for (nothing is read or written otherwise); a group reader whose stream or group
  // went away gets Redis 7.0's error.
  // True when the waiter's group (if any) has nothing more for its other readers in this pass.
  bool ServeStreamWaiter(const std::shared_ptr<Waiter>& waiter, const std::string& key) {
    ReplyProtocolScope protocol(waiter->protocol);  // the blocked client's, not the writer's
    std::string reply;
    StreamReadiness ready = ProbeStreamWait(store_, *waiter, key, &reply);
    if (ready == StreamReadiness::kNotReady) return true;
    if (!registry_.Finish(waiter.get(), WaitState::kServed)) return false;
    const uint64_t start = Clock::Now();
    if (ready == StreamReadiness::kReady) {
      CommandContext ctx;
      ctx.services = &server_.services();
      ctx.store = &store_;
      ctx.db = waiter->notify_db;
      Status s = ServeStreamWait(ctx, *waiter, key, &reply);
      if (s.ok()) s = store_.FlushThreadWriteGroup();
      if (!s.ok()) {
        reply.clear();
        AppendStatusError(&reply, s);
        failed_ = true;
      }
    }
    served_.push_back({waiter, std::move(reply), Clock::NanosBetween(start, Clock::Now())});
    return ready == StreamReadiness::kReady;
  }

  // The waiter's pop, with the keyspace events Redis emits when it serves a blocked client
  // (in the waiter's database; `new` for a BLMOVE destination it creates).
  Status ServePop(const Waiter& waiter, std::string_view key, std::string* reply) {
    CommandContext ctx;
    ctx.services = &server_.services();
    ctx.store = &store_;
    ctx.db = waiter.notify_db;
    NewKeyWatch new_keys;
    if (waiter.op.kind == WaitOp::Kind::kListMove && NotifyEnabled(server_.pubsub(), kNotifyNew)) {
      auto exists = store_.Exists({waiter.op.dst});
      if (exists.ok() && *exists == 0) new_keys.absent.push_back(waiter.op.dst);
      new_keys.announced.assign(new_keys.absent.size(), false);
      ctx.new_keys = &new_keys;
    }
    ReplyProtocolScope protocol(waiter.protocol);    // the blocked client's, not the pusher's
    Tracking::WriterScope writer(waiter.client_id);  // its pop is its own write (NOLOOP)
    return PopFor(ctx, waiter.op, key, reply);
  }

  void Finish() {
    window_.Close();
    extra_windows_.clear();
    extra_.clear();  // releases the try-locked stripes, after their windows closed
    for (auto& served : served_) {
      Completion completion;
      completion.conn_id = served.waiter->client_id;
      completion.replies = std::move(served.reply);
      completion.unblock = Completion::Unblock::kServed;
      completion.served_ns = served.ns;
      server_.loop(served.waiter->loop_index)->PostCompletion(std::move(completion));
    }
    for (auto& key : deferred_) ScheduleServe(server_, std::move(key));
  }

 public:
  static void ScheduleServe(Server& server, std::string key);

 private:
  Server& server_;
  storage::Store& store_;
  cache::Cache* const cache_;
  cache::KeyLocks& locks_;
  WaitRegistry& registry_;
  const std::vector<uint32_t> held_;
  bool failed_ = false;
  std::vector<cache::KeyLocks::Guard> extra_;
  std::vector<uint32_t> extra_stripes_;
  // Declared after what they cover: a window closes before its stripes are released.
  cache::KeyLocks::WriteWindow window_;  // over held_, unless the caller opened it
  std::vector<cache::KeyLocks::WriteWindow> extra_windows_;  // one per try-locked stripe
  std::vector<Served> served_;
  std::vector<std::string> deferred_;
};

// Serves one key's queue on a worker, holding the key's stripe and the destination stripes of
// its BLMOVE waiters (taken in ascending order, like any command).
class ServeTask : public pool::Task {
 public:
  ServeTask(Server* server, std::string key, int db)
      : server_(server), key_(std::move(key)), db_(db) {}
  void Run() override {
    DbScope scope(db_);
    std::vector<std::string_view> keys{key_};
    auto waiters = server_->blocking().WaitersOn(WaitDb(), key_);
    for (const auto& waiter : waiters) {
      if (waiter->op.kind == WaitOp::Kind::kListMove) keys.emplace_back(waiter->op.dst);
    }
    auto guard = server_->key_locks().Lock(keys);
    Serving(*server_, guard.stripes(), /*in_write_window=*/false).Run({key_});
  }

 private:
  Server* const server_;
  const std::string key_;
  const int db_;  // physical database of key_
};

void Serving::ScheduleServe(Server& server, std::string key) {
  server.worker_pool()->Submit(std::make_unique<ServeTask>(&server, std::move(key), WaitDb()));
}

}  // namespace

void ServeBlockedOn(Server& server, const std::vector<std::string_view>& keys,
                    const std::vector<uint32_t>& held, bool in_write_window) {
  std::deque<std::string> ready;
  for (auto key : keys) {
    if (server.blocking().HasWaiters(WaitDb(), key)) ready.emplace_back(key);
  }
  if (ready.empty()) return;
  Serving(server, held, in_write_window).Run(std::move(ready));
}

void ScheduleServeBlocked(Server& server, std::string key, int db) {
  if (!server.blocking().HasWaiters(db, key)) return;
  server.worker_pool()->Submit(std::make_unique<ServeTask>(&server, std::move(key), db));
}

void ServeBlockedAfterCommand(Server& server, const CommandSpec& spec, const Args& argv,
                              bool in_write_window) {
  if (spec.flags & kAllKeys) {
    // FLUSHALL / FLUSHDB add no element, but a blocked XREADGROUP learns its stream is gone (as
    // Redis 7.0). The caller holds every stripe.
    const bool all = Is(argv[0], "flushall");
    if (!all && !Is(argv[0], "flushdb")) return;
    std::vector<uint32_t> held(server.key_locks().stripe_count());
    for (size_t i = 0; i < held.size(); ++i) held[i] = static_cast<uint32_t>(i);
    const int here = WaitDb();
    for (const auto& [db, key] : server.blocking().GroupReadKeys()) {
      if (!all && db != here) continue;
      DbScope scope(db);
      ServeBlockedOn(server, {key}, held, in_write_window);
    }
    return;
  }
  std::vector<std::string_view> keys = CommandKeys(spec, argv);
  if (keys.empty()) return;
  ServeBlockedOn(server, keys, server.key_locks().StripesOf(keys), in_write_window);
}

Status PopFor(CommandContext& ctx, const WaitOp& op, std::string_view key, std::string* out) {
  storage::Store& store = *ctx.store;
  switch (op.kind) {
    case WaitOp::Kind::kListPop: {
      const int64_t before = LengthIfNotifying(ctx, [&] { return store.LLen(key); });
      auto popped = op.left ? store.LPop(key, op.count) : store.RPop(key, op.count);
      if (!popped.ok()) return popped.status();
      if (!*popped || (*popped)->empty()) return out->append(NullArrayReply()), Status::OK();
      // As Redis: one lpop/rpop event for the elements popped, then "del" when it emptied.
      NotifyKeyspaceEvent(ctx, kNotifyList, op.left ? "lpop" : "rpop", key);
      NotifyIfEmptied(ctx, before, static_cast<int64_t>((*popped)->size()), key);
      AppendArrayHeader(out, 2);
      AppendBulk(out, key);
      if (!op.multi) return AppendBulk(out, (*popped)->front()), Status::OK();
      AppendArrayHeader(out, static_cast<int64_t>((*popped)->size()));
      for (const auto& element : **popped) AppendBulk(out, element);
      return Status::OK();
    }
    case WaitOp::Kind::kListMove: {
      const int64_t before = LengthIfNotifying(ctx, [&] { return store.LLen(key); });
      auto element =
          store.LMove(key, op.dst, op.left ? storage::ListEnd::kLeft : storage::ListEnd::kRight,
                      op.dst_left ? storage::ListEnd::kLeft : storage::ListEnd::kRight);
      if (!element.ok()) return element.status();
      if (*element) {  // as LMOVE: the push on the destination, the pop on the source, its "del"
        NotifyKeyspaceEvent(ctx, kNotifyList, op.dst_left ? "lpush" : "rpush", op.dst);
        NotifyKeyspaceEvent(ctx, kNotifyList, op.left ? "lpop" : "rpop", key);
        if (key != op.dst) NotifyIfEmptied(ctx, before, 1, key);
      }
      AppendOptionalBulk(out, *element);
      return Status::OK();
    }
    case WaitOp::Kind::kStreamRead:
    case WaitOp::Kind::kStreamGroupRead:
      return Status::InvalidArgument("stream waits are served by ServeStreamWait");
    case WaitOp::Kind::kZSetPop: {
      const int64_t before = LengthIfNotifying(ctx, [&] { return store.ZCard(key); });
      auto popped = op.left ? store.ZPopMin(key, op.count) : store.ZPopMax(key, op.count);
      if (!popped.ok()) return popped.status();
      if (popped->empty()) return out->append(NullArrayReply()), Status::OK();
      NotifyKeyspaceEvent(ctx, kNotifyZSet, op.left ? "zpopmin" : "zpopmax", key);
      NotifyIfEmptied(ctx, before, static_cast<int64_t>(popped->size()), key);
      if (!op.multi) {
        AppendArrayHeader(out, 3);
        AppendBulk(out, key);
        AppendBulk(out, popped->front().member);
        AppendDoubleText(out, storage::FormatDouble(popped->front().score));
        return Status::OK();
      }
      AppendArrayHeader(out, 2);
      AppendBulk(out, key);
      AppendArrayHeader(out, static_cast<int64_t>(popped->size()));
      for (const auto& item : *popped) {
        AppendArrayHeader(out, 2);
        AppendBulk(out, item.member);
        AppendDoubleText(out, storage::FormatDouble(item.score));
      }
      return Status::OK();
    }
  }
  return Status::OK();
}

}  // namespace rockcache::server
