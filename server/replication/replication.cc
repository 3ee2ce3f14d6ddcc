#include "server/replication/replication.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <random>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "config/buffer_limits.h"
#include "config/config.h"
#include "config/current_db.h"
#include "server/client_registry.h"
#include "server/net_loop.h"
#include "server/pubsub/pubsub.h"
#include "server/replication/applied_effects.h"
#include "server/replication/link_io.h"
#include "server/server.h"
#include "server/thread_name.h"
#include "storage/data_dir.h"
#include "storage/store.h"

namespace rockcache::server::replication {
namespace {

constexpr size_t kFileChunk = 1 << 20;  // bytes of a checkpoint file per read/write
constexpr int64_t kAckIntervalMs = 1000;
constexpr int64_t kPingIntervalMs = 1000;
// A sender writes the batches it finds waiting in the WAL together, up to about this many bytes.
constexpr size_t kSendBytes = 256 << 10;
// A replica applies the batches that reached it together (already read from the link) as one
// write, up to about this many bytes: one WAL write and one pass of locks, cache and counters for
// all of them, where a batch alone is a primary's write group (a few commands under load).
constexpr size_t kApplyBytes = 1 << 20;

std::string RandomHex40() {
  static const char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<uint64_t>(NowUnixUs()));
  std::string out(40, '0');
  for (char& c : out) c = kHex[rng() & 15];
  return out;
}

std::string Resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// The first sequence number and the record count of a WriteBatch's bytes.
bool BatchRange(const std::string& rep, uint64_t* first, uint64_t* count) {
  if (rep.size() < 12) return false;
  uint64_t seq = 0;
  uint32_t n = 0;
  std::memcpy(&seq, rep.data(), 8);  // little-endian fixed64/fixed32 (RocksDB's coding)
  std::memcpy(&n, rep.data() + 8, 4);
  *first = seq;
  *count = n;
  return n > 0;
}

// The length of a batch frame ("B<length>", its line without "\r\n"): false when `line` is no
// batch frame or the length cannot be a batch's.
bool BatchFrameLength(std::string_view line, uint64_t* len) {
  if (line.size() < 2 || line[0] != 'B') return false;
  const char* end = line.data() + line.size();
  auto [ptr, ec] = std::from_chars(line.data() + 1, end, *len);
  return ec == std::errc() && ptr == end && *len >= 12 && *len <= (4ull << 30);
}

// The length of the batch frame at the start of `unread` when all of it is there (line and
// bytes): then reading it does not wait.
bool BufferedBatchFrame(std::string_view unread, uint64_t* len) {
  const size_t eol = unread.substr(0, 32).find("\r\n");
  return eol != std::string_view::npos && BatchFrameLength(unread.substr(0, eol), len) &&
         unread.size() - eol - 2 >= *len;
}

// "ip:port" of a socket's local end ("" when unknown).
std::string LocalAddress(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  char host[INET6_ADDRSTRLEN] = {0};
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  } else {
    return "";
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Sender: one replica, on the primary.

class Sender {
 public:
  Sender(Replication* repl, int fd, ReplicaInfo info, bool full, Replication::WalPosition pos)
      : repl_(repl), io_(fd), info_(std::move(info)), full_(full), pos_(pos) {}
  ~Sender() {
    Stop();
    if (thread_.joinable()) thread_.join();
  }

  void Start() {
    thread_ = std::thread([this] {
      NameThisThread("rc-repl-send");
      Run();
    });
  }
  void Stop() {
    stop_.store(true);
    io_.Shutdown();
  }
  bool done() const { return done_.load(); }
  void RequestAck() { getack_.store(true); }
  ReplicaInfo info() const {
    std::lock_guard<std::mutex> lock(mu_);
    return info_;
  }

 private:
  void Run() {
    auto stop = [this] { return stop_.load() || repl_->stopping_.load(); };
    if (full_) {
      FullSync(stop);
    } else {
      Stream(stop);
    }
    io_.Close();
    done_.store(true);
  }

  void FullSync(const std::function<bool()>& stop) {
    static std::atomic<uint64_t> next_checkpoint{0};
    // Inside `dir`, beside the database: its SST files are hard-linked, not copied.
    const std::string dir = storage::data_dir::SyncCheckpointPath(
        repl_->server_->config().GetString("dir"), next_checkpoint++);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    const int64_t started = NowUnixMs();
    uint64_t offset = 0;
    std::string replid;
    auto files = repl_->CheckpointForReplica(dir, &offset, &replid);
    if (!files.ok()) {
      spdlog::warn("replication: checkpoint for {}:{} failed: {}", info_.ip, info_.port,
                   files.status().ToString());
      (void)io_.WriteAll("-ERR checkpoint failed\r\n", stop);
      std::filesystem::remove_all(dir, ec);
      return;
    }
    uint64_t total = 0;
    for (const auto& f : files->files) total += f.second;
    spdlog::info("replication: full sync of {}:{}: checkpoint at offset {}, {} files, {} bytes",
                 info_.ip, info_.port, offset, files->files.size(), total);
    bool ok = io_.WriteAll("+FULLRESYNC " + replid + " " + std::to_string(offset) + "\r\n", stop);
    std::vector<char> chunk(kFileChunk);
    for (const auto& [name, size] : files->files) {
      if (!ok) break;
      std::string path = dir;
      path.append("/").append(name);
      int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (in < 0) {
        ok = false;
        break;
      }
      uint64_t left = size;
      ok = io_.WriteAll("F" + name + " " + std::to_string(size) + "\r\n", stop);
      while (ok && left > 0) {
        ssize_t n = read(in, chunk.data(), std::min<uint64_t>(left, chunk.size()));
        if (n <= 0) {
          ok = false;
          break;
        }
        ok = io_.WriteAll(std::string_view(chunk.data(), static_cast<size_t>(n)), stop);
        left -= static_cast<uint64_t>(n);
      }
      close(in);
    }
    if (ok) ok = io_.WriteAll("E\r\n", stop);
    std::filesystem::remove_all(dir, ec);
    if (ok) {
      // The replica closes the link once it has loaded the checkpoint, then resumes with PSYNC.
      io_.WaitClosed(stop, 3600 * 1000);
      spdlog::info("replication: full sync of {}:{} sent in {} ms", info_.ip, info_.port,
                   NowUnixMs() - started);
    } else {
      spdlog::warn("replication: full sync of {}:{} cut off", info_.ip, info_.port);
    }
  }

  void Stream(const std::function<bool()>& stop) {
    storage::Store* store = repl_->server_->store();
    auto reader = store->ReadWalFrom(pos_.local);
    if (!reader.ok()) {
      (void)io_.WriteAll("-ERR " + reader.status().ToString() + "\r\n", stop);
      return;
    }
    if (!io_.WriteAll("+CONTINUE " + repl_->replid() + "\r\n", stop)) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      info_.state = "online";
    }
    spdlog::info("replication: replica {}:{} streaming from offset {}", info_.ip, info_.port,
                 pos_.offset);
    // The replica's backlog in bytes (what Redis keeps in a replica's output buffer): the bytes
    // committed since the stream started, less those of the batches sent since. Read the
    // sequence first, so a batch committed in between is counted on both sides.
    start_sequence_ = store->LatestSequence();
    start_bytes_ = store->WalBytesWritten();
    auto over_limit = [this, stop] { return stop() || OverLimits(); };
    int64_t last_send = NowUnixMs();
    int64_t last_data = 0;
    std::string rep;
    std::string frames;  // the batches read so far, framed, sent with one write
    uint64_t first = 0;
    uint64_t next = pos_.offset;  // the offset the next batch sent starts at
    while (!stop()) {
      // Every batch the WAL already holds (up to kSendBytes), so a replica that keeps up gets
      // the batches committed since the last pass with one write, not two per batch.
      frames.clear();
      uint64_t frame_bytes = 0;  // of batches past start_sequence_ (the backlog's measure)
      while (frames.size() < kSendBytes) {
        auto got = (*reader)->Next(&first, &rep);
        if (!got.ok()) {
          spdlog::warn("replication: replica {}:{}: {}", info_.ip, info_.port,
                       got.status().ToString());
          return;
        }
        if (!*got) break;
        uint64_t offset = 0, count = 0;
        if (!Translate(store, first, &rep) || !BatchRange(rep, &offset, &count)) continue;
        if (offset + count <= next) continue;  // before the offset the replica asked for
        if (offset < next) {
          // A batch this server applied joined several of its primary's, and the replica stands
          // between two of them: it gets the rest.
          if (Status s = store->DropRecordsBefore(&rep, next); !s.ok()) {
            spdlog::warn("replication: replica {}:{}: {}", info_.ip, info_.port, s.ToString());
            return;
          }
          if (!BatchRange(rep, &offset, &count)) continue;
        }
        if (offset != next) {
          spdlog::warn("replication: replica {}:{}: the WAL does not continue at offset {}",
                       info_.ip, info_.port, next);
          return;
        }
        next = offset + count;
        AppendFrame(rep, &frames);
        if (first > start_sequence_) frame_bytes += rep.size();
      }
      const int64_t now = NowUnixMs();
      if (!frames.empty()) {
        if (!io_.WriteAll(frames, over_limit, 0)) return;
        sent_bytes_ += frame_bytes;
        last_send = now;
        // Acknowledgements at most once a millisecond while batches flow (a poll each).
        if (now != last_data && !ReadAcks(0)) return;
        last_data = now;
        continue;
      }
      if (OverLimits()) return;
      if (getack_.exchange(false)) {
        if (!io_.WriteAll("G\r\n", over_limit, 0)) return;
        last_send = now;
      } else if (now - last_send >= kPingIntervalMs) {
        if (!io_.WriteAll("P\r\n", over_limit, 0)) return;
        last_send = now;
      }
      // Idle: poll for acknowledgements meanwhile; 1 ms while writes flow, 10 ms after.
      if (!ReadAcks(now - last_data < 100 ? 1 : 10)) return;
    }
  }

  // The frame of one batch: "B<length>\r\n" and its bytes.
  static void AppendFrame(std::string_view rep, std::string* out) {
    char header[24];
    header[0] = 'B';
    char* end = std::to_chars(header + 1, header + sizeof(header) - 2, rep.size()).ptr;
    *end++ = '\r';
    *end++ = '\n';
    out->append(header, static_cast<size_t>(end - header)).append(rep);
  }

  // A batch of the local WAL at local sequence `local` as the replica gets it (see
  // replication.h): false when it is not sent.
  bool Translate(storage::Store* store, uint64_t local, std::string* rep) const {
    if (local >= pos_.own_from) {
      if (pos_.shift != 0) {
        const uint64_t offset = local - static_cast<uint64_t>(pos_.shift);
        std::memcpy(rep->data(), &offset, 8);  // little-endian fixed64 (RocksDB's coding)
      }
      return true;
    }
    storage::ReplicationState state;
    return store->ClassifyWalBatch(rep, &state) == storage::WalBatchOrigin::kReplicated;
  }

  // The `replica` class of client-output-buffer-limit over the replica's backlog (its hard
  // limit at once, its soft one for its seconds), and repl-timeout over its acknowledgements, as
  // Redis cuts a replica. True (logged) when the link must end; the replica then reconnects and
  // continues from where it stopped if the WAL still holds it.
  bool OverLimits() {
    const int64_t now = NowUnixMs();
    if (now - limits_read_ms_ >= 1000) {  // the config at most once a second
      limits_read_ms_ = now;
      config::ClientBufferLimits limits;
      config::Config& config = repl_->server_->config();
      if (config::ParseClientBufferLimits(config.GetString("client-output-buffer-limit"), limits,
                                          &limits)
              .ok()) {
        limit_ = limits.replica;
      }
      timeout_ms_ = config.GetInt("repl-timeout") * 1000;
    }
    const uint64_t written = repl_->server_->store()->WalBytesWritten() - start_bytes_;
    const int64_t backlog = written > sent_bytes_ ? static_cast<int64_t>(written - sent_bytes_) : 0;
    const char* why = nullptr;
    if (limit_.hard > 0 && backlog >= limit_.hard) {
      why = "hard";
    } else if (limit_.soft > 0 && backlog >= limit_.soft) {
      if (soft_since_ms_ == 0) soft_since_ms_ = now;
      if (now - soft_since_ms_ >= limit_.soft_seconds * 1000) why = "soft";
    } else {
      soft_since_ms_ = 0;
    }
    int64_t last_ack = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_ack = info_.last_ack_ms;
    }
    if (why != nullptr) {
      spdlog::warn(
          "Client replica {}:{} scheduled to be closed ASAP for overcoming of output buffer "
          "limits ({} limit, {} bytes behind).",
          info_.ip, info_.port, why, backlog);
      return true;
    }
    if (timeout_ms_ > 0 && now - last_ack > timeout_ms_) {
      spdlog::warn("Disconnecting timedout replica {}:{} (no acknowledgement for {} s)", info_.ip,
                   info_.port, timeout_ms_ / 1000);
      return true;
    }
    return false;
  }

