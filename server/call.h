// Call: the one way a command's handler runs, whoever asks — the network thread (kConnection and
// kAnywhere commands), a worker's group commit, EXEC, and the commands a script calls. Each site
// fills one CallRequest; Call applies what every command needs in one place: the database scope,
// keyspace-event bookkeeping (server/pubsub/notify.h), the cache discipline of the call's mode
// (server/executor.h states the rules), WATCH invalidation (server/tx/watch.h) and serving the
// clients blocked on the keys a write touched (server/blocking/serve.h).
//
// Where a request comes from and where it may run is decided before (server/admission.h); Call
// never decides routing. Write runs (WriteRun, a group's consecutive commands on one key) have
// their own entry, CallRun, with the same discipline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/commands/command.h"

namespace rockcache::server {

class Server;
struct Connection;

enum class CallMode {
  // The network thread: a kConnection command (with its connection) or a kAnywhere one. No
  // storage, no key locks, never blocks.
  kLoop,
  // A worker, under the command's key locks (all stripes with kAllKeys): the cache discipline
  // of server/executor.h — writes erase or update their keys inside a write window, reads
  // answer from the cache or fill it. May block on disk.
  kWorker,
  // A worker inside a unit that commits at its end as one WriteBatch (EXEC, a script): the
  // caller holds the locks of every key the unit may touch and keeps a write window open over
  // them until its commit. The unit sees the cache through its UnitCache (server/unit_cache.h):
  // writes and reads of written keys use the unit's staging cache, which reaches the shared cache
  // after the commit; other reads answer from or fill the shared cache as kWorker's. Blocking
  // commands do not block; clients blocked on written keys are served by the caller after the
  // commit.
  kAtomic,
};

// One command to run. The pointers are borrowed for the duration of Call.
struct CallRequest {
  const CommandSpec* spec = nullptr;
  Args* argv = nullptr;
  std::string* out = nullptr;  // the reply is appended here
  CallMode mode = CallMode::kWorker;
  int db = 0;                  // the connection's SELECTed (logical) database
  int64_t now_ms = 0;          // wall clock for expiry
  Connection* conn = nullptr;  // kLoop: the calling connection (kConnection commands)
  // kLoop: a kConnection command queued in a transaction, run once EXEC's batch is back
  // (CommandContext::in_exec). kAtomic implies it.
  bool in_exec = false;
  ReplyBudget* budget = nullptr;  // the batch's reply budget; nullptr = unlimited
  // kWorker: a kMayBlock command's waiter (CommandContext::waiter); nullptr = must not block.
  const std::shared_ptr<Waiter>* waiter = nullptr;
  // kWorker: where a big read leaves its continuation (server/slicing/); nullptr = runs whole.
  SliceSink* slices = nullptr;
  // kWorker: the network thread already looked this kCacheRead command up and missed (a hit
  // now is a coalesced miss and is not counted as a second lookup).
  bool rtc_missed = false;
  // kAtomic: the command is a script's redis.call (CommandContext::in_script).
  bool in_script = false;
  // kAtomic: the stripes the unit holds (CommandContext::held_stripes), or nullptr.
  const std::vector<uint32_t>* held_stripes = nullptr;
  // kAtomic: the command's keys (CommandKeys(spec, argv)) when the caller has them (a script's
  // redis.call checked them against its declared keys); nullptr = Call finds them.
  const std::vector<std::string_view>* keys = nullptr;
  // kWorker: the caller has opened the write window over the command's stripes and closes it
  // after its commit (the group commit); false = a write opens and closes its own.
  bool in_write_window = false;
};

// Runs request.spec's handler (or, for a kCacheRead command in kWorker mode, answers from the
// cache when it holds the key) and appends the reply to *request.out.
// REQUIRES by mode: kLoop — the connection's loop thread; kWorker — a worker holding the
// key-stripe locks of CommandKeys(spec, argv) (all of them with kAllKeys); kAtomic — as stated
// at CallMode::kAtomic.
void Call(Server& server, const CallRequest& request);

// A command run by a running handler — a script's redis.call, inside the unit (EXEC-like, kAtomic)
// that runs the script: Call on the server `ctx` belongs to. The one way a handler runs another
// command. REQUIRES: as Call's for request.mode.
void CallNested(const CommandContext& ctx, const CallRequest& request);

// Worker thread: takes the locks a command needs (none for a keyless command, every stripe for
// kAllKeys, its keys' stripes otherwise), Calls it in kWorker mode and releases them. BLOCKS on
// key locks and disk. REQUIRES: the calling thread holds no key lock.
void CallWithLocks(Server& server, const CallRequest& request);

// Whether writes may run as write runs (WriteRun, server/commands/command.h) now: the
// write-coalescing setting is on, no client is blocked (one-by-one, a push would serve a
// blocked pop between two commands) and no keyspace event is enabled (each command publishes
// its own). WATCH needs no exception: a run dirties its key as its first command would, and
// no EXEC runs between the commands of a run (the group holds the key's lock). Any thread.
bool WriteRunsAllowed(Server& server);

// Worker thread: runs the commands of `run` (all rows `spec`, which has a write_run, on one key)
// as one write, with kWorker's cache discipline, and appends each command's reply.
// REQUIRES: the caller holds the key's lock and has opened the write window of its stripe
// (CallRequest::in_write_window); WriteRunsAllowed(server) was true since it took the lock.
void CallRun(Server& server, const CommandSpec& spec, const WriteRun& run, int64_t now_ms, int db);

}  // namespace rockcache::server
