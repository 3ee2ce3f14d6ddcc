#include "server/metrics/info.h"

#include <strings.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "pool/worker_pool.h"
#include "server/blocking/wait_registry.h"
#include "server/persistence/checkpoints.h"
#include "server/pubsub/pubsub.h"
#include "server/replication/replication.h"
#include "server/server.h"
#include "storage/store.h"

namespace rockcache::server {

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

namespace {

void Field(std::string* out, const char* name, const std::string& value) {
  out->append(name);
  out->push_back(':');
  out->append(value);
  out->append("\r\n");
}

void Field(std::string* out, const char* name, uint64_t value) {
  Field(out, name, std::to_string(value));
}

std::string Fixed(double value, int digits = 2) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? std::to_string(bytes) + "B" : Fixed(value) + units[unit];
}

// 40 random hex digits, drawn once per process (run_id, master_replid).
std::string Executable() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

std::string CompilerVersion() {
#if defined(__GNUC__)
  return std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "0.0.0";
#endif
}

void ServerSection(Server& server, std::string* out) {
  utsname name;
  uname(&name);
  const int64_t now_ms = NowUnixMs();
  int64_t uptime = (now_ms - server.start_time_ms()) / 1000;
  Field(out, "redis_version", kRedisCompatVersion);
  Field(out, "redis_git_sha1", "00000000");
  Field(out, "redis_git_dirty", 0);
  Field(out, "redis_build_id", "0");
  Field(out, "redis_mode", "standalone");
  Field(out, "os", std::string(name.sysname) + " " + name.release + " " + name.machine);
  Field(out, "arch_bits", std::to_string(sizeof(void*) * 8));
  Field(out, "monotonic_clock", "POSIX clock_gettime");
  Field(out, "multiplexing_api", "epoll");
  Field(out, "atomicvar_api", "c11-builtin");
  Field(out, "gcc_version", CompilerVersion());
  Field(out, "process_id", static_cast<uint64_t>(getpid()));
  Field(out, "process_supervised", "no");
  Field(out, "run_id", server.replication().run_id());
  Field(out, "tcp_port", static_cast<uint64_t>(server.config().GetInt("port")));
  Field(out, "server_time_usec", static_cast<uint64_t>(NowUnixUs()));
  Field(out, "uptime_in_seconds", static_cast<uint64_t>(uptime));
  Field(out, "uptime_in_days", static_cast<uint64_t>(uptime / 86400));
  Field(out, "hz", static_cast<uint64_t>(server.settings().hz.load()));
  Field(out, "configured_hz", static_cast<uint64_t>(server.settings().hz.load()));
  // Redis's LRU clock: seconds, 24 bits.
  Field(out, "lru_clock", static_cast<uint64_t>(now_ms / 1000) & ((1u << 24) - 1));
  Field(out, "executable", Executable());
  Field(out, "config_file", server.config().config_file());
  Field(out, "io_threads_active", 0);
  Field(out, "rockcache_version", kRockcacheVersion);
  Field(out, "net_threads", static_cast<uint64_t>(server.loop_count()));
  Field(out, "pool_threads", static_cast<uint64_t>(server.AutoPoolSetting("pool-threads")));
}

void ClientsSection(Server& server, std::string* out) {
  uint64_t max_input = 0, max_output = 0, paused = 0;
  const auto clients = server.clients().Snapshot();
  for (const auto& info : clients) {
    max_input = std::max<uint64_t>(max_input, info->query_buffer_bytes.load());
    max_output = std::max<uint64_t>(max_output, info->pending_reply_bytes.load());
    if (info->paused.load(std::memory_order_relaxed)) ++paused;  // held by CLIENT PAUSE
  }
  Field(out, "connected_clients", static_cast<uint64_t>(server.clients().size()));
  Field(out, "cluster_connections", 0);
  Field(out, "maxclients", static_cast<uint64_t>(server.settings().maxclients.load()));
  Field(out, "client_recent_max_input_buffer", max_input);
  Field(out, "client_recent_max_output_buffer", max_output);
  Field(out, "blocked_clients", static_cast<uint64_t>(server.blocking().waiting()) + paused);
  const Tracking::Counts tracking = server.tracking().counts();
  Field(out, "tracking_clients", tracking.clients);
  Field(out, "clients_in_timeout_table", 0);
}

std::string Percent(uint64_t part, uint64_t whole) {
  return Fixed(whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole)) +
         "%";
}

