// NetLoop dispatch: parses a connection's input and acts on each command's admission
// (server/admission.h) — answered in the loop (cache answers, connection and anywhere commands,
// through Call) or gathered in a batch for the worker pool (group commit, parking when the pool
// is full). Loop thread only. See server/net_loop.h.
#include <event2/event.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "cache/key_locks.h"
#include "pool/worker_pool.h"
#include "server/admission.h"
#include "server/blocking/timeout.h"
#include "server/blocking/wait_registry.h"
#include "server/call.h"
#include "server/clock.h"
#include "server/commands/client_tracking.h"
#include "server/executor.h"
#include "server/net_loop.h"
#include "server/protocol/reply.h"
#include "server/pubsub/subscriptions.h"
#include "server/replication/replication.h"
#include "server/server.h"
#include "server/tx/transaction.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// A parked batch (the pool was saturated) is retried this often, and on every completion.
constexpr timeval kParkedRetry{0, 1000};

// A command for a worker batch; takes the arguments out of *argv and leaves a kept vector from
// `spare` in their place, for the parser to fill again (server/protocol/args_pool.h).
PreparedCommand Prepare(const CommandSpec* spec, int id, Args* argv, bool rtc_missed, int db,
                        Protocol protocol, ArgsPool* spare) {
  PreparedCommand command;
  command.spec = spec;
  command.db = db;
  command.protocol = protocol;
  command.command_id = id;
  command.argv = std::move(*argv);
  command.rtc_missed = rtc_missed;
  *argv = spare->Take();
  return command;
}

// CLIENT REPLY OFF/SKIP for one command of ProcessInput: when the command has been handled,
// drops what it appended to the connection's output and marks what it added to the batch (the
// worker leaves those replies out), then moves SKIP's flag along as Redis's resetClient does.
// A command that is not run in this pass (parsed again later) is disarmed.
class ReplyGate {
 public:
  ReplyGate(Connection* conn, std::vector<PreparedCommand>* batch)
      : conn_(conn), batch_(batch), output_mark_(conn->output.size()), batch_mark_(batch->size()) {}
  ReplyGate(const ReplyGate&) = delete;
  ReplyGate& operator=(const ReplyGate&) = delete;
  ~ReplyGate() {
    if (conn_ == nullptr || !conn_->reply.any()) return;
    Connection::ReplyState& reply = conn_->reply;
    if (reply.off || reply.skip) Drop();
    reply.skip = reply.skip_next;
    reply.skip_next = false;
  }
  // The command was not run (it waits for the batch) or the connection is gone.
  void Disarm() { conn_ = nullptr; }

 private:
  void Drop() {
    if (conn_->output.size() > output_mark_) conn_->output.resize(output_mark_);
    std::vector<PreparedCommand>& batch = *batch_;
    for (size_t i = batch_mark_; i < batch.size(); ++i) {
      PreparedCommand& command = batch[i];
      if (command.spec == nullptr) {  // answered here already (an error, a cache read)
        command.reply.clear();
      } else if (command.tx != nullptr && conn_->tx != nullptr &&
                 conn_->tx->deferred_exec == command.tx) {
        command.tx->drop_reply = true;  // FinishExecInLoop drops it after its queued commands
      } else {
        command.reply_dropped = true;
        if (command.waiter != nullptr) conn_->blocked_reply_dropped = true;
      }
    }
  }

  Connection* conn_;
  std::vector<PreparedCommand>* const batch_;
  const size_t output_mark_;
  const size_t batch_mark_;
};

}  // namespace

