#include "server/tx/transaction.h"

#include <string_view>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "config/current_db.h"
#include "server/blocking/serve.h"
#include "server/call.h"
#include "server/commands/args.h"
#include "server/commands/reply_budget.h"
#include "server/connection.h"
#include "server/protocol/reply.h"
#include "server/scripting/script_unit.h"
#include "server/server.h"
#include "server/unit_cache.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

constexpr std::string_view kQueued = "+QUEUED\r\n";
constexpr std::string_view kExecAbort =
    "-EXECABORT Transaction discarded because of previous errors.\r\n";

bool Is(const CommandSpec* spec, std::string_view name) {
  return spec != nullptr && name == spec->name;
}

// Commands Redis 7.0 flags no-multi (of those rockcache has).
bool RefusedInMulti(const CommandSpec& spec) {
  std::string_view name = spec.name;
  return name == "shutdown" || name == "save" || name == "sync" || name == "psync";
}

// The one place a queued command is made: the databases work plugs the connection's current
// database (after any SELECT queued before it) in here.
PreparedCommand MakeQueuedCommand(Connection* conn, const CommandSpec* spec, int id, Args* argv) {
  PreparedCommand command;
  command.spec = spec;
  command.command_id = id;
  command.argv = std::move(*argv);
  *argv = Args();
  return command;
}

TxState& StateOf(Connection* conn) {
  if (conn->tx == nullptr) conn->tx = std::make_unique<TxState>();
  return *conn->tx;
}

void PushToBatch(const CommandSpec* spec, int id, Args* argv, std::shared_ptr<TxPayload> payload,
                 std::vector<PreparedCommand>* batch, int db, Protocol protocol) {
  PreparedCommand command;
  command.db = db;
  command.protocol = protocol;
  command.spec = spec;
  command.command_id = id;
  command.argv = std::move(*argv);
  *argv = Args();
  command.tx = std::move(payload);
  batch->push_back(std::move(command));
}

// The database a queued SELECT moves the commands after it to (`db` when it will fail).
int SelectedDb(Server& server, const PreparedCommand& command, int db) {
  int64_t value = 0;
  if (command.argv.size() != 2 || !ParseInteger(command.argv[1], &value)) return db;
  if (value < 0 || value >= server.store()->databases()) return db;
  return static_cast<int>(value);
}

// EXEC while in MULTI: hands the transaction to the pool (or answers EXECABORT). kHandledLast
// when queued kConnection commands wait for the batch to return (FinishExecInLoop).
TxInLoop Exec(Server& server, Connection* conn, TxState& state, const CommandSpec* spec, int id,
              Args& argv, std::vector<PreparedCommand>* batch) {
  conn->info->multi.store(-1, std::memory_order_relaxed);
  if (state.aborted) {
    conn->output += kExecAbort;
    state.Reset();
    if (state.watcher != nullptr) server.watches().Remove(state.watcher.get());
    return TxInLoop::kHandled;
  }
  auto payload = std::make_shared<TxPayload>();
  payload->watcher = std::move(state.watcher);  // EXEC unwatches, whatever its outcome
  payload->commands = std::move(state.queued);
  state.Reset();
  bool deferred = false;
  int db = conn->db;
  for (PreparedCommand& command : payload->commands) {
    // In queue order, so a queued SELECT moves the commands after it to its database.
    command.db = db;
    if (!(command.spec->flags & kConnection)) continue;
    deferred = true;
    if (Is(command.spec, "select")) db = SelectedDb(server, command, db);
  }
  if (deferred) state.deferred_exec = payload;
  PushToBatch(spec, id, &argv, std::move(payload), batch, conn->db, conn->protocol);
  return deferred ? TxInLoop::kHandledLast : TxInLoop::kHandled;
}

}  // namespace

uint64_t QueuedMemory(const PreparedCommand& command) {
  uint64_t bytes = sizeof(PreparedCommand) + command.argv.capacity() * sizeof(std::string);
  for (const std::string& arg : command.argv) {
    if (arg.capacity() > kInlineStringBytes) bytes += arg.capacity() + 1;
  }
  return bytes;
}

