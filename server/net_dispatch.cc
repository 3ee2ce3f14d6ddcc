// NetLoop dispatch: where each parsed command runs — in the loop (cache answers, connection and
// anywhere commands) or in a batch for the worker pool (group commit, parking when the pool is
// full) — and the completions that bring replies back. Loop thread only, except
// PostCompletion(s) (any thread). See server/net_loop.h.
#include <event2/event.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "pool/worker_pool.h"
#include "server/blocking/timeout.h"
#include "server/blocking/wait_registry.h"
#include "server/clock.h"
#include "server/net_loop.h"
#include "server/protocol/reply.h"
#include "server/pubsub/subscriptions.h"
#include "server/server.h"
#include "server/tx/transaction.h"

namespace rockcache::server {
namespace {

// A parked batch (the pool was saturated) is retried this often, and on every completion.
constexpr timeval kParkedRetry{0, 1000};

// A command for a worker batch; takes the arguments out of *argv and leaves a kept vector from
// `spare` in their place, for the parser to fill again (server/protocol/args_pool.h).
PreparedCommand Prepare(const CommandSpec* spec, int id, Args* argv, bool rtc_missed, int db,
                        ArgsPool* spare) {
  PreparedCommand command;
  command.spec = spec;
  command.db = db;
  command.command_id = id;
  command.argv = std::move(*argv);
  command.rtc_missed = rtc_missed;
  *argv = spare->Take();
  return command;
}

}  // namespace

void NetLoop::PostCompletion(Completion completion) {
  bool was_empty;
  {
    MutexLock lock(&completions_mu_);
    was_empty = completions_.empty();
    completions_.push_back(std::move(completion));
  }
  if (was_empty) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
}

void NetLoop::PostCompletions(std::vector<Completion> completions) {
  if (completions.empty()) return;
  bool was_empty;
  {
    MutexLock lock(&completions_mu_);
    was_empty = completions_.empty();
    if (was_empty) {
      completions_.swap(completions);
    } else {
      for (auto& c : completions) completions_.push_back(std::move(c));
    }
  }
  if (was_empty) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
}

void NetLoop::QueueBatch(Connection* conn, std::vector<PreparedCommand> batch, BatchTimes times) {
  // MLFQ (pool/mlfq.h): a client demoted for the execution time it used recently sends its batch
  // alone, at its level, so it never holds up the small batches of a group.
  pool::WorkerPool* pool = server_->worker_pool();
  if (pool->mlfq_enabled()) {
    if (const int level = pool->ClientLevel(conn->id); level > 0) {
      times.level = level;
      std::vector<ConnBatch> alone;
      alone.push_back(ConnBatch{conn->id, std::move(batch), times, ReplyBudget(conn), conn->info});
      server_->SubmitGroup(index_, std::move(alone), level);
      return;
    }
  }
  if (pending_group_.empty()) event_active(submit_event_, 0, 0);
  pending_group_.push_back(
      ConnBatch{conn->id, std::move(batch), times, ReplyBudget(conn), conn->info});
}

void NetLoop::OnSubmitGroup(int, short, void* arg) {
  auto* loop = static_cast<NetLoop*>(arg);
  std::vector<ConnBatch> group;
  group.swap(loop->pending_group_);
  // The next pass is likely as big: room for it at once rather than growing 1, 2, 4...
  loop->pending_group_.reserve(group.size());
  loop->server_->SubmitGroup(loop->index_, std::move(group));
}

void NetLoop::ProcessInput(Connection* conn) {
  Server& server = *server_;
  LoopMetrics& metrics = server.metrics().loop(index_);
  std::vector<PreparedCommand> batch;
  // Whether every command of `batch` only reads (or was answered here): a cache read behind
  // them can still be answered from the cache in this thread (below).
  bool batch_reads_only = true;
  // The first command of a batch with more input behind it (a pipeline) makes room for 16, so
  // the vector does not move its big elements at 1, 2, 4 and 8.
  auto add = [&batch, &batch_reads_only](size_t pos, size_t input_size, PreparedCommand&& command) {
    if (batch.empty() && pos < input_size) batch.reserve(16);
    if (command.spec == nullptr || !(command.spec->flags & kReadOnly)) batch_reads_only = false;
    batch.push_back(std::move(command));
  };
  // Bytes of the replies answered here but carried in `batch` (below), for the output limit.
  uint64_t carried_reply_bytes = 0;
  Args& argv = conn->argv;
  uint64_t commands = 0;
  uint64_t rtc_answers = 0;
  int64_t now_ms = 0;  // read once, on the first cache lookup of this pass
  const bool rtc_reads = server.settings().rtc_reads.load(std::memory_order_relaxed);
  const uint64_t storage_read_max =
      server.settings().rtc_storage_read_max_bytes.load(std::memory_order_relaxed);
  uint64_t storage_fills = 0;
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
    int id = -1;
    const CommandSpec* spec = FindCommand(argv[0], &id);
    conn->info->last_command.store(CommandRefOf(spec, id, argv), std::memory_order_relaxed);
    if (conn->tx_multi() || (spec != nullptr && (spec->flags & kTransaction))) {
      const size_t batched = batch.size();
      TxInLoop handled = TransactionInLoop(server, conn, spec, id, argv, &batch);
      if (batch.size() != batched) batch_reads_only = false;
      if (handled == TxInLoop::kClose) {
        spdlog::warn(
            "closing client id={} addr={}: queued transaction over client-query-buffer-limit",
            conn->id, conn->info->addr);
        CloseConnection(conn);
        return;
      }
      if (handled == TxInLoop::kHandled) continue;
      if (handled == TxInLoop::kHandledLast) break;  // the rest waits for EXEC's batch
    }
    std::string error;
    if (spec == nullptr) {
      AppendUnknownCommand(&error, argv);
    } else if (!ArityOk(*spec, argv.size())) {
      AppendArityError(&error, argv[0]);
    } else if (!conn->authenticated && !(spec->flags & kNoAuth)) {
      error = "-NOAUTH Authentication required.\r\n";
    }
    if (!error.empty()) {
      if (spec != nullptr) metrics.RecordRejected(id);
      metrics.RecordError(ErrorCode(error.data(), error.size()));
      if (batch.empty()) {
        conn->output += error;
      } else {
        PreparedCommand rejected;
        rejected.reply = std::move(error);
        batch.push_back(std::move(rejected));
      }
      continue;
    }
    if (conn->pubsub != nullptr) {  // RESP2 subscribed mode: an error, or PING's ["pong", arg]
      const size_t reply_start = conn->output.size();
      if (AnswerInSubscribedMode(*spec, argv, &conn->output)) {
        const uint64_t end = timed ? Clock::Now() : 0;
        RecordInLoop(conn, id, argv, false, conn->output.data() + reply_start,
                     conn->output.size() - reply_start, parsed, start, end);
        start = end;
        continue;
      }
    }
    if (spec->flags & kConnection) {
      if (!batch.empty()) {
        pos = command_start;  // runs after the batch's replies are back
        --commands;
        break;
      }
      size_t reply_start = conn->output.size();
      RunConnectionCommand(conn, *spec, argv);
      uint64_t end = timed ? Clock::Now() : 0;
      RecordInLoop(conn, id, argv, false, conn->output.data() + reply_start,
                   conn->output.size() - reply_start, parsed, start, end);
      start = end;
      continue;
    }
    if ((spec->flags & kCacheRead) && !batch.empty() && batch_reads_only && rtc_reads) {
      // A cache read behind a miss of the same pipeline: answered from the cache now, its reply
      // carried in the batch (a command with no spec, as a rejected one) to keep the order, so
      // the worker runs only the misses. Only while the batch holds reads: a read behind a
      // write of this connection must see the write. Answering it before the reads queued
      // ahead of it is a valid order: pipelined reads are concurrent operations for the client
      // (none waits for another's reply), and each still reads a value no older than every
      // write acknowledged before it was sent.
      if (now_ms == 0) now_ms = NowUnixMs();
      PreparedCommand answered;
      if (TryAnswerFromCache(server, *spec, argv, now_ms, &answered.reply, conn->db)) {
        ++rtc_answers;
        const uint64_t end = timed ? Clock::Now() : 0;
        RecordInLoop(conn, id, argv, true, answered.reply.data(), answered.reply.size(), parsed,
                     start, end);
        start = end;
        carried_reply_bytes += answered.reply.size();
        batch.push_back(std::move(answered));
        continue;
      }
      add(pos, input_size, Prepare(spec, id, &argv, /*rtc_missed=*/true, conn->db, &spare_args_));
      continue;
    }
    if ((spec->flags & kCacheRead) && batch.empty() && rtc_reads) {
      // Run to completion: a read the cache holds is answered here, with no thread hop.
      if (now_ms == 0) now_ms = NowUnixMs();
      size_t reply_start = conn->output.size();
      bool answered = TryAnswerFromCache(server, *spec, argv, now_ms, &conn->output, conn->db);
      if (!answered && storage_read_max > 0 && (spec->flags & kStringRead) &&
          memory_gate_.ShouldTry()) {
        answered = TryAnswerFromMemory(server, *spec, argv, now_ms, &conn->output, conn->db,
                                       storage_read_max);
        memory_gate_.Record(answered);
        if (answered) ++storage_fills;  // a miss filled from RocksDB's memory: no thread hop
      }
      if (answered) {
        ++rtc_answers;
        uint64_t end = timed ? Clock::Now() : 0;
        RecordInLoop(conn, id, argv, true, conn->output.data() + reply_start,
                     conn->output.size() - reply_start, parsed, start, end);
        start = end;
        continue;
      }
      add(pos, input_size, Prepare(spec, id, &argv, /*rtc_missed=*/true, conn->db, &spare_args_));
      continue;
    }
    if ((spec->flags & kAnywhere) && batch.empty()) {
      CommandContext ctx{&server, nullptr, nullptr};
      ctx.db = conn->db;
      size_t reply_start = conn->output.size();
      spec->handler(ctx, argv, &conn->output);
      uint64_t end = timed ? Clock::Now() : 0;
      RecordInLoop(conn, id, argv, false, conn->output.data() + reply_start,
                   conn->output.size() - reply_start, parsed, start, end);
      start = end;
      continue;
    }
    if (spec->flags & kMayBlock) {
      // Alone in its batch, and nothing after it runs until it is answered (as Redis).
      if (!batch.empty()) {
        pos = command_start;
        --commands;
        break;
      }
      add(pos, input_size, Prepare(spec, id, &argv, /*rtc_missed=*/false, conn->db, &spare_args_));
      BeginWait(conn, &batch.back());
      break;
    }
    add(pos, input_size, Prepare(spec, id, &argv, /*rtc_missed=*/false, conn->db, &spare_args_));
  }
  LoopCounters::Add(&counters_->commands, commands);
  if (rtc_answers > 0) LoopCounters::Add(&counters_->rtc_answers, rtc_answers);
  if (storage_fills > 0) LoopCounters::Add(&counters_->rtc_storage_fills, storage_fills);
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
  }
  Flush(conn);
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
  if (parked_.empty() && pending_group_.size() < static_cast<size_t>(pool->QueueMaxSize()) &&
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
    if (pending_group_.size() >= static_cast<size_t>(pool->QueueMaxSize()) || !pool->HasRoom(0)) {
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

void NetLoop::DrainCompletions() {
  std::vector<Completion> batch;
  {
    MutexLock lock(&completions_mu_);
    batch.swap(completions_);
  }
  if (!parked_.empty()) SubmitParked();  // the pool just drained some
  for (auto& completion : batch) {
    auto it = connections_.find(completion.conn_id);
    if (it == connections_.end()) continue;  // closed while its batch was in flight
    Connection* conn = it->second.get();
    if (completion.slice_bytes > 0) {
      conn->info->slice_queued_bytes.fetch_sub(completion.slice_bytes, std::memory_order_relaxed);
    }
    if (completion.kind == Completion::Kind::kClose) {
      CloseConnection(conn);
      continue;
    }
    if (completion.kind == Completion::Kind::kKill) {
      if (conn->in_flight && conn->waiter == nullptr) {
        conn->close_after_reply = true;  // closes when the batch returns
      } else {
        CloseConnection(conn);
      }
      continue;
    }
    if (completion.close_client) {  // the batch passed the output-buffer limit
      spdlog::warn(
          "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer "
          "limits.",
          conn->id, conn->info->addr);
      CloseConnection(conn);
      continue;
    }
    // The batch that ended with a deferred EXEC is back (the last completion of a batch: not a
    // chunk of a sliced read, no commands left after one): its queued kConnection commands.
    if (!completion.more && completion.rest.empty() && conn->tx != nullptr &&
        conn->tx->deferred_exec != nullptr) {
      FinishExecInLoop(*server_, conn, &completion.replies);
    }
    conn->output += completion.replies;
    if (completion.more) {  // a chunk of a sliced read: still in flight, parse nothing more
      if (!completion.commands.empty()) {
        RecordBatch(conn, completion, completion.times.parsed != 0 ? Clock::Now() : 0);
      }
      Flush(conn);  // applies the output-buffer limits to what is pending
      continue;
    }
    if (!completion.rest.empty() &&
        !conn->close_after_reply) {  // the batch's commands after a sliced read
      if (!completion.commands.empty()) {
        RecordBatch(conn, completion, completion.times.parsed != 0 ? Clock::Now() : 0);
      }
      BatchTimes times;
      times.parsed = completion.times.parsed;
      SubmitOrPark(conn, std::move(completion.rest), times);
      Flush(conn);
      continue;
    }
    conn->in_flight = false;
    if (conn->waiter != nullptr) {
      if (completion.unblock != Completion::Unblock::kNone) RecordUnblocked(conn, completion);
      EndWait(conn);
    }
    if (!completion.commands.empty()) {
      RecordBatch(conn, completion, completion.times.parsed != 0 ? Clock::Now() : 0);
    }
    if (conn->reading_paused) {
      event_add(conn->read_event, nullptr);
      conn->reading_paused = false;
    }
    if (conn->close_after_reply) {
      Flush(conn);
      continue;
    }
    for (PreparedCommand& command : completion.commands) spare_args_.Keep(std::move(command.argv));
    ProcessInput(conn);  // resumes parsing; flushes
  }
}

void NetLoop::BeginWait(Connection* conn, PreparedCommand* command) {
  const Args& argv = command->argv;
  int64_t ms = 0;
  if (!ParseBlockTimeout(argv[BlockTimeoutIndex(argv[0], argv.size())], &ms).empty()) {
    return;  // no waiter: the worker replies the error
  }
  command->waiter = std::make_shared<Waiter>(conn->id, index_, conn->info);
  conn->waiter = command->waiter;
  conn->blocked_command_id = command->command_id;
  conn->blocked_argv = command->argv;
  constexpr int64_t kMaxTimerSec = 100LL * 365 * 24 * 3600;  // longer ones never fire anyway
  if (ms == 0 || ms / 1000 > kMaxTimerSec) return;
  if (conn->wait_timer == nullptr) {
    conn->wait_timer = evtimer_new(base_, &NetLoop::OnWaitTimeout, conn);
  }
  timeval after{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  evtimer_add(conn->wait_timer, &after);
}

void NetLoop::EndWait(Connection* conn) {
  if (conn->wait_timer != nullptr) evtimer_del(conn->wait_timer);
  conn->waiter.reset();
  conn->blocked_argv.clear();
}

void NetLoop::OnWaitTimeout(int, short, void* arg) {
  auto* conn = static_cast<Connection*>(arg);
  conn->loop->WaitTimedOut(conn);
}

void NetLoop::WaitTimedOut(Connection* conn) {
  if (conn->waiter == nullptr || !server_->blocking().TimeOut(conn->waiter.get())) return;
  Completion completion;  // handled like any reply, after what is queued already
  completion.conn_id = conn->id;
  completion.replies = std::string(conn->waiter->NullReply());
  completion.unblock = Completion::Unblock::kTimedOut;
  PostCompletion(std::move(completion));
}

void NetLoop::RunConnectionCommand(Connection* conn, const CommandSpec& spec, Args& argv) {
  CommandContext ctx{server_, nullptr, conn};
  ctx.db = conn->db;
  spec.handler(ctx, argv, &conn->output);
}

}  // namespace rockcache::server
