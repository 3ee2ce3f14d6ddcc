#include "server/metrics/metrics_http.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "cache/cache.h"
#include "pool/worker_pool.h"
#include "server/metrics/metrics.h"
#include "server/server.h"
#include "server/thread_name.h"

namespace rockcache::server {
namespace {

// Upper bounds (seconds) of the exported histogram buckets.
constexpr double kBucketBounds[] = {1e-6,   2.5e-6, 5e-6, 1e-5,   2.5e-5, 5e-5, 1e-4,
                                    2.5e-4, 5e-4,   1e-3, 2.5e-3, 5e-3,   1e-2, 2.5e-2,
                                    5e-2,   0.1,    0.25, 0.5,    1.0,    2.5,  10.0};

std::string Number(double value) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.9g", value);
  return buf;
}

void Header(std::string* out, const char* name, const char* type, const char* help) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void Sample(std::string* out, const std::string& name, const std::string& labels, double value) {
  *out += name;
  if (!labels.empty()) *out += "{" + labels + "}";
  *out += " " + Number(value) + "\n";
}

// One Prometheus histogram from a log-linear one. A source bucket counts toward a bound when
// its upper edge is at or below it (so counts are exact at bucket edges, conservative between).
void Histogram(std::string* out, const std::string& name, const std::string& labels,
               const LatencyHistogram::Data& data) {
  uint64_t cumulative = 0;
  int bucket = 0;
  for (double bound : kBucketBounds) {
    uint64_t bound_ns = static_cast<uint64_t>(bound * 1e9);
    while (bucket < LatencyHistogram::kBuckets &&
           LatencyHistogram::BucketLow(bucket) + LatencyHistogram::BucketWidth(bucket) <=
               bound_ns) {
      cumulative += data.buckets[static_cast<size_t>(bucket)];
      ++bucket;
    }
    Sample(out, name + "_bucket", labels + ",le=\"" + Number(bound) + "\"",
           static_cast<double>(cumulative));
  }
  uint64_t count = data.Count();
  Sample(out, name + "_bucket", labels + ",le=\"+Inf\"", static_cast<double>(count));
  Sample(out, name + "_sum", labels, static_cast<double>(data.sum_ns) / 1e9);
  Sample(out, name + "_count", labels, static_cast<double>(count));
}

void OnRequest(evhttp_request* request, void* arg) {
  auto* server = static_cast<Server*>(arg);
  const char* uri = evhttp_request_get_uri(request);
  evbuffer* body = evbuffer_new();
  if (evhttp_request_get_command(request) != EVHTTP_REQ_GET || uri == nullptr ||
      (std::strcmp(uri, "/metrics") != 0 && std::strncmp(uri, "/metrics?", 9) != 0)) {
    evbuffer_add_printf(body, "not found: try /metrics\n");
    evhttp_send_reply(request, HTTP_NOTFOUND, "Not Found", body);
    evbuffer_free(body);
    return;
  }
  std::string text = RenderPrometheus(*server);
  evbuffer_add(body, text.data(), text.size());
  evhttp_add_header(evhttp_request_get_output_headers(request), "Content-Type",
                    "text/plain; version=0.0.4; charset=utf-8");
  evhttp_send_reply(request, HTTP_OK, "OK", body);
  evbuffer_free(body);
}

}  // namespace

