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
#include <sstream>
#include <thread>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "pool/worker_pool.h"
#include "server/clock.h"
#include "server/metrics_http.h"
#include "server/net_loop.h"
#include "server/reply.h"
#include "storage/store.h"

namespace rockcache::server {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t NowUnixUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

// Runs one connection's batch of commands on a worker, in order, and hands the replies back
// to the connection's loop.
class BatchTask : public pool::Task {
 public:
  BatchTask(Server* server, uint32_t loop_index, uint64_t conn_id,
            std::vector<PreparedCommand> batch, BatchTimes times)
      : server_(server),
        loop_index_(loop_index),
        conn_id_(conn_id),
        batch_(std::move(batch)),
        times_(times) {}

  void Run() override {
    const bool timed = times_.parsed != 0;
    if (timed) times_.dequeued = Clock::Now();
    Completion completion;
    completion.conn_id = conn_id_;
    uint64_t start = times_.dequeued;
    for (auto& command : batch_) {
      size_t reply_start = completion.replies.size();
      if (command.spec == nullptr) {
        completion.replies += command.reply;
      } else {
        // The clock is read per command: an entry must not look alive to a command that runs
        // after its expiry just because an earlier command of the batch was slow.
        ExecuteOnWorker(*server_, *command.spec, command.argv, NowUnixMs(), command.rtc_missed,
                        &completion.replies);
      }
      command.nil_reply = IsNilReply(completion.replies.data() + reply_start,
                                     completion.replies.size() - reply_start);
      if (completion.replies.size() > reply_start && completion.replies[reply_start] == '-') {
        command.failed = true;
        command.error_code = ErrorCode(completion.replies.data() + reply_start,
                                       completion.replies.size() - reply_start);
      }
      if (timed) {
        command.exec_start = start;
        command.exec_end = start = Clock::Now();
      }
    }
    completion.commands = std::move(batch_);
    completion.times = times_;
    server_->loop(loop_index_)->PostCompletion(std::move(completion));
  }

  void Cancel() override {
    Completion completion;
    completion.conn_id = conn_id_;
    for (size_t i = 0; i < batch_.size(); ++i) {
      AppendError(&completion.replies, "ERR server is shutting down");
    }
    server_->loop(loop_index_)->PostCompletion(std::move(completion));
  }

 private:
  Server* const server_;
  const uint32_t loop_index_;
  const uint64_t conn_id_;
  std::vector<PreparedCommand> batch_;
  BatchTimes times_;
};

// Removes expired keys a slice at a time, then schedules itself again 1/hz s later.
class ExpirySweepTask : public pool::Task {
 public:
  explicit ExpirySweepTask(Server* server) : server_(server) {}
  void Run() override {
    auto removed = server_->store()->SweepExpired(200);
    if (removed.ok() && *removed > 0) {
      server_->stats().expired_keys.fetch_add(static_cast<uint64_t>(*removed),
                                              std::memory_order_relaxed);
    }
    int hz = server_->settings().hz.load(std::memory_order_relaxed);
    server_->worker_pool()->ScheduleAt(
        std::chrono::steady_clock::now() + std::chrono::milliseconds(1000 / (hz > 0 ? hz : 10)),
        std::make_unique<ExpirySweepTask>(server_));
  }

