// Tracking: client-side caching (CLIENT TRACKING), the server's side. Which clients read which
// keys (the default mode) or want every key under a prefix (BCAST), and the invalidation
// messages a write sends them.
//
// Threads:
// - Enable / Disable: the client's network thread (CLIENT TRACKING is a kConnection command;
//   a closing connection disables).
// - Record: the reading client's network thread, before the read runs (admission).
// - Invalidate / InvalidateAll: whoever writes (workers, under the written keys' stripe locks,
//   after the write; FLUSHALL / FLUSHDB / SWAPDB hold every stripe), and whoever finds a key
//   expired (a worker, the sweep, a network thread's memory read: no stripe lock there).
//
// Coherence: a client that reads key K under tracking and then applies the invalidations it
// receives never keeps a copy of K older than a write it could know of. Three orders give it.
//
// 1. Record before read, look up after write. A reader records its keys before it reads them
//    (admission, in its network thread; a script's reads on the worker, under the keys' locks),
//    and a writer looks its keys up after its write is visible to every later read: the cache
//    holds the new value or nothing (the key's stripe lock, and the write window that keeps
//    network-thread fills and memory reads away until the RocksDB commit, executor.h); a shard
//    mutex here orders the record and the lookup. So either the lookup finds the record and the
//    reader gets an invalidation, or the record came after it and so did the read, which sees the
//    new value: from the cache (changed before the lookup), from RocksDB's memory in the network
//    thread (its fill ticket, taken after the record, sees the write window still open and
//    declines, or the write committed), or on a worker (which waits for the key's lock).
// 2. The reply of a racing read before the invalidation. An invalidation reaches the reader's
//    connection through its loop's inbox. A read answered in the network thread has its reply
//    written before the loop can drain the inbox; a read sent to a worker keeps the connection's
//    batch in flight, and the invalidation waits in Connection::held_pushes until the batch's
//    replies are written. So an invalidation never arrives before the reply of a read that
//    recorded the key before the write's lookup, whatever value that read saw.
// 3. Ordering: the invalidation of an acknowledged write before the reply of any later command.
//    A writer posts its invalidation before its reply is sent, and the message is posted while
//    the key's shard is still locked, so a later write of the key that finds no reader (because
//    this one removed them) is acknowledged only after this message is in the inbox. A network
//    loop drains its inbox after it reads a client's bytes and before it parses them
//    (PubSubInbox::DrainPending), so a command sent after a write was acknowledged anywhere is
//    answered after that write's invalidation (as a single-threaded Redis writes it at once).
//    A client can therefore check its copies with any round trip (a PING) after a write it heard
//    of elsewhere.
//
// Two interleavings order 3 rules out: (a) a reader holds K; a write of K is acknowledged on
// another connection; the reader's PING is answered before the invalidation, because the
// inbox's eventfd and the reader's bytes became ready in one epoll pass and the socket was
// handled first (DrainPending). (b) Two threads change K under no common lock (an expiry found by
// a network thread's memory read, a SET on a worker): the expiry's lookup removes the reader, the
// SET finds none and is acknowledged, and only then is the expiry's message posted (posting
// under the shard's lock).
//
// Cost: with no tracking client, a write pays one relaxed atomic load (active()).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "config/mutex.h"

namespace rockcache::server {

class Server;

// How a client tracks (CLIENT TRACKING ON's options).
struct TrackingOptions {
  uint64_t redirect = 0;  // send invalidations to this client instead (0 = itself)
  bool bcast = false;     // every key under `prefixes` (all keys without one), no recording
  bool optin = false;     // default mode: only the command after CLIENT CACHING YES records
  bool optout = false;    // default mode: every read records but the one after CACHING NO
  bool noloop = false;    // no invalidations for keys this client itself modified
  std::vector<std::string> prefixes;
};

class Tracking {
 public:
  explicit Tracking(Server* server) : server_(server) {}
  Tracking(const Tracking&) = delete;
  Tracking& operator=(const Tracking&) = delete;

  // Any thread: true while some client tracks. One relaxed load.
  bool active() const { return clients_count_.load(std::memory_order_relaxed) != 0; }

  // The client `id` on loop `loop` tracks with `options` (replacing earlier ones). An
  // invalidation takes its receiver's protocol when it is written (server/pubsub/inbox.cc).
  void Enable(uint64_t id, uint32_t loop, TrackingOptions options);
  // The client stops tracking (CLIENT TRACKING OFF, close). Its recorded keys are dropped
  // lazily: an invalidation for a client that no longer tracks is not sent.
  void Disable(uint64_t id);

