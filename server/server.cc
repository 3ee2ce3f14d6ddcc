#include "server/server.h"

#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <sstream>
#include <thread>
#include <type_traits>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "config/buffer_limits.h"
#include "config/current_db.h"
#include "pool/auto_tune.h"
#include "pool/worker_pool.h"
#include "server/blocking/serve.h"
#include "server/blocking/wait_registry.h"
#include "server/clock.h"
#include "server/commands/reply_budget.h"
#include "server/group_commit.h"
#include "server/metrics/metrics_http.h"
#include "server/net_loop.h"
#include "server/persistence/checkpoints.h"
#include "server/protocol/reply.h"
#include "server/pubsub/pubsub.h"
#include "server/replication/replication.h"
#include "server/scripting/script_vm.h"
#include "storage/store.h"

namespace rockcache::server {

namespace {

// Frees expired and stale (flushed) cache entries, as Redis's active expire cycle: rounds of
// cache-sweep-samples random probes per shard (Cache::RemoveExpired), repeated while a round
// freed at least a quarter of its probes, for at most kCacheSweepRounds rounds or
// kCacheSweepBudget; what is left waits for the next tick. Each shard lock is held for one
// round's probes of that shard only. Worker thread.
constexpr int kCacheSweepRounds = 16;
constexpr std::chrono::microseconds kCacheSweepBudget{500};

void SweepCache(Server& server) {
  cache::Cache* cache = server.cache();
  const size_t samples = server.settings().cache_sweep_samples.load(std::memory_order_relaxed);
  if (cache == nullptr || samples == 0 || !cache->enabled()) return;
  const size_t probes = samples * cache->shard_count();
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < kCacheSweepRounds; ++round) {
    const size_t removed = cache->RemoveExpired(NowUnixMs(), samples);
    if (removed * 4 < probes || std::chrono::steady_clock::now() - start >= kCacheSweepBudget) {
      break;
    }
  }
}

// Removes expired keys a slice at a time, frees dead cache entries (SweepCache), then schedules
// itself again 1/hz s later.
class ExpirySweepTask : public pool::Task {
 public:
  explicit ExpirySweepTask(Server* server) : server_(server) {}
  void Run() override {
    cache::KeyLocks& locks = server_->key_locks();
    // A replica deletes nothing itself: its primary's deletions arrive with the data, and
    // expired keys stay hidden until then (as Redis replicas).
    // Nor while CLIENT PAUSE is in effect (as Redis): expired keys stay hidden, not deleted.
    if (server_->replication().is_replica() ||
        server_->clients().pause().ExpiryPaused(NowUnixMs())) {
      SweepCache(*server_);
      return Reschedule();
    }
    // Clients blocked on a key that expired are told (XREADGROUP: the stream no longer exists),
    // as after a DEL: served once the sweep is done, each under its key lock.
    std::vector<std::pair<int, std::string>> gone;
    auto note_gone = [this, &gone](std::string_view key) {
      if (server_->blocking().any()) gone.emplace_back(CurrentDb(), std::string(key));
    };
    const int64_t reaped = server_->pubsub().ReapExpired(server_->store(), locks, note_gone);
    PubSub::SweepScope sweeping;
    if (reaped > 0) server_->stats().expired_keys.fetch_add(static_cast<uint64_t>(reaped));
    storage::Store* store = server_->store();
    auto removed = store->SweepExpired(
        200,
        [&locks, store](std::string_view key, const std::function<void()>& critical) {
          auto guard = locks.Lock(key);
          // The deletion and its event for replicas (PubSub::NotifyExpired) in one batch.
          std::unique_ptr<storage::WriteGroup> group = store->OpenWriteGroup();
          critical();
          (void)group->Commit();
        },
        [this, &note_gone](std::string_view key) {
          server_->pubsub().NotifyExpired(key);
          note_gone(key);
        });
    for (const auto& [db, key] : gone) {
      auto guard = locks.Lock(key);
      DbScope scope(db);
      ServeBlockedOn(*server_, {key}, {static_cast<uint32_t>(locks.StripeOf(key))},
                     /*in_write_window=*/false);
    }
    if (removed.ok() && *removed > 0) {
      server_->stats().expired_keys.fetch_add(static_cast<uint64_t>(*removed),
                                              std::memory_order_relaxed);
    }
    SweepCache(*server_);
    Reschedule();
  }