TxInLoop TransactionInLoop(Server& server, Connection* conn, const CommandSpec* spec, int id,
                           Args& argv, std::vector<PreparedCommand>* batch) {
  const bool in_multi = conn->tx != nullptr && conn->tx->in_multi;
  if (!in_multi) {
    // EXEC without MULTI is answered by its kConnection handler; WATCH goes to a worker with
    // the connection's watcher.
    if (!Is(spec, "watch") || !ArityOk(*spec, argv.size()) || !conn->authenticated) {
      return TxInLoop::kNotHandled;
    }
    TxState& state = StateOf(conn);
    if (state.watcher == nullptr) state.watcher = std::make_shared<Watcher>(&server.watches());
    auto payload = std::make_shared<TxPayload>();
    payload->watcher = state.watcher;
    PushToBatch(spec, id, &argv, std::move(payload), batch, conn->db, conn->protocol);
    return TxInLoop::kHandled;
  }
  TxState& state = *conn->tx;
  if (spec == nullptr) {
    AppendUnknownCommand(&conn->output, argv);
    state.aborted = true;
    return TxInLoop::kHandled;
  }
  if (!ArityOk(*spec, argv.size())) {
    AppendArityError(&conn->output, argv[0]);
    state.aborted = true;
    return TxInLoop::kHandled;
  }
  if (Is(spec, "exec")) return Exec(server, conn, state, spec, id, argv, batch);
  if (Is(spec, "discard") || Is(spec, "quit") || Is(spec, "reset")) return TxInLoop::kNotHandled;
  if (Is(spec, "multi")) {
    AppendError(&conn->output, "ERR MULTI calls can not be nested");
    return TxInLoop::kHandled;
  }
  if (Is(spec, "watch")) {
    AppendError(&conn->output, "ERR WATCH inside MULTI is not allowed");
    return TxInLoop::kHandled;
  }
  if (RefusedInMulti(*spec)) {
    AppendError(&conn->output, "ERR Command not allowed inside a transaction");
    state.aborted = true;
    return TxInLoop::kHandled;
  }
  state.queued.push_back(MakeQueuedCommand(conn, spec, id, &argv));
  state.queued_bytes += QueuedMemory(state.queued.back());
  conn->info->multi.store(static_cast<int64_t>(state.queued.size()), std::memory_order_relaxed);
  conn->output += kQueued;
  const uint64_t limit =
      server.settings().client_query_buffer_limit.load(std::memory_order_relaxed);
  if (state.queued_bytes > limit) return TxInLoop::kClose;
  return TxInLoop::kHandled;
}