void NetLoop::QueueBatch(Connection* conn, std::vector<PreparedCommand> batch, BatchTimes times) {
  // MLFQ (pool/mlfq.h): a client demoted for the execution time it used recently sends its batch
  // alone, at its level, so it never holds up the small batches of a group.
  pool::WorkerPool* pool = server_->worker_pool();
  if (pool->mlfq_enabled()) {
    if (const int level = pool->ClientLevel(conn->id); level > 0) {
      times.level = level;
      std::vector<ConnBatch> alone;
      alone.push_back(ConnBatch{conn->id, std::move(batch), times, ReplyBudget(conn), conn->info});
      SendGroup(std::move(alone), level);
      return;
    }
  }
  // A script may run long (until SCRIPT KILL): its batch goes alone, so it never holds up the
  // batches of other clients that would share its group's worker task. Batches of one script
  // each (script-group-commit) go together, in a group of their own: they share a segment and
  // a commit, and one that runs past script-group-max-usec hands the ones behind it to another
  // task (group_commit.h).
  for (const PreparedCommand& command : batch) {
    if (command.spec != nullptr && (command.spec->flags & kScript)) {
      if (batch.size() == 1 && command.tx == nullptr &&
          server_->settings().script_group_commit.load(std::memory_order_relaxed)) {
        if (pending_group_.empty() && pending_scripts_.empty()) {
          event_active(submit_event_, 0, 0);
        }
        pending_scripts_.push_back(
            ConnBatch{conn->id, std::move(batch), times, ReplyBudget(conn), conn->info});
        return;
      }
      std::vector<ConnBatch> alone;
      alone.push_back(ConnBatch{conn->id, std::move(batch), times, ReplyBudget(conn), conn->info});
      SendGroup(std::move(alone));
      return;
    }
  }
  if (pending_group_.empty() && pending_scripts_.empty()) event_active(submit_event_, 0, 0);
  pending_group_.push_back(
      ConnBatch{conn->id, std::move(batch), times, ReplyBudget(conn), conn->info});
}

void NetLoop::OnSubmitGroup(int, short, void* arg) {
  auto* loop = static_cast<NetLoop*>(arg);
  std::vector<ConnBatch> group;
  group.swap(loop->pending_group_);
  // The next pass is likely as big: room for it at once rather than growing 1, 2, 4...
  loop->pending_group_.reserve(group.size());
  loop->SendGroup(std::move(group));
  // One-script batches go in groups of at most script-group-max-scripts: each group's replies
  // leave when its task ends, while the worker runs the next (with one group for a whole pass,
  // a pass's clients all waited for its last script, and the network thread and the worker
  // took turns: EVALSHA at pipeline 1 ran 20-40% slower, alternated runs).
  std::vector<ConnBatch> scripts;
  scripts.swap(loop->pending_scripts_);
  const size_t most = std::max<uint64_t>(
      1, loop->server_->settings().script_group_max_scripts.load(std::memory_order_relaxed));
  if (scripts.size() <= most) return loop->SendGroup(std::move(scripts));
  for (size_t first = 0; first < scripts.size(); first += most) {
    const size_t end = std::min(scripts.size(), first + most);
    std::vector<ConnBatch> part;
    part.reserve(end - first);
    for (size_t i = first; i < end; ++i) part.push_back(std::move(scripts[i]));
    loop->SendGroup(std::move(part));
  }
}

void NetLoop::SendGroup(std::vector<ConnBatch> group, int level) {
  if (group.empty()) return;
  ++groups_sent_;
  server_->SubmitGroup(index_, std::move(group), level);
}