// Redis's memory fields. rockcache's memory is its resident set (RocksDB's memtables and block
// cache included); the "dataset" is what the cache holds (every key is on disk whatever it
// holds). Fields about Redis's allocator report the resident set, ratios 1.00.
void MemorySection(Server& server, std::string* out) {
  static std::atomic<uint64_t> peak{0};
  const uint64_t rss = ResidentBytes();
  uint64_t seen = peak.load();
  while (rss > seen && !peak.compare_exchange_weak(seen, rss)) {
  }
  const uint64_t used_peak = std::max(seen, rss);
  const uint64_t dataset = server.cache() != nullptr ? server.cache()->GetStats().bytes_used : 0;
  const uint64_t overhead = rss > dataset ? rss - dataset : 0;
  const uint64_t system =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  scripting::Scripting& scripting = server.scripting();
  const uint64_t vm_bytes = scripting.vm_bytes();
  const uint64_t scripts_bytes = scripting.cache().bytes();
  Field(out, "used_memory", rss);
  Field(out, "used_memory_human", HumanBytes(rss));
  Field(out, "used_memory_rss", rss);
  Field(out, "used_memory_rss_human", HumanBytes(rss));
  Field(out, "used_memory_peak", used_peak);
  Field(out, "used_memory_peak_human", HumanBytes(used_peak));
  Field(out, "used_memory_peak_perc", Percent(rss, used_peak));
  Field(out, "used_memory_overhead", overhead);
  Field(out, "used_memory_startup", 0);
  Field(out, "used_memory_dataset", dataset);
  Field(out, "used_memory_dataset_perc", Percent(dataset, rss));
  Field(out, "allocator_allocated", rss);
  Field(out, "allocator_active", rss);
  Field(out, "allocator_resident", rss);
  Field(out, "total_system_memory", system);
  Field(out, "total_system_memory_human", HumanBytes(system));
  // Scripting, as Redis 7.0 reports it (the Lua states of all workers together).
  Field(out, "used_memory_lua", vm_bytes);
  Field(out, "used_memory_vm_eval", vm_bytes);
  Field(out, "used_memory_lua_human", HumanBytes(vm_bytes));
  Field(out, "used_memory_scripts_eval", scripts_bytes);
  Field(out, "number_of_cached_scripts", scripting.cache().count());
  Field(out, "number_of_functions", scripting.functions().function_count());
  Field(out, "number_of_libraries", scripting.functions().library_count());
  Field(out, "used_memory_vm_functions", 0);
  Field(out, "used_memory_vm_total", vm_bytes);
  Field(out, "used_memory_vm_total_human", HumanBytes(vm_bytes));
  Field(out, "used_memory_functions", 0);
  Field(out, "used_memory_scripts", scripts_bytes);
  Field(out, "used_memory_scripts_human", HumanBytes(scripts_bytes));
  // Redis's maxmemory is rockcache's cache budget (the same setting; every key stays on disk).
  auto maxmemory = static_cast<uint64_t>(server.config().GetInt("cache-maxmemory"));
  Field(out, "maxmemory", maxmemory);
  Field(out, "maxmemory_human", HumanBytes(maxmemory));
  Field(out, "maxmemory_policy", server.config().GetString("cache-policy"));
  Field(out, "allocator_frag_ratio", "1.00");
  Field(out, "allocator_frag_bytes", 0);
  Field(out, "allocator_rss_ratio", "1.00");
  Field(out, "allocator_rss_bytes", 0);
  Field(out, "rss_overhead_ratio", "1.00");
  Field(out, "rss_overhead_bytes", 0);
  Field(out, "mem_fragmentation_ratio", "1.00");
  Field(out, "mem_fragmentation_bytes", 0);
  Field(out, "mem_not_counted_for_evict", 0);
  Field(out, "mem_replication_backlog", 0);
  Field(out, "mem_total_replication_buffers", 0);
  Field(out, "mem_clients_slaves", 0);
  Field(out, "mem_clients_normal", server.clients().memory());
  Field(out, "mem_cluster_links", 0);
  Field(out, "mem_aof_buffer", 0);
  Field(out, "mem_allocator", "libc");
  Field(out, "active_defrag_running", 0);
  Field(out, "lazyfree_pending_objects", 0);
  Field(out, "lazyfreed_objects", 0);
}

