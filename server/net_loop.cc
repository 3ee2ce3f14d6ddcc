// NetLoop lifecycle: the event base, listeners and accept, the wake-up event, closing
// connections, the once-a-second timer (idle and soft output-limit timeouts). Loop thread,
// except Listen/Start/StopListening/Stop/Join (main thread). See server/net_loop.h.
#include "server/net_loop.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pool/worker_pool.h"
#include "server/blocking/wait_registry.h"
#include "server/clock.h"
#include "server/commands/client_tracking.h"
#include "server/pubsub/subscriptions.h"
#include "server/server.h"
#include "server/thread_name.h"

namespace rockcache::server {
namespace {

constexpr std::string_view kProtectedModeError =
    "-DENIED rockcache is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to rockcache you may "
    "adopt one of the following solutions: 1) Just disable protected mode sending the command "
    "'CONFIG SET protected-mode no' from the loopback interface by connecting to rockcache from "
    "the same host the server is running, however MAKE SURE rockcache is not publicly accessible "
    "from internet if you do so. 2) Alternatively you can just disable the protected mode by "
    "editing the rockcache configuration file, and setting the protected mode option to 'no', "
    "and then restarting the server. 3) If you started the server manually just for testing, "
    "restart it with the '--protected-mode no' option. 4) Set up an authentication password for "
    "the default user. NOTE: You only need to do one of the above things in order for the server "
    "to start accepting connections from the outside.\r\n";

std::string FormatAddress(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

bool IsLoopback(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
  }
  return addr->sa_family == AF_UNIX;
}

bool ResolveAddress(const std::string& host, int port, sockaddr_storage* out, int* len) {
  std::memset(out, 0, sizeof(*out));
  auto* in = reinterpret_cast<sockaddr_in*>(out);
  if (inet_pton(AF_INET, host.c_str(), &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in);
    return true;
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
  std::string h = host == "*" ? "::" : host;
  if (inet_pton(AF_INET6, h.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

}  // namespace

NetLoop::NetLoop(Server* server, uint32_t index)
    : server_(server), index_(index), counters_(&server->stats().loops[index]) {}

NetLoop::~NetLoop() {
  Join();
  for (auto& [id, conn] : connections_) {
    if (conn->waiter) server_->blocking().Abandon(conn->waiter.get());
    if (conn->wait_timer) event_free(conn->wait_timer);
    if (conn->read_event) event_free(conn->read_event);
    if (conn->write_event) event_free(conn->write_event);
    close(conn->fd);
    server_->clients().Remove(id);
  }
  connections_.clear();
  for (auto* listener : listeners_) evconnlistener_free(listener);
  if (wake_event_) event_free(wake_event_);
  if (timer_event_) event_free(timer_event_);
  if (submit_event_) event_free(submit_event_);
  if (retry_event_) event_free(retry_event_);
  if (pause_timer_) event_free(pause_timer_);
  pubsub_inbox_.reset();  // its event belongs to base_
  if (wake_fd_ >= 0) close(wake_fd_);
  if (base_) event_base_free(base_);
}

Status NetLoop::Listen(const std::vector<std::string>& addresses, int port) {
  base_ = event_base_new();
  if (base_ == nullptr) return Status::IOError("event_base_new failed");
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Status::IOError(std::string("eventfd: ") + strerror(errno));
  wake_event_ = event_new(base_, wake_fd_, EV_READ | EV_PERSIST, &NetLoop::OnWake, this);
  event_add(wake_event_, nullptr);
  timer_event_ = event_new(base_, -1, EV_PERSIST, &NetLoop::OnTimer, this);
  timeval one_second{1, 0};
  event_add(timer_event_, &one_second);
  submit_event_ = event_new(base_, -1, 0, &NetLoop::OnSubmitGroup, this);
  retry_event_ = evtimer_new(base_, &NetLoop::OnRetryParked, this);
  pause_timer_ = evtimer_new(base_, &NetLoop::OnPauseTimer, this);
  pubsub_inbox_ = std::make_unique<PubSubInbox>(this);
  if (Status s = pubsub_inbox_->Open(base_); !s.ok()) return s;

  for (const auto& host : addresses) {
    sockaddr_storage ss;
    int len = 0;
    if (!ResolveAddress(host, port, &ss, &len)) {
      return Status::InvalidArgument("bind: '" + host + "' is not an IPv4 or IPv6 address");
    }
    if (index_ == 0) {
      // SO_REUSEPORT would let us share the port with another running server without an
      // error; probe with a plain socket first so a busy port fails start-up as in Redis.
      int probe = socket(ss.ss_family, SOCK_STREAM, 0);
      int one = 1;
      setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      int rc = bind(probe, reinterpret_cast<sockaddr*>(&ss), len);
      int err = errno;
      close(probe);
      if (rc != 0) {
        return Status::IOError("could not bind " + host + ":" + std::to_string(port) + ": " +
                               strerror(err));
      }
    }
    evconnlistener* listener = evconnlistener_new_bind(
        base_, &NetLoop::OnAccept, this,
        LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
        511, reinterpret_cast<sockaddr*>(&ss), len);
    if (listener == nullptr) {
      return Status::IOError("could not listen on " + host + ":" + std::to_string(port) + ": " +
                             strerror(errno));
    }
    listeners_.push_back(listener);
  }
  return Status::OK();
}

void NetLoop::Start() {
  thread_ = std::thread([this] {
    NameThisThread("rc-net-" + std::to_string(index_));
    pool::WorkerPool::NeverWaitOnThisThread();  // a saturated pool parks batches instead
    event_base_dispatch(base_);
  });
}

void NetLoop::StopListening() {
  stop_listening_.store(true);
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

void NetLoop::Stop() {
  stopping_.store(true);
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

void NetLoop::Join() {
  if (thread_.joinable()) thread_.join();
}

void NetLoop::OnAccept(evconnlistener*, int fd, sockaddr* addr, int, void* arg) {
  static_cast<NetLoop*>(arg)->Accept(fd, addr);
}

void NetLoop::Accept(int fd, sockaddr* addr) {
  Server& server = *server_;
  server.stats().total_connections_received.fetch_add(1, std::memory_order_relaxed);
  evutil_make_socket_nonblocking(fd);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int keepalive = server.settings().tcp_keepalive.load(std::memory_order_relaxed);
  if (keepalive > 0) {
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    int idle = keepalive;
    int interval = keepalive / 3 > 0 ? keepalive / 3 : 1;
    int count = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  }

  if (server.settings().protected_mode.load(std::memory_order_relaxed) &&
      !server.settings().auth_required.load(std::memory_order_relaxed) && !IsLoopback(addr)) {
    [[maybe_unused]] ssize_t n = write(fd, kProtectedModeError.data(), kProtectedModeError.size());
    server.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
    close(fd);
    return;
  }

  auto info = std::make_shared<ClientInfo>();
  info->id = server.NextClientId();
  info->loop_index = index_;
  info->fd = fd;
  info->addr = FormatAddress(addr);
  sockaddr_storage local;
  socklen_t local_len = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0) {
    info->laddr = FormatAddress(reinterpret_cast<sockaddr*>(&local));
  }
  info->created_ms = NowUnixMs();
  info->last_interaction_ms.store(info->created_ms);
  if (!server.clients().TryAdd(info, static_cast<size_t>(server.settings().maxclients.load()))) {
    constexpr std::string_view kFull = "-ERR max number of clients reached\r\n";
    [[maybe_unused]] ssize_t n = write(fd, kFull.data(), kFull.size());
    server.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
    close(fd);
    return;
  }
  auto conn = std::make_unique<Connection>(info->id, fd, this, info);
  conn->authenticated = !server.settings().auth_required.load(std::memory_order_relaxed);
  conn->parser.set_max_bulk_len(server.settings().proto_max_bulk_len.load());
  conn->last_interaction_ms = info->created_ms;
  conn->read_event = event_new(base_, fd, EV_READ | EV_PERSIST, &NetLoop::OnReadable, conn.get());
  conn->write_event = event_new(base_, fd, EV_WRITE | EV_PERSIST, &NetLoop::OnWritable, conn.get());
  event_add(conn->read_event, nullptr);
  spdlog::debug("accepted client id={} addr={} loop={}", info->id, info->addr, index_);
  connections_.emplace(conn->id, std::move(conn));
}

void NetLoop::OnWake(int fd, short, void* arg) {
  auto* loop = static_cast<NetLoop*>(arg);
  uint64_t value;
  [[maybe_unused]] ssize_t n = read(fd, &value, sizeof(value));
  loop->DrainCompletions();
  if (loop->stop_listening_.exchange(false)) {
    for (auto* listener : loop->listeners_) evconnlistener_free(listener);
    loop->listeners_.clear();
  }
  if (loop->stopping_.load()) event_base_loopbreak(loop->base_);
}

Connection* NetLoop::FindConnection(uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

void NetLoop::CloseConnection(Connection* conn) {
  spdlog::debug("closing client id={} addr={}", conn->id, conn->info->addr);
  conn->info->closed.store(true, std::memory_order_release);  // a sliced read in flight stops
  if (conn->pubsub != nullptr) UnsubscribeAll(server_->pubsub(), conn);
  DisableTracking(server_->tracking(), conn);
  if (conn->waiter) server_->blocking().Abandon(conn->waiter.get());  // nothing is lost
  if (conn->wait_timer) event_free(conn->wait_timer);
  if (conn->read_event) event_free(conn->read_event);
  if (conn->write_event) event_free(conn->write_event);
  close(conn->fd);
  server_->clients().Remove(conn->id);
  ForgetClientMemory(conn);
  server_->worker_pool()->ForgetClient(conn->id);
  connections_.erase(conn->id);  // destroys conn
}

void NetLoop::OnTimer(int, short, void* arg) { static_cast<NetLoop*>(arg)->CheckIdleTimeouts(); }

void NetLoop::CheckIdleTimeouts() {
  // A client over the soft output limit that neither reads nor sends is timed out here.
  std::vector<Connection*> over_limit;
  for (auto& [id, conn] : connections_) {
    if (conn->obuf_soft_since_ms != 0 &&
        OverOutputLimit(conn.get(), conn->output.size() - conn->output_pos)) {
      over_limit.push_back(conn.get());
    }
  }
  for (auto* conn : over_limit) CloseConnection(conn);
  int64_t timeout = server_->settings().timeout_sec.load(std::memory_order_relaxed);
  if (timeout <= 0) return;
  int64_t now = NowUnixMs();
  std::vector<Connection*> idle;
  for (auto& [id, conn] : connections_) {
    // As Redis, a subscribed client is never idle: it waits for messages.
    // Nor is a client held by CLIENT PAUSE (blocked, for Redis).
    if (!conn->in_flight && conn->pubsub == nullptr && !conn->pause_held &&
        now - conn->last_interaction_ms > timeout * 1000) {
      idle.push_back(conn.get());
    }
  }
  for (auto* conn : idle) {
    spdlog::debug("closing idle client id={}", conn->id);
    CloseConnection(conn);
  }
}

}  // namespace rockcache::server
