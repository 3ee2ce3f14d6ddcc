// ServerAdmin: what the administrative commands reach — INFO, CONFIG, DEBUG, CLIENT KILL /
// UNBLOCK, SHUTDOWN, BGSAVE / SAVE / LASTSAVE, SLOWLOG, LATENCY, MEMORY and OBJECT. They need much
// of the server (its config to change, its counters to read or reset, its loops to reach another
// client), and this is the one interface that says so; every other handler reaches only the
// parts CommandContext names (server/commands/command.h). Handlers get it from ctx.admin().
//
// Threads: as each command's flags say (kConnection ones on their network thread, the others on
// workers); every method may be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rockcache::config {
class Config;
}
namespace rockcache::cache {
class Cache;
}

namespace rockcache::server {

class Server;
class Checkpoints;
class Metrics;
class SlowLog;
struct Completion;

class ServerAdmin {
 public:
  explicit ServerAdmin(Server* server) : server_(server) {}
  ServerAdmin(const ServerAdmin&) = delete;
  ServerAdmin& operator=(const ServerAdmin&) = delete;

  // The config, to read and change (CONFIG SET / REWRITE).
  config::Config& config();
  // INFO's text for `sections` (server/metrics/info.h).
  std::string Info(const std::vector<std::string>& sections);
  // CONFIG RESETSTAT: zeroes the counters of the server, the pool and the cache.
  void ResetStats();
  // SHUTDOWN: asks the server to shut down; returns at once.
  void RequestShutdown();
  // BGSAVE / SAVE / LASTSAVE (server/persistence/checkpoints.h), and the count of writes they
  // record as saved.
  Checkpoints& checkpoints();
  uint64_t WritesProcessed();
  // Per-command metrics and the latency monitor (LATENCY), the slow log (SLOWLOG).
  Metrics& metrics();
  SlowLog& slowlog();
  // The cache as a whole, to observe (stats, policy, Inspect, LFU counters, TOUCH's Visit) and
  // for DEBUG CACHE-VERIFY, which walks it under the key locks. Never null once the server has
  // started. A fill or update of a key goes through CommandContext::cache, under the discipline
  // of server/executor.h.
  cache::Cache* cache();
  // Hands `completion` to loop `loop_index` (CLIENT KILL, CLIENT UNBLOCK: another client's loop).
  void PostCompletion(uint32_t loop_index, Completion completion);

 private:
  Server* const server_;
};

}  // namespace rockcache::server
