// The units of work a network loop hands to the worker pool and gets back: a command prepared
// for a worker (PreparedCommand), a connection's batch of them (ConnBatch) and its timestamps
// (BatchTimes), and what comes back to a loop about one of its connections (Completion). Plain
// data; owned by one thread at a time (the loop, then the worker that runs the batch, then the
// loop again through its completion queue).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/commands/command.h"
#include "server/protocol/reply.h"

namespace rockcache::server {

struct ClientInfo;  // server/client_registry.h
struct TxPayload;   // server/tx/transaction.h

// A command a script ran (redis.call): counted in INFO commandstats as Redis counts it, by the
// network thread once the script's batch is back.
struct NestedCall {
  int command_id = -1;
  uint64_t exec_ns = 0;
  bool failed = false;
};

// One command of a batch: either a command to run, or a reply decided already (an error).
struct PreparedCommand {
  const CommandSpec* spec = nullptr;  // nullptr: `reply` holds the answer
  Args argv;
  std::string reply;
  bool rtc_missed = false;  // the network thread looked it up in the cache and missed
  // CLIENT REPLY OFF/SKIP: the command runs and is counted, its reply bytes are not sent.
  bool reply_dropped = false;
  // A script of a tracking client: the keys its read-only commands read are recorded for it.
  bool track_script_reads = false;
  std::shared_ptr<Waiter> waiter;  // kMayBlock commands: stands for the client while it waits
  int command_id = -1;             // index in AllCommands()
  int db = 0;                      // the database the connection had SELECTed (CommandContext::db)
  Protocol protocol = Protocol::kResp2;  // the connection's, for its reply (reply.h)
  // Filled by the worker (Clock ticks; 0 when latency tracking is off).
  uint64_t exec_start = 0;
  uint64_t exec_end = 0;
  bool failed = false;            // its reply is an error
  bool nil_reply = false;         // its reply is a null bulk or null array (a key read that missed)
  std::string error_code;         // "ERR", "WRONGTYPE"... when failed
  std::shared_ptr<TxPayload> tx;  // EXEC and WATCH: what they carry (server/tx/transaction.h)
  // Resumable (sliced) commands: the pool tasks the command took, and the queue wait of all but
  // the first (the first one's is the batch's queue_wait stage). Shown by SLOWLOG.
  uint32_t slices = 1;
  uint64_t later_slices_queue_wait_ns = 0;
  std::vector<NestedCall> nested;  // a script's: the commands it called
};

// A batch's timestamps (Clock ticks), carried to the worker and back.
struct BatchTimes {
  uint64_t parsed = 0;    // the network thread parsed the batch's bytes
  uint64_t enqueued = 0;  // handed to the pool
  uint64_t dequeued = 0;  // a worker started it
  int level = 0;          // the MLFQ level it was submitted at (pool/worker_pool.h)
};

// One connection's batch of commands, as a network loop hands it to the pool.
struct ConnBatch {
  uint64_t conn_id = 0;
  std::vector<PreparedCommand> commands;
  BatchTimes times;
  uint64_t reply_budget = UINT64_MAX;  // reply bytes allowed (server/commands/reply_budget.h)
  // The connection's shared info; set by the loops (QueueBatch). A batch without it runs its
  // big reads whole (no slicing: a continuation needs it to see the connection close).
  std::shared_ptr<ClientInfo> info;
};

// A message to a loop about one of its connections (NetLoop::PostCompletion).
struct Completion {
  // kClose: close the connection now, with nothing more sent (a sliced reply that cannot be
  // finished: storage error, pool shutdown).
  // kResumePaused (conn_id unused): the pause ended (CLIENT UNPAUSE); resume held connections.
  enum class Kind { kReplies, kKill, kClose, kResumePaused };
  Kind kind = Kind::kReplies;
  uint64_t conn_id = 0;
  std::string replies;        // kReplies: the batch's reply bytes, in order
  bool close_client = false;  // kReplies: the batch passed the client's output-buffer limit
  std::vector<PreparedCommand> commands;  // kReplies: the batch, with the worker's timestamps
  BatchTimes times;
  // Sliced reads (server/slicing/): `more` = a chunk of a reply still being produced (the
  // connection stays in flight); `slice_bytes` = bytes of it counted in
  // ClientInfo::slice_queued_bytes; `rest` = on the last chunk, the batch's commands after the
  // sliced one, not run yet (the loop submits them as a new batch).
  bool more = false;
  uint64_t slice_bytes = 0;
  std::vector<PreparedCommand> rest;
  // kReplies that end a blocked command's wait (served, timed out, CLIENT UNBLOCK): counted in
  // INFO commandstats then, once, as Redis (and in SLOWLOG when served, with `served_ns`, the
  // time the serving took; a wait's time is not the command's).
  enum class Unblock { kNone, kServed, kTimedOut };
  Unblock unblock = Unblock::kNone;
  uint64_t served_ns = 0;
};

}  // namespace rockcache::server
