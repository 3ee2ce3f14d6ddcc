#include "server/metrics/info.h"

#include <strings.h>
#include <sys/resource.h>
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

void ServerSection(Server& server, std::string* out) {
  utsname name;
  uname(&name);
  int64_t uptime = (NowUnixMs() - server.start_time_ms()) / 1000;
  Field(out, "redis_version", kRedisCompatVersion);
  Field(out, "rockcache_version", kRockcacheVersion);
  Field(out, "redis_mode", "standalone");
  Field(out, "os", std::string(name.sysname) + " " + name.release + " " + name.machine);
  Field(out, "arch_bits", std::to_string(sizeof(void*) * 8));
  Field(out, "multiplexing_api", "epoll");
  Field(out, "process_id", static_cast<uint64_t>(getpid()));
  Field(out, "run_id", server.replication().run_id());
  Field(out, "tcp_port", static_cast<uint64_t>(server.config().GetInt("port")));
  Field(out, "server_time_usec", static_cast<uint64_t>(NowUnixUs()));
  Field(out, "uptime_in_seconds", static_cast<uint64_t>(uptime));
  Field(out, "uptime_in_days", static_cast<uint64_t>(uptime / 86400));
  Field(out, "hz", static_cast<uint64_t>(server.settings().hz.load()));
  Field(out, "net_threads", static_cast<uint64_t>(server.loop_count()));
  Field(out, "pool_threads", static_cast<uint64_t>(server.AutoPoolSetting("pool-threads")));
  Field(out, "config_file", server.config().config_file());
}

void ClientsSection(Server& server, std::string* out) {
  Field(out, "connected_clients", static_cast<uint64_t>(server.clients().size()));
  Field(out, "maxclients", static_cast<uint64_t>(server.settings().maxclients.load()));
  Field(out, "blocked_clients", static_cast<uint64_t>(server.blocking().waiting()));
  const Tracking::Counts tracking = server.tracking().counts();
  Field(out, "tracking_clients", tracking.clients);
}

void MemorySection(Server& server, std::string* out) {
  uint64_t rss = ResidentBytes();
  Field(out, "used_memory", rss);
  Field(out, "used_memory_human", HumanBytes(rss));
  Field(out, "used_memory_rss", rss);
  Field(out, "used_memory_rss_human", HumanBytes(rss));
  // Redis's maxmemory is rockcache's cache budget (the same setting; every key stays on disk).
  auto maxmemory = static_cast<uint64_t>(server.config().GetInt("cache-maxmemory"));
  Field(out, "maxmemory", maxmemory);
  Field(out, "maxmemory_human", HumanBytes(maxmemory));
  Field(out, "maxmemory_policy", server.config().GetString("cache-policy"));
  // Scripting, as Redis 7.0 reports it (the Lua states of all workers together).
  scripting::Scripting& scripting = server.scripting();
  const uint64_t vm_bytes = scripting.vm_bytes();
  Field(out, "used_memory_vm_eval", vm_bytes);
  Field(out, "used_memory_lua_human", HumanBytes(vm_bytes));
  Field(out, "used_memory_scripts_eval", scripting.cache().bytes());
  Field(out, "number_of_cached_scripts", scripting.cache().count());
  Field(out, "number_of_functions", scripting.functions().function_count());
  Field(out, "number_of_libraries", scripting.functions().library_count());
}

void PersistenceSection(Server& server, std::string* out) {
  Field(out, "loading", 0);
  Field(out, "storage_engine", "rocksdb");
  Field(out, "storage_sync", server.config().GetString("storage-sync"));
  Field(out, "storage_dir", server.config().GetString("dir"));
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
  Field(out, "total_connections_received", stats.total_connections_received.load());
  Field(out, "total_commands_processed", stats.total_commands_processed());
  Field(out, "total_net_input_bytes", stats.total_net_input_bytes());
  Field(out, "total_net_output_bytes", stats.total_net_output_bytes());
  Field(out, "rejected_connections", stats.rejected_connections.load());
  Field(out, "instantaneous_ops_per_sec", server.InstantaneousOpsPerSec());
  Field(out, "expired_keys", stats.expired_keys.load());
  const Tracking::Counts tracking = server.tracking().counts();
  Field(out, "tracking_total_keys", tracking.keys);
  Field(out, "tracking_total_items", tracking.items);
  Field(out, "tracking_total_prefixes", tracking.prefixes);
  Field(out, "keyspace_hits", snapshot.keyspace_hits);
  Field(out, "keyspace_misses", snapshot.keyspace_misses);
  Field(out, "pubsub_channels", static_cast<uint64_t>(server.pubsub().ChannelCount()));
  Field(out, "pubsub_patterns", static_cast<uint64_t>(server.pubsub().PatternCount()));
  Field(out, "pubsubshard_channels", uint64_t{0});
  uint64_t errors = 0;
  for (const auto& [code, count] : snapshot.errors) errors += count;
  Field(out, "total_error_replies", errors);
  Field(out, "rtc_answers", stats.rtc_answers());
  Field(out, "parked_batches", stats.parked_batches());
  Field(out, "sliced_commands", stats.sliced_commands.load(std::memory_order_relaxed));
  Field(out, "command_slices", stats.command_slices.load(std::memory_order_relaxed));
  Field(out, "write_runs", stats.write_runs.load(std::memory_order_relaxed));
  Field(out, "write_run_commands", stats.write_run_commands.load(std::memory_order_relaxed));
}

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

struct Section {
  const char* name;
  bool in_default;
  void (*build)(Server&, std::string*);
};

// clang-format off
const Section kSections[] = {
    {"server", true, ServerSection},
    {"clients", true, ClientsSection},
    {"memory", true, MemorySection},
    {"persistence", true, PersistenceSection},
    {"stats", true, StatsSection},
    {"replication", true, replication::AppendReplicationInfo},
    {"pool", true, PoolSection},
    {"cache", true, CacheSection},
    {"commandstats", false, CommandStatsSection},
    {"errorstats", true, ErrorStatsSection},
    {"latencystats", false, LatencyStatsSection},
    {"cache-shards", false, CacheShardsSection},
    {"rocksdb", false, RocksDbSection},
    {"keyspace", true, KeyspaceSection},
};
// clang-format on

std::string Title(const char* name) {
  std::string title = name;
  title[0] = static_cast<char>(toupper(title[0]));
  if (title == "Rocksdb") title = "RocksDB";
  if (title == "Cache-shards") title = "Cache-Shards";
  return title;
}

}  // namespace

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
    out.append("# " + Title(section.name) + "\r\n");
    section.build(server, &out);
  }
  return out;
}

}  // namespace rockcache::server