  // Reads what the replica sent (REPLCONF ACK n), waiting up to timeout_ms. False when the
  // link is gone.
  bool ReadAcks(int timeout_ms) {
    std::string line;
    int r = io_.Fill(timeout_ms);
    if (r < 0) return false;
    std::vector<std::string> args;
    while (io_.TakeResp(&args)) {
      if (args.size() >= 3 && strcasecmp(args[0].c_str(), "REPLCONF") == 0 &&
          strcasecmp(args[1].c_str(), "ACK") == 0) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          info_.ack_offset = std::strtoull(args[2].c_str(), nullptr, 10);
          info_.last_ack_ms = NowUnixMs();
        }
        repl_->NoteAck();
      } else if (args.size() >= 3 && strcasecmp(args[0].c_str(), "REPLCONF") == 0 &&
                 strcasecmp(args[1].c_str(), "rc-events") == 0) {
        repl_->server_->pubsub().AddShippedFlags(
            static_cast<uint32_t>(std::strtoul(args[2].c_str(), nullptr, 10)));
      }
    }
    return !io_.bad();
  }

  Replication* const repl_;
  LinkIo io_;
  mutable std::mutex mu_;
  ReplicaInfo info_;
  const bool full_;
  const Replication::WalPosition pos_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::atomic<bool> getack_{false};
  std::thread thread_;
  // OverLimits (the sender's thread only).
  uint64_t start_sequence_ = 0;
  uint64_t start_bytes_ = 0;
  uint64_t sent_bytes_ = 0;
  config::BufferLimit limit_;
  int64_t timeout_ms_ = 60000;
  int64_t limits_read_ms_ = 0;
  int64_t soft_since_ms_ = 0;
};

