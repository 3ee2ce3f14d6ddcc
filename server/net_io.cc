// NetLoop connection I/O: reading into the input buffer, the query-buffer limit, writing
// replies, the output-buffer limit (client-output-buffer-limit). Loop thread only. Parsing and
// routing of what is read is in net_dispatch.cc.
#include <event2/event.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>

#include "server/clock.h"
#include "server/net_loop.h"
#include "server/server.h"
#include "server/tx/transaction.h"

namespace rockcache::server {
namespace {

// Room guaranteed before each read() (Redis reads 16 KB at a time too).
constexpr size_t kReadChunk = 16 * 1024;
// While a batch is in flight, stop reading once this much unparsed input waits (TCP then
// pushes back on the client); reading resumes when the batch completes.
constexpr size_t kPausedInputLimit = 16 * 1024 * 1024;

}  // namespace

void NetLoop::OnReadable(int, short, void* arg) {
  auto* conn = static_cast<Connection*>(arg);
  conn->loop->ReadFrom(conn);
}

void NetLoop::ReadFrom(Connection* conn) {
  if (conn->info->killed.load(std::memory_order_relaxed) && !conn->in_flight) {
    CloseConnection(conn);  // CLIENT KILL from another loop; its message may still be queued
    return;
  }
  size_t room = 0;
  char* at = conn->input.PrepareWrite(kReadChunk, &room);
  ssize_t n = read(conn->fd, at, room);
  if (n <= 0) {
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    CloseConnection(conn);
    return;
  }
  conn->input.CommitWrite(static_cast<size_t>(n));
  LoopCounters::Add(&counters_->net_input_bytes, static_cast<uint64_t>(n));
  // What other threads posted for this loop before these bytes arrived (the invalidation of a
  // write acknowledged before the client sent them) goes out before their replies
  // (server/tracking/tracking.h, order 3). Draining may close this connection.
  if (const uint64_t id = conn->id; pubsub_inbox_->DrainPending()) {
    conn = FindConnection(id);
    if (conn == nullptr) return;
  }
  conn->last_interaction_ms = NowUnixMs();
  conn->info->last_interaction_ms.store(conn->last_interaction_ms, std::memory_order_relaxed);
  if (conn->in_flight) {
    if (CloseIfOverQueryLimit(conn)) return;
    NoteClientMemory(conn);
    if (conn->input.size() > kPausedInputLimit && !conn->reading_paused) {
      event_del(conn->read_event);
      conn->reading_paused = true;
    }
    return;
  }
  ProcessInput(conn);
}

bool NetLoop::CloseIfOverQueryLimit(Connection* conn) {
  const uint64_t held = conn->input.size() + conn->parser.held_bytes();
  const uint64_t limit =
      server_->settings().client_query_buffer_limit.load(std::memory_order_relaxed);
  if (held <= limit) return false;
  // As Redis: logged and closed, no reply.
  spdlog::warn(
      "closing client id={} addr={}: query buffer of {} bytes over client-query-buffer-limit {}",
      conn->id, conn->info->addr, held, limit);
  CloseConnection(conn);
  return true;
}

void NetLoop::Flush(Connection* conn) {
  // A command that queued or dropped a transaction's commands (MULTI ... DISCARD) changed what the
  // client holds: published before its reply leaves, so a CLIENT LIST on another network thread
  // after the reply sees it.
  const uint64_t multi = conn->tx != nullptr ? conn->tx->queued_bytes : 0;
  if (conn->info->multi_memory.load(std::memory_order_relaxed) != multi) NoteClientMemory(conn);
  while (conn->output_pos < conn->output.size()) {
    ssize_t n = write(conn->fd, conn->output.data() + conn->output_pos,
                      conn->output.size() - conn->output_pos);
    if (n > 0) {
      conn->output_pos += static_cast<size_t>(n);
      LoopCounters::Add(&counters_->net_output_bytes, static_cast<uint64_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    CloseConnection(conn);  // peer gone
    return;
  }
  size_t pending = conn->output.size() - conn->output_pos;
  conn->info->pending_reply_bytes.store(pending, std::memory_order_relaxed);
  if (pending == 0) {
    conn->output.clear();
    conn->output_pos = 0;
    // A big reply's buffer is not kept for the connection's lifetime.
    if (conn->output.capacity() > kKeepOutput) std::string().swap(conn->output);
    NoteClientMemory(conn);
    if (conn->write_pending) {
      event_del(conn->write_event);
      conn->write_pending = false;
    }
    if (conn->close_after_reply) CloseConnection(conn);
    return;
  }
  if (OverOutputLimit(conn, pending)) {
    CloseConnection(conn);
    return;
  }
  NoteClientMemory(conn);
  if (conn->output_pos > 1024 * 1024 && conn->output_pos * 2 > conn->output.size()) {
    conn->output.erase(0, conn->output_pos);
    conn->output_pos = 0;
  }
  if (!conn->write_pending) {
    event_add(conn->write_event, nullptr);
    conn->write_pending = true;
  }
}

bool NetLoop::OverOutputLimit(Connection* conn, size_t pending) {
  const Settings& settings = server_->settings();
  const bool pubsub = conn->pubsub != nullptr;  // Redis's pubsub client class
  const uint64_t hard =
      (pubsub ? settings.pubsub_output_buffer_limit : settings.client_output_buffer_limit)
          .load(std::memory_order_relaxed);
  const uint64_t soft =
      (pubsub ? settings.pubsub_output_buffer_soft_limit : settings.client_output_buffer_soft_limit)
          .load(std::memory_order_relaxed);
  bool over = hard > 0 && pending > hard;
  if (!over && soft > 0 && pending > soft) {
    const int64_t now = NowUnixMs();
    const int64_t seconds = (pubsub ? settings.pubsub_output_buffer_soft_seconds
                                    : settings.client_output_buffer_soft_seconds)
                                .load(std::memory_order_relaxed);
    if (conn->obuf_soft_since_ms == 0) {
      conn->obuf_soft_since_ms = now;
    } else {
      over = now - conn->obuf_soft_since_ms > seconds * 1000;
    }
  } else if (!over) {
    conn->obuf_soft_since_ms = 0;
  }
  if (over) {
    spdlog::warn(
        "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
        conn->id, conn->info->addr);
  }
  return over;
}

void NetLoop::OnWritable(int, short, void* arg) {
  auto* conn = static_cast<Connection*>(arg);
  conn->loop->Flush(conn);
}

}  // namespace rockcache::server