// Redis's persistence fields. rockcache's "RDB" saves are RocksDB checkpoints (BGSAVE, SAVE:
// server/persistence/checkpoints.h); its "AOF" is RocksDB's write-ahead log, which every write
// goes through, so aof_enabled is 1 and no rewrite ever runs.
void PersistenceSection(Server& server, std::string* out) {
  const Checkpoints::Figures saves = server.checkpoints().Read();
  const uint64_t writes = WritesProcessed(server);
  const int64_t now_ms = NowUnixMs();
  Field(out, "loading", 0);
  Field(out, "async_loading", 0);
  Field(out, "current_cow_peak", 0);
  Field(out, "current_cow_size", 0);
  Field(out, "current_cow_size_age", 0);
  Field(out, "current_fork_perc", "0.00");
  Field(out, "current_save_keys_processed", 0);
  Field(out, "current_save_keys_total", 0);
  Field(out, "rdb_changes_since_last_save",
        writes > saves.changes_at_last_save ? writes - saves.changes_at_last_save : 0);
  Field(out, "rdb_bgsave_in_progress", saves.in_progress ? 1 : 0);
  Field(out, "rdb_last_save_time", std::to_string(saves.last_save_unix));
  Field(out, "rdb_last_bgsave_status", saves.last_bgsave_ok ? "ok" : "err");
  Field(out, "rdb_last_bgsave_time_sec", std::to_string(saves.last_bgsave_seconds));
  Field(out, "rdb_current_bgsave_time_sec",
        std::to_string(saves.in_progress ? (now_ms - saves.current_started_ms) / 1000 : -1));
  Field(out, "rdb_saves", saves.saves);
  Field(out, "rdb_last_cow_size", 0);
  Field(out, "rdb_last_load_keys_expired", 0);
  Field(out, "rdb_last_load_keys_loaded", 0);
  Field(out, "aof_enabled", 1);
  Field(out, "aof_rewrite_in_progress", 0);
  Field(out, "aof_rewrite_scheduled", 0);
  Field(out, "aof_last_rewrite_time_sec", "-1");
  Field(out, "aof_current_rewrite_time_sec", "-1");
  Field(out, "aof_last_bgrewrite_status", "ok");
  Field(out, "aof_rewrites", 0);
  Field(out, "aof_rewrites_consecutive_failures", 0);
  Field(out, "aof_last_write_status", "ok");
  Field(out, "aof_last_cow_size", 0);
  Field(out, "module_fork_in_progress", 0);
  Field(out, "module_fork_last_cow_size", 0);
  Field(out, "aof_current_size", 0);
  Field(out, "aof_base_size", 0);
  Field(out, "aof_pending_rewrite", 0);
  Field(out, "aof_buffer_length", 0);
  Field(out, "aof_pending_bio_fsync", 0);
  Field(out, "aof_delayed_fsync", 0);
  Field(out, "storage_engine", "rocksdb");
  Field(out, "storage_sync", server.config().GetString("storage-sync"));
  Field(out, "storage_dir", server.config().GetString("dir"));
  Field(out, "checkpoint_last_dir", saves.last_path);
  Field(out, "checkpoint_last_sequence", saves.last_sequence);
  Field(out, "checkpoint_keep", static_cast<uint64_t>(server.config().GetInt("checkpoint-keep")));
}

std::string Usec(uint64_t ns) { return Fixed(static_cast<double>(ns) / 1000.0, 3); }

std::string Percentiles(const LatencyHistogram::Data& data) {
  return "p50=" + Usec(static_cast<uint64_t>(data.PercentileNs(0.50))) +
         ",p99=" + Usec(static_cast<uint64_t>(data.PercentileNs(0.99))) +
         ",p99.9=" + Usec(static_cast<uint64_t>(data.PercentileNs(0.999)));
}

void CommandStatsSection(Server& server, std::string* out) {
  Metrics::Snapshot snapshot = server.metrics().Read();
  const auto& all = AllCommands();
  for (size_t i = 0; i < all.size(); ++i) {
    const CommandSnapshot& c = snapshot.per_command[i];
    if (c.calls == 0 && c.rejected == 0) continue;
    uint64_t usec = c.exec_ns / 1000;
    std::string name = std::string("cmdstat_") + all[i]->name;
    Field(out, name.c_str(),
          "calls=" + std::to_string(c.calls) + ",usec=" + std::to_string(usec) + ",usec_per_call=" +
              Fixed(c.calls ? static_cast<double>(c.exec_ns) / 1000.0 / c.calls : 0.0) +
              ",rejected_calls=" + std::to_string(c.rejected) + ",failed_calls=" +
              std::to_string(c.failed) + ",rtc_calls=" + std::to_string(c.rtc_calls));
  }
}