// ---------------------------------------------------------------------------------------------

Replication::Replication(Server* server) : server_(server), run_id_(RandomHex40()) {
  replid_ = RandomHex40();
}

Replication::~Replication() { Stop(); }

void Replication::Start() {
  RefreshGoodReplicas();  // min-replicas-to-write holds from the first command on
  link_thread_ = std::thread([this] { LinkThread(); });
  ack_wait_thread_ = std::thread([this] { AckWaitThread(); });
  const std::string replicaof = server_->config().GetString("replicaof");
  const size_t space = replicaof.find(' ');
  if (space != std::string::npos) {
    Status s = BecomeReplicaOf(replicaof.substr(0, space), std::atoi(replicaof.c_str() + space + 1),
                               /*from_config=*/true);
    if (!s.ok()) spdlog::warn("replicaof {}: {}", replicaof, s.ToString());
  } else if (auto state = server_->store()->GetReplicationState();
             state.ok() && !state->replid.empty()) {
    // A former replica starting as a primary: what it writes now is not that history's.
    Status s = server_->store()->SetReplicationState({});
    if (!s.ok()) spdlog::error("replication: clearing the replication state: {}", s.ToString());
  }
}

void Replication::Stop() {
  if (stopping_.exchange(true)) return;
  std::thread failover;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failover_cv_.notify_all();
    failover.swap(failover_thread_);
  }
  if (failover.joinable()) failover.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (link_fd_ >= 0) shutdown(link_fd_, SHUT_RDWR);
    link_cv_.notify_all();
  }
  if (link_thread_.joinable()) link_thread_.join();
  std::vector<std::unique_ptr<Sender>> senders;
  {
    std::lock_guard<std::mutex> lock(mu_);
    senders.swap(senders_);
  }
  for (auto& s : senders) s->Stop();
  senders.clear();  // joins
  {
    std::lock_guard<std::mutex> lock(ack_mu_);
    ack_cv_.notify_all();
  }
  if (ack_wait_thread_.joinable()) ack_wait_thread_.join();
}

void Replication::ApplySettings() {
  RefreshGoodReplicas();
  refuse_writes_.store(is_replica() && server_->config().GetBool("replica-read-only"),
                       std::memory_order_relaxed);
  bool link_up = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    link_up = link_.link_up;
  }
  refuse_stale_reads_.store(
      is_replica() && !link_up && !server_->config().GetBool("replica-serve-stale-data"),
      std::memory_order_relaxed);
}

Status Replication::BecomeReplicaOf(const std::string& host, int port, bool from_config) {
  if (port <= 0 || port > 65535) return Status::InvalidArgument("Invalid master port");
  bool was_primary = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (replica_.load() && master_host_ == host && master_port_ == port) return Status::OK();
    was_primary = !replica_.load();
    ++generation_;
    if (link_fd_ >= 0) shutdown(link_fd_, SHUT_RDWR);
    replica_.store(true, std::memory_order_release);
  }
  ApplySettings();  // a primary's writes are refused from here on
  StopSenders();    // our replicas resynchronize, as Redis's do
  storage::Store* store = server_->store();
  store->OrderOwnWritesWithApplied(true);  // before the link applies anything
  if (was_primary) {
    storage::ReplicationState state;
    if (from_config) {
      if (auto stored = store->GetReplicationState(); stored.ok()) state = *stored;
    } else {
      // The history this server wrote as a primary is what it offers to continue (Redis's
      // replicationCacheMasterUsingMyself): a new primary that holds all of it continues.
      std::lock_guard<std::mutex> applying(apply_mu_);
      const uint64_t local = store->LatestSequence();
      {
        std::lock_guard<std::mutex> lock(mu_);
        state.replid = replid_;
        state.offset = local - static_cast<uint64_t>(shift_);
      }
      if (Status s = store->SetReplicationState(state); !s.ok()) {
        spdlog::error("replication: saving the replication state: {}", s.ToString());
        state = storage::ReplicationState();
      }
    }
    if (!state.replid.empty()) ResetApplied(state.offset + 1, store->LatestSequence() + 1);
    std::lock_guard<std::mutex> lock(mu_);
    if (!state.replid.empty()) replid_ = state.replid;
    own_from_ = UINT64_MAX;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;  // a link the thread opened meanwhile (to the old primary) stops
    if (link_fd_ >= 0) shutdown(link_fd_, SHUT_RDWR);
    master_host_ = host;
    master_port_ = port;
    link_ = ReplicaLinkInfo();
    link_.host = host;
    link_.port = port;
    link_.link_down_since_ms = NowUnixMs();
    if (auto state = store->GetReplicationState(); state.ok()) link_.offset = state->offset;
    link_cv_.notify_all();
  }
  if (was_primary) UnblockClientsForRoleChange(*server_);
  (void)server_->config().Set("replicaof", host + " " + std::to_string(port));
  spdlog::info("replication: now a replica of {}:{}", host, port);
  return Status::OK();
}

