// FAILOVER: Redis 7.0's coordinated failover (replication.h, "FAILOVER"). The primary pauses
// writes, waits for a replica to acknowledge its offset, becomes a replica of it and sends
// PSYNC <replid> <offset> FAILOVER; the replica, whose replication id is the primary's, takes
// over (BecomePrimary: the primary's history stays acceptable as its replid2) and answers the
// PSYNC with +CONTINUE, which ends the failover and the pause.
#include <spdlog/spdlog.h>

#include <chrono>

#include "server/client_pause.h"
#include "server/client_registry.h"
#include "server/replication/replication.h"
#include "server/server.h"
#include "server/thread_name.h"

namespace rockcache::server::replication {
namespace {

// How long the failover's write pause may last at most (it ends with the failover).
constexpr int64_t kPauseMs = 24LL * 3600 * 1000;
// How long the new primary has to answer the PSYNC FAILOVER before the failover is aborted.
constexpr int64_t kHandOverMs = 10000;
// How often the failover thread looks at the replicas' acknowledgements.
constexpr int64_t kPollMs = 10;

}  // namespace

std::string Replication::StartFailover(const std::string& host, int port, bool force,
                                       int64_t timeout_ms, bool abort) {
  if (abort) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failover_phase_ == FailoverPhase::kNone) return "ERR No failover in progress.";
    failover_abort_ = true;
    failover_cv_.notify_all();
    return "";
  }
  // Redis 7.0's checks, in its order.
  if (FailoverState() != "no-failover") return "ERR FAILOVER already in progress.";
  if (is_replica()) return "ERR FAILOVER is not valid when server is a replica.";
  const std::vector<ReplicaInfo> replicas = Replicas();
  if (replicas.empty()) return "ERR FAILOVER requires connected replicas.";
  if (force && (timeout_ms == 0 || port == 0)) {
    return "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
  }
  std::thread finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failover_phase_ != FailoverPhase::kNone) return "ERR FAILOVER already in progress.";
    if (port != 0) {
      const ReplicaInfo* target = nullptr;
      for (const auto& r : replicas) {
        if (r.ip == host && r.port == port) target = &r;
      }
      if (target == nullptr) return "ERR FAILOVER target HOST and PORT is not a replica.";
      if (target->state != "online") return "ERR FAILOVER target replica is not online.";
    }
    failover_phase_ = FailoverPhase::kWaitForSync;
    failover_host_ = port != 0 ? host : "";
    failover_port_ = port;
    failover_end_ms_ = timeout_ms > 0 ? NowUnixMs() + timeout_ms : 0;
    failover_force_ = force;
    failover_abort_ = false;
    finished.swap(failover_thread_);  // the previous failover's thread, done
  }
  if (finished.joinable()) finished.join();
  if (port != 0) {
    spdlog::info("FAILOVER requested to {}:{}.", host, port);
  } else {
    spdlog::info("FAILOVER requested to any replica.");
  }
  const int64_t now = NowUnixMs();
  server_->clients().pause().Pause(PausePurpose::kFailover, now, now + kPauseMs, PauseMode::kWrite);
  std::lock_guard<std::mutex> lock(mu_);
  failover_thread_ = std::thread([this] { FailoverThread(); });
  return "";
}

std::string Replication::FailoverState() const {
  std::lock_guard<std::mutex> lock(mu_);
  switch (failover_phase_) {
    case FailoverPhase::kWaitForSync:
      return "waiting-for-sync";
    case FailoverPhase::kInProgress:
      return "failover-in-progress";
    case FailoverPhase::kNone:
      break;
  }
  return "no-failover";
}

void Replication::FailoverThread() {
  NameThisThread("rc-failover");
  std::string host;
  int port = 0;
  // Waiting for a replica to acknowledge this primary's offset (writes are paused: it stays).
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      failover_cv_.wait_for(lock, std::chrono::milliseconds(kPollMs),
                            [&] { return failover_abort_ || stopping_.load(); });
      if (failover_abort_ || stopping_.load()) {
        lock.unlock();
        EndFailover("Failover manually aborted");
        return;
      }
    }
    // Replicas acknowledge every second (writes are paused: the offset stays).
    const uint64_t offset = Offset();
    std::string target_host;
    int target_port = 0;
    int64_t end_ms = 0;
    bool force = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      target_host = failover_host_;
      target_port = failover_port_;
      end_ms = failover_end_ms_;
      force = failover_force_;
    }
    for (const auto& r : Replicas()) {
      if (r.state != "online" || r.ack_offset < offset) continue;
      if (target_port != 0 && (r.ip != target_host || r.port != target_port)) continue;
      host = r.ip;
      port = r.port;
      break;
    }
    if (port != 0) break;
    if (end_ms != 0 && NowUnixMs() >= end_ms) {
      if (!force) {
        EndFailover("Replica never caught up before timeout");
        return;
      }
      host = target_host;  // FORCE: hand over to the target as it is
      port = target_port;
      break;
    }
  }
  spdlog::info("Failover target {}:{} is synced, failing over.", host, port);
  {
    std::lock_guard<std::mutex> lock(mu_);
    failover_phase_ = FailoverPhase::kInProgress;
    psync_failover_ = true;
  }
  if (Status s = BecomeReplicaOf(host, port); !s.ok()) {
    EndFailover("the target is not a valid primary");
    return;
  }
  // FailoverPsyncAnswered ends the phase (accepted) or asks for an abort (refused).
  const int64_t deadline = NowUnixMs() + kHandOverMs;
  bool aborted = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (failover_phase_ == FailoverPhase::kInProgress && !failover_abort_ && !stopping_.load() &&
           NowUnixMs() < deadline) {
      failover_cv_.wait_for(lock, std::chrono::milliseconds(100));
    }
    aborted = failover_phase_ == FailoverPhase::kInProgress;
    psync_failover_ = false;
  }
  if (aborted) {
    // As Redis: the old primary takes its role back (its data is untouched).
    BecomePrimary();
    EndFailover("Failover target never took over");
    return;
  }
  EndFailover(nullptr);
}

void Replication::FailoverPsyncAnswered(bool accepted) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failover_phase_ != FailoverPhase::kInProgress) return;
  psync_failover_ = false;
  if (accepted) {
    failover_phase_ = FailoverPhase::kNone;
  } else {
    failover_abort_ = true;
  }
  failover_cv_.notify_all();
}

void Replication::EndFailover(const char* why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    failover_phase_ = FailoverPhase::kNone;
    failover_host_.clear();
    failover_port_ = 0;
    failover_end_ms_ = 0;
    failover_abort_ = false;
    psync_failover_ = false;
  }
  server_->clients().pause().Unpause(PausePurpose::kFailover, NowUnixMs());
  if (why != nullptr) {
    spdlog::warn("FAILOVER aborted: {}.", why);
  } else {
    spdlog::info("FAILOVER complete: now a replica of the new primary.");
  }
}

bool Replication::TakeOverForFailover(const std::string& replid, std::string* error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!replica_.load()) {
      *error = "ERR PSYNC FAILOVER can't be sent to a master.";
      return false;
    }
    if (replid != replid_) {
      *error = "ERR PSYNC FAILOVER replid must match my replid.";
      return false;
    }
  }
  spdlog::info("Failover request received for replid {}.", replid);
  BecomePrimary();
  return true;
}

}  // namespace rockcache::server::replication
