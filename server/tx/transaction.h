// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH (Redis 7.0 semantics and replies).
//
// Network thread (TransactionInLoop): while a connection is in MULTI every command is checked
// (unknown command, arity, commands Redis refuses in a transaction) and queued on the connection
// with "+QUEUED"; a refused one makes EXEC answer -EXECABORT. EXEC hands the queued commands to
// the pool as ONE command (a group-commit barrier, server/group_commit.h) carrying a TxPayload.
// kConnection commands queued in the transaction (SELECT, CLIENT SETNAME, CONFIG SET...) need the
// network thread, and must not run when a WATCH aborts the EXEC (Redis runs none of an aborted
// transaction): such an EXEC ends its batch (TxInLoop::kHandledLast), the worker leaves their
// slots in EXEC's array, and when the batch is back FinishExecInLoop runs them in order (unless
// the EXEC was aborted) and splices their replies in. A queued SELECT still moves the commands
// queued after it to its database (decided when EXEC is handed over).
//
// Worker (RunTxCommand): EXEC takes the key-stripe locks of every key of its commands and of its
// watched keys in one KeyLocks::Lock (ascending stripe order, the only lock acquisition of the
// task at that point: deadlock-free against every other command and group; every stripe when a
// command touches all keys, FLUSHALL). Holding them it checks the watches (null array when
// dirty), marks their stripes' write sequences odd for its whole run, runs the commands against
// the unit's staging cache (server/unit_cache.h: no cache reader, single- or multi-key, sees a
// value of the transaction before all of it is done; they read the committed values until the
// commit), commits their writes to RocksDB as one WriteBatch (storage::WriteGroup::BeginAtomic)
// and then publishes what the staging cache holds to the shared cache, all before releasing the
// locks. The commands read the
// transaction's earlier writes (SET k; INCR k; LRANGE...) from the store's per-thread overlay,
// so nothing of a transaction is in RocksDB (memtables included) before that one write: a
// kill -9 keeps all of it or none.
//
// WATCH runs on a worker too, holding its keys' stripe locks (server/tx/watch.h explains why).
//
// Hooks for other work: SELECT inside MULTI changes the database of the commands queued after it
// (MakeQueuedCommand in transaction.cc is the one place a queued command is made);
// CommandContext::in_exec tells a blocking command not to block; WatchRegistry::TouchDb for
// SWAPDB / FLUSHDB of one database.
//
// Differences from Redis, all rare:
// - Queued kConnection commands run after the transaction's storage commands (their replies in
//   their place): a CONFIG SET queued before a write takes effect after it.
// - A write marks its keys' watchers even when it changed nothing (DEL of a missing key, SET NX
//   on an existing one; a failed write does not mark), and FLUSHALL marks every watcher, also of
//   keys that did not exist: spurious aborts, never a missed one.
// - A transaction holding FLUSHALL/FLUSHDB is atomic for other clients but not across a crash
//   between FLUSHALL's own write and the rest (FLUSHALL writes with its own WriteOptions).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/batch.h"
#include "server/tx/watch.h"

namespace rockcache::storage {
class WriteGroup;
}

namespace rockcache::server {

class Server;

struct Connection;
struct ReplyBudget;

// A connection's transaction state (Connection::tx, created on first use).
struct TxPayload;
struct TxState {
  bool in_multi = false;
  // An EXEC whose queued kConnection commands wait for its batch to return (FinishExecInLoop).
  std::shared_ptr<TxPayload> deferred_exec;
  bool aborted = false;  // a command was refused while queuing: EXEC answers EXECABORT
  std::vector<PreparedCommand> queued;
  // The memory of the queued commands (QueuedMemory): CLIENT LIST multi-mem, bounded by
  // client-query-buffer-limit.
  uint64_t queued_bytes = 0;
  std::shared_ptr<Watcher> watcher;  // null until the first WATCH
  void Reset() {
    in_multi = false;
    aborted = false;
    queued.clear();
    queued_bytes = 0;
  }
};

// What an EXEC or WATCH carries to its worker (PreparedCommand::tx).
struct TxPayload {
  std::shared_ptr<Watcher> watcher;       // WATCH: registers here; EXEC: checked, then cleared
  std::vector<PreparedCommand> commands;  // EXEC: the queued commands, in order
  // Written by the worker, read by the network thread once the batch is back (the completion
  // queue orders them): EXEC ran its commands (not aborted, no storage error); the size of its
  // reply; where, in it, the reply of each queued kConnection command goes, in order.
  bool ran = false;
  size_t reply_size = 0;
  std::vector<size_t> connection_slots;
  // Set by the network thread for a deferred EXEC sent under CLIENT REPLY OFF/SKIP: the worker
  // keeps the reply (the queued kConnection commands are spliced into it) and FinishExecInLoop
  // drops it after running them.
  bool drop_reply = false;
};

// The heap a queued command holds: the command, its argument vector and the arguments' own
// buffers (those past std::string's inline capacity).
constexpr size_t kInlineStringBytes = 15;
uint64_t QueuedMemory(const PreparedCommand& command);

enum class TxInLoop {
  kNotHandled,   // run the command the normal way
  kHandled,      // answered in conn->output, or pushed to `batch`
  kHandledLast,  // pushed to `batch`, which it ends: parse nothing more until it is back
  kClose,        // the queued transaction passed client-query-buffer-limit: close the client
};

// Network thread: called for every command of a connection in MULTI, and for EXEC/WATCH (spec
// flag kTransaction) otherwise. `spec` may be null (unknown command).
TxInLoop TransactionInLoop(Server& server, Connection* conn, const CommandSpec* spec, int id,
                           Args& argv, std::vector<PreparedCommand>* batch);

// Network thread, when a batch of `conn` comes back and conn->tx->deferred_exec is set (the
// batch ended with that EXEC, whose reply is the tail of `replies`): runs the EXEC's queued
// kConnection commands unless it was aborted, splicing their replies into its array.
void FinishExecInLoop(Server& server, Connection* conn, std::string* replies);

// Worker: runs an EXEC or WATCH command (command->tx set). `group`: the thread's open write
// group (EXEC commits through it). REQUIRES for WATCH: the caller holds the keys' stripe locks;
// for EXEC: the caller holds no key lock and `group` has nothing pending.
void RunTxCommand(Server& server, storage::WriteGroup* group, PreparedCommand* command,
                  ReplyBudget* budget);

}  // namespace rockcache::server