void Replication::BecomePrimary() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!replica_.load()) return;
    ++generation_;
    master_host_.clear();
    master_port_ = 0;
    if (link_fd_ >= 0) shutdown(link_fd_, SHUT_RDWR);
    link_cv_.notify_all();
  }
  StopSenders();  // chained replicas reconnect and continue under the new replication id
  storage::Store* store = server_->store();
  {
    std::lock_guard<std::mutex> wait_for_apply(apply_mu_);
    // The data is this server's own history from now on: after a restart, following any
    // primary needs a full sync (while it runs, it offers its own history: BecomeReplicaOf).
    Status s = store->SetReplicationState({});
    if (!s.ok()) spdlog::error("replication: clearing the replication state: {}", s.ToString());
    const uint64_t local = store->LatestSequence();
    std::lock_guard<std::mutex> lock(mu_);
    // Redis's shiftReplicationId: the history followed so far stays acceptable up to the last
    // offset applied; the own writes number on from it.
    const uint64_t offset = link_.offset;
    replid2_ = replid_;
    second_offset_ = offset + 1;
    own_from_ = local + 1;
    shift_ = static_cast<int64_t>(local) - static_cast<int64_t>(offset);
    replid_ = RandomHex40();
    replica_.store(false, std::memory_order_release);
  }
  store->OrderOwnWritesWithApplied(false);  // no batch is applied any more: writers group freely
  ApplySettings();
  Status s = store->ResumeWrites();
  if (!s.ok()) spdlog::error("replication: resuming writes: {}", s.ToString());
  (void)server_->config().Set("replicaof", "");
  spdlog::info("replication: now a primary (replid {}, replid2 {} up to offset {})", replid(),
               PreviousHistory().first, PreviousHistory().second);
}

void Replication::StopSenders() {
  std::vector<std::unique_ptr<Sender>> senders;
  {
    std::lock_guard<std::mutex> lock(mu_);
    senders.swap(senders_);
  }
  for (auto& s : senders) s->Stop();
  senders.clear();  // joins
}

std::pair<std::string, uint64_t> Replication::PreviousHistory() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {replid2_, second_offset_};
}

std::string Replication::replid() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replid_;
}

uint64_t Replication::Offset() const {
  if (is_replica()) {
    std::lock_guard<std::mutex> lock(mu_);
    return link_.offset;
  }
  const uint64_t local = server_->store()->LatestSequence();
  std::lock_guard<std::mutex> lock(mu_);
  return local - static_cast<uint64_t>(shift_);
}

ReplicaLinkInfo Replication::LinkInfo() const {
  std::lock_guard<std::mutex> lock(mu_);
  return link_;
}

bool Replication::Stale(uint64_t generation) const {
  if (stopping_.load()) return true;
  std::lock_guard<std::mutex> lock(mu_);
  return generation != generation_ || !replica_.load();
}

// ---- primary side ----

bool Replication::StartSender(int fd, const ReplicaPeer& peer, const std::string& replid,
                              int64_t from, std::string* error) {
  if (stopping_.load()) {
    *error = "ERR shutting down";
    return false;
  }
  if (is_replica() && !LinkInfo().link_up) {
    *error = "NOMASTERLINK Can't SYNC while not connected with my master";
    return false;
  }
  // Before the sender reads the first batch: the events of every batch it sends are noted.
  server_->pubsub().AddShippedFlags(peer.event_classes);
  WalPosition pos;
  const bool full = from <= 0 || !Locate(replid, static_cast<uint64_t>(from), &pos);
  if (full) {
    sync_full_.fetch_add(1, std::memory_order_relaxed);
    if (replid != "?") sync_partial_err_.fetch_add(1, std::memory_order_relaxed);
  } else if (!peer.after_full_sync) {
    sync_partial_ok_.fetch_add(1, std::memory_order_relaxed);
  }
  int dup_fd = dup(fd);
  if (dup_fd < 0) {
    *error = "ERR dup failed";
    return false;
  }
  std::string peer_ip = peer.addr;
  if (size_t colon = peer_ip.rfind(':'); colon != std::string::npos) peer_ip.resize(colon);
  ReplicaInfo info;
  info.ip = peer.announced_ip.empty() ? peer_ip : peer.announced_ip;
  info.port = peer.listening_port;
  info.client_id = peer.client_id;
  info.addr = peer.addr;
  info.laddr = peer.laddr;
  info.fd = dup_fd;
  info.created_ms = NowUnixMs();
  info.state = full ? "wait_bgsave" : "online";
  info.last_ack_ms = NowUnixMs();
  info.ack_offset = full ? 0 : static_cast<uint64_t>(from - 1);
  auto sender = std::make_unique<Sender>(this, dup_fd, info, full, pos);
  sender->Start();
  spdlog::info("replication: replica {}:{} asks for {} {}: {}", info.ip, info.port, replid, from,
               full ? "full sync" : "continue");
  ReapSenders();
  std::lock_guard<std::mutex> lock(mu_);
  senders_.push_back(std::move(sender));
  return true;
}

