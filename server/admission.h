// Admission: where a parsed command runs, decided once, from its command-table row and the state
// of its connection. Pure (no I/O, no server state), any thread; the network thread acts on the
// answer (server/net_dispatch.cc) and every handler then runs through Call (server/call.h).
//
// In order: the transaction layer sees every command of a connection in MULTI and EXEC/WATCH
// (server/tx/transaction.h, ForTransaction); what it declines is admitted here. Unknown
// commands, wrong arities and commands before AUTH are rejected; a connection in RESP2
// subscribed mode answers what it may not run; then the command runs in the loop (kConnection,
// kAnywhere), is answered from the cache (kCacheRead, run to completion), or joins the batch of
// this pass for the worker pool. A command that needs the connection's earlier replies first
// (kConnection, kMayBlock behind a batch) waits for the batch and is parsed again then.
#pragma once

#include <cstddef>

#include "server/commands/command.h"

namespace rockcache::server {

// The connection's state that routing depends on, as of this command.
struct AdmissionState {
  bool authenticated = true;
  bool subscribed = false;  // RESP2 subscribed mode (server/pubsub/subscriptions.h)
  bool batch_empty = true;  // no command of this input pass waits for the pool yet
  // No command that waits writes this command's keys: every one only reads, or writes only
  // keys known up front that are not this command's (a read may then be answered before them).
  bool batch_spares_keys = true;
  bool rtc_reads = true;         // the rtc-reads setting: cache answers in the network thread
  bool loop_subcommand = false;  // a subcommand the row runs in the loop (InLoopSubcommand)
};

enum class Route {
  kUnknownCommand,    // -ERR unknown command
  kWrongArity,        // -ERR wrong number of arguments
  kNoAuth,            // -NOAUTH: not authenticated and the command is not kNoAuth
  kSubscribedReply,   // answered by AnswerInSubscribedMode: an error, or PING's ["pong", arg]
  kAfterBatch,        // runs after this pass's batch is back: stop parsing, parse it again then
  kLoop,              // kConnection or kAnywhere: Call in the network thread now
  kCache,             // run to completion: the cache, then RocksDB's memory, else the pool
  kCacheBehindBatch,  // as kCache, its reply carried in the batch to keep the order
  kBlocking,          // kMayBlock: alone in its batch, with a waiter; nothing after it is parsed
  kPool,              // joins this pass's batch for the worker pool
};

// Whether the transaction layer sees the command first (TransactionInLoop): every command of a
// connection in MULTI, and EXEC/WATCH (kTransaction) outside. `spec` may be null.
inline bool ForTransaction(const CommandSpec* spec, bool in_multi) {
  return in_multi || (spec != nullptr && (spec->flags & kTransaction));
}

// Whether argv names one of spec's loop_subcommands (case-insensitive). Pure.
bool InLoopSubcommand(const CommandSpec* spec, const Args& argv);

// Where the command runs. `spec` is its row (null: unknown), `argc` its argument count with the
// name. Pure.
Route Admit(const CommandSpec* spec, size_t argc, const AdmissionState& state);

}  // namespace rockcache::server