  // Default mode: client `id` is about to read `keys`. Past tracking-table-max-keys, keys are
  // evicted from the table, each with an invalidation to its readers (as Redis).
  void Record(uint64_t id, const std::vector<std::string_view>& keys);

  // `keys` were modified: every client that read one (and every BCAST client whose prefix it
  // matches) gets an invalidation, one message per key (as Redis); the keys leave the table.
  // Each key's message is posted under its shard's lock (order 3 above). A client whose
  // REDIRECT client is gone gets a tracking-redir-broken push instead (RESP3 only; Redis 7.0). A
  // NOLOOP client gets none for the keys of a write it sent itself (the calling thread's
  // WriterScope).
  void Invalidate(const std::vector<std::string_view>& keys);
  // Every key changed (FLUSHALL, FLUSHDB, SWAPDB): every tracking client gets a null
  // invalidation and the table empties.
  void InvalidateAll();

  // The client whose command the calling thread runs, for NOLOOP: set around each command a
  // worker runs for a connection (group commit: the batch's client; a write run of several
  // clients: 0) and around the pop that serves a blocked client. 0 = no client (expiry, a
  // replica's apply): every tracking client hears of the write.
  class WriterScope {
   public:
    explicit WriterScope(uint64_t client_id) : previous_(t_writer) { t_writer = client_id; }
    ~WriterScope() { t_writer = previous_; }
    WriterScope(const WriterScope&) = delete;
    WriterScope& operator=(const WriterScope&) = delete;
    static uint64_t current() { return t_writer; }

   private:
    static inline thread_local uint64_t t_writer = 0;
    const uint64_t previous_;
  };

  // The client a script runs for when its reads are tracked (Call records the keys of each
  // read-only redis.call for it, before the read, under the script's key locks); 0 = none.
  class ReaderScope {
   public:
    explicit ReaderScope(uint64_t client_id) : previous_(t_reader) { t_reader = client_id; }
    ~ReaderScope() { t_reader = previous_; }
    ReaderScope(const ReaderScope&) = delete;
    ReaderScope& operator=(const ReaderScope&) = delete;
    static uint64_t current() { return t_reader; }

   private:
    static inline thread_local uint64_t t_reader = 0;
    const uint64_t previous_;
  };

  // CLIENT TRACKINGINFO / GETREDIR: false when `id` does not track. *broken_redirect (when
  // not null): an invalidation found the REDIRECT client gone since tracking was enabled.
  bool Options(uint64_t id, TrackingOptions* options, bool* broken_redirect = nullptr) const;

  // INFO: tracking_total_keys / _items / _prefixes, tracking_clients.
  struct Counts {
    uint64_t keys = 0, items = 0, prefixes = 0, clients = 0;
  };
  Counts counts() const;

 private:
  struct Client {
    uint32_t loop = 0;
    TrackingOptions options;
    bool broken_redirect = false;  // an invalidation found the REDIRECT client gone
  };
  static constexpr size_t kShards = 64;
  struct Shard {
    mutable Mutex mu;
    // Key -> the clients that read it since its last invalidation.
    std::unordered_map<std::string, std::unordered_set<uint64_t>> readers GUARDED_BY(mu);
  };

  Shard& ShardOf(std::string_view key) {
    return shards_[std::hash<std::string_view>{}(key) % kShards];
  }
  // Sends `keys` (null when `all`) to each client of `targets` as one invalidation message,
  // except to `writer` when it tracks with NOLOOP (0: nobody is skipped). Takes clients_mu_ and
  // posts to inboxes: may be called with a shard's mutex held (shard -> clients_mu_ -> inbox).
  void Send(const std::unordered_map<uint64_t, std::vector<std::string>>& targets, bool all,
            uint64_t writer = 0);

  Server* const server_;
  std::atomic<uint64_t> clients_count_{0};
  std::atomic<uint64_t> keys_{0};   // keys in the table
  std::atomic<uint64_t> items_{0};  // (key, client) pairs in the table
  Shard shards_[kShards];
  mutable Mutex clients_mu_;
  std::unordered_map<uint64_t, Client> clients_ GUARDED_BY(clients_mu_);
};

}  // namespace rockcache::server