bool Replication::Locate(const std::string& replid, uint64_t from, WalPosition* pos) {
  bool replica = false;
  uint64_t limit = 0;
  uint64_t own_from = 0;
  int64_t shift = 0;
  const uint64_t local = server_->store()->LatestSequence();
  {
    std::lock_guard<std::mutex> lock(mu_);
    replica = replica_.load();
    own_from = own_from_;
    shift = shift_;
    if (replid == replid_) {
      // Anything up to what this server holds.
      limit = (replica ? link_.offset : local - static_cast<uint64_t>(shift)) + 1;
    } else if (!replid2_.empty() && replid == replid2_) {
      limit = second_offset_;  // the shared part of the previous history only
    } else {
      return false;
    }
  }
  if (from > limit) return false;
  pos->offset = from;
  pos->own_from = replica ? UINT64_MAX : own_from;
  pos->shift = shift;
  const uint64_t own_local = from + static_cast<uint64_t>(shift);
  if (!replica && own_local >= own_from) {
    pos->local = own_local;
  } else if (!LocateApplied(from, &pos->local)) {
    return false;
  }
  return server_->store()->ReadWalFrom(pos->local).ok();
}

bool Replication::LocateApplied(uint64_t offset, uint64_t* local) {
  std::lock_guard<std::mutex> lock(index_mu_);
  if (applied_next_.local != 0 && offset == applied_next_.offset) {
    *local = applied_next_.local;
    return true;
  }
  if (applied_next_.local == 0 || offset > applied_next_.offset) return false;
  // The last mark at or before `offset`: the sender reads on from it to `offset`.
  auto it = std::upper_bound(marks_.begin(), marks_.end(), offset,
                             [](uint64_t o, const Mark& m) { return o < m.offset; });
  if (it == marks_.begin()) return false;
  *local = std::prev(it)->local;
  return true;
}

void Replication::NoteApplied(uint64_t first, uint64_t next, uint64_t local, uint64_t local_next) {
  std::lock_guard<std::mutex> lock(index_mu_);
  if (applied_batches_++ % kMarkEvery == 0 && local != 0) {
    marks_.push_back(Mark{first, local});
    if (marks_.size() > kMaxMarks) marks_.pop_front();
  }
  applied_next_ = Mark{next, local_next};
}

void Replication::ResetApplied(uint64_t next, uint64_t local_next) {
  std::lock_guard<std::mutex> lock(index_mu_);
  marks_.clear();
  applied_batches_ = 0;
  applied_next_ = Mark{next, local_next};
}

StatusOr<storage::CheckpointFiles> Replication::CheckpointForReplica(const std::string& dir,
                                                                     uint64_t* offset,
                                                                     std::string* replid) {
  // A replica's checkpoint is taken between two applied batches, so it holds exactly the
  // offset its link reached.
  std::unique_lock<std::mutex> applying(apply_mu_, std::defer_lock);
  if (is_replica()) applying.lock();
  auto files = server_->store()->CreateCheckpoint(dir);
  if (!files.ok()) return files;
  std::lock_guard<std::mutex> lock(mu_);
  *replid = replid_;
  *offset = replica_.load() ? link_.offset : files->sequence - static_cast<uint64_t>(shift_);
  return files;
}

void Replication::ReapSenders() {
  std::vector<std::unique_ptr<Sender>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = senders_.begin(); it != senders_.end();) {
      if ((*it)->done()) {
        done.push_back(std::move(*it));
        it = senders_.erase(it);
      } else {
        ++it;
      }
    }
  }
  done.clear();  // joins finished threads, outside the lock
}

std::vector<ReplicaInfo> Replication::Replicas() const {
  std::vector<ReplicaInfo> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : senders_) {
    if (!s->done()) out.push_back(s->info());
  }
  return out;
}

void Replication::NoteAck() {
  RefreshGoodReplicas();
  std::lock_guard<std::mutex> lock(ack_mu_);
  ++acks_seen_;
  ack_cv_.notify_all();
}

void Replication::RefreshGoodReplicas() {
  const int64_t min_replicas = server_->config().GetInt("min-replicas-to-write");
  const int64_t max_lag_ms = server_->config().GetInt("min-replicas-max-lag") * 1000;
  int64_t good = 0;
  if (!is_replica()) {
    const int64_t now = NowUnixMs();
    for (const auto& r : Replicas()) {
      // As Redis: lag counts whole seconds since the last acknowledgement.
      good += r.state == "online" && (now - r.last_ack_ms) / 1000 * 1000 <= max_lag_ms;
    }
  }
  good_replicas_.store(good, std::memory_order_relaxed);
  lacks_good_replicas_.store(
      !is_replica() && min_replicas > 0 && max_lag_ms > 0 && good < min_replicas,
      std::memory_order_relaxed);
}

int64_t Replication::CountAcked(uint64_t offset) const {
  int64_t n = 0;
  for (const auto& r : Replicas()) n += r.state == "online" && r.ack_offset >= offset;
  return n;
}

void Replication::AddAckWaiter(uint32_t loop, std::shared_ptr<ClientInfo> client, uint64_t offset,
                               int64_t replicas, int64_t deadline_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& s : senders_) s->RequestAck();
  }
  std::lock_guard<std::mutex> lock(ack_mu_);
  ack_waiters_.push_back(AckWaiter{loop, std::move(client), offset, replicas, deadline_ms});
  ack_cv_.notify_all();
}

void Replication::AckWaitThread() {
  NameThisThread("rc-repl-ack");
  int64_t last_refresh = 0;
  std::unique_lock<std::mutex> lock(ack_mu_);
  while (true) {
    const bool stopping = stopping_.load();
    if (!ack_waiters_.empty()) {
      std::vector<AckWaiter> waiters = ack_waiters_;
      lock.unlock();
      const int64_t now = NowUnixMs();
      std::vector<std::pair<size_t, int64_t>> done;  // index, count
      for (size_t i = 0; i < waiters.size(); ++i) {
        const int64_t n = CountAcked(waiters[i].offset);
        if (stopping || n >= waiters[i].replicas || waiters[i].client->killed.load() ||
            waiters[i].client->closed.load() ||
            (waiters[i].deadline_ms != 0 && now >= waiters[i].deadline_ms)) {
          done.emplace_back(i, n);
        }
      }
      for (const auto& [i, n] : done) {
        Completion completion;
        completion.conn_id = waiters[i].client->id;
        if (waiters[i].client->killed.load()) {
          completion.kind = Completion::Kind::kClose;
        } else {
          completion.replies = ":" + std::to_string(n) + "\r\n";
        }
        if (NetLoop* loop = server_->loop(waiters[i].loop)) {
          loop->PostCompletion(std::move(completion));
        }
      }
      lock.lock();
      // Drop the answered ones (new waiters may have been appended meanwhile: keep those).
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        ack_waiters_.erase(ack_waiters_.begin() + static_cast<ptrdiff_t>(it->first));
      }
    }
    if (stopping) return;
    if (NowUnixMs() - last_refresh >= 1000) {  // replicas age even when none acknowledges
      lock.unlock();
      RefreshGoodReplicas();
      last_refresh = NowUnixMs();
      lock.lock();
    }
    const uint64_t seen = acks_seen_;
    ack_cv_.wait_for(lock, std::chrono::milliseconds(ack_waiters_.empty() ? 1000 : 10),
                     [&] { return stopping_.load() || acks_seen_ != seen; });
  }
}