void LatencyStatsSection(Server& server, std::string* out) {
  Metrics::Snapshot snapshot = server.metrics().Read();
  const auto& all = AllCommands();
  for (size_t i = 0; i < all.size(); ++i) {
    const CommandSnapshot& c = snapshot.per_command[i];
    if (c.stages[kTotal].Count() == 0) continue;
    std::string name = std::string("latency_percentiles_usec_") + all[i]->name;
    Field(out, name.c_str(), Percentiles(c.stages[kTotal]));
  }
}

void ErrorStatsSection(Server& server, std::string* out) {
  Metrics::Snapshot snapshot = server.metrics().Read();
  for (const auto& [code, count] : snapshot.errors) {
    std::string name = "errorstat_" + code;
    Field(out, name.c_str(), "count=" + std::to_string(count));
  }
}

void StatsSection(Server& server, std::string* out) {
  ServerStats& stats = server.stats();
  Metrics::Snapshot snapshot = server.metrics().Read();
  uint64_t errors = 0;
  for (const auto& [code, count] : snapshot.errors) errors += count;
  const Tracking::Counts tracking = server.tracking().counts();
  Field(out, "total_connections_received", stats.total_connections_received.load());
  Field(out, "total_commands_processed", stats.total_commands_processed());
  Field(out, "instantaneous_ops_per_sec", server.InstantaneousOpsPerSec());
  Field(out, "total_net_input_bytes", stats.total_net_input_bytes());
  Field(out, "total_net_output_bytes", stats.total_net_output_bytes());
  Field(out, "total_net_repl_input_bytes", 0);
  Field(out, "total_net_repl_output_bytes", 0);
  Field(out, "instantaneous_input_kbps", "0.00");
  Field(out, "instantaneous_output_kbps", "0.00");
  Field(out, "instantaneous_input_repl_kbps", "0.00");
  Field(out, "instantaneous_output_repl_kbps", "0.00");
  Field(out, "rejected_connections", stats.rejected_connections.load());
  Field(out, "sync_full", server.replication().sync_full());
  Field(out, "sync_partial_ok", server.replication().sync_partial_ok());
  Field(out, "sync_partial_err", server.replication().sync_partial_err());
  Field(out, "expired_keys", stats.expired_keys.load());
  Field(out, "expired_stale_perc", "0.00");
  Field(out, "expired_time_cap_reached_count", 0);
  Field(out, "expire_cycle_cpu_milliseconds", 0);
  // Keys are never evicted (the cache drops only its copies: INFO cache, cache_evictions).
  Field(out, "evicted_keys", 0);
  Field(out, "evicted_clients", server.clients().evicted());
  Field(out, "total_eviction_exceeded_time", 0);
  Field(out, "current_eviction_exceeded_time", 0);
  Field(out, "keyspace_hits", snapshot.keyspace_hits);
  Field(out, "keyspace_misses", snapshot.keyspace_misses);
  Field(out, "pubsub_channels", static_cast<uint64_t>(server.pubsub().ChannelCount()));
  Field(out, "pubsub_patterns", static_cast<uint64_t>(server.pubsub().PatternCount()));
  Field(out, "pubsubshard_channels", uint64_t{0});
  Field(out, "latest_fork_usec", 0);
  Field(out, "total_forks", 0);
  Field(out, "migrate_cached_sockets", 0);
  Field(out, "slave_expires_tracked_keys", 0);
  Field(out, "active_defrag_hits", 0);
  Field(out, "active_defrag_misses", 0);
  Field(out, "active_defrag_key_hits", 0);
  Field(out, "active_defrag_key_misses", 0);
  Field(out, "total_active_defrag_time", 0);
  Field(out, "current_active_defrag_time", 0);
  Field(out, "tracking_total_keys", tracking.keys);
  Field(out, "tracking_total_items", tracking.items);
  Field(out, "tracking_total_prefixes", tracking.prefixes);
  Field(out, "unexpected_error_replies", 0);
  Field(out, "total_error_replies", errors);
  Field(out, "dump_payload_sanitizations", 0);
  Field(out, "total_reads_processed", 0);
  Field(out, "total_writes_processed", 0);
  Field(out, "io_threaded_reads_processed", 0);
  Field(out, "io_threaded_writes_processed", 0);
  Field(out, "reply_buffer_shrinks", 0);
  Field(out, "reply_buffer_expands", 0);
  Field(out, "rtc_answers", stats.rtc_answers());
  Field(out, "parked_batches", stats.parked_batches());
  Field(out, "sliced_commands", stats.sliced_commands.load(std::memory_order_relaxed));
  Field(out, "command_slices", stats.command_slices.load(std::memory_order_relaxed));
  Field(out, "write_runs", stats.write_runs.load(std::memory_order_relaxed));
  Field(out, "write_run_commands", stats.write_run_commands.load(std::memory_order_relaxed));
}

