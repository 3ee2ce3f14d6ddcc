// NetLoop metrics: per-command samples and slow-log entries for commands run in the loop and
// for batches back from the pool. Loop thread only.
#include "server/clock.h"
#include "server/net_loop.h"
#include "server/protocol/reply.h"
#include "server/server.h"

namespace rockcache::server {
namespace {

// For INFO keyspace_hits/misses: a single-key read counts as a hit unless it replied nil.
int KeyspaceResult(int command_id, bool nil_reply) {
  if (command_id < 0) return 0;
  const CommandSpec* spec = AllCommands()[static_cast<size_t>(command_id)];
  if (!(spec->flags & kReadOnly) || spec->first_key <= 0 || spec->last_key != spec->first_key) {
    return 0;
  }
  return nil_reply ? -1 : 1;
}

}  // namespace

void NetLoop::RecordInLoop(Connection* conn, int command_id, const Args& argv, bool rtc,
                           const char* reply, size_t reply_length, uint64_t parsed, uint64_t start,
                           uint64_t end) {
  CommandSample sample;
  sample.command_id = command_id;
  sample.in_loop = true;
  sample.rtc = rtc;
  sample.failed = reply_length > 0 && reply[0] == '-';
  sample.keyspace = sample.failed ? 0 : KeyspaceResult(command_id, IsNilReply(reply, reply_length));
  if (sample.failed) server_->metrics().loop(index_).RecordError(ErrorCode(reply, reply_length));
  if (parsed != 0) {
    sample.stage_ns[kExecute] = Clock::NanosBetween(start, end);
    sample.stage_ns[kTotal] = Clock::NanosBetween(parsed, end);
  }
  server_->metrics().loop(index_).Record(sample);
  uint64_t total_us = sample.stage_ns[kTotal] / 1000;
  const Settings& settings = server_->settings();
  if (parsed != 0 && server_->slowlog().ShouldLog(total_us, settings.slowlog_log_slower_than)) {
    SlowLogEntry entry;
    entry.unix_time = NowUnixMs() / 1000;
    entry.duration_us = total_us;
    entry.args = SlowLog::TruncateArgs(argv);
    entry.client_addr = conn->info->addr;
    entry.client_name = conn->info->name();
    entry.stage_us[kExecute] = sample.stage_ns[kExecute] / 1000;
    entry.stage_us[kTotal] = total_us;
    entry.in_loop = true;
    server_->slowlog().Add(std::move(entry), static_cast<size_t>(settings.slowlog_max_len.load()));
  }
}

void NetLoop::RecordBatch(Connection* conn, const Completion& completion, uint64_t written) {
  LoopMetrics& metrics = server_->metrics().loop(index_);
  const BatchTimes& times = completion.times;
  const Settings& settings = server_->settings();
  int64_t slow_us = settings.slowlog_log_slower_than.load(std::memory_order_relaxed);
  for (const auto& command : completion.commands) {
    if (command.spec == nullptr) continue;  // rejected: counted when parsed
    if (command.failed) metrics.RecordError(command.error_code);
    CommandSample sample;
    sample.command_id = command.command_id;
    sample.failed = command.failed;
    sample.keyspace = command.failed ? 0 : KeyspaceResult(command.command_id, command.nil_reply);
    if (times.parsed != 0 && command.exec_end != 0) {
      sample.stage_ns[kBeforeQueue] = Clock::NanosBetween(times.parsed, times.enqueued);
      sample.stage_ns[kQueueWait] = Clock::NanosBetween(times.enqueued, times.dequeued);
      sample.stage_ns[kExecute] = Clock::NanosBetween(command.exec_start, command.exec_end);
      sample.stage_ns[kHandBack] = Clock::NanosBetween(command.exec_end, written);
      sample.stage_ns[kTotal] = Clock::NanosBetween(times.parsed, written);
    }
    metrics.Record(sample);
    for (const NestedCall& call : command.nested) {  // a script's commands, as Redis counts them
      CommandSample nested;
      nested.command_id = call.command_id;
      nested.in_loop = true;  // execute (and total) only: they ran inside the script
      nested.failed = call.failed;
      nested.stage_ns[kExecute] = call.exec_ns;
      nested.stage_ns[kTotal] = call.exec_ns;
      metrics.Record(nested);
    }
    uint64_t total_us = sample.stage_ns[kTotal] / 1000;
    if (times.parsed != 0 && server_->slowlog().ShouldLog(total_us, slow_us)) {
      SlowLogEntry entry;
      entry.unix_time = NowUnixMs() / 1000;
      entry.duration_us = total_us;
      entry.args = SlowLog::TruncateArgs(command.argv);
      entry.client_addr = conn->info->addr;
      entry.client_name = conn->info->name();
      for (int s = 0; s < kStageCount; ++s) entry.stage_us[s] = sample.stage_ns[s] / 1000;
      entry.level = times.level;
      entry.slices = command.slices;
      entry.slices_queue_wait_us =
          (sample.stage_ns[kQueueWait] + command.later_slices_queue_wait_ns) / 1000;
      server_->slowlog().Add(std::move(entry),
                             static_cast<size_t>(settings.slowlog_max_len.load()));
    }
  }
}

// As Redis's updateStatsOnUnblock: one call when the wait ends (served, timed out, CLIENT
// UNBLOCK), failed when its reply is an error; a served command also goes to the slow log with
// the time its serving took (Redis 7.0 logs no timed-out one).
void NetLoop::RecordUnblocked(Connection* conn, const Completion& completion) {
  if (conn->blocked_command_id < 0) return;
  const std::string& reply = completion.replies;
  CommandSample sample;
  sample.command_id = conn->blocked_command_id;
  sample.failed = !reply.empty() && reply[0] == '-';
  if (sample.failed) {
    server_->metrics().loop(index_).RecordError(ErrorCode(reply.data(), reply.size()));
  }
  sample.keyspace =
      sample.failed ? 0 : KeyspaceResult(sample.command_id, IsNilReply(reply.data(), reply.size()));
  sample.stage_ns[kExecute] = completion.served_ns;
  sample.stage_ns[kTotal] = completion.served_ns;
  server_->metrics().loop(index_).Record(sample);
  const Settings& settings = server_->settings();
  const uint64_t total_us = completion.served_ns / 1000;
  if (completion.unblock == Completion::Unblock::kServed &&
      server_->slowlog().ShouldLog(total_us, settings.slowlog_log_slower_than)) {
    SlowLogEntry entry;
    entry.unix_time = NowUnixMs() / 1000;
    entry.duration_us = total_us;
    entry.args = SlowLog::TruncateArgs(conn->blocked_argv);
    entry.client_addr = conn->info->addr;
    entry.client_name = conn->info->name();
    entry.stage_us[kExecute] = total_us;
    entry.stage_us[kTotal] = total_us;
    server_->slowlog().Add(std::move(entry), static_cast<size_t>(settings.slowlog_max_len.load()));
  }
}

}  // namespace rockcache::server