std::string Replication::ClientListLines(bool replicas, bool master,
                                         const std::vector<uint64_t>& ids) const {
  auto wanted = [&](uint64_t id) {
    return id != 0 && (ids.empty() || std::find(ids.begin(), ids.end(), id) != ids.end());
  };
  const int64_t now = NowUnixMs();
  auto line = [&](uint64_t id, const std::string& addr, const std::string& laddr, int fd,
                  int64_t created_ms, int64_t last_ms, char flag, const char* cmd) {
    return "id=" + std::to_string(id) + " addr=" + addr + " laddr=" + laddr +
           " fd=" + std::to_string(fd) + " name= age=" + std::to_string((now - created_ms) / 1000) +
           " idle=" + std::to_string(last_ms == 0 ? 0 : (now - last_ms) / 1000) + " flags=" + flag +
           " db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 "
           "rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=" +
           cmd + " user=default redir=-1 resp=2 lib-name= lib-ver=\n";
  };
  std::string out;
  if (master && is_replica()) {
    const ReplicaLinkInfo link = LinkInfo();
    if (link.link_up && wanted(link.client_id)) {
      int fd = -1;
      {
        std::lock_guard<std::mutex> lock(mu_);
        fd = link_fd_;
      }
      out += line(link.client_id, link.host + ":" + std::to_string(link.port), link.laddr, fd,
                  link.connected_ms, link.last_io_ms, 'M', "NULL");
    }
  }
  if (replicas) {
    for (const auto& r : Replicas()) {
      if (wanted(r.client_id)) {
        out +=
            line(r.client_id, r.addr, r.laddr, r.fd, r.created_ms, r.last_ack_ms, 'S', "replconf");
      }
    }
  }
  return out;
}

int64_t Replication::KillByType(const std::string& type) {
  if (strcasecmp(type.c_str(), "master") == 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (link_fd_ < 0) return 0;
    shutdown(link_fd_, SHUT_RDWR);
    return 1;
  }
  std::vector<std::unique_ptr<Sender>> senders;
  {
    std::lock_guard<std::mutex> lock(mu_);
    senders.swap(senders_);
  }
  int64_t n = 0;
  for (auto& s : senders) n += !s->done();
  for (auto& s : senders) s->Stop();
  return n;
}

// ---- replica side ----

void Replication::LinkThread() {
  NameThisThread("rc-repl-link");
  while (!stopping_.load()) {
    std::string host;
    int port = 0;
    uint64_t generation = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      link_cv_.wait(lock, [&] { return stopping_.load() || !master_host_.empty(); });
      if (stopping_.load()) return;
      host = master_host_;
      port = master_port_;
      generation = generation_;
    }
    RunLink(host, port, generation);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (link_.link_up || link_.link_down_since_ms == 0) link_.link_down_since_ms = NowUnixMs();
      link_.link_up = false;
      link_.client_id = 0;
      link_.sync_in_progress = false;
    }
    ApplySettings();
    // Retry after a second unless REPLICAOF changed the target meanwhile (or a full sync was
    // just loaded: then resume at once).
    std::unique_lock<std::mutex> lock(mu_);
    if (resume_now_) {
      resume_now_ = false;
      continue;
    }
    link_cv_.wait_for(lock, std::chrono::seconds(1),
                      [&] { return stopping_.load() || generation_ != generation; });
  }
}

