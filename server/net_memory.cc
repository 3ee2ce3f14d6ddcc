// NetLoop and per-client memory: what each connection holds (its buffers, a partly parsed
// command, its queued MULTI commands), stored in its ClientInfo for CLIENT LIST / INFO, summed
// in the ClientRegistry, and maxmemory-clients: past it, the clients holding the most are
// disconnected (Redis 7's client eviction). Loop thread only. See server/net_loop.h.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "server/clock.h"
#include "server/net_loop.h"
#include "server/server.h"
#include "server/tx/transaction.h"

namespace rockcache::server {
namespace {

// A scan of every client at most this often per loop while the sum stays over the limit (the
// kills it posts take a loop pass to land; the memory they free shows only then).
constexpr int64_t kEvictionIntervalMs = 100;

}  // namespace

void NetLoop::NoteClientMemory(Connection* conn) {
  ClientInfo& info = *conn->info;
  const uint64_t input_free = conn->input.capacity() - conn->input.size();
  const uint64_t argv = conn->parser.held_bytes();
  const uint64_t multi = conn->tx != nullptr ? conn->tx->queued_bytes : 0;
  const uint64_t output = conn->output.capacity() + conn->held_pushes.capacity() +
                          info.slice_queued_bytes.load(std::memory_order_relaxed);
  const uint64_t total = sizeof(Connection) + conn->input.capacity() + argv + multi + output;
  info.query_buffer_free.store(input_free, std::memory_order_relaxed);
  info.argv_memory.store(argv, std::memory_order_relaxed);
  info.multi_memory.store(multi, std::memory_order_relaxed);
  info.output_memory.store(output, std::memory_order_relaxed);
  if (total == conn->noted_memory) return;
  info.total_memory.store(total, std::memory_order_relaxed);
  ClientRegistry& clients = server_->clients();
  clients.AddMemory(static_cast<int64_t>(total) - static_cast<int64_t>(conn->noted_memory));
  conn->noted_memory = total;
  const uint64_t limit = server_->settings().maxmemory_clients.load(std::memory_order_relaxed);
  if (limit > 0 && clients.memory() > limit) EvictClients(limit);
}

void NetLoop::ForgetClientMemory(Connection* conn) {
  server_->clients().AddMemory(-static_cast<int64_t>(conn->noted_memory));
  conn->noted_memory = 0;
}

void NetLoop::EvictClients(uint64_t limit) {
  const int64_t now = NowUnixMs();
  if (now - last_client_eviction_ms_ < kEvictionIntervalMs) return;
  last_client_eviction_ms_ = now;
  std::vector<std::pair<uint64_t, std::shared_ptr<ClientInfo>>> candidates;
  uint64_t sum = 0;
  for (std::shared_ptr<ClientInfo>& info : server_->clients().Snapshot()) {
    if (info->killed.load(std::memory_order_relaxed)) continue;  // going already
    const uint64_t bytes = info->total_memory.load(std::memory_order_relaxed);
    sum += bytes;
    if (!info->no_evict.load(std::memory_order_relaxed)) candidates.emplace_back(bytes, info);
  }
  if (sum <= limit) return;
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [bytes, info] : candidates) {
    if (sum <= limit) break;
    if (info->killed.exchange(true)) continue;  // a CLIENT KILL got there first
    spdlog::warn("Evicting client: id={} addr={} tot-mem={} (maxmemory-clients {})", info->id,
                 info->addr, bytes, limit);
    server_->clients().CountEvicted();
    sum -= bytes;
    Completion completion;
    completion.kind = Completion::Kind::kKill;
    completion.conn_id = info->id;
    server_->loop(info->loop_index)->PostCompletion(std::move(completion));
  }
}

}  // namespace rockcache::server