std::string RenderPrometheus(Server& server) {
  std::string out;
  Metrics::Snapshot snapshot = server.metrics().Read();
  const auto& all = AllCommands();

  Header(&out, "rockcache_uptime_seconds", "gauge", "Seconds since the server started.");
  Sample(&out, "rockcache_uptime_seconds", "",
         static_cast<double>(NowUnixMs() - server.start_time_ms()) / 1000.0);
  Header(&out, "rockcache_connected_clients", "gauge", "Client connections open now.");
  Sample(&out, "rockcache_connected_clients", "", static_cast<double>(server.clients().size()));
  Header(&out, "rockcache_commands_processed_total", "counter", "Commands parsed.");
  Sample(&out, "rockcache_commands_processed_total", "",
         static_cast<double>(server.stats().total_commands_processed()));
  Header(&out, "rockcache_instantaneous_ops_per_sec", "gauge", "Commands per second, last ~1.6 s.");
  Sample(&out, "rockcache_instantaneous_ops_per_sec", "",
         static_cast<double>(server.InstantaneousOpsPerSec()));
  Header(&out, "rockcache_keyspace_hits_total", "counter", "Single-key reads that found the key.");
  Sample(&out, "rockcache_keyspace_hits_total", "", static_cast<double>(snapshot.keyspace_hits));
  Header(&out, "rockcache_keyspace_misses_total", "counter", "Single-key reads that did not.");
  Sample(&out, "rockcache_keyspace_misses_total", "",
         static_cast<double>(snapshot.keyspace_misses));

  Header(&out, "rockcache_command_calls_total", "counter", "Commands executed, by command.");
  for (size_t i = 0; i < all.size(); ++i) {
    if (snapshot.per_command[i].calls == 0) continue;
    Sample(&out, "rockcache_command_calls_total", std::string("cmd=\"") + all[i]->name + "\"",
           static_cast<double>(snapshot.per_command[i].calls));
  }
  Header(&out, "rockcache_command_rtc_calls_total", "counter",
         "Commands answered from the cache in a network thread, by command.");
  for (size_t i = 0; i < all.size(); ++i) {
    if (snapshot.per_command[i].rtc_calls == 0) continue;
    Sample(&out, "rockcache_command_rtc_calls_total", std::string("cmd=\"") + all[i]->name + "\"",
           static_cast<double>(snapshot.per_command[i].rtc_calls));
  }
  Header(&out, "rockcache_command_failed_calls_total", "counter",
         "Commands that replied an error, by command.");
  for (size_t i = 0; i < all.size(); ++i) {
    if (snapshot.per_command[i].failed == 0) continue;
    Sample(&out, "rockcache_command_failed_calls_total",
           std::string("cmd=\"") + all[i]->name + "\"",
           static_cast<double>(snapshot.per_command[i].failed));
  }
  Header(&out, "rockcache_command_rejected_calls_total", "counter",
         "Commands refused before running (arity, auth), by command.");
  for (size_t i = 0; i < all.size(); ++i) {
    if (snapshot.per_command[i].rejected == 0) continue;
    Sample(&out, "rockcache_command_rejected_calls_total",
           std::string("cmd=\"") + all[i]->name + "\"",
           static_cast<double>(snapshot.per_command[i].rejected));
  }
  Header(&out, "rockcache_error_replies_total", "counter", "Error replies, by error code.");
  for (const auto& [code, count] : snapshot.errors) {
    Sample(&out, "rockcache_error_replies_total", "code=\"" + code + "\"",
           static_cast<double>(count));
  }

  Header(&out, "rockcache_stage_duration_seconds", "histogram",
         "Time of each stage of all commands (before_queue, queue_wait, execute, hand_back, "
         "total).");
  for (int stage = 0; stage < kStageCount; ++stage) {
    Histogram(&out, "rockcache_stage_duration_seconds",
              std::string("stage=\"") + StageName(stage) + "\"", snapshot.overall.stages[stage]);
  }
  Header(&out, "rockcache_command_duration_seconds", "histogram",
         "Time of each stage, by command and stage.");
  for (size_t i = 0; i < all.size(); ++i) {
    if (snapshot.per_command[i].calls == 0) continue;
    for (int stage = 0; stage < kStageCount; ++stage) {
      const auto& data = snapshot.per_command[i].stages[stage];
      if (data.Count() == 0) continue;
      Histogram(&out, "rockcache_command_duration_seconds",
                std::string("cmd=\"") + all[i]->name + "\",stage=\"" + StageName(stage) + "\"",
                data);
    }
  }

  if (cache::Cache* cache = server.cache()) {
    cache::Stats c = cache->GetStats();
    Header(&out, "rockcache_cache_keys", "gauge", "Entries in the cache.");
    Sample(&out, "rockcache_cache_keys", "", static_cast<double>(c.keys));
    Header(&out, "rockcache_cache_used_bytes", "gauge", "Bytes the cache accounts for.");
    Sample(&out, "rockcache_cache_used_bytes", "", static_cast<double>(c.bytes_used));
    Header(&out, "rockcache_cache_maxmemory_bytes", "gauge", "The cache's budget.");
    Sample(&out, "rockcache_cache_maxmemory_bytes", "", static_cast<double>(cache->max_memory()));
    Header(&out, "rockcache_cache_hits_total", "counter", "Cache lookups that hit.");
    Sample(&out, "rockcache_cache_hits_total", "", static_cast<double>(c.hits));
    Header(&out, "rockcache_cache_misses_total", "counter", "Cache lookups that missed.");
    Sample(&out, "rockcache_cache_misses_total", "", static_cast<double>(c.misses));
    Header(&out, "rockcache_cache_hit_ratio", "gauge", "Cache hit ratio over the last second.");
    Sample(&out, "rockcache_cache_hit_ratio", "", server.CacheHitRatioLastSecond());
    Header(&out, "rockcache_cache_fills_total", "counter",
           "Entries installed after a miss or write.");
    Sample(&out, "rockcache_cache_fills_total", "", static_cast<double>(c.fills));
    Header(&out, "rockcache_cache_evictions_total", "counter", "Entries evicted for memory.");
    Sample(&out, "rockcache_cache_evictions_total", "", static_cast<double>(c.evictions));
    Header(&out, "rockcache_cache_expired_total", "counter", "Expired entries removed.");
    Sample(&out, "rockcache_cache_expired_total", "", static_cast<double>(c.expired));
    Header(&out, "rockcache_cache_coalesced_misses_total", "counter",
           "Misses served by another worker's fill.");
    Sample(&out, "rockcache_cache_coalesced_misses_total", "",
           static_cast<double>(server.stats().coalesced_misses.load()));
    Header(&out, "rockcache_sliced_commands_total", "counter",
           "Big reads run in steps that yield the worker between them.");
    Sample(&out, "rockcache_sliced_commands_total", "",
           static_cast<double>(server.stats().sliced_commands.load()));
    Header(&out, "rockcache_command_slices_total", "counter", "Steps taken by sliced reads.");
    Sample(&out, "rockcache_command_slices_total", "",
           static_cast<double>(server.stats().command_slices.load()));
    Header(&out, "rockcache_rtc_answers_total", "counter",
           "Commands answered in a network thread from the cache.");
    Sample(&out, "rockcache_rtc_answers_total", "",
           static_cast<double>(server.stats().rtc_answers()));
    Header(&out, "rockcache_rtc_storage_fills_total", "counter",
           "Of those, answered after a miss filled the cache from RocksDB's memory.");
    Sample(&out, "rockcache_rtc_storage_fills_total", "",
           static_cast<double>(server.stats().rtc_storage_fills()));
  }

  if (pool::WorkerPool* pool = server.worker_pool()) {
    pool::Stats p = pool->GetStats();
    Header(&out, "rockcache_pool_tasks_total", "counter", "Tasks the worker pool ran.");
    Sample(&out, "rockcache_pool_tasks_total", "", static_cast<double>(p.tasks_run));
    Header(&out, "rockcache_pool_wakeups_total", "counter",
           "Idle workers that found work, by the wait phase they were in.");
    Sample(&out, "rockcache_pool_wakeups_total", "phase=\"spin\"",
           static_cast<double>(p.wakeups_spin));
    Sample(&out, "rockcache_pool_wakeups_total", "phase=\"yield\"",
           static_cast<double>(p.wakeups_yield));
    Sample(&out, "rockcache_pool_wakeups_total", "phase=\"block\"",
           static_cast<double>(p.wakeups_block));
    Header(&out, "rockcache_pool_yield_credit", "gauge", "Adaptive yield credit, -1..1.");
    Sample(&out, "rockcache_pool_yield_credit", "", p.yield_credit);
    Header(&out, "rockcache_pool_producer_yields_total", "counter", "Backpressure yields.");
    Sample(&out, "rockcache_pool_producer_yields_total", "",
           static_cast<double>(p.producer_yields));
    Header(&out, "rockcache_pool_producer_waits_total", "counter", "Backpressure waits.");
    Sample(&out, "rockcache_pool_producer_waits_total", "", static_cast<double>(p.producer_waits));
    Header(&out, "rockcache_pool_queue_depth", "gauge", "Tasks queued now.");
    Sample(&out, "rockcache_pool_queue_depth", "", static_cast<double>(p.queued_now));
    // MLFQ, per level (pool/mlfq.h).
    auto per_level = [&](const char* name, const char* type, const char* help, auto value) {
      Header(&out, name, type, help);
      for (int l = 0; l < 3; ++l) {
        Sample(&out, name, "level=\"" + std::to_string(l) + "\"", value(p.levels[l]));
      }
    };
    using L = pool::LevelStats;
    per_level("rockcache_pool_level_tasks_total", "counter", "Tasks run, by MLFQ level.",
              [](const L& l) { return static_cast<double>(l.tasks); });
    per_level("rockcache_pool_level_queued", "gauge", "Tasks of levels 1-2 waiting now.",
              [](const L& l) { return static_cast<double>(l.queued_now); });
    per_level("rockcache_pool_level_queue_wait_seconds_sum", "counter",
              "Queue wait of the tasks run, by MLFQ level.",
              [](const L& l) { return l.queue_wait_sum_us / 1e6; });
    per_level("rockcache_pool_level_queue_wait_p99_seconds", "gauge",
              "99th percentile queue wait, by MLFQ level.",
              [](const L& l) { return l.queue_wait_p99_us / 1e6; });
    per_level("rockcache_pool_level_exec_seconds_sum", "counter",
              "Execution time of the tasks run, by MLFQ level.",
              [](const L& l) { return l.exec_sum_us / 1e6; });
    per_level("rockcache_pool_level_exec_p99_seconds", "gauge",
              "99th percentile execution time, by MLFQ level.",
              [](const L& l) { return l.exec_p99_us / 1e6; });
    per_level("rockcache_pool_level_contended_share", "gauge",
              "Fraction of the time spent while small and big work were both active that each "
              "level got.",
              [](const L& l) { return l.contended_share; });
    Header(&out, "rockcache_pool_small_share", "gauge", "pool-small-share, percent.");
    Sample(&out, "rockcache_pool_small_share", "", static_cast<double>(p.small_share));
    Header(&out, "rockcache_pool_heavy_lane_idle_threads", "gauge",
           "Heavy-lane threads at the OS's idle priority (0 while pool-heavy-lane is no).");
    Sample(&out, "rockcache_pool_heavy_lane_idle_threads", "",
           p.heavy_lane ? static_cast<double>(p.heavy_lane_idle_threads) : 0.0);
    Header(&out, "rockcache_pool_mlfq_level_changes_total", "counter",
           "Clients moved between MLFQ levels.");
    Sample(&out, "rockcache_pool_mlfq_level_changes_total", "direction=\"demotion\"",
           static_cast<double>(p.demotions));
    Sample(&out, "rockcache_pool_mlfq_level_changes_total", "direction=\"promotion\"",
           static_cast<double>(p.promotions));
  }
  return out;
}

