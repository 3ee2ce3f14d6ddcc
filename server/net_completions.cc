// NetLoop completions: replies coming back from the worker pool (posted by any thread, drained
// by the loop), and the waits of blocked commands (BLPOP...: timers, timeouts). Loop thread
// only, except PostCompletion(s). See server/net_loop.h.
#include <event2/event.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "server/blocking/timeout.h"
#include "server/blocking/wait_registry.h"
#include "server/clock.h"
#include "server/net_loop.h"
#include "server/server.h"
#include "server/tx/transaction.h"

namespace rockcache::server {

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

void NetLoop::DrainCompletions() {
  std::vector<Completion> batch;
  {
    MutexLock lock(&completions_mu_);
    batch.swap(completions_);
  }
  if (!parked_.empty()) SubmitParked();  // the pool just drained some
  for (auto& completion : batch) {
    if (completion.kind == Completion::Kind::kResumePaused) {
      ResumeHeld();
      continue;
    }
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
    // A blocked command sent under CLIENT REPLY OFF/SKIP: whoever ended its wait replied.
    if (completion.unblock != Completion::Unblock::kNone && conn->blocked_reply_dropped) {
      completion.replies.clear();
    }
    conn->output += completion.replies;
    conn->reply_partial = completion.more;
    if (!conn->reply_partial && !conn->held_pushes.empty()) {
      conn->output += conn->held_pushes;
      conn->held_pushes.clear();
    }
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
  if (IsStreamRead(argv[0])) {  // XREAD / XREADGROUP block only with BLOCK <ms>
    const size_t block = StreamReadBlockIndex(argv);
    if (block == 0 || !ParseBlockMillis(argv[block], &ms).empty()) return;
  } else if (!ParseBlockTimeout(argv[BlockTimeoutIndex(argv[0], argv.size())], &ms).empty()) {
    return;  // no waiter: the worker replies the error
  }
  command->waiter = std::make_shared<Waiter>(conn->id, index_, conn->info);
  conn->wait_takes_invalidations = command->spec != nullptr && !(command->spec->flags & kReadOnly);
  command->waiter->protocol = conn->protocol;
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
  conn->blocked_reply_dropped = false;
  conn->wait_takes_invalidations = false;
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

}  // namespace rockcache::server