std::string CpuSeconds(const timeval& tv) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec),
           static_cast<long>(tv.tv_usec));
  return buf;
}

// CPU time of the process and of its children. rockcache has no single main thread: the
// *_main_thread fields show the whole process, as the other two.
void CpuSection(Server&, std::string* out) {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  Field(out, "used_cpu_sys", CpuSeconds(self.ru_stime));
  Field(out, "used_cpu_user", CpuSeconds(self.ru_utime));
  Field(out, "used_cpu_sys_children", CpuSeconds(children.ru_stime));
  Field(out, "used_cpu_user_children", CpuSeconds(children.ru_utime));
  Field(out, "used_cpu_sys_main_thread", CpuSeconds(self.ru_stime));
  Field(out, "used_cpu_user_main_thread", CpuSeconds(self.ru_utime));
}

// No modules are loaded: Redis prints the title alone.
void ModulesSection(Server&, std::string*) {}

void ClusterSection(Server&, std::string* out) { Field(out, "cluster_enabled", 0); }

void PoolSection(Server& server, std::string* out) {
  pool::WorkerPool* pool = server.worker_pool();
  if (pool == nullptr) return;
  pool::Stats s = pool->GetStats();
  Field(out, "pool_mode", pool->mode() == pool::Mode::kClassic ? "classic" : "adaptive");
  Field(out, "pool_threads", static_cast<uint64_t>(server.AutoPoolSetting("pool-threads")));
  Field(out, "pool_tasks_run", s.tasks_run);
  Field(out, "pool_wakeups_spin", s.wakeups_spin);
  Field(out, "pool_wakeups_yield", s.wakeups_yield);
  Field(out, "pool_wakeups_block", s.wakeups_block);
  Field(out, "pool_yield_credit", Fixed(s.yield_credit, 4));
  Field(out, "pool_producer_yields", s.producer_yields);
  Field(out, "pool_producer_waits", s.producer_waits);
  Field(out, "pool_queue_depth", s.queued_now);
  Field(out, "pool_queue_depth_high_water", s.depth_high_water);
  Field(out, "pool_delayed_pending", s.delayed_pending);
  Field(out, "pool_queue_wait_count", s.queue_wait_count);
  Field(out, "pool_queue_wait_usec_sum", Fixed(s.queue_wait_sum_us));
  Field(out, "pool_queue_wait_usec_p50", Fixed(s.queue_wait_p50_us, 3));
  Field(out, "pool_queue_wait_usec_p99", Fixed(s.queue_wait_p99_us, 3));
  Field(out, "pool_queue_wait_usec_p99.9", Fixed(s.queue_wait_p999_us, 3));
  // MLFQ (pool/mlfq.h): per level, what ran and how long it waited; contended_share is the
  // fraction of the time spent while small and big work were both active that the level got.
  Field(out, "pool_mlfq", s.mlfq ? "yes" : "no");
  Field(out, "pool_small_share", static_cast<uint64_t>(s.small_share));
  Field(out, "pool_heavy_lane", s.heavy_lane ? "yes" : "no");
  Field(out, "pool_heavy_lane_idle_threads", static_cast<uint64_t>(s.heavy_lane_idle_threads));
  Field(out, "pool_mlfq_demotions", s.demotions);
  Field(out, "pool_mlfq_promotions", s.promotions);
  Field(out, "pool_mlfq_clients", s.clients_tracked);
  for (int l = 0; l < 3; ++l) {
    const pool::LevelStats& ls = s.levels[l];
    const std::string prefix = "pool_level" + std::to_string(l) + "_";
    Field(out, (prefix + "tasks").c_str(), ls.tasks);
    Field(out, (prefix + "queued").c_str(), ls.queued_now);
    Field(out, (prefix + "queue_wait_usec").c_str(),
          "p50=" + Fixed(ls.queue_wait_p50_us, 3) + ",p99=" + Fixed(ls.queue_wait_p99_us, 3) +
              ",sum=" + Fixed(ls.queue_wait_sum_us, 3));
    Field(out, (prefix + "exec_usec").c_str(),
          "p50=" + Fixed(ls.exec_p50_us, 3) + ",p99=" + Fixed(ls.exec_p99_us, 3) +
              ",sum=" + Fixed(ls.exec_sum_us, 3));
    Field(out, (prefix + "contended_share").c_str(), Fixed(ls.contended_share, 4));
  }
  Metrics::Snapshot snapshot = server.metrics().Read();
  for (int stage = 0; stage < kStageCount; ++stage) {
    const LatencyHistogram::Data& data = snapshot.overall.stages[stage];
    std::string name = std::string("stage_") + StageName(stage) + "_usec";
    Field(
        out, name.c_str(),
        Percentiles(data) + ",count=" + std::to_string(data.Count()) + ",sum=" + Usec(data.sum_ns));
  }
}