 private:
  void Reschedule() {
    int hz = server_->settings().hz.load(std::memory_order_relaxed);
    server_->worker_pool()->ScheduleAt(
        std::chrono::steady_clock::now() + std::chrono::milliseconds(1000 / (hz > 0 ? hz : 10)),
        std::make_unique<ExpirySweepTask>(server_));
  }

  Server* const server_;
};

// Samples the rates behind instantaneous_ops_per_sec every 100 ms, then schedules itself again.
class RateSampleTask : public pool::Task {
 public:
  explicit RateSampleTask(Server* server) : server_(server) {}
  void Run() override {
    server_->SampleRates();
    server_->worker_pool()->ScheduleAt(
        std::chrono::steady_clock::now() + std::chrono::milliseconds(100),
        std::make_unique<RateSampleTask>(server_));
  }

 private:
  Server* const server_;
};

// CONFIG SET cache-maxmemory to a smaller value: lowers the limit one slice at a time on a
// worker, so the loop that ran CONFIG SET evicts nothing and no shard lock is held for more than
// ~kSlice / cache-shards bytes of evictions (a cache hit in a loop waits for one slice at most).
class CacheShrinkTask : public pool::Task {
 public:
  static constexpr uint64_t kSlice = 4ull << 20;
  CacheShrinkTask(Server* server, uint64_t target, uint64_t generation)
      : server_(server), target_(target), generation_(generation) {}
  void Run() override {
    const Settings& settings = server_->settings();
    if (settings.cache_resize_generation.load(std::memory_order_relaxed) != generation_) return;
    cache::Cache* cache = server_->cache();
    uint64_t used = cache->GetStats().bytes_used;
    uint64_t next = used > target_ + kSlice ? used - kSlice : target_;
    cache->SetMaxMemory(next);
    if (next != target_) {
      server_->worker_pool()->Submit(
          std::make_unique<CacheShrinkTask>(server_, target_, generation_));
    }
  }

 private:
  Server* const server_;
  const uint64_t target_;
  const uint64_t generation_;
};

std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

// rocksdb-block-cache-size, with -1 (the default) following the memory budget: a quarter of
// cache-maxmemory, at least 32 MB. The cache of values answers hot reads with no RocksDB call
// at all, so it gets the larger share; the block cache holds the files' pinned index and filter
// partitions (about 1% of the data) and the blocks that recent misses read.
uint64_t BlockCacheBytes(const config::Config& config) {
  const int64_t configured = config.GetInt("rocksdb-block-cache-size");
  if (configured >= 0) return static_cast<uint64_t>(configured);
  constexpr uint64_t kMinAuto = 32ull << 20;
  return std::max(kMinAuto, static_cast<uint64_t>(config.GetInt("cache-maxmemory")) / 4);
}

}  // namespace

Server::Server(config::Config* config)
    : config_(config),
      pubsub_(std::make_unique<PubSub>(this, config)),
      tracking_(std::make_unique<Tracking>(this)),
      blocking_(std::make_unique<WaitRegistry>()) {
  for (const auto& spec : config::OptionTable()) {
    ApplySetting(spec.name, config_->Get(spec.name));
  }
  config_->OnChange(
      [this](const std::string& name, const std::string& value) { ApplySetting(name, value); });
}

Server::~Server() {
  metrics_http_.reset();
  loops_.clear();
  pool_.reset();
  if (checkpoints_) checkpoints_->Stop();
  if (store_) (void)store_->Close();
  if (shutdown_fd_ >= 0) close(shutdown_fd_);
}

