#include "server/pubsub/inbox.h"

#include <event2/event.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "server/blocking/wait_registry.h"
#include "server/connection.h"
#include "server/net_loop.h"
#include "server/pubsub/client_state.h"
#include "server/server.h"

namespace rockcache::server {

PubSubInbox::~PubSubInbox() {
  if (wake_event_ != nullptr) event_free(wake_event_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

Status PubSubInbox::Open(event_base* base) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Status::IOError(std::string("eventfd: ") + strerror(errno));
  wake_event_ = event_new(base, wake_fd_, EV_READ | EV_PERSIST, &PubSubInbox::OnWake, this);
  if (wake_event_ == nullptr || event_add(wake_event_, nullptr) != 0) {
    return Status::IOError("pubsub inbox: event_add failed");
  }
  return Status::OK();
}

void PubSubInbox::Post(std::vector<PubSubDelivery> deliveries) {
  bool was_empty;
  {
    MutexLock lock(&mu_);
    was_empty = queue_.empty();
    pending_.store(true, std::memory_order_release);
    if (was_empty) {
      queue_.swap(deliveries);
    } else {
      for (auto& d : deliveries) queue_.push_back(std::move(d));
    }
  }
  if (was_empty) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
}

void PubSubInbox::OnWake(int fd, short, void* arg) {
  uint64_t value;
  [[maybe_unused]] ssize_t n = read(fd, &value, sizeof(value));
  static_cast<PubSubInbox*>(arg)->Drain();
}

namespace {

constexpr std::string_view kInvalidateChannel = "__redis__:invalidate";

// Where an invalidation for `conn` goes now: held while the output ends inside a sliced reply or
// a batch is in flight, so it follows the reply of a read that raced with the write; written at
// once during the wait of a blocked command that recorded no tracked key (as Redis sends them
// to a blocked client), once that command is queued as a waiter (before, it may still be
// answered at once, and its own write's invalidation follows its reply, as in Redis).
std::string& InvalidationTarget(Connection* conn) {
  if (conn->reply_partial) return conn->held_pushes;
  if (!conn->in_flight) return conn->output;
  if (conn->wait_takes_invalidations && conn->held_pushes.empty() && conn->waiter != nullptr &&
      conn->waiter->state.load(std::memory_order_acquire) == WaitState::kWaiting) {
    return conn->output;
  }
  return conn->held_pushes;
}

// An invalidation for `conn`: a RESP3 push ["invalidate", keys], or, for a RESP2 connection
// subscribed to __redis__:invalidate (a REDIRECT target), the message of that channel; nothing
// for other RESP2 connections (as Redis). Held while the connection has a batch in flight, so it
// follows the replies of reads that raced with the write (server/tracking/tracking.h;
// InvalidationTarget). False when nothing was written.
bool AppendInvalidation(Connection* conn, const PubSubDelivery& delivery, uint64_t hard) {
  std::string frame;
  if (conn->protocol == Protocol::kResp3) {
    frame = ">2\r\n$10\r\ninvalidate\r\n";
  } else if (conn->pubsub != nullptr &&
             conn->pubsub->channels.count(std::string(kInvalidateChannel)) > 0) {
    frame = "*3\r\n$7\r\nmessage\r\n";
    AppendBulk(&frame, kInvalidateChannel);
  } else {
    return false;
  }
  if (delivery.invalidate_all) {
    frame += conn->protocol == Protocol::kResp3 ? "_\r\n" : "$-1\r\n";
  } else {
    AppendArrayHeader(&frame, static_cast<int64_t>(delivery.invalidation->size()));
    for (const std::string& key : *delivery.invalidation) AppendBulk(&frame, key);
  }
  if (hard != 0 && conn->output.size() - conn->output_pos + conn->held_pushes.size() > hard) {
    // Past the limit: an invalidation is never dropped while the client stays, so it goes (Flush
    // closes it now, or its batch's return does).
    conn->close_after_reply = true;
    return true;
  }
  std::string& to = InvalidationTarget(conn);
  to += frame;
  return true;
}

// A tracking client whose REDIRECT client is gone: a RESP3 push ["tracking-redir-broken", id]
// per invalidation it missed (as Redis 7.0); nothing for RESP2. Held like an invalidation.
bool AppendRedirectBroken(Connection* conn, const PubSubDelivery& delivery, uint64_t hard) {
  if (conn->protocol != Protocol::kResp3) return false;
  std::string frame = ">2\r\n$21\r\ntracking-redir-broken\r\n";
  AppendInteger(&frame, static_cast<int64_t>(delivery.redirect_broken));
  if (hard != 0 && conn->output.size() - conn->output_pos + conn->held_pushes.size() > hard) {
    conn->close_after_reply = true;
    return true;
  }
  std::string& to = InvalidationTarget(conn);
  for (uint32_t i = 0; i < delivery.redirect_broken_count; ++i) to += frame;
  return true;
}

}  // namespace

void PubSubInbox::Drain() {
  std::vector<PubSubDelivery> batch;
  {
    MutexLock lock(&mu_);
    batch.swap(queue_);
    pending_.store(false, std::memory_order_relaxed);
  }
  // Every receiver is flushed once per drain, however many messages it got: the write goes out
  // in one syscall, and a receiver past the pubsub output limit is closed by Flush.
  // A receiver already past the pubsub class's hard limit gets nothing more: Flush closes it.
  const uint64_t hard =
      loop_->server()->settings().pubsub_output_buffer_limit.load(std::memory_order_relaxed);
  std::vector<uint64_t> touched;
  std::unordered_set<uint64_t> seen;
  for (const PubSubDelivery& delivery : batch) {
    if (delivery.redirect_broken != 0) {
      for (uint64_t id : delivery.conn_ids) {
        Connection* conn = loop_->FindConnection(id);
        if (conn == nullptr || !AppendRedirectBroken(conn, delivery, hard)) continue;
        if (seen.insert(id).second) touched.push_back(id);
      }
      continue;
    }
    if (delivery.invalidation != nullptr) {
      for (uint64_t id : delivery.conn_ids) {
        Connection* conn = loop_->FindConnection(id);
        if (conn == nullptr) continue;
        if (!AppendInvalidation(conn, delivery, hard)) continue;
        if (seen.insert(id).second) touched.push_back(id);
      }
      continue;
    }
    for (uint64_t id : delivery.conn_ids) {
      Connection* conn = loop_->FindConnection(id);
      if (conn == nullptr || conn->pubsub == nullptr) continue;  // closed or unsubscribed
      // A batch can hold many messages a publisher on another thread sent while this loop
      // waited for a core: before one would take the receiver past the hard limit, what it
      // holds is written (as much as its socket takes), so the limit applies to what the
      // receiver does not read, as for messages published on its own thread.
      if (hard != 0 && conn->output.size() - conn->output_pos + conn->held_pushes.size() +
                               delivery.bytes->size() >
                           hard) {
        loop_->Flush(conn);
        conn = loop_->FindConnection(id);
        if (conn == nullptr || conn->pubsub == nullptr) continue;
      }
      const auto& set = delivery.pattern ? conn->pubsub->patterns
                        : delivery.shard ? conn->pubsub->shard_channels
                                         : conn->pubsub->channels;
      if (set.count(delivery.source) == 0) continue;  // unsubscribed after the publish
      if (hard == 0 || conn->output.size() - conn->output_pos + conn->held_pushes.size() <= hard) {
        // RESP3: the same frame as a push ('>' for the array's '*'), held while the output
        // ends inside a sliced reply so it never lands in the middle of one.
        std::string& to = conn->reply_partial ? conn->held_pushes : conn->output;
        if (conn->protocol == Protocol::kResp3) {
          to.push_back('>');
          to.append(*delivery.bytes, 1, std::string::npos);
        } else {
          to += *delivery.bytes;
        }
      }
      if (seen.insert(id).second) touched.push_back(id);
    }
  }
  // Flush may close the connection it flushes, so each is looked up again.
  for (uint64_t id : touched) {
    if (Connection* conn = loop_->FindConnection(id)) loop_->Flush(conn);
  }
}

}  // namespace rockcache::server