std::string Ratio(uint64_t part, uint64_t whole) {
  return whole == 0 ? "0.0000" : Fixed(static_cast<double>(part) / static_cast<double>(whole), 4);
}

void CacheSection(Server& server, std::string* out) {
  cache::Cache* cache = server.cache();
  if (cache == nullptr) return;
  cache::Stats s = cache->GetStats();
  Field(out, "cache_enabled", cache->enabled() ? "yes" : "no");
  Field(out, "cache_policy", cache::PolicyName(cache->policy()));
  Field(out, "cache_shards", static_cast<uint64_t>(cache->shard_count()));
  Field(out, "cache_keys", s.keys);
  Field(out, "cache_keys_with_ttl", s.keys_with_ttl);
  Field(out, "cache_negative_keys", s.negative_keys);
  Field(out, "cache_stale_keys", s.stale_keys);  // flushed, not yet freed (in used_bytes)
  Field(out, "cache_used_bytes", s.bytes_used);
  Field(out, "cache_used_bytes_human", HumanBytes(s.bytes_used));
  Field(out, "cache_maxmemory", cache->max_memory());
  Field(out, "cache_maxmemory_human", HumanBytes(cache->max_memory()));
  Field(out, "cache_hits", s.hits);
  Field(out, "cache_misses", s.misses);
  Field(out, "cache_negative_hits", s.negative_hits);
  Field(out, "cache_hit_ratio", Ratio(s.hits, s.hits + s.misses));
  Field(out, "cache_hit_ratio_last_second", Fixed(server.CacheHitRatioLastSecond(), 4));
  Field(out, "cache_rtc_answers", server.stats().rtc_answers());
  Field(out, "cache_rtc_reads", server.settings().rtc_reads.load() ? "yes" : "no");
  Field(out, "cache_rtc_storage_fills", server.stats().rtc_storage_fills());
  Field(out, "cache_rtc_resident_checks", server.stats().rtc_resident_checks());
  Field(out, "cache_fills", s.fills);
  Field(out, "cache_fills_rejected", s.rejected);
  Field(out, "cache_updates", s.updates);
  Field(out, "cache_erases", s.erases);
  Field(out, "cache_coalesced_misses", server.stats().coalesced_misses.load());
  Field(out, "cache_evictions", s.evictions);
  Field(out, "cache_probation_keys", s.probation_keys);
  Field(out, "cache_protected_keys", s.protected_keys);
  Field(out, "cache_protected_bytes", s.protected_bytes);
  Field(out, "cache_promotions", s.promotions);
  Field(out, "cache_demotions", s.demotions);
  Field(out, "cache_expired", s.expired);
  Field(out, "cache_flushed", s.flushed);
  Field(out, "cache_swept", s.swept);  // of expired + flushed: freed by the periodic sweep
  Field(out, "cache_key_lock_contended", server.key_locks().contended());
}

