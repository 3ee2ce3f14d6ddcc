// INFO: builds the text of Redis's INFO reply from the server's state. Sections follow Redis's
// names and field names where Redis has them; ours (pool, rocksdb) follow the same format.
// May read RocksDB properties and the key count: call from a worker thread.
#pragma once

#include <string>
#include <vector>

namespace rockcache::server {

class Server;

inline constexpr const char* kRockcacheVersion = "0.1.0";
// The Redis version rockcache answers like (HELLO, INFO redis_version), for client libraries
// that switch features on it.
inline constexpr const char* kRedisCompatVersion = "7.0.15";

// `sections` as INFO got them: empty = default sections; "all", "everything", "default" or
// section names (case-insensitive). Unknown names contribute nothing, as in Redis.
// The process's resident set size in bytes (/proc/self/statm). Any thread.
uint64_t ResidentBytes();

std::string BuildInfo(Server& server, const std::vector<std::string>& sections);

// Write commands that succeeded since start-up (or CONFIG RESETSTAT), from INFO commandstats'
// counts: what rdb_changes_since_last_save counts from (server/persistence/checkpoints.h).
uint64_t WritesProcessed(Server& server);

}  // namespace rockcache::server