void NetLoop::ProcessInput(Connection* conn) {
  Server& server = *server_;
  LoopMetrics& metrics = server.metrics().loop(index_);
  std::vector<PreparedCommand> batch;
  // Whether replies from before this pass wait to be written (see the end).
  const bool replies_pending = conn->output_pos < conn->output.size();
  bool blocking = false;  // `batch` ends with a blocking command
  // Whether every command of `batch` only reads (or was answered here): a cache read behind
  // them can still be answered from the cache in this thread (below).
  bool batch_reads_only = true;
  // Behind a batch that writes, a read of other keys is still answered here: what the batch
  // writes is known (written_in_batch_: views into its commands' arguments, which stay where
  // they are while the batch is built) unless a write's keys are not known up front (every key,
  // a script's undeclared keys, a transaction).
  bool batch_writes_unknown = false;
  if (!written_in_batch_.empty()) written_in_batch_.Clear();
  // The first command of a batch with more input behind it (a pipeline) makes room for 16, so
  // the vector does not move its big elements at 1, 2, 4 and 8.
  auto add = [&](size_t pos, size_t input_size, PreparedCommand&& command) {
    if (batch.empty() && pos < input_size) batch.reserve(16);
    batch.push_back(std::move(command));
    const PreparedCommand& added = batch.back();
    const uint32_t flags = added.spec->flags;
    if (flags & kReadOnly) return;
    batch_reads_only = false;
    if (batch_writes_unknown) return;
    if (!(flags & kWrite) || (flags & (kAllKeys | kScript))) {
      batch_writes_unknown = true;
      return;
    }
    command_keys_.clear();
    AppendCommandKeys(*added.spec, added.argv, &command_keys_);
    if (command_keys_.empty()) {  // a write whose keys the table cannot name
      batch_writes_unknown = true;
      return;
    }
    written_in_batch_.Insert(command_keys_.begin(), command_keys_.end());
  };
  // Whether a read of argv's keys may be answered before the batch (AdmissionState).
  auto batch_spares_keys = [&](const CommandSpec* spec, const Args& argv) {
    if (batch_reads_only) return true;
    if (batch_writes_unknown || spec == nullptr || !(spec->flags & kCacheRead)) return false;
    command_keys_.clear();
    AppendCommandKeys(*spec, argv, &command_keys_);
    for (std::string_view key : command_keys_) {
      if (written_in_batch_.Contains(key)) return false;
    }
    return true;
  };
  // Bytes of the replies answered here but carried in `batch` (below), for the output limit.
  uint64_t carried_reply_bytes = 0;
  Args& argv = conn->argv;
  uint64_t commands = 0;
  uint64_t rtc_answers = 0;
  int64_t now_ms = 0;  // read once, on the first cache lookup of this pass
  // Not while a replica refuses stale reads: they must reach Call, which refuses them.
  const bool rtc_reads = server.settings().rtc_reads.load(std::memory_order_relaxed) &&
                         !server.replication().RefusesStaleReads();
  const scripting::Scripting& scripting = server.scripting();
  const ClientPause& client_pause = server.clients().pause();
  const uint64_t storage_read_max =
      server.settings().rtc_storage_read_max_bytes.load(std::memory_order_relaxed);
  uint64_t storage_fills = 0;
  bool tried_storage = false;  // a miss was tried against RocksDB's memory
  // The first misses of this pass may read mapped file pages here (one RocksDB Get each, no
  // thread hop: a lone GET's whole latency); the rest of a pipeline's misses go to a worker,
  // which reads them while this thread goes on parsing and answering — unless the pool is still
  // running a group this loop sent (rtc-storage-read-balance): then this thread reads them too,
  // so neither thread waits for the other while there are misses to read.
  const uint64_t mapped_read_limit =
      server.settings().rtc_storage_read_mapped.load(std::memory_order_relaxed);
  const bool read_balance =
      server.settings().rtc_storage_read_balance.load(std::memory_order_relaxed);
  uint64_t mapped_reads = 0;
  // Every command parsed in this pass shares one "parsed" stamp; a command run here starts
  // where the previous one ended, so timing costs one clock read per command.
  const bool timed = server.settings().latency_tracking.load(std::memory_order_relaxed);
  const uint64_t parsed = timed ? Clock::Now() : 0;
  uint64_t start = parsed;
  const uint64_t output_limit =
      server.settings().client_output_buffer_limit.load(std::memory_order_relaxed);
  bool over_output_limit = false;
  // Bytes of conn->input parsed in this pass; dropped from the buffer only at the end, so a
  // command that must wait for this pass's batch can be parsed again from command_start.
  size_t pos = 0;
  const char* const input = conn->input.data();
  const size_t input_size = conn->input.size();
  while (!conn->in_flight && !conn->close_after_reply && pos < input_size) {
    // Answers given here (cache hits, in-loop commands) past the hard output limit: the client
    // is closed, as Redis closes a client whose replies pass the limit within one pass. Keeps a
    // pipeline of big cached values from growing the buffer without bound before a Flush.
    if (output_limit > 0 &&
        conn->output.size() - conn->output_pos + carried_reply_bytes > output_limit) {
      over_output_limit = true;
      break;
    }
    const size_t command_start = pos;
    size_t consumed = 0;
    conn->parser.set_unauthenticated(!conn->authenticated);
    RespParser::Result result = conn->parser.Parse(input + pos, input_size - pos, &consumed, &argv);
    pos += consumed;
    if (result == RespParser::Result::kNeedMore) break;
    if (result == RespParser::Result::kError) {
      if (!batch.empty()) {
        // Answer the commands before it first; the error is parsed again afterwards.
        pos = command_start;
        break;
      }
      spdlog::debug("client id={} protocol error: {}", conn->id, conn->parser.error());
      AppendError(&conn->output, "ERR " + conn->parser.error());
      metrics.RecordError("ERR");
      conn->close_after_reply = true;
      break;
    }
    ++commands;
    ReplyGate reply_gate(conn, &batch);
    // Replies written here (the loop, the cache) take the connection's protocol as of this
    // command: a HELLO earlier in the pass has changed it.
    ReplyProtocolScope protocol(conn->protocol);
    int id = -1;
    const CommandSpec* spec = FindCommand(argv[0], &id);
    conn->info->last_command.store(CommandRefOf(spec, id, argv), std::memory_order_relaxed);
    // CLIENT PAUSE: a held command is parsed again when the pause ends; one relaxed load
    // while no pause is in effect. Behind a batch of this pass, it waits for the batch first.
    if (client_pause.maybe_active() && PauseHolds(conn, spec)) {
      pos = command_start;
      --commands;
      reply_gate.Disarm();
      if (batch.empty()) HoldForPause(conn);
      break;
    }
    const bool script_reads_tracked = conn->tracking.on && spec != nullptr &&
                                      NoteTrackedRead(server.tracking(), conn, *spec, argv);
    if (ForTransaction(spec, conn->tx_multi())) {
      const size_t batched = batch.size();
      TxInLoop handled = TransactionInLoop(server, conn, spec, id, argv, &batch);
      if (batch.size() != batched) {  // EXEC: a transaction's writes
        batch_reads_only = false;
        batch_writes_unknown = true;
      }
      if (handled == TxInLoop::kClose) {
        reply_gate.Disarm();
        spdlog::warn(
            "closing client id={} addr={}: queued transaction over client-query-buffer-limit",
            conn->id, conn->info->addr);
        CloseConnection(conn);
        return;
      }
      if (handled == TxInLoop::kHandled) continue;
      if (handled == TxInLoop::kHandledLast) break;  // the rest waits for EXEC's batch
    }
    AdmissionState state;
    state.authenticated = conn->authenticated;
    state.subscribed = conn->pubsub != nullptr && conn->protocol == Protocol::kResp2;
    state.batch_empty = batch.empty();
    state.batch_spares_keys = state.batch_empty || batch_spares_keys(spec, argv);
    state.rtc_reads = rtc_reads;
    state.loop_subcommand = InLoopSubcommand(spec, argv);
    const Route route = Admit(spec, argv.size(), state);
    // Answered in the loop: the reply was appended to *out from reply_start.
    auto answered_here = [&](const std::string& out, size_t reply_start, bool from_cache) {
      const uint64_t end = timed ? Clock::Now() : 0;
      RecordInLoop(conn, id, argv, from_cache, out.data() + reply_start, out.size() - reply_start,
                   parsed, start, end);
      start = end;
    };
    // A command answered with an error here: in order with the batch (a command with no spec).
    auto reject = [&](std::string error) {
      if (spec != nullptr) metrics.RecordRejected(id);
      metrics.RecordError(ErrorCode(error.data(), error.size()));
      if (batch.empty()) {
        conn->output += error;
      } else {
        PreparedCommand rejected;
        rejected.reply = std::move(error);
        batch.push_back(std::move(rejected));
      }
    };
    // Hands the command to this pass's batch, unless a script that has run past
    // busy-reply-threshold holds its keys: then -BUSY, as Redis, rather than a worker waiting
    // for the lock (one relaxed load while no script runs).
    auto to_pool = [&](bool rtc_missed) {
      if (scripting.units_running() && KeysBusy(*spec, argv)) {
        reject(std::string(kReplyBusy));
        return false;
      }
      add(pos, input_size,
          Prepare(spec, id, &argv, rtc_missed, conn->db, conn->protocol, &spare_args_));
      batch.back().track_script_reads = script_reads_tracked;
      return true;
    };
    switch (route) {
      case Route::kUnknownCommand:
      case Route::kWrongArity:
      case Route::kNoAuth: {
        std::string error;
        if (route == Route::kUnknownCommand) {
          AppendUnknownCommand(&error, argv);
        } else if (route == Route::kWrongArity) {
          AppendArityError(&error, argv[0]);
        } else {
          error = "-NOAUTH Authentication required.\r\n";
        }
        reject(std::move(error));
        continue;
      }
      case Route::kSubscribedReply: {
        const size_t reply_start = conn->output.size();
        AnswerInSubscribedMode(*spec, argv, &conn->output);
        answered_here(conn->output, reply_start, false);
        continue;
      }
      case Route::kAfterBatch:
        pos = command_start;  // parsed again once the batch's replies are back
        --commands;
        reply_gate.Disarm();
        break;
      case Route::kLoop: {
        const size_t reply_start = conn->output.size();
        CallRequest request;
        request.spec = spec;
        request.argv = &argv;
        request.out = &conn->output;
        request.mode = CallMode::kLoop;
        request.db = conn->db;
        // A kConnection command gets its connection; a kAnywhere one runs as on any thread.
        if (spec->flags & kConnection) request.conn = conn;
        Call(server, request);
        answered_here(conn->output, reply_start, false);
        continue;
      }
      case Route::kCache:
      case Route::kCacheBehindBatch: {
        // Run to completion: a read the cache holds (or RocksDB's memory, for a string read) is
        // answered here, with no thread hop. Behind a batch, its reply is carried in the batch
        // (a command with no spec, as a rejected one) to keep the order, so the worker runs only
        // the rest. Answering it before the commands queued ahead of it is a valid order: they
        // do not write its keys (admission), pipelined commands are concurrent operations for
        // the client (none waits for another's reply), and the read still sees every write
        // acknowledged before it was sent.
        if (now_ms == 0) now_ms = NowUnixMs();
        const bool carried = route == Route::kCacheBehindBatch;
        PreparedCommand answered;
        std::string* out = carried ? &answered.reply : &conn->output;
        const size_t reply_start = out->size();
        bool done = TryAnswerFromCache(server, *spec, argv, now_ms, out, conn->db);
        if (!done && storage_read_max > 0 && (spec->flags & kStringRead)) {
          const bool mapped = mapped_reads < mapped_read_limit || (read_balance && PoolBehind());
          MemoryReadGate& gate = mapped ? mapped_gate_ : memory_gate_;
          if (gate.ShouldTry()) {
            tried_storage = true;
            if (mapped) ++mapped_reads;
            done = TryAnswerFromMemory(server, *spec, argv, now_ms, out, conn->db, storage_read_max,
                                       mapped ? storage::MemoryReach::kResidentFiles
                                              : storage::MemoryReach::kRocksDbCaches);
            gate.Record(done);
            if (done) ++storage_fills;  // a miss filled from memory: no thread hop
          }
        }
        if (!done) {
          to_pool(/*rtc_missed=*/true);
          continue;
        }
        ++rtc_answers;
        answered_here(*out, reply_start, true);
        if (carried) {
          carried_reply_bytes += answered.reply.size();
          batch.push_back(std::move(answered));
        }
        continue;
      }
      case Route::kBlocking:
        // Alone in its batch, and nothing after it runs until it is answered (as Redis).
        if (!to_pool(/*rtc_missed=*/false)) continue;
        BeginWait(conn, &batch.back());
        blocking = true;
        break;
      case Route::kPool:
        to_pool(/*rtc_missed=*/false);
        continue;
    }
    break;  // kAfterBatch, kBlocking: nothing more is parsed in this pass
  }
  LoopCounters::Add(&counters_->commands, commands);
  if (rtc_answers > 0) LoopCounters::Add(&counters_->rtc_answers, rtc_answers);
  if (storage_fills > 0) LoopCounters::Add(&counters_->rtc_storage_fills, storage_fills);
  if (tried_storage) {
    counters_->rtc_resident_checks.store(storage::ResidencyChecksOfThisThread(),
                                         std::memory_order_relaxed);
  }
  if (over_output_limit) {  // no batch can be pending: answers here happen only before one
    spdlog::warn(
        "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
        conn->id, conn->info->addr);
    CloseConnection(conn);
    return;
  }
  conn->input.Consume(pos);
  conn->input.ShrinkIfEmpty(kKeepInput);
  if (CloseIfOverQueryLimit(conn)) return;
  conn->info->query_buffer_bytes.store(conn->input.size() + conn->parser.held_bytes(),
                                       std::memory_order_relaxed);
  if (!batch.empty()) {
    BatchTimes times;
    times.parsed = parsed;
    SubmitOrPark(conn, std::move(batch), times);
    // The replies answered here wait for a batch of reads (a pipeline's cache misses) and go
    // out with its replies in one write (the completion's pass flushes): one system call and
    // one wakeup of the client fewer per pipeline, as Redis writes a pass's replies after all
    // its commands ran. Not ahead of writes, a transaction or a script (they may take long,
    // and a client may be waiting for the replies before them), nor of a blocking command, nor
    // when older replies are waiting already.
    if (batch_reads_only && !blocking && !replies_pending) return;
  }
  Flush(conn);
}