namespace {

// The settings that mirror one option each: a config change stores the new value, readers load
// it. Options that do more (resize the cache, set the log level, retune the pool...) are
// ApplySetting's own branches.
template <typename T>
struct SettingBinding {
  const char* option;
  std::atomic<T> Settings::*field;
};
const SettingBinding<bool> kBoolSettings[] = {
    {"protected-mode", &Settings::protected_mode},
    {"latency-tracking", &Settings::latency_tracking},
    {"rtc-reads", &Settings::rtc_reads},
    {"rtc-storage-read-balance", &Settings::rtc_storage_read_balance},
    {"write-coalescing", &Settings::write_coalescing},
    {"script-group-commit", &Settings::script_group_commit},
};
const SettingBinding<int64_t> kInt64Settings[] = {
    {"timeout", &Settings::timeout_sec},
    {"maxclients", &Settings::maxclients},
    {"slowlog-log-slower-than", &Settings::slowlog_log_slower_than},
    {"busy-reply-threshold", &Settings::busy_reply_threshold_ms},
};
const SettingBinding<uint64_t> kUint64Settings[] = {
    {"proto-max-bulk-len", &Settings::proto_max_bulk_len},
    {"client-query-buffer-limit", &Settings::client_query_buffer_limit},
    {"rtc-storage-read-max-bytes", &Settings::rtc_storage_read_max_bytes},
    {"slice-items", &Settings::slice_items},
    {"slice-usec", &Settings::slice_usec},
    {"lua-maxmemory", &Settings::lua_maxmemory},
    {"lua-script-cache-bytes", &Settings::lua_script_cache_bytes},
    {"script-group-max-scripts", &Settings::script_group_max_scripts},
    {"script-group-max-usec", &Settings::script_group_max_usec},
    {"tracking-table-max-keys", &Settings::tracking_table_max_keys},
};
const SettingBinding<int> kIntSettings[] = {
    {"tcp-keepalive", &Settings::tcp_keepalive},
    {"hz", &Settings::hz},
};
const SettingBinding<uint32_t> kUint32Settings[] = {
    {"cache-sweep-samples", &Settings::cache_sweep_samples},
};

// Stores `value` (the config's text of an option of that type) in the binding named `name`, if
// one is. True when it did.
template <typename T, size_t N>
bool StoreBound(const SettingBinding<T> (&bindings)[N], Settings& settings, const std::string& name,
                const std::string& value) {
  for (const auto& binding : bindings) {
    if (name != binding.option) continue;
    if constexpr (std::is_same_v<T, bool>) {
      (settings.*binding.field).store(value == "yes");
    } else {
      (settings.*binding.field).store(static_cast<T>(std::stoll(value.empty() ? "0" : value)));
    }
    return true;
  }
  return false;
}

// maxmemory-clients in bytes: a size, or a percentage of maxmemory (cache-maxmemory), as Redis;
// 0 (and anything unreadable) = no limit.
uint64_t ClientsMemoryLimit(const std::string& value, int64_t maxmemory) {
  if (value.empty()) return 0;
  if (value.back() == '%') {
    int64_t percent = 0;
    if (!config::ParseMemory(std::string_view(value).substr(0, value.size() - 1), &percent) ||
        percent < 0) {
      return 0;
    }
    return static_cast<uint64_t>(maxmemory / 100 * percent + maxmemory % 100 * percent / 100);
  }
  int64_t bytes = 0;
  return config::ParseMemory(value, &bytes) && bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
}

}  // namespace

