// Blocking commands (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP, and
// XREAD / XREADGROUP with BLOCK): the wait registry and the per-waiter state machine.
//
// A blocked client occupies no worker and no network-thread time. Its connection stays in
// flight (the loop parses nothing more from it) while a Waiter, queued here per database and
// key in the order clients blocked, stands for it. Whoever finishes the wait posts the one reply
// to the client's loop: a worker that served it (server/blocking/serve.h), the loop's timer, a
// CLIENT UNBLOCK caller; or nobody when the client disconnected.
//
// Waiter state machine (WaitState; every move is one compare-and-swap, so exactly one party
// wins):
//   kPending  --worker runs the command, finds nothing, queues it (Add)-->  kWaiting
//   kPending  --the loop's timer fires before the command ran-->            kExpired
//   kPending  --the client disconnects before the command ran-->            kGone
//   kWaiting  --a worker serves it, under the key lock (serve.cc)-->        kServed
//   kWaiting  --the loop's timer fires-->                                   kTimedOut
//   kWaiting  --CLIENT UNBLOCK-->                                           kUnblocked
//   kWaiting  --the client disconnects-->                                   kGone
// A command whose waiter is kExpired or kGone when it runs pops what is there (kExpired) or
// nothing (kGone) and never blocks. The element of a served waiter is popped only after the CAS
// to kServed succeeded, so a waiter that timed out or left meanwhile loses nothing: the element
// stays for the next waiter or reader.
//
// Threads: every method is thread-safe (one mutex, taken only while someone is or gets blocked;
// writes check any() first: one relaxed load).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/current_db.h"
#include "config/mutex.h"
#include "server/client_registry.h"
#include "server/protocol/reply.h"
#include "storage/stream_id.h"

namespace rockcache::server {

enum class WaitState : int {
  kPending,
  kWaiting,
  kServed,
  kExpired,
  kTimedOut,
  kUnblocked,
  kGone,
};

// What a blocked command does once an element is there.
struct WaitOp {
  // kStreamRead: XREAD BLOCK, served when a key's last id passes stream_ids[its index];
  // kStreamGroupRead: XREADGROUP BLOCK ... `>`, served when the key's last id passes the group's.
  enum class Kind { kListPop, kListMove, kZSetPop, kStreamRead, kStreamGroupRead };
  Kind kind = Kind::kListPop;
  bool left = true;      // list: pop the head (BLPOP, BLMOVE LEFT ...); zset: the minimum
  bool multi = false;    // BLMPOP / BZMPOP reply shape: [key, [elements...]]
  uint64_t count = 1;    // BLMPOP / BZMPOP COUNT
  std::string dst;       // kListMove: the destination list
  bool dst_left = true;  // kListMove: push at the head
  // Streams: COUNT (0 = no limit), the ids read after (kStreamRead, one per key of the waiter),
  // the group and consumer (kStreamGroupRead) and NOACK.
  uint64_t stream_count = 0;
  std::vector<storage::StreamId> stream_ids;
  std::string group;
  std::string consumer;
  bool noack = false;
};

struct Waiter {
  Waiter(uint64_t client_id, uint32_t loop_index, std::shared_ptr<ClientInfo> info)
      : client_id(client_id), loop_index(loop_index), info(std::move(info)) {}

  const uint64_t client_id;
  const uint32_t loop_index;
  const std::shared_ptr<ClientInfo> info;
  std::atomic<WaitState> state{WaitState::kPending};

  Protocol protocol = Protocol::kResp2;  // its client's (set by the loop before it is shared)
  // Written by the worker that queues the waiter, before Add(); read-only afterwards.
  int db = 0;
  int notify_db = 0;  // the database the client SELECTed: where its pop's keyspace events go
  std::vector<std::string> keys;
  WaitOp op;
  // Worker-only (the thread that ran the command): the command got queued, so its batch has no
  // reply yet; the finisher posts it.
  bool queued = false;

  // The reply of a wait that ended without an element (timeout, CLIENT UNBLOCK TIMEOUT).
  std::string_view NullReply() const {
    ReplyProtocolScope scope(protocol);
    return op.kind == WaitOp::Kind::kListMove ? NullBulkReply() : NullArrayReply();
  }
};

// The database waiters are registered under: the physical database of the command running on
// this thread (config/current_db.h; the executor sets it from the connection's SELECTed one).
// A client blocked before a SWAPDB keeps waiting on the same data, now under the other number.
inline int WaitDb() { return CurrentDb(); }

class WaitRegistry {
 public:
  WaitRegistry() = default;
  WaitRegistry(const WaitRegistry&) = delete;
  WaitRegistry& operator=(const WaitRegistry&) = delete;

  // Any thread, never blocks: someone may be waiting (relaxed; a writer holds the key lock the
  // waiter was queued under, which orders the two).
  bool any() const { return waiting_.load(std::memory_order_relaxed) != 0; }
  // Clients waiting now (INFO blocked_clients).
  size_t waiting() const { return waiting_.load(std::memory_order_relaxed); }

  // Worker, REQUIRES the key locks of waiter->keys: kPending -> kWaiting and queues the waiter
  // behind the others on each of its keys. False (nothing queued) when the state was not
  // kPending: the wait expired or the client left before the command ran.
  bool Add(const std::shared_ptr<Waiter>& waiter);
  // Any thread: moves a kWaiting waiter to `to` (kServed, kTimedOut, kUnblocked, kGone) and
  // unqueues it. True when this call won; the winner owns the reply (none for kGone).
  bool Finish(Waiter* waiter, WaitState to);
  // Loop thread of a waiter whose command is in flight: the timeout elapsed. kPending ->
  // kExpired (returns false: the command will answer itself), or Finish(kTimedOut) (true: the
  // caller replies NullReply()).
  bool TimeOut(Waiter* waiter);
  // Loop thread: the client disconnected. Nothing is lost: an element is popped only after a
  // successful kServed CAS.
  void Abandon(Waiter* waiter);

  // The waiter of a blocked client, or nullptr.
  std::shared_ptr<Waiter> FindByClient(uint64_t client_id) const;
  // True when somebody waits on `key` of `db`.
  bool HasWaiters(int db, std::string_view key) const;
  // The (database, key) pairs XREADGROUP waiters are queued on (a snapshot): what FLUSHDB /
  // FLUSHALL must wake with Redis's error.
  std::vector<std::pair<int, std::string>> GroupReadKeys() const;
  // Every (database, key) pair somebody waits on (a snapshot): what a change of every key
  // (a replicated FLUSHALL or SWAPDB) must look at.
  std::vector<std::pair<int, std::string>> WaitedKeys() const;
  // Every waiting client's waiter (a snapshot).
  std::vector<std::shared_ptr<Waiter>> All() const;
  // The waiters queued on `key` of `db`, oldest first (a snapshot).
  std::vector<std::shared_ptr<Waiter>> WaitersOn(int db, std::string_view key) const;

 private:
  static std::string MapKey(int db, std::string_view key);
  void Unqueue(Waiter* waiter) REQUIRES(mu_);

  mutable Mutex mu_;
  std::unordered_map<std::string, std::deque<std::shared_ptr<Waiter>>> by_key_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, std::shared_ptr<Waiter>> by_client_ GUARDED_BY(mu_);
  std::atomic<size_t> waiting_{0};
};

}  // namespace rockcache::server