void Replication::RunLink(const std::string& host, int port, uint64_t generation) {
  auto stale = [&] { return Stale(generation); };
  int fd = ConnectTcp(host, port, 5000);
  if (fd < 0) {
    spdlog::debug("replication: cannot connect to {}:{}", host, port);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (generation != generation_) {
      close(fd);
      return;
    }
    link_fd_ = fd;
    link_.client_id = server_->NextClientId();
    link_.connected_ms = NowUnixMs();
    link_.laddr = LocalAddress(fd);
  }
  LinkIo io(fd);
  auto end_link = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    link_fd_ = -1;
  };
  config::Config& config = server_->config();
  auto command = [&](const std::vector<std::string>& args, std::string* reply) {
    return io.WriteAll(Resp(args), stale) && io.ReadLine(reply, 10000, stale);
  };
  std::string reply;
  bool ok = true;
  const std::string pass = config.GetString("masterauth");
  const std::string user = config.GetString("masteruser");
  if (!pass.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!user.empty()) auth.push_back(user);
    auth.push_back(pass);
    ok = command(auth, &reply) && reply == "+OK";
  }
  if (ok) ok = command({"PING"}, &reply) && reply == "+PONG";
  if (ok) {
    int64_t announce_port = config.GetInt("replica-announce-port");
    if (announce_port == 0) announce_port = config.GetInt("port");
    ok = command({"REPLCONF", "listening-port", std::to_string(announce_port)}, &reply) &&
         reply == "+OK";
  }
  const std::string announce_ip = config.GetString("replica-announce-ip");
  if (ok && !announce_ip.empty()) {
    ok = command({"REPLCONF", "ip-address", announce_ip}, &reply) && reply == "+OK";
  }
  if (ok) ok = command({"REPLCONF", "capa", "rockcache"}, &reply) && reply == "+OK";
  if (ok) {
    // Its own classes and those its replicas asked for (chained replicas get them too).
    const uint32_t events =
        server_->pubsub().local_notify_flags() | server_->pubsub().shipped_flags();
    // A primary that does not know rc-events (an older rockcache) refuses it: go on without
    // events rather than without replication.
    ok = command({"REPLCONF", "rc-events", std::to_string(events)}, &reply);
    if (ok && reply != "+OK") {
      spdlog::warn("replication: {}:{} ships no keyspace events: {}", host, port, reply);
    }
  }
  storage::Store* store = server_->store();
  storage::ReplicationState state;
  bool failing_over = false;
  if (ok) {
    auto st = store->GetReplicationState();
    if (st.ok()) state = *st;
    const bool known = !state.replid.empty();
    std::vector<std::string> psync = {"PSYNC", known ? state.replid : "?",
                                      known ? std::to_string(state.offset + 1) : "-1"};
    bool after_full = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      failing_over = psync_failover_;
      after_full = resume_after_full_;
      resume_after_full_ = false;
    }
    if (failing_over) {
      psync.push_back("FAILOVER");  // the primary we hand over to takes over
    } else if (after_full && known) {
      psync.push_back("rc-resume");
    }
    ok = command(psync, &reply);
    if (failing_over) {
      FailoverPsyncAnswered(
          ok && (reply.rfind("+CONTINUE", 0) == 0 || reply.rfind("+FULLRESYNC", 0) == 0));
    }
  }
  if (!ok) {
    if (!stale()) {
      spdlog::warn("replication: handshake with {}:{} failed: {}", host, port,
                   reply.empty() ? "no reply" : reply);
    }
    end_link();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    link_.last_io_ms = NowUnixMs();
  }
  if (reply.rfind("+FULLRESYNC ", 0) == 0 && reply.size() > 53) {
    std::string replid = reply.substr(12, 40);
    const uint64_t offset = std::strtoull(reply.c_str() + 53, nullptr, 10);
    ReceiveCheckpoint(&io, replid, offset, generation);
    end_link();
    return;
  }
  if (reply.rfind("+CONTINUE", 0) != 0) {
    spdlog::warn("replication: {}:{} refused PSYNC: {}", host, port, reply);
    end_link();
    return;
  }
  std::string continued = reply.substr(9);
  continued.erase(0, continued.find_first_not_of(' '));
  if (!continued.empty() && continued != state.replid) {
    // The primary continues our history under a new id (it was promoted, or follows one that
    // was): keep the old id for our own replicas, as Redis's replid2.
    {
      std::lock_guard<std::mutex> applying(apply_mu_);
      if (stale()) {
        end_link();
        return;
      }
      Status s = store->SetReplicationState({continued, state.offset});
      if (!s.ok()) spdlog::error("replication: saving the replication state: {}", s.ToString());
      std::lock_guard<std::mutex> lock(mu_);
      replid2_ = state.replid;
      second_offset_ = state.offset + 1;
    }
    spdlog::info("replication: {}:{} continues replid {} as {} from offset {}", host, port,
                 state.replid, continued, state.offset + 1);
    state.replid = continued;
    StopSenders();  // our replicas learn the new id
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    link_.link_up = true;
    link_.link_down_since_ms = 0;
    link_.offset = state.offset;
    replid_ = state.replid;  // a replica shows the history it follows, as Redis's do
  }
  ApplySettings();
  spdlog::info("replication: link to {}:{} up, continuing after sequence {}", host, port,
               state.offset);
  StreamFromPrimary(&io, state, generation);
  end_link();
}

void Replication::ReceiveCheckpoint(LinkIo* io, const std::string& replid, uint64_t offset,
                                    uint64_t generation) {
  auto stale = [&] { return Stale(generation); };
  {
    std::lock_guard<std::mutex> lock(mu_);
    link_.sync_in_progress = true;
  }
  const int64_t started = NowUnixMs();
  // Inside `dir`, so that moving it into place is a rename on one file system.
  const std::string staged =
      storage::data_dir::ReceivedSyncPath(server_->config().GetString("dir"));
  std::error_code ec;
  std::filesystem::remove_all(staged, ec);
  std::filesystem::create_directories(staged, ec);
  if (ec) {
    spdlog::error("replication: cannot create {}: {}", staged, ec.message());
    return;
  }
  const int64_t timeout_ms = server_->config().GetInt("repl-timeout") * 1000;
  uint64_t bytes = 0;
  std::string line;
  std::vector<char> chunk(kFileChunk);
  bool complete = false;
  while (io->ReadLine(&line, static_cast<int>(timeout_ms), stale)) {
    if (line == "E") {
      complete = true;
      break;
    }
    if (line == "P") continue;
    const size_t space = line.rfind(' ');
    if (line.empty() || line[0] != 'F' || space == std::string::npos) break;
    const std::string name = line.substr(1, space - 1);
    if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') break;
    uint64_t left = std::strtoull(line.c_str() + space + 1, nullptr, 10);
    std::string path = staged;
    path.append("/").append(name);
    int out = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) break;
    bool file_ok = true;
    while (left > 0) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
      if (!io->ReadExact(chunk.data(), want, static_cast<int>(timeout_ms), stale)) {
        file_ok = false;
        break;
      }
      if (write(out, chunk.data(), want) != static_cast<ssize_t>(want)) {
        file_ok = false;
        break;
      }
      left -= want;
      bytes += want;
    }
    if (file_ok && fsync(out) != 0) file_ok = false;
    close(out);
    {
      std::lock_guard<std::mutex> lock(mu_);
      link_.last_io_ms = NowUnixMs();
    }
    if (!file_ok) break;
  }
  if (!complete) {
    spdlog::warn("replication: full sync cut off after {} bytes; keeping the old data", bytes);
    std::filesystem::remove_all(staged, ec);
    return;
  }
  // Our own replicas read the WAL of the database being replaced: they resynchronize.
  StopSenders();
  // Swap the database: every key stripe held and in a write window, so no fill of a value read
  // from the old database lands in the cache after it was cleared.
  std::lock_guard<std::mutex> applying(apply_mu_);
  if (stale()) {
    std::filesystem::remove_all(staged, ec);
    return;
  }
  storage::Store* store = server_->store();
  {
    cache::KeyLocks& locks = server_->key_locks();
    cache::KeyLocks::Guard guard = locks.LockAll();
    std::vector<uint32_t> all(locks.stripe_count());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);
    cache::KeyLocks::WriteWindow window(locks, std::move(all));
    if (cache::Cache* cache = server_->cache()) cache->Clear();
    Status s = store->ReplaceDatabase(staged, {replid, offset});
    if (!s.ok()) {
      spdlog::error("replication: loading the full sync failed: {}", s.ToString());
      std::filesystem::remove_all(staged, ec);
      return;
    }
    if (cache::Cache* cache = server_->cache()) cache->Clear();
  }
  FireReplacedEffects(*server_);
  ResetApplied(offset + 1, store->LatestSequence() + 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    link_.offset = offset;
    link_.sync_in_progress = false;
    replid_ = replid;
    replid2_.clear();
    second_offset_ = 0;
    resume_now_ = true;
    resume_after_full_ = true;
  }
  spdlog::info("replication: full sync loaded: {} bytes at sequence {} in {} ms", bytes, offset,
               NowUnixMs() - started);
}

