// Settings: the hot-path settings, mirrored from the config into atomics (Server::ApplySetting,
// from the option table's bindings), so the network threads and workers never take the config
// lock per command. Any thread reads them (relaxed loads); only the config's change callback
// stores.
#pragma once

#include <atomic>
#include <cstdint>

namespace rockcache::server {

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
  // Of those, how many of one pipeline (one pass over a client's input) may read mapped SST
  // pages the OS holds in memory: rtc-storage-read-mapped.
  std::atomic<uint64_t> rtc_storage_read_mapped{2};
  // And every miss while the pool still runs a group the loop sent: rtc-storage-read-balance.
  std::atomic<bool> rtc_storage_read_balance{true};
  // Sliced reads (server/slicing/): entries per step and the longest a step runs.
  std::atomic<uint64_t> slice_items{1024};
  std::atomic<uint64_t> slice_usec{1000};
  // Scripting (server/scripting/): a worker's Lua memory cap, and the script cache's bound.
  std::atomic<uint64_t> lua_maxmemory{128ull << 20};
  std::atomic<uint64_t> lua_script_cache_bytes{64ull << 20};
  std::atomic<int64_t> busy_reply_threshold_ms{5000};
  // Scripts sharing a group-commit segment (server/group_commit.h): script-group-commit,
  // script-group-max-scripts, the most one-script batches a worker task takes, and
  // script-group-max-usec, the longest one runs before it is run again alone.
  std::atomic<bool> script_group_commit{true};
  std::atomic<uint64_t> script_group_max_scripts{8};
  std::atomic<uint64_t> script_group_max_usec{1000};
  std::atomic<uint64_t> tracking_table_max_keys{1000000};
  // maxmemory-clients resolved to bytes (a percentage is of maxmemory); 0 = no limit.
  std::atomic<uint64_t> maxmemory_clients{0};
  std::atomic<bool> latency_tracking{true};
  std::atomic<int64_t> slowlog_log_slower_than{10000};
  std::atomic<int64_t> slowlog_max_len{128};
  // Bumped by every CONFIG SET cache-maxmemory; a slice-by-slice shrink still running for an
  // older value stops when it sees a newer one.
  std::atomic<uint64_t> cache_resize_generation{0};
};

}  // namespace rockcache::server
