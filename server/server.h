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
#include "config/status.h"
#include "server/client_registry.h"
#include "server/command.h"
#include "server/executor.h"
#include "server/metrics.h"
#include "server/slowlog.h"

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

// Settings read on hot paths, mirrored from the config.
struct Settings {
  std::atomic<uint64_t> proto_max_bulk_len{512ull << 20};
  std::atomic<uint64_t> client_output_buffer_limit{1ull << 30};
  std::atomic<int64_t> timeout_sec{0};
  std::atomic<int64_t> maxclients{10000};
  std::atomic<int> tcp_keepalive{300};
  std::atomic<bool> protected_mode{true};
  std::atomic<bool> auth_required{false};
  std::atomic<int> hz{10};
  std::atomic<bool> rtc_reads{true};
  std::atomic<bool> latency_tracking{true};
  std::atomic<int64_t> slowlog_log_slower_than{10000};
  std::atomic<int64_t> slowlog_max_len{128};
};

// Server-wide counters for INFO stats (relaxed atomics; incremented once per batch or event).
struct ServerStats {
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> total_commands_processed{0};
  std::atomic<uint64_t> total_net_input_bytes{0};
  std::atomic<uint64_t> total_net_output_bytes{0};
  std::atomic<uint64_t> expired_keys{0};
  std::atomic<uint64_t> rtc_answers{0};       // commands answered in a network thread from cache
  std::atomic<uint64_t> coalesced_misses{0};  // misses served by another worker's fill
};

// One command of a batch: either a command to run, or a reply decided already (an error).
struct PreparedCommand {
  const CommandSpec* spec = nullptr;  // nullptr: `reply` holds the answer
  Args argv;
  std::string reply;
  bool rtc_missed = false;  // the network thread looked it up in the cache and missed
  int command_id = -1;      // index in AllCommands()
  // Filled by the worker (Clock ticks; 0 when latency tracking is off).
  uint64_t exec_start = 0;
  uint64_t exec_end = 0;
  bool failed = false;     // its reply is an error
  bool nil_reply = false;  // its reply is a null bulk or null array (a key read that missed)
  std::string error_code;  // "ERR", "WRONGTYPE"... when failed
};

// A batch's timestamps (Clock ticks), carried to the worker and back.
struct BatchTimes {
  uint64_t parsed = 0;    // the network thread parsed the batch's bytes
  uint64_t enqueued = 0;  // handed to the pool
  uint64_t dequeued = 0;  // a worker started it
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

  // Any thread: hands a batch of a connection's commands to the worker pool; the replies come
  // back to loop `loop_index` as one Completion for `conn_id`, with the commands themselves
  // (for metrics and the slow log).
  void SubmitBatch(uint32_t loop_index, uint64_t conn_id, std::vector<PreparedCommand> batch,
                   BatchTimes times);

  config::Config& config() { return *config_; }
  const Settings& settings() const { return settings_; }
  ServerStats& stats() { return stats_; }
  ClientRegistry& clients() { return clients_; }
  storage::Store* store() { return store_.get(); }
  pool::WorkerPool* worker_pool() { return pool_.get(); }
  // The cache; never null after Start() (cache-maxmemory 0 makes it disabled, not absent).
  cache::Cache* cache() { return cache_.get(); }
  cache::KeyLocks& key_locks() { return *key_locks_; }
  CacheWriteFence& cache_write_fence() { return cache_write_fence_; }
  Metrics& metrics() { return *metrics_; }
  SlowLog& slowlog() { return slowlog_; }
  NetLoop* loop(uint32_t index) { return loops_[index].get(); }
  size_t loop_count() const { return loops_.size(); }
  int64_t start_time_ms() const { return start_time_ms_; }
  uint64_t NextClientId() { return next_client_id_.fetch_add(1, std::memory_order_relaxed); }

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
  CacheWriteFence cache_write_fence_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<MetricsHttpServer> metrics_http_;
  SlowLog slowlog_;
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
  mutable std::mutex rates_mu_;
  RateSample rates_[kRateSamples];  // GUARDED_BY(rates_mu_); ring
  size_t rates_next_ = 0;           // GUARDED_BY(rates_mu_)
  size_t rates_count_ = 0;          // GUARDED_BY(rates_mu_)
};

// Wall-clock Unix time in milliseconds / microseconds.
int64_t NowUnixMs();
int64_t NowUnixUs();

}  // namespace rockcache::server