namespace {

void RunWatch(Server& server, TxPayload& payload, const Args& argv, std::string* out) {
  storage::Store* store = server.store();
  for (size_t i = 1; i < argv.size(); ++i) {
    const int64_t now = NowUnixMs();
    int64_t expire_at = 0;
    auto pttl = store->PTtl(argv[i]);
    if (pttl.ok() && *pttl >= 0) expire_at = now + *pttl;
    server.watches().Add(payload.watcher.get(), argv[i], expire_at);
  }
  AppendSimple(out, "OK");
}

void RunExec(Server& server, storage::WriteGroup* group, TxPayload& payload, std::string* out,
             ReplyBudget* budget) {
  cache::KeyLocks& locks = server.key_locks();
  WatchRegistry& watches = server.watches();
  Watcher* watcher = payload.watcher.get();

  bool all = false;
  std::vector<std::string_view> keys;
  for (const auto& command : payload.commands) {
    // A script may touch keys it did not declare, and inside EXEC it cannot take more locks
    // (script_unit.h): a transaction with one holds every stripe.
    if (command.spec->flags & (kAllKeys | kScript)) all = true;
    for (auto key : CommandKeys(*command.spec, command.argv)) keys.push_back(key);
  }
  std::vector<std::string> watched;
  if (watcher != nullptr) watched = watches.Keys(watcher);
  for (const auto& key : watched) keys.emplace_back(key);

  // The one lock acquisition of the transaction: ascending stripes (or all of them).
  cache::KeyLocks::Guard guard = all ? locks.LockAll() : locks.Lock(keys);
  if (watcher != nullptr) {
    const bool dirty = watches.Dirty(watcher, NowUnixMs());
    watches.Remove(watcher);
    if (dirty) {
      AppendNullArray(out);  // a watched key changed
      payload.reply_size = out->size();
      return;
    }
  }

  const std::vector<uint32_t>& stripes = guard.stripes();
  storage::Store* store = server.store();
  cache::KeyLocks::WriteWindow window(locks, &stripes);
  // Until the commit, the commands' writes reach only the unit's staging cache.
  UnitCache::Scope unit_cache(server.cache());

  // Every write from here to Commit() reaches RocksDB in that Commit, as one batch; the
  // commands' reads see the earlier writes of the transaction through the store's overlay.
  group->BeginAtomic();
  // The unit scripts queued in the transaction run in (they find EXEC's locks here).
  scripting::UnitKeys unit(server, stripes, all, /*may_extend=*/false, group);
  AppendArrayHeader(out, payload.commands.size());
  // Every key a write touched, with its physical database, for blocked clients.
  std::vector<std::pair<int, std::string_view>> written_all;
  for (size_t i = 0; i < payload.commands.size(); ++i) {
    PreparedCommand& command = payload.commands[i];
    if (command.spec->flags & kConnection) {  // run by the network thread afterwards
      payload.connection_slots.push_back(out->size());
      continue;
    }
    const CommandSpec& spec = *command.spec;
    std::vector<std::string_view> command_keys = CommandKeys(spec, command.argv);
    if (spec.flags & kAllKeys) {
      // FLUSHALL / FLUSHDB / SWAPDB write with their own WriteOptions: what the transaction
      // wrote before is committed first (a transaction holding one is atomic for other clients,
      // not for a crash between these writes).
      (void)group->Commit();
      group->BeginAtomic();
    }
    CallRequest request;
    request.spec = &spec;
    request.argv = &command.argv;
    request.out = out;
    request.mode = CallMode::kAtomic;
    request.db = command.db;
    request.now_ms = NowUnixMs();
    request.budget = budget;
    request.held_stripes = &stripes;
    Call(server, request);
    if (budget != nullptr && budget->exceeded) break;
    if (spec.flags & kWrite) {
      const int physical_db = store->PhysicalDb(command.db);
      for (auto key : command_keys) written_all.emplace_back(physical_db, key);
    }
  }
  // A script of the transaction killed by SCRIPT KILL: none of the transaction is kept.
  Status s = unit.rolled_back() ? Status::Busy(
                                      "Script killed by user with SCRIPT KILL... (the transaction "
                                      "was rolled back)")
                                : group->Commit();
  if (unit.rolled_back()) group->Rollback();
  if (!s.ok()) {
    // Nothing of the transaction reached the WAL, and the cache still holds its keys' committed
    // values (its own writes went to the unit's staging cache, dropped below).
    out->clear();
    AppendStatusError(out, s);
  }
  if (s.ok() && !unit.rolled_back()) {
    unit_cache.Publish(NowUnixMs());
  } else {
    unit_cache.Discard();
  }
  for (const auto& [db, key] : unit.written()) written_all.emplace_back(db, key);
  payload.ran = s.ok() && (budget == nullptr || !budget->exceeded);
  payload.reply_size = out->size();
  window.Close();
  // Clients blocked on keys the transaction pushed to are served after the whole transaction
  // (as Redis), still under its locks, so nobody else takes the elements first.
  if (s.ok() && !written_all.empty() && server.blocking().any()) {
    for (const auto& [db, key] : written_all) {
      DbScope scope(db);
      ServeBlockedOn(server, {key}, stripes, /*in_write_window=*/false);
    }
  }
}

}  // namespace

void FinishExecInLoop(Server& server, Connection* conn, std::string* replies) {
  std::shared_ptr<TxPayload> payload = std::move(conn->tx->deferred_exec);
  if (payload->reply_size > replies->size()) return;
  const size_t begin = replies->size() - payload->reply_size;
  if (!payload->ran) {  // aborted: none runs
    if (payload->drop_reply) replies->resize(begin);
    return;
  }
  const std::string exec_reply = replies->substr(begin);
  replies->resize(begin);
  size_t from = 0, slot = 0;
  for (PreparedCommand& command : payload->commands) {
    if (!(command.spec->flags & kConnection)) continue;
    if (slot >= payload->connection_slots.size()) break;
    const size_t at = payload->connection_slots[slot++];
    replies->append(exec_reply, from, at - from);
    from = at;
    CallRequest request;
    request.spec = command.spec;
    request.argv = &command.argv;
    request.out = replies;
    request.mode = CallMode::kLoop;
    request.db = conn->db;
    request.conn = conn;
    request.in_exec = true;
    Call(server, request);
  }
  replies->append(exec_reply, from, std::string::npos);
  if (payload->drop_reply) replies->resize(begin);  // CLIENT REPLY OFF/SKIP: run, not sent
}

void RunTxCommand(Server& server, storage::WriteGroup* group, PreparedCommand* command,
                  ReplyBudget* budget) {
  TxPayload& payload = *command->tx;
  if (std::string_view(command->spec->name) == "watch") {
    DbScope scope(server.store()->PhysicalDb(command->db));
    RunWatch(server, payload, command->argv, &command->reply);
    return;
  }
  std::unique_ptr<storage::WriteGroup> own;
  if (group == nullptr) {
    own = server.store()->OpenWriteGroup();
    group = own.get();
  }
  RunExec(server, group, payload, &command->reply, budget);
}

}  // namespace rockcache::server