void CacheShardsSection(Server& server, std::string* out) {
  cache::Cache* cache = server.cache();
  if (cache == nullptr) return;
  auto shards = cache->GetShardStats();
  for (size_t i = 0; i < shards.size(); ++i) {
    const cache::Stats& s = shards[i];
    std::string name = "cache_shard_" + std::to_string(i);
    Field(out, name.c_str(),
          "keys=" + std::to_string(s.keys) + ",bytes=" + std::to_string(s.bytes_used) +
              ",maxmemory=" + std::to_string(s.max_memory) + ",hits=" + std::to_string(s.hits) +
              ",misses=" + std::to_string(s.misses) + ",evictions=" + std::to_string(s.evictions) +
              ",expired=" + std::to_string(s.expired));
  }
}

void RocksDbSection(Server& server, std::string* out) {
  out->append(server.store()->InfoRocksDb());
}

// One "dbN:keys=..,expires=..,avg_ttl=.." line per database holding keys, as Redis.
void KeyspaceSection(Server& server, std::string* out) {
  storage::Store* store = server.store();
  for (int db = 0; db < store->databases(); ++db) {
    DbScope scope(store->PhysicalDb(db));
    storage::KeyStats stats = store->GetKeyStats();
    if (stats.keys <= 0) continue;
    std::string name = "db" + std::to_string(db);
    Field(out, name.c_str(),
          "keys=" + std::to_string(stats.keys) + ",expires=" + std::to_string(stats.expires) +
              ",avg_ttl=" + std::to_string(stats.avg_ttl_ms));
  }
}

// Which requests print a section (Redis 7.0): "default" (and INFO with no argument), "all"
// (every section), "everything" (the same here: no module sections).
struct Section {
  const char* name;
  const char* title;
  bool in_default;
  void (*build)(Server&, std::string*);
};

// Redis 7.0's sections in its order, then rockcache's own.
// clang-format off
const Section kSections[] = {
    {"server", "Server", true, ServerSection},
    {"clients", "Clients", true, ClientsSection},
    {"memory", "Memory", true, MemorySection},
    {"persistence", "Persistence", true, PersistenceSection},
    {"stats", "Stats", true, StatsSection},
    {"replication", "Replication", true, replication::AppendReplicationInfo},
    {"cpu", "CPU", true, CpuSection},
    {"modules", "Modules", true, ModulesSection},
    {"commandstats", "Commandstats", false, CommandStatsSection},
    {"errorstats", "Errorstats", true, ErrorStatsSection},
    {"latencystats", "Latencystats", false, LatencyStatsSection},
    {"cluster", "Cluster", true, ClusterSection},
    {"keyspace", "Keyspace", true, KeyspaceSection},
    {"pool", "Pool", true, PoolSection},
    {"cache", "Cache", true, CacheSection},
    {"cache-shards", "Cache-Shards", false, CacheShardsSection},
    {"rocksdb", "RocksDB", false, RocksDbSection},
};
// clang-format on

}  // namespace

uint64_t WritesProcessed(Server& server) {
  Metrics::Snapshot snapshot = server.metrics().Read();
  const auto& all = AllCommands();
  uint64_t writes = 0;
  for (size_t i = 0; i < all.size() && i < snapshot.per_command.size(); ++i) {
    if ((all[i]->flags & kWrite) == 0) continue;
    const CommandSnapshot& c = snapshot.per_command[i];
    writes += c.calls > c.failed ? c.calls - c.failed : 0;
  }
  return writes;
}

std::string BuildInfo(Server& server, const std::vector<std::string>& sections) {
  bool all = false, defaults = sections.empty();
  for (const auto& s : sections) {
    if (strcasecmp(s.c_str(), "all") == 0 || strcasecmp(s.c_str(), "everything") == 0) all = true;
    if (strcasecmp(s.c_str(), "default") == 0) defaults = true;
  }
  std::string out;
  for (const auto& section : kSections) {
    bool wanted = all || (defaults && section.in_default);
    for (const auto& s : sections) {
      if (strcasecmp(s.c_str(), section.name) == 0) wanted = true;
    }
    if (!wanted) continue;
    if (!out.empty()) out.append("\r\n");
    out.append("# ").append(section.title).append("\r\n");
    section.build(server, &out);
  }
  return out;
}

}  // namespace rockcache::server