void Server::ApplySetting(const std::string& name, const std::string& value) {
  if (StoreBound(kBoolSettings, settings_, name, value) ||
      StoreBound(kInt64Settings, settings_, name, value) ||
      StoreBound(kUint64Settings, settings_, name, value) ||
      StoreBound(kIntSettings, settings_, name, value) ||
      StoreBound(kUint32Settings, settings_, name, value)) {
    return;
  }
  auto as_int = [&value] { return std::stoll(value.empty() ? "0" : value); };
  if (name == "rtc-storage-read-mapped") {
    const int64_t mapped = as_int();
    settings_.rtc_storage_read_mapped.store(
        mapped >= 0 ? static_cast<uint64_t>(mapped)
                    : static_cast<uint64_t>(
                          pool::AutoMappedReadsPerPipeline(pool::UsableCores(), NetThreads())));
    return;
  }
  if (name == "rtc-storage-read-resident-ms") {
    storage::SetResidencyMemoMs(as_int());
    return;
  }
  if (name == "replica-read-only" || name == "replica-serve-stale-data" ||
      name == "min-replicas-to-write" || name == "min-replicas-max-lag") {
    if (replication_) replication_->ApplySettings();
    return;
  }
  if (name == "maxmemory-clients" || name == "cache-maxmemory") {
    settings_.maxmemory_clients =
        ClientsMemoryLimit(config_->Get("maxmemory-clients"), config_->GetInt("cache-maxmemory"));
    if (name == "maxmemory-clients") return;
  }
  if (name == "client-output-buffer-limit") {
    config::ClientBufferLimits limits;
    if (config::ParseClientBufferLimits(value, limits, &limits).ok()) {
      settings_.client_output_buffer_limit = static_cast<uint64_t>(limits.normal.hard);
      settings_.client_output_buffer_soft_limit = static_cast<uint64_t>(limits.normal.soft);
      settings_.client_output_buffer_soft_seconds = limits.normal.soft_seconds;
      settings_.pubsub_output_buffer_limit = static_cast<uint64_t>(limits.pubsub.hard);
      settings_.pubsub_output_buffer_soft_limit = static_cast<uint64_t>(limits.pubsub.soft);
      settings_.pubsub_output_buffer_soft_seconds = limits.pubsub.soft_seconds;
    }
  } else if (name == "requirepass") {
    settings_.auth_required = !value.empty();
  } else if (name == "slowlog-max-len") {
    settings_.slowlog_max_len = as_int();
    slowlog_.Trim(static_cast<size_t>(as_int()));
  } else if (name == "cache-maxmemory" && cache_) {
    uint64_t target = static_cast<uint64_t>(as_int());
    uint64_t generation = settings_.cache_resize_generation.fetch_add(1) + 1;
    if (pool_ && cache_->GetStats().bytes_used > target + CacheShrinkTask::kSlice) {
      pool_->Submit(std::make_unique<CacheShrinkTask>(this, target, generation));
    } else {
      cache_->SetMaxMemory(target);  // little or nothing to evict
    }
  } else if (name == "latency-monitor-threshold" && metrics_) {
    metrics_->latency_monitor().set_threshold_ms(as_int());
  } else if (name == "cache-policy" && cache_) {
    cache_->SetPolicy(value == "allkeys-lfu" ? cache::Policy::kAllKeysLfu
                                             : cache::Policy::kAllKeysLru);
  } else if (name == "loglevel") {
    spdlog::level::level_enum level = spdlog::level::info;
    if (value == "debug") level = spdlog::level::debug;
    if (value == "verbose") level = spdlog::level::debug;
    if (value == "warning") level = spdlog::level::warn;
    spdlog::set_level(level);
  } else if (pool_ && name.rfind("pool-", 0) == 0) {
    pool::Options tunables;
    tunables.spin_count = AutoPoolSetting("pool-spin-count");
    tunables.max_yield_usec = AutoPoolSetting("pool-max-yield-usec");
    tunables.slow_yield_usec = static_cast<int>(config_->GetInt("pool-slow-yield-usec"));
    tunables.max_slow_yields = static_cast<int>(config_->GetInt("pool-max-slow-yields"));
    tunables.yield_sampling = static_cast<int>(config_->GetInt("pool-yield-sampling"));
    tunables.queue_slow_size = static_cast<int>(config_->GetInt("pool-queue-slow-size"));
    tunables.queue_max_size = static_cast<int>(config_->GetInt("pool-queue-max-size"));
    tunables.mlfq = config_->GetBool("pool-mlfq");
    tunables.small_share = static_cast<int>(config_->GetInt("pool-small-share"));
    tunables.heavy_lane = config_->GetBool("pool-heavy-lane");
    pool_->SetTunables(tunables);
  }
}

int Server::AutoPoolSetting(const std::string& name) const {
  const int value = static_cast<int>(config_->GetInt(name));
  // pool-spin-count and pool-max-yield-usec are "auto" at -1, the others at 0.
  if (name == "pool-spin-count" || name == "pool-max-yield-usec" ? value >= 0 : value > 0) {
    return value;
  }
  const int cores = pool::UsableCores();
  const pool::AutoTune tune =
      pool::DerivePoolDefaults(cores, NetThreads(), config_->GetString("storage-sync") == "always");
  if (name == "pool-threads") return tune.threads;
  // From the thread count in effect: pool-threads 2 on a machine whose auto count is 1 still
  // gets one list of two.
  if (name == "workers-per-list") return pool::AutoWorkersPerList(AutoPoolSetting("pool-threads"));
  if (name == "pool-spin-count") return tune.spin_count;
  return tune.max_yield_usec;  // pool-max-yield-usec
}

int Server::NetThreads() const {
  const int threads = static_cast<int>(config_->GetInt("net-threads"));
  return threads > 0 ? threads : pool::AutoNetThreads(pool::UsableCores());
}

