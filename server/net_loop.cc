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
#include "server/blocking/timeout.h"
#include "server/blocking/wait_registry.h"
#include "server/clock.h"
#include "server/protocol/reply.h"
#include "server/pubsub/subscriptions.h"
#include "server/server.h"
#include "server/tx/transaction.h"

namespace rockcache::server {
namespace {

// Room guaranteed before each read() (Redis reads 16 KB at a time too). The input buffer keeps
// up to kKeepInput of capacity across reads; a bigger one is freed once it is empty.
constexpr size_t kReadChunk = 16 * 1024;
constexpr size_t kKeepInput = 64 * 1024;
// While a batch is in flight, stop reading once this much unparsed input waits (TCP then
// pushes back on the client); reading resumes when the batch completes.
constexpr size_t kPausedInputLimit = 16 * 1024 * 1024;
// A parked batch (the pool was saturated) is retried this often, and on every completion.
constexpr timeval kParkedRetry{0, 1000};

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

// A command for a worker batch; takes the arguments out of *argv.
PreparedCommand Prepare(const CommandSpec* spec, int id, Args* argv, bool rtc_missed, int db) {
  PreparedCommand command;
  command.spec = spec;
  command.db = db;
  command.command_id = id;
  command.argv = std::move(*argv);
  command.rtc_missed = rtc_missed;
  *argv = Args();
  return command;
}

// For INFO keyspace_hits/misses: a single-key read counts as a hit unless it replied nil.
int KeyspaceResult(int command_id, bool nil_reply) {
  if (command_id < 0) return 0;
  const CommandSpec* spec = AllCommands()[static_cast<size_t>(command_id)];
  if (!(spec->flags & kReadOnly) || spec->first_key <= 0 || spec->last_key != spec->first_key) {
    return 0;
  }
  return nil_reply ? -1 : 1;
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

void NetLoop::PostCompletion(Completion completion) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(completions_mu_);
    was_empty = completions_.empty();
    completions_.push_back(std::move(completion));
  }
  if (was_empty) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
}

void NetLoop::PostCompletions(std::vector<Completion> completions) {
  if (completions.empty()) return;
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(completions_mu_);
    was_empty = completions_.empty();
    if (was_empty) {
      completions_.swap(completions);
    } else {
      for (auto& c : completions) completions_.push_back(std::move(c));
    }
  }
  if (was_empty) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
}

void NetLoop::QueueBatch(Connection* conn, std::vector<PreparedCommand> batch, BatchTimes times) {
  if (pending_group_.empty()) event_active(submit_event_, 0, 0);
  pending_group_.push_back(ConnBatch{conn->id, std::move(batch), times, ReplyBudget(conn)});
}

