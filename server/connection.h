// Connection: one client socket and its buffers. Owned by exactly one NetLoop and touched only
// on that loop's thread (other threads know it by id through ClientRegistry).
//
// Life of a request: bytes are read into `input`, the RespParser turns them into commands, the
// NetLoop runs what it can right there and hands a batch of storage commands to the worker
// pool; while that batch is `in_flight` the connection parses nothing more, so replies keep
// request order and a client always reads its own writes. When the pool is saturated the batch
// is `parked` on the connection instead (and reading stops: TCP pushes back on that client
// only) until the loop can hand it over without waiting.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "server/batch.h"
#include "server/client_registry.h"
#include "server/protocol/resp_parser.h"
#include "server/pubsub/client_state.h"
#include "server/tx/transaction.h"

struct event;

namespace rockcache::server {

class Server;

class NetLoop;

// Received bytes not parsed yet: [data(), data() + size()). Grows with malloc/realloc and never
// zero-fills (the old std::string::resize cleared 64 KB per read). Loop thread only.
class InputBuffer {
 public:
  InputBuffer() = default;
  ~InputBuffer() { std::free(data_); }
  InputBuffer(const InputBuffer&) = delete;
  InputBuffer& operator=(const InputBuffer&) = delete;

  const char* data() const { return data_ + begin_; }
  size_t size() const { return end_ - begin_; }
  size_t capacity() const { return cap_; }
  // Drops the first n unparsed bytes. REQUIRES: n <= size().
  void Consume(size_t n) {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  // Makes room for at least `min_room` bytes after the data (moving the data to the front or
  // growing); returns where to write and sets *room to the space there.
  char* PrepareWrite(size_t min_room, size_t* room) {
    if (cap_ - end_ < min_room) {
      if (begin_ > 0) {
        std::memmove(data_, data_ + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
      }
      if (cap_ - end_ < min_room) {
        size_t cap = cap_ * 2 > end_ + min_room ? cap_ * 2 : end_ + min_room;
        char* grown = static_cast<char*>(std::realloc(data_, cap));
        if (grown == nullptr) throw std::bad_alloc();
        data_ = grown;
        cap_ = cap;
      }
    }
    *room = cap_ - end_;
    return data_ + end_;
  }
  void CommitWrite(size_t n) { end_ += n; }
  // Frees the memory of an empty buffer that grew past `keep` bytes.
  void ShrinkIfEmpty(size_t keep) {
    if (begin_ == end_ && cap_ > keep) {
      std::free(data_);
      data_ = nullptr;
      cap_ = begin_ = end_ = 0;
    }
  }

 private:
  char* data_ = nullptr;
  size_t cap_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
};

struct Connection {
  Connection(uint64_t id, int fd, NetLoop* loop, std::shared_ptr<ClientInfo> info)
      : id(id), fd(fd), loop(loop), info(std::move(info)) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const uint64_t id;
  const int fd;
  NetLoop* const loop;
  const std::shared_ptr<ClientInfo> info;

  RespParser parser;
  InputBuffer input;   // received bytes not yet parsed
  Args argv;           // the command being run; reused so its strings' memory is kept
  std::string output;  // reply bytes; [output_pos, size) not yet written
  size_t output_pos = 0;
  // `output` ends inside a reply whose next chunks are still coming (a sliced read): push
  // messages (RESP3 pub/sub) wait in held_pushes until the reply is whole.
  bool reply_partial = false;
  std::string held_pushes;

  bool in_flight = false;  // a batch is with the worker pool (or parked, waiting for it)
  bool parked = false;     // the batch waits in parked_batch for room in the pool
  bool authenticated = false;
  int db = 0;  // SELECTed database (logical); every command of this connection runs in it
  Protocol protocol = Protocol::kResp2;  // HELLO's; the form of its replies (reply.h)
  // CLIENT TRACKING (server/tracking/tracking.h): this connection's view of its mode.
  struct TrackingState {
    bool on = false;
    bool bcast = false;
    bool optin = false;
    bool optout = false;
    int caching = -1;  // CLIENT CACHING for the next command: 1 yes, 0 no, -1 not said
  } tracking;
  bool close_after_reply = false;  // QUIT, protocol error, CLIENT KILL of itself
  // CLIENT REPLY (server/commands/client_control.cc), Redis's flags: `off` drops every reply;
  // `skip_next` (set by CLIENT REPLY SKIP) becomes `skip` when that command ends, and `skip`
  // drops the reply of the one command after it. Push messages (pub/sub, invalidations) are
  // never dropped. ProcessInput applies them per command (ReplyGate in net_dispatch.cc).
  struct ReplyState {
    bool off = false;
    bool skip_next = false;
    bool skip = false;
    bool any() const { return off || skip_next || skip; }
  } reply;
  // Held by CLIENT PAUSE (server/client_pause.h): input stops at the held command, reading is
  // off, and the loop's held list has the id until the pause ends.
  bool pause_held = false;
  // The memory last stored in info->total_memory (and added to ClientRegistry::memory()).
  uint64_t noted_memory = 0;
  // The blocked command's reply is dropped (CLIENT REPLY OFF/SKIP when it was sent).
  bool blocked_reply_dropped = false;
  // Blocked in a command that records no tracked key (BLPOP, XREADGROUP...: not read-only):
  // invalidations are written while it waits, as Redis sends them; no racing read's reply can
  // be behind them (a blocking command runs alone in its batch). XREAD BLOCK holds them
  // (server/pubsub/inbox.cc, InvalidationTarget).
  bool wait_takes_invalidations = false;
  bool reading_paused = false;  // input backlog too large while in flight, or parked
  bool write_pending = false;   // EV_WRITE armed
  int64_t last_interaction_ms = 0;
  int64_t obuf_soft_since_ms = 0;  // pending replies over the soft output limit since (0 = not)
  std::vector<PreparedCommand> parked_batch;  // while parked
  BatchTimes parked_times;
  std::unique_ptr<TxState> tx;  // MULTI/WATCH state, created on first use (server/tx/)
  bool tx_multi() const { return tx != nullptr && tx->in_multi; }
  // Subscriptions; null while there are none (then the connection is not in subscribed mode).
  std::unique_ptr<PubSubState> pubsub;

  event* read_event = nullptr;   // owned; freed by NetLoop::CloseConnection
  event* write_event = nullptr;  // owned
  // A blocking pop in flight (server/blocking/): its waiter and its timeout timer (owned, made
  // on first use).
  std::shared_ptr<Waiter> waiter;
  event* wait_timer = nullptr;
  // The blocked command, for INFO commandstats and SLOWLOG when its wait ends (set with waiter).
  int blocked_command_id = -1;
  Args blocked_argv;
};

}  // namespace rockcache::server