void LogOpenNotes(const storage::Store& store) {
  const std::string notes = store.OpenNotes();
  size_t start = 0;
  while (start < notes.size()) {
    size_t end = notes.find('\n', start);
    if (end == std::string::npos) end = notes.size();
    spdlog::warn("data directory: {}", notes.substr(start, end - start));
    start = end + 1;
  }
}

storage::Options StoreOptions(const config::Config& config) {
  storage::Options store_options;
  store_options.dir = config.GetString("dir");
  store_options.sync_writes = config.GetString("storage-sync") == "always";
  store_options.block_cache_bytes = BlockCacheBytes(config);
  store_options.write_buffer_bytes =
      static_cast<uint64_t>(config.GetInt("rocksdb-write-buffer-size"));
  store_options.compression = config.GetString("rocksdb-compression");
  store_options.compress_level0 = config.GetBool("rocksdb-compress-level0");
  store_options.mmap_reads = config.GetBool("rocksdb-mmap-reads");
  store_options.verify_point_read_checksums = config.GetBool("rocksdb-verify-read-checksums");
  store_options.partitioned_index = config.GetBool("rocksdb-partitioned-index");
  store_options.pin_metadata = config.GetBool("rocksdb-pin-metadata");
  store_options.meta_block_bytes = static_cast<uint64_t>(config.GetInt("rocksdb-meta-block-size"));
  store_options.max_background_jobs =
      static_cast<int>(config.GetInt("rocksdb-max-background-jobs"));
  store_options.databases = static_cast<int>(config.GetInt("databases"));
  store_options.memtable = config.GetString("rocksdb-memtable");
  store_options.memtable_huge_pages = config.GetBool("rocksdb-memtable-huge-pages");
  store_options.key_filter_bits_per_key =
      static_cast<uint32_t>(config.GetInt("key-filter-bits-per-key"));
  store_options.key_filter_max_bytes =
      static_cast<uint64_t>(config.GetInt("key-filter-max-memory"));
  store_options.wal_ttl_seconds = static_cast<uint64_t>(config.GetInt("repl-wal-ttl"));
  store_options.wal_size_limit_mb =
      static_cast<uint64_t>(config.GetInt("repl-wal-size-limit")) >> 20;
  return store_options;
}

