// ClientRegistry: the server-wide list of connected clients, for CLIENT LIST / CLIENT KILL /
// INFO clients and maxclients. Each network loop registers its connections here; other threads
// read snapshots. Only ids cross threads: a kill is a request posted to the owning loop.
//
// Thread-safety: all methods are thread-safe (one mutex, held briefly; not on the per-command
// path: connections update ClientInfo's atomics and their own mutex only).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/mutex.h"
#include "server/client_pause.h"

namespace rockcache::server {

// What CLIENT LIST shows about one connection. Immutable fields are set before registration.
struct ClientInfo {
  uint64_t id = 0;
  uint32_t loop_index = 0;
  int fd = -1;
  std::string addr;   // peer "ip:port"
  std::string laddr;  // local "ip:port"
  int64_t created_ms = 0;
  std::atomic<int64_t> last_interaction_ms{0};
  std::atomic<uint64_t> pending_reply_bytes{0};  // reply bytes not written yet (output limits)
  std::atomic<uint64_t> query_buffer_bytes{0};   // unparsed input + a partly parsed command
  // What the connection holds, for CLIENT LIST / INFO and maxmemory-clients, stored by its loop
  // (NetLoop::NoteClientMemory): the input buffer's unused room (qbuf-free), a partly parsed
  // command's arguments (argv-mem), the queued MULTI commands (multi-mem), the output buffers
  // (omem) and their sum with the connection itself (tot-mem).
  std::atomic<uint64_t> query_buffer_free{0};
  std::atomic<uint64_t> argv_memory{0};
  std::atomic<uint64_t> multi_memory{0};
  std::atomic<uint64_t> output_memory{0};
  std::atomic<uint64_t> total_memory{0};
  // CLIENT NO-EVICT ON: never disconnected by maxmemory-clients (the `e` flag).
  std::atomic<bool> no_evict{false};
  std::atomic<int64_t> multi{-1};  // commands queued in MULTI; -1 when not in MULTI (server/tx/)
  std::atomic<uint32_t> subscriptions{0};          // sub: channels (SUBSCRIBE)
  std::atomic<uint32_t> pattern_subscriptions{0};  // psub: patterns (PSUBSCRIBE)
  std::atomic<uint32_t> shard_subscriptions{0};    // ssub: shard channels (SSUBSCRIBE)
  std::atomic<int> db{0};                          // the SELECTed database
  std::atomic<int> resp{2};                        // the protocol HELLO chose (2 or 3)
  // Set by CLIENT KILL (any thread): from then on the client matches no other kill and its loop
  // closes it before running anything more.
  std::atomic<bool> killed{false};
  // Blocked in a BLPOP-like command (the `b` flag of CLIENT LIST); server/blocking/.
  std::atomic<bool> blocked{false};
  // Its next command is held by CLIENT PAUSE (also the `b` flag, as Redis).
  std::atomic<bool> paused{false};
  // Sliced reads (server/slicing/): set (release) by the loop when it closes the connection, so
  // a pending continuation drops its read; and the reply bytes continuations posted that the loop
  // has not appended to the output yet (for the output-buffer limit).
  std::atomic<bool> closed{false};
  std::atomic<uint64_t> slice_queued_bytes{0};
  // The last command the client sent (cmd= of CLIENT LIST, Redis's lastcmd): a CommandRefOf
  // value (server/commands/command.h), stored by the loop as it parses each command, before
  // the command runs (in the loop or in the pool), as Redis sets lastcmd in processCommand.
  std::atomic<uint32_t> last_command{0};

  std::string name() const {
    MutexLock lock(&mu_);
    return name_;
  }
  void set_name(std::string name) {
    MutexLock lock(&mu_);
    name_ = std::move(name);
  }

 private:
  mutable Mutex mu_;
  std::string name_ GUARDED_BY(mu_);
};

class ClientRegistry {
 public:
  // Adds the client unless `max_clients` are already registered; false when full.
  bool TryAdd(std::shared_ptr<ClientInfo> info, size_t max_clients);
  void Remove(uint64_t id);
  std::shared_ptr<ClientInfo> Find(uint64_t id) const;
  // Every client, ordered by id.
  std::vector<std::shared_ptr<ClientInfo>> Snapshot() const;
  size_t size() const;
  // The sum of every client's ClientInfo::total_memory: each loop adds its connections' changes
  // (NetLoop::NoteClientMemory) and takes a closed one's away. INFO mem_clients_normal.
  void AddMemory(int64_t delta) { memory_.fetch_add(delta, std::memory_order_relaxed); }
  uint64_t memory() const {
    const int64_t bytes = memory_.load(std::memory_order_relaxed);
    return bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  }
  // maxmemory-clients: clients disconnected for it (INFO evicted_clients).
  void CountEvicted() { evicted_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t evicted() const { return evicted_.load(std::memory_order_relaxed); }
  // CLIENT PAUSE / UNPAUSE (server/client_pause.h).
  ClientPause& pause() { return pause_; }
  const ClientPause& pause() const { return pause_; }

 private:
  ClientPause pause_;
  std::atomic<int64_t> memory_{0};
  std::atomic<uint64_t> evicted_{0};
  mutable Mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<ClientInfo>> clients_ GUARDED_BY(mu_);
};

}  // namespace rockcache::server
