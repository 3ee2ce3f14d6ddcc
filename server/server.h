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
#include "server/batch.h"
#include "server/client_registry.h"
#include "server/clock.h"
#include "server/commands/command.h"
#include "server/executor.h"
#include "server/metrics/metrics.h"
#include "server/metrics/slowlog.h"
#include "server/scripting/scripting.h"
#include "server/server_admin.h"
#include "server/server_stats.h"
#include "server/services.h"
#include "server/settings.h"
#include "server/tracking/tracking.h"
#include "server/tx/watch.h"
#include "storage/store_types.h"

namespace rockcache::pool {
class WorkerPool;
}
namespace rockcache::cache {
class Cache;
class KeyLocks;
}  // namespace rockcache::cache

namespace rockcache::server {
namespace replication {
class Replication;
}

class Checkpoints;
class NetLoop;
class MetricsHttpServer;
class PubSub;
class WaitRegistry;

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

  // What command handlers reach (server/services.h; CommandContext's accessors). Complete once
  // Start() has opened the store and built the cache, before the pool and the loops run.
  const Services& services() const { return services_; }

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
  Tracking& tracking() { return *tracking_; }
  // Clients blocked in BLPOP-like commands (server/blocking/wait_registry.h).
  WaitRegistry& blocking() { return *blocking_; }
  // BGSAVE / SAVE / LASTSAVE and INFO persistence (server/persistence/checkpoints.h).
  Checkpoints& checkpoints() { return *checkpoints_; }
  // Replication: role, link, replicas (server/replication/replication.h).
  replication::Replication& replication() { return *replication_; }
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
  void WireServices();  // fills services_ (Start, once every part it names exists)

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
  std::unique_ptr<Tracking> tracking_;
  std::unique_ptr<WaitRegistry> blocking_;
  std::unique_ptr<Checkpoints> checkpoints_;
  std::unique_ptr<replication::Replication> replication_;
  std::unique_ptr<pool::WorkerPool> pool_;
  std::vector<std::unique_ptr<NetLoop>> loops_;
  ServerAdmin admin_{this};
  Services services_;
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

// The storage options of `config` (dir, storage-sync, rocksdb-*, databases...): what the server
// opens its store with (Server::Start) and what --import-rdb opens it with.
storage::Options StoreOptions(const config::Config& config);
// Logs, one warning a line, what opening `store` did to its data directory (Store::OpenNotes).
void LogOpenNotes(const storage::Store& store);

}  // namespace rockcache::server