Status Server::Start() {
  start_time_ms_ = NowUnixMs();
  shutdown_fd_ = eventfd(0, EFD_CLOEXEC);
  if (shutdown_fd_ < 0) return Status::IOError(std::string("eventfd: ") + strerror(errno));

  const storage::Options store_options = StoreOptions(*config_);
  auto store = storage::Store::Open(store_options);
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();
  LogOpenNotes(*store_);
  checkpoints_ = std::make_unique<Checkpoints>(config_, store_.get());
  // Before the loops: every command asks it whether the server is a read-only replica.
  replication_ = std::make_unique<replication::Replication>(this);
  pubsub_->WatchExpiries(store_.get());
  if (Status s = scripting::LoadStoredLibraries(*store_, &scripting_.functions()); !s.ok()) {
    return s;
  }

  cache::Options cache_options;
  cache_options.max_memory_bytes = static_cast<uint64_t>(config_->GetInt("cache-maxmemory"));
  cache_options.shards = static_cast<int>(config_->GetInt("cache-shards"));
  cache_options.policy = config_->GetString("cache-policy") == "allkeys-lfu"
                             ? cache::Policy::kAllKeysLfu
                             : cache::Policy::kAllKeysLru;
  cache_options.max_hash_fields = static_cast<size_t>(config_->GetInt("cache-max-hash-fields"));
  cache_options.max_list_elements = static_cast<size_t>(config_->GetInt("cache-max-list-elements"));
  cache_ = std::make_unique<cache::Cache>(cache_options);
  key_locks_ = std::make_unique<cache::KeyLocks>();
  WireServices();

  pool::Options pool_options;
  pool_options.mode =
      config_->GetString("pool-mode") == "classic" ? pool::Mode::kClassic : pool::Mode::kAdaptive;
  pool_options.threads = AutoPoolSetting("pool-threads");
  pool_options.workers_per_list = AutoPoolSetting("workers-per-list");
  pool_options.spin_count = AutoPoolSetting("pool-spin-count");
  pool_options.max_yield_usec = AutoPoolSetting("pool-max-yield-usec");
  pool_options.slow_yield_usec = static_cast<int>(config_->GetInt("pool-slow-yield-usec"));
  pool_options.max_slow_yields = static_cast<int>(config_->GetInt("pool-max-slow-yields"));
  pool_options.yield_sampling = static_cast<int>(config_->GetInt("pool-yield-sampling"));
  pool_options.queue_slow_size = static_cast<int>(config_->GetInt("pool-queue-slow-size"));
  pool_options.queue_max_size = static_cast<int>(config_->GetInt("pool-queue-max-size"));
  pool_options.cpu_affinity = config_->GetBool("pool-cpu-affinity");
  pool_options.mlfq = config_->GetBool("pool-mlfq");
  pool_options.small_share = static_cast<int>(config_->GetInt("pool-small-share"));
  pool_options.heavy_lane = config_->GetBool("pool-heavy-lane");
  pool_ = pool::WorkerPool::Create(pool_options);

  std::vector<std::string> addresses = SplitWords(config_->GetString("bind"));
  if (addresses.empty()) addresses.push_back("0.0.0.0");
  int port = static_cast<int>(config_->GetInt("port"));
  // Network threads answer cache hits themselves and must not queue for a core behind the
  // workers, RocksDB's threads and (on a small box) the clients: one per 4 cores by default.
  const int threads = NetThreads();
  metrics_ = std::make_unique<Metrics>(static_cast<size_t>(threads), AllCommands().size());
  metrics_->latency_monitor().set_threshold_ms(config_->GetInt("latency-monitor-threshold"));
  for (int i = 0; i < threads; ++i) {
    auto loop = std::make_unique<NetLoop>(this, static_cast<uint32_t>(i));
    Status s = loop->Listen(addresses, port);
    if (!s.ok()) return s;
    loops_.push_back(std::move(loop));
  }
  // CLIENT UNPAUSE: every loop resumes the connections it holds (server/net_pause.cc).
  clients_.pause().set_resume_hook([this] {
    for (auto& loop : loops_) {
      Completion completion;
      completion.kind = Completion::Kind::kResumePaused;
      loop->PostCompletion(std::move(completion));
    }
  });
  // The role comes before the first command: a server configured as a replica never takes a
  // write as a primary (the listeners queue connections until the loops start).
  replication_->Start();
  for (auto& loop : loops_) loop->Start();
  int metrics_port = static_cast<int>(config_->GetInt("metrics-port"));
  if (metrics_port > 0) {
    metrics_http_ = std::make_unique<MetricsHttpServer>(this);
    Status s = metrics_http_->Start(addresses, metrics_port);
    if (!s.ok()) {
      // The data path matters more than the metrics: serve anyway, and say so.
      spdlog::warn("{}; /metrics is off (set metrics-port to a free port, or 0)", s.message());
      metrics_http_.reset();
    } else {
      spdlog::info("Prometheus metrics on port {} at /metrics", metrics_port);
    }
  }
  ScheduleExpirySweep();
  return Status::OK();
}

void Server::WireServices() {
  services_.settings = &settings_;
  services_.stats = &stats_;
  services_.config = config_;
  services_.databases = store_->databases();
  services_.key_locks = key_locks_.get();
  services_.pubsub = pubsub_.get();
  services_.tracking = tracking_.get();
  services_.blocking = blocking_.get();
  services_.watches = &watches_;
  services_.scripting = &scripting_;
  services_.clients = &clients_;
  services_.replication = replication_.get();
  services_.admin = &admin_;
  services_.calls = this;
}

void Server::ScheduleExpirySweep() {
  pool_->ScheduleAt(std::chrono::steady_clock::now() + std::chrono::milliseconds(100),
                    std::make_unique<ExpirySweepTask>(this));
  pool_->ScheduleAt(std::chrono::steady_clock::now() + std::chrono::milliseconds(100),
                    std::make_unique<RateSampleTask>(this));
}

void Server::SampleRates() {
  RateSample sample;
  sample.ms = NowUnixMs();
  sample.commands = stats_.total_commands_processed();
  cache::Stats cache_stats = cache_->GetStats();
  sample.cache_hits = cache_stats.hits;
  sample.cache_misses = cache_stats.misses;
  MutexLock lock(&rates_mu_);
  rates_[rates_next_] = sample;
  rates_next_ = (rates_next_ + 1) % kRateSamples;
  if (rates_count_ < kRateSamples) ++rates_count_;
}

