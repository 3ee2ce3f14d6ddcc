// MULTI, EXEC, DISCARD, WATCH, UNWATCH. The transaction itself lives in server/tx/: these
// handlers cover what runs as a plain connection command (MULTI, DISCARD, UNWATCH, and EXEC
// without MULTI); EXEC inside MULTI and WATCH are taken over by the network thread
// (TransactionInLoop, flag kTransaction) before they get here.
#include "server/tx/transaction.h"

#include "server/connection.h"
#include "server/protocol/reply.h"
#include "server/tx/watch.h"

namespace rockcache::server {
namespace {

TxState& TxOf(Connection* conn) {
  if (conn->tx == nullptr) conn->tx = std::make_unique<TxState>();
  return *conn->tx;
}

void Multi(CommandContext& ctx, Args&, std::string* out) {
  if (ctx.conn == nullptr) {  // queued inside MULTI: cannot happen (nested MULTI is refused)
    AppendError(out, "ERR MULTI calls can not be nested");
    return;
  }
  TxState& state = TxOf(ctx.conn);
  if (state.in_multi) {
    AppendError(out, "ERR MULTI calls can not be nested");
    return;
  }
  state.Reset();
  state.in_multi = true;
  ctx.conn->info->multi.store(0, std::memory_order_relaxed);
  AppendSimple(out, "OK");
}

void Unwatch(CommandContext& ctx, std::string* out) {
  if (ctx.conn != nullptr && ctx.conn->tx != nullptr && ctx.conn->tx->watcher != nullptr) {
    ctx.watches().Remove(ctx.conn->tx->watcher.get());
  }
  AppendSimple(out, "OK");
}

void Discard(CommandContext& ctx, Args&, std::string* out) {
  if (ctx.conn == nullptr || ctx.conn->tx == nullptr || !ctx.conn->tx->in_multi) {
    AppendError(out, "ERR DISCARD without MULTI");
    return;
  }
  ctx.conn->tx->Reset();
  ctx.conn->info->multi.store(-1, std::memory_order_relaxed);
  Unwatch(ctx, out);
}

void Exec(CommandContext&, Args&, std::string* out) {
  // Inside MULTI, TransactionInLoop runs EXEC; here it is always without.
  AppendError(out, "ERR EXEC without MULTI");
}

void UnwatchCommand(CommandContext& ctx, Args&, std::string* out) { Unwatch(ctx, out); }

void Watch(CommandContext&, Args&, std::string* out) {
  // TransactionInLoop runs WATCH (with the connection's watcher); reached only if it did not.
  AppendError(out, "ERR WATCH inside MULTI is not allowed");
}

}  // namespace

const std::vector<CommandSpec> kTransactionCommands = {
    {"multi", 1, kConnection | kFast, 0, 0, 0, Multi},
    {"exec", 1, kConnection | kTransaction, 0, 0, 0, Exec},
    {"discard", 1, kConnection | kFast, 0, 0, 0, Discard},
    {"watch", -2, kReadOnly | kFast | kTransaction, 1, -1, 1, Watch},
    {"unwatch", 1, kConnection | kFast, 0, 0, 0, UnwatchCommand},
};

}  // namespace rockcache::server
