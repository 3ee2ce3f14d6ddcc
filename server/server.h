// Server: owns and wires every part of a running rockcache — the config, the RocksDB store, the
// worker pool, the network loops and the client registry — and orders start-up and shutdown.
//
// Threads: Start() and Run() are called by the main thread. Accessors are thread-safe. Hot-path
// settings are mirrored from the config into atomics (Settings) by an OnChange callback, so the
// network threads never take the config lock per command.
//
// Shutdown order (SIGINT/SIGTERM or SHUTDOWN): stop accepting; let the worker pool finish every
// queued task (their replies are still delivered); stop the loops; close RocksDB.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/mutex.h"
#include "config/status.h"
#include "server/client_registry.h"
#include "server/commands/command.h"
#include "server/executor.h"
#include "server/metrics/metrics.h"
#include "server/metrics/slowlog.h"
#include "server/scripting/scripting.h"
#include "server/tx/watch.h"

namespace rockcache::pool {
class WorkerPool;
}
namespace rockcache::cache {
class Cache;
class KeyLocks;
}  // namespace rockcache::cache

namespace rockcache::server {

class NetLoop;
class MetricsHttpServer;
class PubSub;
class WaitRegistry;

// Settings read on hot paths, mirrored from the config.
struct Settings {
  std::atomic<uint64_t> proto_max_bulk_len{512ull << 20};
  std::atomic<uint64_t> client_query_buffer_limit{1ull << 30};
  // client-output-buffer-limit, normal class (config/buffer_limits.h): hard bytes (0 = none),
  // soft bytes (0 = none) and how long a client may stay over soft.
  std::atomic<uint64_t> client_output_buffer_limit{1ull << 30};
  std::atomic<uint64_t> client_output_buffer_soft_limit{0};
  std::atomic<int64_t> client_output_buffer_soft_seconds{0};
  // The same for the pubsub class: clients subscribed to a channel or pattern.
  std::atomic<uint64_t> pubsub_output_buffer_limit{32ull << 20};
  std::atomic<uint64_t> pubsub_output_buffer_soft_limit{8ull << 20};
  std::atomic<int64_t> pubsub_output_buffer_soft_seconds{60};
  std::atomic<int64_t> timeout_sec{0};
  std::atomic<int64_t> maxclients{10000};
  std::atomic<int> tcp_keepalive{300};
  std::atomic<bool> protected_mode{true};
  std::atomic<bool> auth_required{false};
  std::atomic<int> hz{10};
  std::atomic<uint32_t> cache_sweep_samples{20};  // per shard and round (Server::SweepCache)
  std::atomic<bool> rtc_reads{true};
  // Consecutive writes of one kind to one key in a group run as one (WriteRun,
  // server/commands/command.h): write-coalescing.
  std::atomic<bool> write_coalescing{true};
  // A cache miss is read from RocksDB's memory in the network thread for values up to this size
  // (0 = never): rtc-storage-read-max-bytes.
  std::atomic<uint64_t> rtc_storage_read_max_bytes{16384};
  // Sliced reads (server/slicing/): entries per step and the longest a step runs.
  std::atomic<uint64_t> slice_items{1024};
  std::atomic<uint64_t> slice_usec{1000};
  // Scripting (server/scripting/): a worker's Lua memory cap, and the script cache's bound.
  std::atomic<uint64_t> lua_maxmemory{128ull << 20};
  std::atomic<uint64_t> lua_script_cache_bytes{64ull << 20};
  std::atomic<int64_t> busy_reply_threshold_ms{5000};
  std::atomic<bool> latency_tracking{true};
  std::atomic<int64_t> slowlog_log_slower_than{10000};
  std::atomic<int64_t> slowlog_max_len{128};
  // Bumped by every CONFIG SET cache-maxmemory; a slice-by-slice shrink still running for an
  // older value stops when it sees a newer one.
  std::atomic<uint64_t> cache_resize_generation{0};
};

// The counters a network loop bumps on every read, write and command: one cache line per loop,
// written by that loop only (relaxed load + store, no locked instruction), summed on read.
struct alignas(64) LoopCounters {
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> net_input_bytes{0};
  std::atomic<uint64_t> net_output_bytes{0};
  std::atomic<uint64_t> rtc_answers{0};        // commands answered in the loop from the cache
  std::atomic<uint64_t> rtc_storage_fills{0};  // ... of which after a fill from RocksDB's memory
  std::atomic<uint64_t> parked_batches{0};     // batches held back: the pool had no room
  // Single writer: the owning loop's thread.
  static void Add(std::atomic<uint64_t>* counter, uint64_t n) {
    counter->store(counter->load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

// Server-wide counters for INFO stats. The rare ones are relaxed atomics; the per-command and
// per-byte ones live in per-loop LoopCounters and are summed (minus the RESETSTAT baseline) by
// the accessors below, from any thread.
struct ServerStats {
  static constexpr size_t kMaxLoops = 64;  // net-threads' upper bound
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> expired_keys{0};
  std::atomic<uint64_t> coalesced_misses{0};  // misses served by another worker's fill
  // Sliced reads (server/slicing/): commands whose first step did not finish, and the steps
  // they took in all (the first one included). Bumped by workers, relaxed.
  std::atomic<uint64_t> sliced_commands{0};
  std::atomic<uint64_t> command_slices{0};
  // Write runs (WriteRun, server/commands/command.h): runs, and the commands they joined.
  std::atomic<uint64_t> write_runs{0};
  std::atomic<uint64_t> write_run_commands{0};
  LoopCounters loops[kMaxLoops];

  uint64_t total_commands_processed() const { return Sum(&LoopCounters::commands, 0); }
  uint64_t total_net_input_bytes() const { return Sum(&LoopCounters::net_input_bytes, 1); }
  uint64_t total_net_output_bytes() const { return Sum(&LoopCounters::net_output_bytes, 2); }
  uint64_t rtc_answers() const { return Sum(&LoopCounters::rtc_answers, 3); }
  uint64_t parked_batches() const { return Sum(&LoopCounters::parked_batches, 4); }
  uint64_t rtc_storage_fills() const { return Sum(&LoopCounters::rtc_storage_fills, 5); }
  // CONFIG RESETSTAT for the per-loop counters (their writers keep going; readers subtract).
  void ResetLoopCounters() {
    base_[0] = Sum(&LoopCounters::commands, -1);
    base_[1] = Sum(&LoopCounters::net_input_bytes, -1);
    base_[2] = Sum(&LoopCounters::net_output_bytes, -1);
    base_[3] = Sum(&LoopCounters::rtc_answers, -1);
    base_[4] = Sum(&LoopCounters::parked_batches, -1);
    base_[5] = Sum(&LoopCounters::rtc_storage_fills, -1);
  }

 private:
  uint64_t Sum(std::atomic<uint64_t> LoopCounters::*field, int base) const {
    uint64_t total = 0;
    for (const auto& loop : loops) total += (loop.*field).load(std::memory_order_relaxed);
    uint64_t b = base >= 0 ? base_[base].load(std::memory_order_relaxed) : 0;
    return total > b ? total - b : 0;
  }
  std::atomic<uint64_t> base_[6] = {};
};

// One command of a batch: either a command to run, or a reply decided already (an error).
struct TxPayload;  // server/tx/transaction.h

// A command a script ran (redis.call): counted in INFO commandstats as Redis counts it, by the
// network thread once the script's batch is back.
struct NestedCall {
  int command_id = -1;
  uint64_t exec_ns = 0;
  bool failed = false;
};

struct PreparedCommand {
  const CommandSpec* spec = nullptr;  // nullptr: `reply` holds the answer
  Args argv;
  std::string reply;
  bool rtc_missed = false;         // the network thread looked it up in the cache and missed
  std::shared_ptr<Waiter> waiter;  // kMayBlock commands: stands for the client while it waits
  int command_id = -1;             // index in AllCommands()
  int db = 0;                      // the database the connection had SELECTed (CommandContext::db)
  // Filled by the worker (Clock ticks; 0 when latency tracking is off).
  uint64_t exec_start = 0;
  uint64_t exec_end = 0;
  bool failed = false;            // its reply is an error
  bool nil_reply = false;         // its reply is a null bulk or null array (a key read that missed)
  std::string error_code;         // "ERR", "WRONGTYPE"... when failed
  std::shared_ptr<TxPayload> tx;  // EXEC and WATCH: what they carry (server/tx/transaction.h)
  // Resumable (sliced) commands: the pool tasks the command took, and the queue wait of all but
  // the first (the first one's is the batch's queue_wait stage). Shown by SLOWLOG.
  uint32_t slices = 1;
  uint64_t later_slices_queue_wait_ns = 0;
  std::vector<NestedCall> nested;  // a script's: the commands it called
};

// A batch's timestamps (Clock ticks), carried to the worker and back.
struct BatchTimes {
  uint64_t parsed = 0;    // the network thread parsed the batch's bytes
  uint64_t enqueued = 0;  // handed to the pool
  uint64_t dequeued = 0;  // a worker started it
  int level = 0;          // the MLFQ level it was submitted at (pool/worker_pool.h)
};

// One connection's batch of commands, as a network loop hands it to the pool.
struct ConnBatch {
  uint64_t conn_id = 0;
  std::vector<PreparedCommand> commands;
  BatchTimes times;
  uint64_t reply_budget = UINT64_MAX;  // reply bytes allowed (server/commands/reply_budget.h)
  // The connection's shared info; set by the loops (QueueBatch). A batch without it runs its
  // big reads whole (no slicing: a continuation needs it to see the connection close).
  std::shared_ptr<ClientInfo> info;
};

class Server {
 public:
  explicit Server(config::Config* config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens storage, starts the pool and the loops. Blocking (RocksDB open). Main thread.
  [[nodiscard]] Status Start();
  // Blocks until SIGINT/SIGTERM or RequestShutdown(), then shuts everything down in order.
  // REQUIRES: SIGINT, SIGTERM blocked in every thread (cmd/main.cc does it before Start()).
  void Run();
  // Any thread: asks Run() to shut down.
  void RequestShutdown();
  // CONFIG RESETSTAT: zeroes the counters of the server, the pool and the cache.
  void ResetStats();
  // Rates over the last ~1.6 s, from samples taken every 100 ms by a pool timer task.
  uint64_t InstantaneousOpsPerSec() const;
  double CacheHitRatioLastSecond() const;
  // Takes one sample (the timer task calls it).
  void SampleRates();

  // Any thread: hands the batches a loop produced in one pass to the pool as one task, run with
  // group commit (server/group_commit.h); one Completion per batch comes back to the loop, all
  // in one PostCompletions call. May wait under pool backpressure (pool-queue-max-size).
  // `level`: the MLFQ level the task runs at (pool/worker_pool.h; 0 = small). With the MLFQ on,
  // the task charges each batch's execution time to its connection.
  void SubmitGroup(uint32_t loop_index, std::vector<ConnBatch> group, int level = 0);

  config::Config& config() { return *config_; }
  const Settings& settings() const { return settings_; }
  ServerStats& stats() { return stats_; }
  ClientRegistry& clients() { return clients_; }
  storage::Store* store() { return store_.get(); }
  pool::WorkerPool* worker_pool() { return pool_.get(); }
  // The cache; never null after Start() (cache-maxmemory 0 makes it disabled, not absent).
  cache::Cache* cache() { return cache_.get(); }
  cache::KeyLocks& key_locks() { return *key_locks_; }
  WatchRegistry& watches() { return watches_; }
  scripting::Scripting& scripting() { return scripting_; }
  Metrics& metrics() { return *metrics_; }
  SlowLog& slowlog() { return slowlog_; }
  // Channel and pattern subscriptions, PUBLISH, keyspace notifications (server/pubsub/).
  PubSub& pubsub() { return *pubsub_; }
  // Clients blocked in BLPOP-like commands (server/blocking/wait_registry.h).
  WaitRegistry& blocking() { return *blocking_; }
  NetLoop* loop(uint32_t index) { return loops_[index].get(); }
  size_t loop_count() const { return loops_.size(); }
  int64_t start_time_ms() const { return start_time_ms_; }
  uint64_t NextClientId() { return next_client_id_.fetch_add(1, std::memory_order_relaxed); }

  // The value of a pool option with its automatic default resolved from the core count
  // (pool-threads, workers-per-list: 0 = auto; pool-spin-count, pool-max-yield-usec: -1 = auto).
  int AutoPoolSetting(const std::string& name) const;
  // net-threads, or its default when 0 (pool/auto_tune.h).
  int NetThreads() const;

 private:
  void ApplySetting(const std::string& name, const std::string& value);
  void ScheduleExpirySweep();

  config::Config* const config_;
  Settings settings_;
  ServerStats stats_;
  ClientRegistry clients_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<cache::Cache> cache_;
  std::unique_ptr<cache::KeyLocks> key_locks_;
  WatchRegistry watches_;  // before pool_ and loops_: their watchers unregister on destruction
  scripting::Scripting scripting_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<MetricsHttpServer> metrics_http_;
  SlowLog slowlog_;
  std::unique_ptr<PubSub> pubsub_;
  std::unique_ptr<WaitRegistry> blocking_;
  std::unique_ptr<pool::WorkerPool> pool_;
  std::vector<std::unique_ptr<NetLoop>> loops_;
  std::atomic<uint64_t> next_client_id_{1};
  int64_t start_time_ms_ = 0;
  int shutdown_fd_ = -1;  // eventfd: RequestShutdown() writes, Run() polls

  struct RateSample {
    int64_t ms = 0;
    uint64_t commands = 0, cache_hits = 0, cache_misses = 0;
  };
  static constexpr size_t kRateSamples = 16;
  mutable Mutex rates_mu_;
  RateSample rates_[kRateSamples] GUARDED_BY(rates_mu_);  // ring
  size_t rates_next_ GUARDED_BY(rates_mu_) = 0;
  size_t rates_count_ GUARDED_BY(rates_mu_) = 0;
};

// Wall-clock Unix time in milliseconds / microseconds.
int64_t NowUnixMs();
int64_t NowUnixUs();

}  // namespace rockcache::server