uint64_t Server::InstantaneousOpsPerSec() const {
  MutexLock lock(&rates_mu_);
  if (rates_count_ < 2) return 0;
  const RateSample& newest = rates_[(rates_next_ + kRateSamples - 1) % kRateSamples];
  const RateSample& oldest = rates_[(rates_next_ + kRateSamples - rates_count_) % kRateSamples];
  if (newest.ms <= oldest.ms || newest.commands < oldest.commands) return 0;
  return (newest.commands - oldest.commands) * 1000 / static_cast<uint64_t>(newest.ms - oldest.ms);
}

double Server::CacheHitRatioLastSecond() const {
  MutexLock lock(&rates_mu_);
  if (rates_count_ < 2) return 0;
  const RateSample& newest = rates_[(rates_next_ + kRateSamples - 1) % kRateSamples];
  size_t back = rates_count_ < 11 ? rates_count_ : 11;  // 10 intervals of 100 ms
  const RateSample& oldest = rates_[(rates_next_ + kRateSamples - back) % kRateSamples];
  if (newest.cache_hits < oldest.cache_hits || newest.cache_misses < oldest.cache_misses) return 0;
  uint64_t hits = newest.cache_hits - oldest.cache_hits;
  uint64_t misses = newest.cache_misses - oldest.cache_misses;
  return hits + misses == 0 ? 0 : static_cast<double>(hits) / static_cast<double>(hits + misses);
}

void Server::SubmitGroup(uint32_t loop_index, std::vector<ConnBatch> group, int level) {
  if (group.empty()) return;
  const uint64_t now = group.front().times.parsed != 0 ? Clock::Now() : 0;
  for (auto& batch : group) {
    if (batch.times.parsed != 0) batch.times.enqueued = now;
  }
  auto task = MakeGroupTask(this, loop_index, std::move(group), pool_->mlfq_enabled());
  task->set_level(level);
  pool_->Submit(std::move(task));
}

void Server::ResetStats() {
  for (auto* counter : {&stats_.total_connections_received, &stats_.rejected_connections,
                        &stats_.expired_keys, &stats_.coalesced_misses, &stats_.sliced_commands,
                        &stats_.command_slices, &stats_.write_runs, &stats_.write_run_commands}) {
    counter->store(0, std::memory_order_relaxed);
  }
  stats_.ResetLoopCounters();
  if (pool_) pool_->ResetStats();
  if (cache_) cache_->ResetStats();
  if (metrics_) metrics_->Reset();
}

void Server::RequestShutdown() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(shutdown_fd_, &one, sizeof(one));
}

void Server::Run() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
  pollfd fds[2] = {{shutdown_fd_, POLLIN, 0}, {signal_fd, POLLIN, 0}};
  while (true) {
    int rc = poll(fds, signal_fd >= 0 ? 2 : 1, -1);
    if (rc < 0 && errno == EINTR) continue;
    if (fds[0].revents & POLLIN) {
      spdlog::warn("SHUTDOWN requested by a client");
      break;
    }
    if (signal_fd >= 0 && (fds[1].revents & POLLIN)) {
      signalfd_siginfo info;
      [[maybe_unused]] ssize_t n = read(signal_fd, &info, sizeof(info));
      spdlog::warn("received {}, shutting down", strsignal(static_cast<int>(info.ssi_signo)));
      break;
    }
  }
  if (signal_fd >= 0) close(signal_fd);

  if (metrics_http_) metrics_http_->Stop();
  for (auto& loop : loops_) loop->StopListening();
  if (replication_) replication_->Stop();  // before the pool drains: releases WAITs
  pool_->Shutdown();                       // runs every queued task; their replies reach the loops
  for (auto& loop : loops_) loop->Stop();
  for (auto& loop : loops_) loop->Join();
  loops_.clear();
  pool_.reset();
  checkpoints_->Stop();  // a background save still linking files finishes first
  Status s = store_->Close();
  if (!s.ok()) spdlog::error("closing storage: {}", s.ToString());
  spdlog::info("rockcache is now ready to exit, bye bye...");
}

}  // namespace rockcache::server