void Replication::StreamFromPrimary(LinkIo* io, storage::ReplicationState state,
                                    uint64_t generation) {
  auto stale = [&] { return Stale(generation); };
  const int64_t timeout_ms = server_->config().GetInt("repl-timeout") * 1000;
  int64_t last_ack = 0;
  int64_t last_io = NowUnixMs();
  auto event_classes = [this] {
    return server_->pubsub().local_notify_flags() | server_->pubsub().shipped_flags();
  };
  uint32_t events_sent = event_classes();  // told in the handshake
  std::string line;
  std::vector<std::string> reps;  // the batches of one apply (kept: their buffers are reused)
  while (!stale()) {
    const int64_t now = NowUnixMs();
    if (const uint32_t events = event_classes(); events != events_sent) {
      // CONFIG SET notify-keyspace-events: the primary notes those classes from now on.
      if (!io->WriteAll(Resp({"REPLCONF", "rc-events", std::to_string(events)}), stale)) return;
      events_sent = events;
    }
    if (now - last_ack >= kAckIntervalMs) {
      if (!io->WriteAll(Resp({"REPLCONF", "ACK", std::to_string(state.offset)}), stale)) return;
      last_ack = now;
    }
    int r = io->FillIfEmpty(100);
    if (r < 0) return;
    if (r == 0) {
      if (NowUnixMs() - last_io > timeout_ms) {
        spdlog::warn("replication: no data from the primary for {} s: link down",
                     timeout_ms / 1000);
        return;
      }
      continue;
    }
    last_io = NowUnixMs();
    {
      std::lock_guard<std::mutex> lock(mu_);
      link_.last_io_ms = last_io;
    }
    if (!io->ReadLine(&line, static_cast<int>(timeout_ms), stale)) return;
    if (line == "P") continue;
    if (line == "G") {
      last_ack = 0;
      continue;
    }
    uint64_t len = 0;
    if (!BatchFrameLength(line, &len)) {
      spdlog::warn("replication: bad frame from the primary: {}", line.substr(0, 64));
      return;
    }
    // This batch, and those that arrived with it (up to kApplyBytes), applied as one.
    size_t count = 0;
    size_t bytes = 0;
    while (true) {
      if (reps.size() == count) reps.emplace_back();
      std::string& rep = reps[count];
      rep.resize(len);
      if (!io->ReadExact(rep.data(), len, static_cast<int>(timeout_ms), stale)) return;
      uint64_t first = 0, records = 0;
      if (!BatchRange(rep, &first, &records) || first != state.offset + 1) {
        spdlog::warn("replication: batch at sequence {} does not follow {}", first, state.offset);
        return;
      }
      state.offset = first + records - 1;
      ++count;
      bytes += len;
      if (bytes >= kApplyBytes || !BufferedBatchFrame(io->Unread(), &len)) break;
      if (!io->ReadLine(&line, static_cast<int>(timeout_ms), stale)) return;
    }
    if (!ApplyBatches(reps, count, state, generation)) return;
  }
}

bool Replication::ApplyBatches(const std::vector<std::string>& reps, size_t count,
                               const storage::ReplicationState& state, uint64_t generation) {
  storage::Store* store = server_->store();
  storage::ReplicatedBatch batch;
  const storage::ReplicatedKeys& keys = batch.keys;
  const std::vector<std::string_view> views(reps.begin(), reps.begin() + count);
  if (Status s = store->DecodeReplicated(views, &batch); !s.ok()) {
    spdlog::error("replication: undecodable batch: {}", s.ToString());
    return false;
  }
  std::lock_guard<std::mutex> applying(apply_mu_);
  if (Stale(generation)) return false;
  cache::KeyLocks& locks = server_->key_locks();
  cache::Cache* cache = server_->cache();
  const bool all = keys.all_keys || !keys.flushed_dbs.empty();
  std::vector<std::string_view> user_keys;
  cache::KeyLocks::Guard guard;
  std::vector<uint32_t> stripes;
  if (all) {
    guard = locks.LockAll();
    stripes.resize(locks.stripe_count());
    for (size_t i = 0; i < stripes.size(); ++i) stripes[i] = static_cast<uint32_t>(i);
  } else {
    user_keys.reserve(keys.metas.size() + keys.entry_keys.size());
    for (const auto& [db, key] : keys.metas) user_keys.push_back(key);
    for (const auto& key : keys.entry_keys) user_keys.push_back(key);
    guard = locks.Lock(user_keys);
    locks.StripesOf(user_keys, &stripes);
  }
  Status s;
  uint64_t local_first = 0;
  {
    cache::KeyLocks::WriteWindow window(locks, &stripes);
    // As every write that is not write-through: the keys leave the cache before the write.
    if (cache != nullptr) {
      if (all) {
        cache->Clear();
      } else {
        for (const auto& [db, key] : keys.metas) {
          DbScope scope(db);
          cache->Erase(key);
        }
        const int databases = store->databases();
        for (const auto& key : keys.entry_keys) {
          for (int db = 0; db < databases; ++db) {
            DbScope scope(store->PhysicalDb(db));
            cache->Erase(key);
          }
        }
      }
    }
    s = store->ApplyReplicated(&batch, state, &local_first);
    if (!s.ok() && cache != nullptr) cache->Clear();
  }
  guard.Unlock();
  if (!s.ok()) {
    spdlog::error("replication: applying the batch ending at {} failed: {}", state.offset,
                  s.ToString());
    return false;
  }
  uint64_t first = 0, records = 0;
  if (BatchRange(reps[0], &first, &records)) {
    // The write's records: the batches' (state.offset + 1 - first) and the state's.
    NoteApplied(first, state.offset + 1, local_first, local_first + (state.offset + 1 - first) + 1);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    link_.offset = state.offset;
  }
  FireAppliedEffects(*server_, keys);
  return true;
}

}  // namespace rockcache::server::replication