 private:
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

std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

}  // namespace

Server::Server(config::Config* config) : config_(config) {
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
  if (store_) (void)store_->Close();
  if (shutdown_fd_ >= 0) close(shutdown_fd_);
}

void Server::ApplySetting(const std::string& name, const std::string& value) {
  auto as_int = [&value] { return std::stoll(value.empty() ? "0" : value); };
  if (name == "proto-max-bulk-len") {
    settings_.proto_max_bulk_len = static_cast<uint64_t>(as_int());
  } else if (name == "client-output-buffer-limit") {
    settings_.client_output_buffer_limit = static_cast<uint64_t>(as_int());
  } else if (name == "timeout") {
    settings_.timeout_sec = as_int();
  } else if (name == "maxclients") {
    settings_.maxclients = as_int();
  } else if (name == "tcp-keepalive") {
    settings_.tcp_keepalive = static_cast<int>(as_int());
  } else if (name == "protected-mode") {
    settings_.protected_mode = value == "yes";
  } else if (name == "requirepass") {
    settings_.auth_required = !value.empty();
  } else if (name == "latency-tracking") {
    settings_.latency_tracking = value == "yes";
  } else if (name == "slowlog-log-slower-than") {
    settings_.slowlog_log_slower_than = as_int();
  } else if (name == "slowlog-max-len") {
    settings_.slowlog_max_len = as_int();
    slowlog_.Trim(static_cast<size_t>(as_int()));
  } else if (name == "rtc-reads") {
    settings_.rtc_reads = value == "yes";
  } else if (name == "cache-maxmemory" && cache_) {
    cache_->SetMaxMemory(static_cast<uint64_t>(as_int()));
  } else if (name == "hz") {
    settings_.hz = static_cast<int>(as_int());
  } else if (name == "loglevel") {
    spdlog::level::level_enum level = spdlog::level::info;
    if (value == "debug") level = spdlog::level::debug;
    if (value == "verbose") level = spdlog::level::debug;
    if (value == "warning") level = spdlog::level::warn;
    spdlog::set_level(level);
  } else if (pool_ && name.rfind("pool-", 0) == 0) {
    pool::Options tunables;
    tunables.spin_count = static_cast<int>(config_->GetInt("pool-spin-count"));
    tunables.max_yield_usec = static_cast<int>(config_->GetInt("pool-max-yield-usec"));
    tunables.slow_yield_usec = static_cast<int>(config_->GetInt("pool-slow-yield-usec"));
    tunables.max_slow_yields = static_cast<int>(config_->GetInt("pool-max-slow-yields"));
    tunables.yield_sampling = static_cast<int>(config_->GetInt("pool-yield-sampling"));
    tunables.queue_slow_size = static_cast<int>(config_->GetInt("pool-queue-slow-size"));
    tunables.queue_max_size = static_cast<int>(config_->GetInt("pool-queue-max-size"));
    pool_->SetTunables(tunables);
  }
}

Status Server::Start() {
  start_time_ms_ = NowUnixMs();
  shutdown_fd_ = eventfd(0, EFD_CLOEXEC);
  if (shutdown_fd_ < 0) return Status::IOError(std::string("eventfd: ") + strerror(errno));

  storage::Options store_options;
  store_options.dir = config_->GetString("dir");
  store_options.sync_writes = config_->GetString("storage-sync") == "always";
  store_options.block_cache_bytes =
      static_cast<uint64_t>(config_->GetInt("rocksdb-block-cache-size"));
  store_options.write_buffer_bytes =
      static_cast<uint64_t>(config_->GetInt("rocksdb-write-buffer-size"));
  store_options.compression = config_->GetString("rocksdb-compression");
  store_options.max_background_jobs =
      static_cast<int>(config_->GetInt("rocksdb-max-background-jobs"));
  auto store = storage::Store::Open(store_options);
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();

  cache::Options cache_options;
  cache_options.max_memory_bytes = static_cast<uint64_t>(config_->GetInt("cache-maxmemory"));
  cache_options.shards = static_cast<int>(config_->GetInt("cache-shards"));
  cache_options.policy = config_->GetString("cache-policy") == "allkeys-lfu"
                             ? cache::Policy::kAllKeysLfu
                             : cache::Policy::kAllKeysLru;
  cache_options.max_hash_fields = static_cast<size_t>(config_->GetInt("cache-max-hash-fields"));
  cache_ = std::make_unique<cache::Cache>(cache_options);
  key_locks_ = std::make_unique<cache::KeyLocks>();

  pool::Options pool_options;
  pool_options.mode =
      config_->GetString("pool-mode") == "classic" ? pool::Mode::kClassic : pool::Mode::kAdaptive;
  pool_options.threads = static_cast<int>(config_->GetInt("pool-threads"));
  pool_options.workers_per_list = static_cast<int>(config_->GetInt("workers-per-list"));
  pool_options.spin_count = static_cast<int>(config_->GetInt("pool-spin-count"));
  pool_options.max_yield_usec = static_cast<int>(config_->GetInt("pool-max-yield-usec"));
  pool_options.slow_yield_usec = static_cast<int>(config_->GetInt("pool-slow-yield-usec"));
  pool_options.max_slow_yields = static_cast<int>(config_->GetInt("pool-max-slow-yields"));
  pool_options.yield_sampling = static_cast<int>(config_->GetInt("pool-yield-sampling"));
  pool_options.queue_slow_size = static_cast<int>(config_->GetInt("pool-queue-slow-size"));
  pool_options.queue_max_size = static_cast<int>(config_->GetInt("pool-queue-max-size"));
  pool_options.cpu_affinity = config_->GetBool("pool-cpu-affinity");
  pool_ = pool::WorkerPool::Create(pool_options);

  std::vector<std::string> addresses = SplitWords(config_->GetString("bind"));
  if (addresses.empty()) addresses.push_back("0.0.0.0");
  int port = static_cast<int>(config_->GetInt("port"));
  int threads = static_cast<int>(config_->GetInt("net-threads"));
  if (threads == 0) {
    // Network threads answer cache hits themselves and must not queue for a core behind the
    // workers, RocksDB's threads and (on a small box) the clients: one per 4 cores.
    threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 4);
  }
  metrics_ = std::make_unique<Metrics>(static_cast<size_t>(threads), AllCommands().size());
  for (int i = 0; i < threads; ++i) {
    auto loop = std::make_unique<NetLoop>(this, static_cast<uint32_t>(i));
    Status s = loop->Listen(addresses, port);
    if (!s.ok()) return s;
    loops_.push_back(std::move(loop));
  }
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

void Server::ScheduleExpirySweep() {
  pool_->ScheduleAt(std::chrono::steady_clock::now() + std::chrono::milliseconds(100),
                    std::make_unique<ExpirySweepTask>(this));
  pool_->ScheduleAt(std::chrono::steady_clock::now() + std::chrono::milliseconds(100),
                    std::make_unique<RateSampleTask>(this));
}

void Server::SampleRates() {
  RateSample sample;
  sample.ms = NowUnixMs();
  sample.commands = stats_.total_commands_processed.load(std::memory_order_relaxed);
  cache::Stats cache_stats = cache_->GetStats();
  sample.cache_hits = cache_stats.hits;
  sample.cache_misses = cache_stats.misses;
  std::lock_guard<std::mutex> lock(rates_mu_);
  rates_[rates_next_] = sample;
  rates_next_ = (rates_next_ + 1) % kRateSamples;
  if (rates_count_ < kRateSamples) ++rates_count_;
}

uint64_t Server::InstantaneousOpsPerSec() const {
  std::lock_guard<std::mutex> lock(rates_mu_);
  if (rates_count_ < 2) return 0;
  const RateSample& newest = rates_[(rates_next_ + kRateSamples - 1) % kRateSamples];
  const RateSample& oldest = rates_[(rates_next_ + kRateSamples - rates_count_) % kRateSamples];
  if (newest.ms <= oldest.ms || newest.commands < oldest.commands) return 0;
  return (newest.commands - oldest.commands) * 1000 / static_cast<uint64_t>(newest.ms - oldest.ms);
}

double Server::CacheHitRatioLastSecond() const {
  std::lock_guard<std::mutex> lock(rates_mu_);
  if (rates_count_ < 2) return 0;
  const RateSample& newest = rates_[(rates_next_ + kRateSamples - 1) % kRateSamples];
  size_t back = rates_count_ < 11 ? rates_count_ : 11;  // 10 intervals of 100 ms
  const RateSample& oldest = rates_[(rates_next_ + kRateSamples - back) % kRateSamples];
  if (newest.cache_hits < oldest.cache_hits || newest.cache_misses < oldest.cache_misses) return 0;
  uint64_t hits = newest.cache_hits - oldest.cache_hits;
  uint64_t misses = newest.cache_misses - oldest.cache_misses;
  return hits + misses == 0 ? 0 : static_cast<double>(hits) / static_cast<double>(hits + misses);
}

void Server::SubmitBatch(uint32_t loop_index, uint64_t conn_id, std::vector<PreparedCommand> batch,
                         BatchTimes times) {
  if (times.parsed != 0) times.enqueued = Clock::Now();
  pool_->Submit(std::make_unique<BatchTask>(this, loop_index, conn_id, std::move(batch), times),
                conn_id);
}

void Server::ResetStats() {
  for (auto* counter : {&stats_.total_connections_received, &stats_.rejected_connections,
                        &stats_.total_commands_processed, &stats_.total_net_input_bytes,
                        &stats_.total_net_output_bytes, &stats_.expired_keys, &stats_.rtc_answers,
                        &stats_.coalesced_misses}) {
    counter->store(0, std::memory_order_relaxed);
  }
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
  pool_->Shutdown();  // runs every queued task; their replies reach the loops
  for (auto& loop : loops_) loop->Stop();
  for (auto& loop : loops_) loop->Join();
  loops_.clear();
  pool_.reset();
  Status s = store_->Close();
  if (!s.ok()) spdlog::error("closing storage: {}", s.ToString());
  spdlog::info("rockcache is now ready to exit, bye bye...");
}

}  // namespace rockcache::server
