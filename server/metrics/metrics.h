// Metrics: where every command's time goes, per stage and per command, plus the per-command
// counters behind INFO commandstats / latencystats / errorstats, SLOWLOG, LATENCY HISTOGRAM and
// the Prometheus endpoint.
//
// Stages of a command (timestamps from server/clock.h):
//   before-queue  parsed in the network thread -> its batch handed to the worker pool
//   queue-wait    handed to the pool -> a worker starts the batch
//   execute       the command's handler, start to end
//   hand-back     handler done -> its reply written to the socket by the network thread
//   total         parsed -> reply written
// A command answered in the network thread (run to completion) has execute and total only.
//
// Threads: every sample is recorded by a network thread (workers only take timestamps; the
// batch carries them back with the replies), into that thread's LoopMetrics: single writer,
// relaxed load+store, no locked instruction. Readers (INFO, SLOWLOG, /metrics) merge all loops'
// data from any thread; they may miss the latest few samples. CONFIG RESETSTAT does not touch
// the writers' memory: it records a baseline that readers subtract.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/histogram.h"
#include "config/mutex.h"
#include "server/metrics/latency_monitor.h"

namespace rockcache::server {

using LatencyHistogram = rockcache::Histogram;

enum Stage : int { kBeforeQueue, kQueueWait, kExecute, kHandBack, kTotal, kStageCount };
const char* StageName(int stage);  // "before_queue", "queue_wait", "execute", "hand_back", "total"

// Per command, per loop.
struct CommandMetrics {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> exec_ns{0};    // sum of execute time (INFO commandstats usec)
  std::atomic<uint64_t> rejected{0};   // refused before running (arity, auth)
  std::atomic<uint64_t> failed{0};     // ran and replied an error
  std::atomic<uint64_t> rtc_calls{0};  // answered in the network thread from the cache
  std::array<LatencyHistogram, kStageCount> stages;
};

// A plain snapshot of CommandMetrics, merged over loops and minus the reset baseline.
struct CommandSnapshot {
  uint64_t calls = 0, exec_ns = 0, rejected = 0, failed = 0, rtc_calls = 0;
  std::array<LatencyHistogram::Data, kStageCount> stages{};
  void Subtract(const CommandSnapshot& base);
};

// What a loop records for one finished command.
struct CommandSample {
  int command_id = -1;   // index in AllCommands(); -1 for unknown commands
  bool in_loop = false;  // ran in the network thread: execute and total stages only
  bool rtc = false;      // answered from the cache in the network thread
  bool failed = false;   // replied an error
  int keyspace = 0;      // a key read: +1 found (hit), -1 not found (miss), 0 not a read
  uint64_t stage_ns[kStageCount] = {};
};

// One network loop's metrics. Record* only from that loop's thread.
class LoopMetrics {
 public:
  // `monitor` (may be null) receives the commands slower than its threshold.
  explicit LoopMetrics(size_t command_count, LatencyMonitor* monitor = nullptr);
  void Record(const CommandSample& sample);
  void RecordRejected(int command_id);
  // Counts an error reply by its code ("ERR", "WRONGTYPE", ...). Rare: takes a mutex.
  void RecordError(const std::string& code);

  // Adds this loop's data to the outputs (any thread).
  void AddTo(std::vector<CommandSnapshot>* per_command, CommandSnapshot* overall,
             std::map<std::string, uint64_t>* errors, uint64_t* keyspace_hits,
             uint64_t* keyspace_misses) const;

 private:
  bool KnownCommand(int command_id) const {
    return command_id >= 0 && static_cast<size_t>(command_id) < owned_.size();
  }
  CommandMetrics& For(int command_id);
  void RecordSpike(const CommandSample& sample);  // rare: the command passed the monitor's bar
  std::vector<std::atomic<CommandMetrics*>> commands_;  // allocated on first use by the writer
  std::vector<std::unique_ptr<CommandMetrics>> owned_;  // writer thread only
  LatencyMonitor* const monitor_;
  CommandMetrics unknown_;  // samples of no known command (the overall figures add the rest)
  std::atomic<uint64_t> keyspace_hits_{0};
  std::atomic<uint64_t> keyspace_misses_{0};
  mutable Mutex errors_mu_;
  std::map<std::string, uint64_t> errors_ GUARDED_BY(errors_mu_);
};

// All loops' metrics, merged on read.
class Metrics {
 public:
  Metrics(size_t loops, size_t command_count);
  LoopMetrics& loop(size_t index) { return *loops_[index]; }

  struct Snapshot {
    std::vector<CommandSnapshot> per_command;  // by command id
    CommandSnapshot overall;
    std::map<std::string, uint64_t> errors;
    uint64_t keyspace_hits = 0;
    uint64_t keyspace_misses = 0;
  };
  // Merged, minus the last Reset()'s baseline. Any thread.
  Snapshot Read() const;
  // CONFIG RESETSTAT. Any thread.
  void Reset();
  // LATENCY LATEST / HISTORY / RESET / DOCTOR; its threshold is latency-monitor-threshold.
  LatencyMonitor& latency_monitor() { return latency_monitor_; }

 private:
  Snapshot ReadRaw() const;
  LatencyMonitor latency_monitor_;
  std::vector<std::unique_ptr<LoopMetrics>> loops_;
  const size_t command_count_;
  mutable Mutex baseline_mu_;
  Snapshot baseline_ GUARDED_BY(baseline_mu_);
};

// The error code of an error reply: its first word after '-' ("ERR", "WRONGTYPE"), at most 32
// bytes; "" when `reply` is not an error.
std::string ErrorCode(const char* reply, size_t length);

}  // namespace rockcache::server