MetricsHttpServer::~MetricsHttpServer() { Stop(); }

Status MetricsHttpServer::Start(const std::vector<std::string>& addresses, int port) {
  base_ = event_base_new();
  http_ = base_ ? evhttp_new(base_) : nullptr;
  if (http_ == nullptr) {
    Stop();
    return Status::IOError("metrics: cannot create the HTTP server");
  }
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  stop_event_ = event_new(
      base_, stop_fd_, EV_READ,
      [](evutil_socket_t, short, void* base) {
        event_base_loopbreak(static_cast<event_base*>(base));
      },
      base_);
  event_add(stop_event_, nullptr);
  evhttp_set_gencb(http_, &OnRequest, server_);
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
  for (const auto& address : addresses) {
    std::string host = address == "*" ? "0.0.0.0" : address;
    if (evhttp_bind_socket_with_handle(http_, host.c_str(), static_cast<uint16_t>(port)) ==
        nullptr) {
      Stop();
      return Status::IOError("metrics: could not bind " + host + ":" + std::to_string(port));
    }
  }
  thread_ = std::thread([base = base_] {
    NameThisThread("rc-metrics");
    event_base_dispatch(base);
  });
  return Status::OK();
}

void MetricsHttpServer::Stop() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(stop_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (stop_event_ != nullptr) event_free(stop_event_);
  if (stop_fd_ >= 0) close(stop_fd_);
  if (http_ != nullptr) evhttp_free(http_);
  stop_event_ = nullptr;
  stop_fd_ = -1;
  if (base_ != nullptr) event_base_free(base_);
  http_ = nullptr;
  base_ = nullptr;
}

}  // namespace rockcache::server