void NetLoop::OnSubmitGroup(int, short, void* arg) {
  auto* loop = static_cast<NetLoop*>(arg);
  std::vector<ConnBatch> group;
  group.swap(loop->pending_group_);
  loop->server_->SubmitGroup(loop->index_, std::move(group));
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
  conn->last_interaction_ms = NowUnixMs();
  conn->info->last_interaction_ms.store(conn->last_interaction_ms, std::memory_order_relaxed);
  if (conn->in_flight) {
    if (CloseIfOverQueryLimit(conn)) return;
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

void NetLoop::ProcessInput(Connection* conn) {
  Server& server = *server_;
  LoopMetrics& metrics = server.metrics().loop(index_);
  std::vector<PreparedCommand> batch;
  Args& argv = conn->argv;
  uint64_t commands = 0;
  uint64_t rtc_answers = 0;
  int64_t now_ms = 0;  // read once, on the first cache lookup of this pass
  const bool rtc_reads = server.settings().rtc_reads.load(std::memory_order_relaxed);
  // Every command parsed in this pass shares one "parsed" stamp; a command run here starts
  // where the previous one ended, so timing costs one clock read per command.
  const bool timed = server.settings().latency_tracking.load(std::memory_order_relaxed);
  const uint64_t parsed = timed ? Clock::Now() : 0;
  uint64_t start = parsed;
  const uint64_t output_limit =
      server.settings().client_output_buffer_limit.load(std::memory_order_relaxed);
  bool over_output_limit = false;
  // Bytes of conn->input parsed in this pass; dropped from the buffer only at the end, so a
  // command that must wait for this pass's batch can be parsed again from command_start.
  size_t pos = 0;
  const char* const input = conn->input.data();
  const size_t input_size = conn->input.size();
  while (!conn->in_flight && !conn->close_after_reply && pos < input_size) {
    // Answers given here (cache hits, in-loop commands) past the hard output limit: the client
    // is closed, as Redis closes a client whose replies pass the limit within one pass. Keeps a
    // pipeline of big cached values from growing the buffer without bound before a Flush.
    if (output_limit > 0 && conn->output.size() - conn->output_pos > output_limit) {
      over_output_limit = true;
      break;
    }
    const size_t command_start = pos;
    size_t consumed = 0;
    conn->parser.set_unauthenticated(!conn->authenticated);
    RespParser::Result result = conn->parser.Parse(input + pos, input_size - pos, &consumed, &argv);
    pos += consumed;
    if (result == RespParser::Result::kNeedMore) break;
    if (result == RespParser::Result::kError) {
      if (!batch.empty()) {
        // Answer the commands before it first; the error is parsed again afterwards.
        pos = command_start;
        break;
      }
      spdlog::debug("client id={} protocol error: {}", conn->id, conn->parser.error());
      AppendError(&conn->output, "ERR " + conn->parser.error());
      metrics.RecordError("ERR");
      conn->close_after_reply = true;
      break;
    }
    ++commands;
    int id = -1;
    const CommandSpec* spec = FindCommand(argv[0], &id);
    if (conn->tx_multi() || (spec != nullptr && (spec->flags & kTransaction))) {
      TxInLoop handled = TransactionInLoop(server, conn, spec, id, argv, &batch);
      if (handled == TxInLoop::kClose) {
        spdlog::warn(
            "closing client id={} addr={}: queued transaction over client-query-buffer-limit",
            conn->id, conn->info->addr);
        CloseConnection(conn);
        return;
      }
      if (handled == TxInLoop::kHandled) continue;
      if (handled == TxInLoop::kHandledLast) break;  // the rest waits for EXEC's batch
    }
    std::string error;
    if (spec == nullptr) {
      AppendUnknownCommand(&error, argv);
    } else if (!ArityOk(*spec, argv.size())) {
      AppendArityError(&error, argv[0]);
    } else if (!conn->authenticated && !(spec->flags & kNoAuth)) {
      error = "-NOAUTH Authentication required.\r\n";
    }
    if (!error.empty()) {
      if (spec != nullptr) metrics.RecordRejected(id);
      metrics.RecordError(ErrorCode(error.data(), error.size()));
      if (batch.empty()) {
        conn->output += error;
      } else {
        PreparedCommand rejected;
        rejected.reply = std::move(error);
        batch.push_back(std::move(rejected));
      }
      continue;
    }
    if (conn->pubsub != nullptr) {  // RESP2 subscribed mode: an error, or PING's ["pong", arg]
      const size_t reply_start = conn->output.size();
      if (AnswerInSubscribedMode(*spec, argv, &conn->output)) {
        const uint64_t end = timed ? Clock::Now() : 0;
        RecordInLoop(conn, id, argv, false, conn->output.data() + reply_start,
                     conn->output.size() - reply_start, parsed, start, end);
        start = end;
        continue;
      }
    }
    if (spec->flags & kConnection) {
      if (!batch.empty()) {
        pos = command_start;  // runs after the batch's replies are back
        --commands;
        break;
      }
      size_t reply_start = conn->output.size();
      RunConnectionCommand(conn, *spec, argv);
      uint64_t end = timed ? Clock::Now() : 0;
      RecordInLoop(conn, id, argv, false, conn->output.data() + reply_start,
                   conn->output.size() - reply_start, parsed, start, end);
      start = end;
      continue;
    }
    if ((spec->flags & kCacheRead) && batch.empty() && rtc_reads) {
      // Run to completion: a read the cache holds is answered here, with no thread hop.
      if (now_ms == 0) now_ms = NowUnixMs();
      size_t reply_start = conn->output.size();
      if (TryAnswerFromCache(server, *spec, argv, now_ms, &conn->output, conn->db)) {
        ++rtc_answers;
        uint64_t end = timed ? Clock::Now() : 0;
        RecordInLoop(conn, id, argv, true, conn->output.data() + reply_start,
                     conn->output.size() - reply_start, parsed, start, end);
        start = end;
        continue;
      }
      batch.push_back(Prepare(spec, id, &argv, /*rtc_missed=*/true, conn->db));
      continue;
    }
    if ((spec->flags & kAnywhere) && batch.empty()) {
      CommandContext ctx{&server, nullptr, nullptr};
      ctx.db = conn->db;
      size_t reply_start = conn->output.size();
      spec->handler(ctx, argv, &conn->output);
      uint64_t end = timed ? Clock::Now() : 0;
      RecordInLoop(conn, id, argv, false, conn->output.data() + reply_start,
                   conn->output.size() - reply_start, parsed, start, end);
      start = end;
      continue;
    }
    if (spec->flags & kMayBlock) {
      // Alone in its batch, and nothing after it runs until it is answered (as Redis).
      if (!batch.empty()) {
        pos = command_start;
        --commands;
        break;
      }
      batch.push_back(Prepare(spec, id, &argv, /*rtc_missed=*/false, conn->db));
      BeginWait(conn, &batch.back());
      break;
    }
    batch.push_back(Prepare(spec, id, &argv, /*rtc_missed=*/false, conn->db));
  }
  LoopCounters::Add(&counters_->commands, commands);
  if (rtc_answers > 0) LoopCounters::Add(&counters_->rtc_answers, rtc_answers);
  if (over_output_limit) {  // no batch can be pending: answers here happen only before one
    spdlog::warn(
        "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
        conn->id, conn->info->addr);
    CloseConnection(conn);
    return;
  }
  conn->input.Consume(pos);
  conn->input.ShrinkIfEmpty(kKeepInput);
  if (CloseIfOverQueryLimit(conn)) return;
  conn->info->query_buffer_bytes.store(conn->input.size() + conn->parser.held_bytes(),
                                       std::memory_order_relaxed);
  if (!batch.empty()) {
    BatchTimes times;
    times.parsed = parsed;
    SubmitOrPark(conn, std::move(batch), times);
  }
  Flush(conn);
}

// The bytes a batch's replies may take: what the hard output-buffer limit leaves of the
// connection's pending replies (the worker stops the batch past it).
uint64_t NetLoop::ReplyBudget(const Connection* conn) const {
  const uint64_t hard =
      server_->settings().client_output_buffer_limit.load(std::memory_order_relaxed);
  const uint64_t pending = conn->output.size() - conn->output_pos;
  return hard == 0 ? UINT64_MAX : (hard > pending ? hard - pending : 0);
}

// The one place a loop hands work to the pool. Never waits: when the pool is saturated (or
// earlier batches are parked already, to keep them first in line) the batch is parked on the
// connection and reading from it stops until the batch has run.
void NetLoop::SubmitOrPark(Connection* conn, std::vector<PreparedCommand> batch, BatchTimes times) {
  conn->in_flight = true;
  // Groups go to the pool with hint 0 (any list): a connection has one batch in flight at most,
  // so its order does not depend on the list. A group holds at most pool-queue-max-size batches,
  // so backpressure still bounds the batches admitted (not only the tasks).
  pool::WorkerPool* pool = server_->worker_pool();
  if (parked_.empty() && pending_group_.size() < static_cast<size_t>(pool->QueueMaxSize()) &&
      pool->HasRoom(0)) {
    QueueBatch(conn, std::move(batch), times);
    return;
  }
  LoopCounters::Add(&counters_->parked_batches, 1);
  conn->parked = true;
  conn->parked_batch = std::move(batch);
  conn->parked_times = times;
  if (!conn->reading_paused) {
    event_del(conn->read_event);
    conn->reading_paused = true;
  }
  parked_.push_back(conn->id);
  if (!evtimer_pending(retry_event_, nullptr)) evtimer_add(retry_event_, &kParkedRetry);
}

void NetLoop::SubmitParked() {
  while (!parked_.empty()) {
    auto it = connections_.find(parked_.front());
    if (it == connections_.end() || !it->second->parked) {  // closed meanwhile
      parked_.pop_front();
      continue;
    }
    Connection* conn = it->second.get();
    pool::WorkerPool* pool = server_->worker_pool();
    if (pending_group_.size() >= static_cast<size_t>(pool->QueueMaxSize()) || !pool->HasRoom(0)) {
      break;
    }
    parked_.pop_front();
    conn->parked = false;
    QueueBatch(conn, std::move(conn->parked_batch), conn->parked_times);
    conn->parked_batch.clear();
  }
  if (!parked_.empty() && !evtimer_pending(retry_event_, nullptr)) {
    evtimer_add(retry_event_, &kParkedRetry);
  }
}

void NetLoop::OnRetryParked(int, short, void* arg) { static_cast<NetLoop*>(arg)->SubmitParked(); }

void NetLoop::RecordInLoop(Connection* conn, int command_id, const Args& argv, bool rtc,
                           const char* reply, size_t reply_length, uint64_t parsed, uint64_t start,
                           uint64_t end) {
  CommandSample sample;
  sample.command_id = command_id;
  sample.in_loop = true;
  sample.rtc = rtc;
  sample.failed = reply_length > 0 && reply[0] == '-';
  sample.keyspace = sample.failed ? 0 : KeyspaceResult(command_id, IsNilReply(reply, reply_length));
  if (sample.failed) server_->metrics().loop(index_).RecordError(ErrorCode(reply, reply_length));
  if (parsed != 0) {
    sample.stage_ns[kExecute] = Clock::NanosBetween(start, end);
    sample.stage_ns[kTotal] = Clock::NanosBetween(parsed, end);
  }
  server_->metrics().loop(index_).Record(sample);
  uint64_t total_us = sample.stage_ns[kTotal] / 1000;
  const Settings& settings = server_->settings();
  if (parsed != 0 && server_->slowlog().ShouldLog(total_us, settings.slowlog_log_slower_than)) {
    SlowLogEntry entry;
    entry.unix_time = NowUnixMs() / 1000;
    entry.duration_us = total_us;
    entry.args = SlowLog::TruncateArgs(argv);
    entry.client_addr = conn->info->addr;
    entry.client_name = conn->info->name();
    entry.stage_us[kExecute] = sample.stage_ns[kExecute] / 1000;
    entry.stage_us[kTotal] = total_us;
    entry.in_loop = true;
    server_->slowlog().Add(std::move(entry), static_cast<size_t>(settings.slowlog_max_len.load()));
  }
}

void NetLoop::RecordBatch(Connection* conn, const Completion& completion, uint64_t written) {
  LoopMetrics& metrics = server_->metrics().loop(index_);
  const BatchTimes& times = completion.times;
  const Settings& settings = server_->settings();
  int64_t slow_us = settings.slowlog_log_slower_than.load(std::memory_order_relaxed);
  for (const auto& command : completion.commands) {
    if (command.spec == nullptr) continue;  // rejected: counted when parsed
    if (command.failed) metrics.RecordError(command.error_code);
    CommandSample sample;
    sample.command_id = command.command_id;
    sample.failed = command.failed;
    sample.keyspace = command.failed ? 0 : KeyspaceResult(command.command_id, command.nil_reply);
    if (times.parsed != 0 && command.exec_end != 0) {
      sample.stage_ns[kBeforeQueue] = Clock::NanosBetween(times.parsed, times.enqueued);
      sample.stage_ns[kQueueWait] = Clock::NanosBetween(times.enqueued, times.dequeued);
      sample.stage_ns[kExecute] = Clock::NanosBetween(command.exec_start, command.exec_end);
      sample.stage_ns[kHandBack] = Clock::NanosBetween(command.exec_end, written);
      sample.stage_ns[kTotal] = Clock::NanosBetween(times.parsed, written);
    }
    metrics.Record(sample);
    uint64_t total_us = sample.stage_ns[kTotal] / 1000;
    if (times.parsed != 0 && server_->slowlog().ShouldLog(total_us, slow_us)) {
      SlowLogEntry entry;
      entry.unix_time = NowUnixMs() / 1000;
      entry.duration_us = total_us;
      entry.args = SlowLog::TruncateArgs(command.argv);
      entry.client_addr = conn->info->addr;
      entry.client_name = conn->info->name();
      for (int s = 0; s < kStageCount; ++s) entry.stage_us[s] = sample.stage_ns[s] / 1000;
      server_->slowlog().Add(std::move(entry),
                             static_cast<size_t>(settings.slowlog_max_len.load()));
    }
  }
}

void NetLoop::BeginWait(Connection* conn, PreparedCommand* command) {
  const Args& argv = command->argv;
  int64_t ms = 0;
  if (!ParseBlockTimeout(argv[BlockTimeoutIndex(argv[0], argv.size())], &ms).empty()) {
    return;  // no waiter: the worker replies the error
  }
  command->waiter = std::make_shared<Waiter>(conn->id, index_, conn->info);
  conn->waiter = command->waiter;
  conn->blocked_command_id = command->command_id;
  conn->blocked_argv = command->argv;
  constexpr int64_t kMaxTimerSec = 100LL * 365 * 24 * 3600;  // longer ones never fire anyway
  if (ms == 0 || ms / 1000 > kMaxTimerSec) return;
  if (conn->wait_timer == nullptr) {
    conn->wait_timer = evtimer_new(base_, &NetLoop::OnWaitTimeout, conn);
  }
  timeval after{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  evtimer_add(conn->wait_timer, &after);
}

void NetLoop::EndWait(Connection* conn) {
  if (conn->wait_timer != nullptr) evtimer_del(conn->wait_timer);
  conn->waiter.reset();
  conn->blocked_argv.clear();
}

// As Redis's updateStatsOnUnblock: one call when the wait ends (served, timed out, CLIENT
// UNBLOCK), failed when its reply is an error; a served command also goes to the slow log with
// the time its serving took (Redis 7.0 logs no timed-out one).
void NetLoop::RecordUnblocked(Connection* conn, const Completion& completion) {
  if (conn->blocked_command_id < 0) return;
  const std::string& reply = completion.replies;
  CommandSample sample;
  sample.command_id = conn->blocked_command_id;
  sample.failed = !reply.empty() && reply[0] == '-';
  if (sample.failed)
    server_->metrics().loop(index_).RecordError(ErrorCode(reply.data(), reply.size()));
  sample.keyspace =
      sample.failed ? 0 : KeyspaceResult(sample.command_id, IsNilReply(reply.data(), reply.size()));
  sample.stage_ns[kExecute] = completion.served_ns;
  sample.stage_ns[kTotal] = completion.served_ns;
  server_->metrics().loop(index_).Record(sample);
  const Settings& settings = server_->settings();
  const uint64_t total_us = completion.served_ns / 1000;
  if (completion.unblock == Completion::Unblock::kServed &&
      server_->slowlog().ShouldLog(total_us, settings.slowlog_log_slower_than)) {
    SlowLogEntry entry;
    entry.unix_time = NowUnixMs() / 1000;
    entry.duration_us = total_us;
    entry.args = SlowLog::TruncateArgs(conn->blocked_argv);
    entry.client_addr = conn->info->addr;
    entry.client_name = conn->info->name();
    entry.stage_us[kExecute] = total_us;
    entry.stage_us[kTotal] = total_us;
    server_->slowlog().Add(std::move(entry), static_cast<size_t>(settings.slowlog_max_len.load()));
  }
}

void NetLoop::OnWaitTimeout(int, short, void* arg) {
  auto* conn = static_cast<Connection*>(arg);
  conn->loop->WaitTimedOut(conn);
}

void NetLoop::WaitTimedOut(Connection* conn) {
  if (conn->waiter == nullptr || !server_->blocking().TimeOut(conn->waiter.get())) return;
  Completion completion;  // handled like any reply, after what is queued already
  completion.conn_id = conn->id;
  completion.replies = std::string(conn->waiter->NullReply());
  completion.unblock = Completion::Unblock::kTimedOut;
  PostCompletion(std::move(completion));
}

void NetLoop::RunConnectionCommand(Connection* conn, const CommandSpec& spec, Args& argv) {
  CommandContext ctx{server_, nullptr, conn};
  ctx.db = conn->db;
  spec.handler(ctx, argv, &conn->output);
}

void NetLoop::Flush(Connection* conn) {
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

void NetLoop::DrainCompletions() {
  std::vector<Completion> batch;
  {
    std::lock_guard<std::mutex> lock(completions_mu_);
    batch.swap(completions_);
  }
  if (!parked_.empty()) SubmitParked();  // the pool just drained some
  for (auto& completion : batch) {
    auto it = connections_.find(completion.conn_id);
    if (it == connections_.end()) continue;  // closed while its batch was in flight
    Connection* conn = it->second.get();
    if (completion.kind == Completion::Kind::kKill) {
      if (conn->in_flight && conn->waiter == nullptr) {
        conn->close_after_reply = true;  // closes when the batch returns
      } else {
        CloseConnection(conn);
      }
      continue;
    }
    if (completion.close_client) {  // the batch passed the output-buffer limit
      spdlog::warn(
          "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer "
          "limits.",
          conn->id, conn->info->addr);
      CloseConnection(conn);
      continue;
    }
    if (conn->tx != nullptr && conn->tx->deferred_exec != nullptr) {
      FinishExecInLoop(*server_, conn, &completion.replies);  // its queued kConnection commands
    }
    conn->output += completion.replies;
    conn->in_flight = false;
    if (conn->waiter != nullptr) {
      if (completion.unblock != Completion::Unblock::kNone) RecordUnblocked(conn, completion);
      EndWait(conn);
    }
    if (!completion.commands.empty()) {
      RecordBatch(conn, completion, completion.times.parsed != 0 ? Clock::Now() : 0);
    }
    if (conn->reading_paused) {
      event_add(conn->read_event, nullptr);
      conn->reading_paused = false;
    }
    if (conn->close_after_reply) {
      Flush(conn);
      continue;
    }
    ProcessInput(conn);  // resumes parsing; flushes
  }
}

Connection* NetLoop::FindConnection(uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

void NetLoop::CloseConnection(Connection* conn) {
  spdlog::debug("closing client id={} addr={}", conn->id, conn->info->addr);
  if (conn->pubsub != nullptr) UnsubscribeAll(*server_, conn);
  if (conn->waiter) server_->blocking().Abandon(conn->waiter.get());  // nothing is lost
  if (conn->wait_timer) event_free(conn->wait_timer);
  if (conn->read_event) event_free(conn->read_event);
  if (conn->write_event) event_free(conn->write_event);
  close(conn->fd);
  server_->clients().Remove(conn->id);
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
    if (!conn->in_flight && conn->pubsub == nullptr &&
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