// Whether a script that has run past busy-reply-threshold holds a key of the command (every key,
// for FLUSHALL and the like). Only called while a script runs.
bool NetLoop::KeysBusy(const CommandSpec& spec, const Args& argv) const {
  const int64_t threshold =
      server_->settings().busy_reply_threshold_ms.load(std::memory_order_relaxed);
  const int64_t now = NowUnixMs();
  if (spec.flags & kAllKeys) return server_->scripting().AnyRunningSince(now - threshold);
  const std::vector<std::string_view> keys = CommandKeys(spec, argv);
  if (keys.empty()) return false;
  return server_->scripting().BusyFor(server_->key_locks().StripesOf(keys), now, threshold);
}

// The bytes a batch's replies may take: what the hard output-buffer limit leaves of the
// connection's pending replies (the worker stops the batch past it).
uint64_t NetLoop::ReplyBudget(const Connection* conn) const {
  const uint64_t hard =
      server_->settings().client_output_buffer_limit.load(std::memory_order_relaxed);
  const uint64_t pending = conn->output.size() - conn->output_pos;
  return hard == 0 ? UINT64_MAX : (hard > pending ? hard - pending : 0);
}

// The one place a loop hands work to the pool. Never waits: when the pool is saturated (or
// earlier batches are parked already, to keep them first in line) the batch is parked on the
// connection and reading from it stops until the batch has run.
void NetLoop::SubmitOrPark(Connection* conn, std::vector<PreparedCommand> batch, BatchTimes times) {
  conn->in_flight = true;
  // Groups go to the pool with hint 0 (any list): a connection has one batch in flight at most,
  // so its order does not depend on the list. A group holds at most pool-queue-max-size batches,
  // so backpressure still bounds the batches admitted (not only the tasks).
  pool::WorkerPool* pool = server_->worker_pool();
  if (parked_.empty() &&
      pending_group_.size() + pending_scripts_.size() < static_cast<size_t>(pool->QueueMaxSize()) &&
      pool->HasRoom(0)) {
    QueueBatch(conn, std::move(batch), times);
    return;
  }
  LoopCounters::Add(&counters_->parked_batches, 1);
  conn->parked = true;
  conn->parked_batch = std::move(batch);
  conn->parked_times = times;
  if (!conn->reading_paused) {
    event_del(conn->read_event);
    conn->reading_paused = true;
  }
  parked_.push_back(conn->id);
  if (!evtimer_pending(retry_event_, nullptr)) evtimer_add(retry_event_, &kParkedRetry);
}

void NetLoop::SubmitParked() {
  while (!parked_.empty()) {
    auto it = connections_.find(parked_.front());
    if (it == connections_.end() || !it->second->parked) {  // closed meanwhile
      parked_.pop_front();
      continue;
    }
    Connection* conn = it->second.get();
    pool::WorkerPool* pool = server_->worker_pool();
    if (pending_group_.size() + pending_scripts_.size() >=
            static_cast<size_t>(pool->QueueMaxSize()) ||
        !pool->HasRoom(0)) {
      break;
    }
    parked_.pop_front();
    conn->parked = false;
    QueueBatch(conn, std::move(conn->parked_batch), conn->parked_times);
    conn->parked_batch.clear();
  }
  if (!parked_.empty() && !evtimer_pending(retry_event_, nullptr)) {
    evtimer_add(retry_event_, &kParkedRetry);
  }
}

void NetLoop::OnRetryParked(int, short, void* arg) { static_cast<NetLoop*>(arg)->SubmitParked(); }

}  // namespace rockcache::server
