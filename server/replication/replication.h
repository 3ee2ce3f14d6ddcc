// Replication: a rockcache primary ships its committed writes to rockcache replicas.
//
// Offsets are the primary's RocksDB sequence numbers (storage/replication_types.h); with a
// replication id (master_replid, 40 hex characters, new each time a server starts as a primary
// or is promoted) they name one point of one history, so a replica resumes only on the history
// it holds.
//
// Offsets continue across a promotion, as Redis's do: a promoted replica numbers its own writes
// on from the last offset it applied (its local sequence numbers less a shift), and keeps the
// id of the history it followed as master_replid2, accepted up to second_repl_offset: the other
// replicas, and an old primary that took nothing the new one lacks, continue incrementally.
// A server serves replicas from its own WAL (a replica too: chained replication): the batches it
// applied as a replica go out as the primary sent them (Store::ClassifyWalBatch trims its state
// record and restores the primary's numbering), its own writes numbered as above, and nothing
// else (state records, local writes of a writable replica: Store::OrderOwnWritesWithApplied keeps
// those out of an applied batch's WAL record). Where an applied offset lies in the
// local WAL is kept in memory (a mark every kMarkEvery applied writes, at most kMaxMarks);
// an offset that is not found takes a full sync.
//
// The link (one TCP connection to the primary's ordinary port, opened by the replica):
//   replica -> primary  [AUTH [user] pass] PING, REPLCONF listening-port <p>,
//                       [REPLCONF ip-address <ip>], REPLCONF capa rockcache,
//                       REPLCONF rc-events <classes> (its notify-keyspace-events bits), then
//                       PSYNC <replid|?> <next sequence|-1> [FAILOVER | rc-resume]
//                       (FAILOVER: take over first; rc-resume: right after a full sync)
//   primary -> replica  +CONTINUE <replid>: the batches from <next sequence> on follow, or
//                       +FULLRESYNC <replid> <sequence>: a checkpoint follows, then the primary
//                       closes the link and the replica, once it has loaded it, connects again
//                       with PSYNC <replid> <its sequence + 1>.
//   Frames after the +CONTINUE/+FULLRESYNC line (primary -> replica):
//     "B<len>\r\n" + a WriteBatch's bytes     one committed batch, in commit order
//     "P\r\n"                                 keepalive, every second while idle
//     "G\r\n"                                 asks for an acknowledgement now (WAIT)
//     "F<name> <size>\r\n" + the file's bytes one checkpoint file (full sync only)
//     "E\r\n"                                 end of the checkpoint
//   replica -> primary: REPLCONF ACK <offset> (RESP), every second and after each "G";
//                       REPLCONF rc-events <classes> when its notify-keyspace-events changes.
//   A batch carries, as RocksDB LogData records, the keyspace events of the writes it holds
//   whose classes a replica asked for (server/pubsub/notify.h, "Replicas"); the replica
//   publishes them after applying it (applied_effects.h).
//
// Threads
// - The primary: PSYNC runs on the network thread of the replica's connection, which hands
//   the socket (dup'ed; still non-blocking) to a sender thread of its own and closes its copy.
//   A sender reads the WAL (storage's WalReader) and writes with poll(): memory per replica is
//   one batch or one 1 MB file chunk.
// - The replica: one link thread connects, synchronizes and applies batches: those already read
//   from the link together (up to 1 MB), joined into one write. Applying takes the key stripes
//   of their keys (cache/key_locks.h), drops their cache entries and writes them
//   (Store::ApplyReplicated), so no reader fills the cache with an older value.
// - Commands (REPLICAOF, ROLE, WAIT, INFO) call in from worker and loop threads: every public
//   method is thread-safe; none blocks a network thread (REPLICAOF runs on a worker; WAIT parks
//   its client, and an ack-wait thread posts the reply to the client's loop).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config/status.h"
#include "storage/replication_types.h"

namespace rockcache::server {

class Server;
struct ClientInfo;

namespace replication {

class Sender;
class LinkIo;

// The replica-side figures INFO replication and ROLE show.
struct ReplicaLinkInfo {
  std::string host;
  int port = 0;
  bool link_up = false;
  bool sync_in_progress = false;
  int64_t last_io_ms = 0;          // last byte from the primary (0: never)
  int64_t link_down_since_ms = 0;  // 0 while up
  uint64_t offset = 0;             // last sequence applied
  // The link as CLIENT LIST shows it (flags=M): its client id (new for each connection), local
  // address and when it connected. id 0 while not connected.
  uint64_t client_id = 0;
  std::string laddr;
  int64_t connected_ms = 0;
};

// One connected replica, as the primary sees it.
struct ReplicaInfo {
  std::string ip;
  int port = 0;
  std::string state;  // "wait_bgsave" (full sync), "online"
  uint64_t ack_offset = 0;
  int64_t last_ack_ms = 0;
  // As CLIENT LIST shows it (flags=S): the id of the connection that sent PSYNC, its peer and
  // local addresses, socket and when the link started.
  uint64_t client_id = 0;
  std::string addr;
  std::string laddr;
  int fd = -1;
  int64_t created_ms = 0;
};

// Where a PSYNC came from (server/replication/commands.cc): what REPLCONF told and the
// connection's own facts.
struct ReplicaPeer {
  uint64_t client_id = 0;
  std::string addr;            // peer "ip:port"
  std::string laddr;           // local "ip:port"
  int listening_port = 0;      // REPLCONF listening-port
  std::string announced_ip;    // REPLCONF ip-address
  uint32_t event_classes = 0;  // REPLCONF rc-events
  // PSYNC ... rc-resume: the replica continues right after loading a full sync (counted with
  // that full sync, not as a partial one, as Redis counts its single full sync).
  bool after_full_sync = false;
};

class Replication {
 public:
  explicit Replication(Server* server);
  ~Replication();
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;

  // Main thread, after the store and pool are up: starts as a replica when `replicaof` is set.
  void Start();
  // Main thread, before the store closes: ends the link and every sender. Blocks until joined.
  void Stop();

  // ---- role ----
  bool is_replica() const { return replica_.load(std::memory_order_acquire); }
  // A write from a normal client must be refused with -READONLY (a replica with
  // replica-read-only yes). One relaxed load.
  bool RefusesWrites() const { return refuse_writes_.load(std::memory_order_relaxed); }
  // A replica whose link is down with replica-serve-stale-data no: reads get -MASTERDOWN.
  // One relaxed load.
  bool RefusesStaleReads() const { return refuse_stale_reads_.load(std::memory_order_relaxed); }
  // A primary with min-replicas-to-write and min-replicas-max-lag set, and fewer replicas that
  // acknowledged within the lag: writes get -NOREPLICAS. One relaxed load.
  bool LacksGoodReplicas() const { return lacks_good_replicas_.load(std::memory_order_relaxed); }
  // The replicas online that acknowledged within min-replicas-max-lag (INFO
  // min_slaves_good_slaves), as last counted (every acknowledgement, every second).
  int64_t GoodReplicas() const { return good_replicas_.load(std::memory_order_relaxed); }
  // REPLICAOF host port: follows that primary (reconnecting; a full sync unless it can resume).
  // A primary offers its own history (replid and offset) to continue from; `from_config` (the
  // `replicaof` option at start) offers the stored replication state instead. Returns at once
  // (after one small write of the replication state). Error text for REPLICAOF when refused.
  [[nodiscard]] Status BecomeReplicaOf(const std::string& host, int port, bool from_config = false);
  // REPLICAOF NO ONE: stops applying (waits for a batch being applied), gets a new replication
  // id and accepts writes. Blocking for at most one batch apply or a database swap.
  void BecomePrimary();
  // Recomputes the refusal flags (config OnChange of replica-read-only and
  // replica-serve-stale-data; link up or down).
  void ApplySettings();

  // ---- ids and offsets ----
  // The replication id: a primary's own; a replica's, the one of the history it holds.
  std::string replid() const;
  // Redis's master_replid2 / second_repl_offset: the history this one continues and the first
  // offset at which they differ; ("", 0) when none.
  std::pair<std::string, uint64_t> PreviousHistory() const;
  // INFO stats: full syncs served, continuations accepted, continuations refused (asked with a
  // replication id, then served a full sync).
  uint64_t sync_full() const { return sync_full_.load(std::memory_order_relaxed); }
  uint64_t sync_partial_ok() const { return sync_partial_ok_.load(std::memory_order_relaxed); }
  uint64_t sync_partial_err() const { return sync_partial_err_.load(std::memory_order_relaxed); }
  const std::string& run_id() const { return run_id_; }
  // Primary: the last committed sequence. Replica: the last applied one.
  uint64_t Offset() const;

  // ---- primary side ----
  // PSYNC from a connection (loop thread, with the connection's socket, which this takes a dup
  // of). A replica serves it only while its own link is up. Returns false with *error set when
  // refused (the connection stays as it is).
  bool StartSender(int fd, const ReplicaPeer& peer, const std::string& replid, int64_t from,
                   std::string* error);
  // Replicas online that acknowledged `offset`.
  int64_t CountAcked(uint64_t offset) const;
  // WAIT that cannot be answered at once: the client (parsing nothing meanwhile) gets
  // ":<count>" through its loop's completion queue once `replicas` replicas acknowledged
  // `offset` or at `deadline_ms` (0 = none). Any thread; never blocks.
  // A waiter whose client is killed or closed meanwhile is dropped (a killed one closed).
  void AddAckWaiter(uint32_t loop, std::shared_ptr<ClientInfo> client, uint64_t offset,
                    int64_t replicas, int64_t deadline_ms);
  std::vector<ReplicaInfo> Replicas() const;
  // CLIENT LIST lines, in Redis's format, of the replication links: this primary's replicas
  // (flags=S, with `replicas`) and this replica's link to its primary (flags=M, with `master`);
  // with `ids` non-empty only those clients.
  std::string ClientListLines(bool replicas, bool master, const std::vector<uint64_t>& ids) const;
  // CLIENT KILL TYPE replica|slave|master: closes those links; returns how many.
  int64_t KillByType(const std::string& type);

  // ---- replica side ----
  ReplicaLinkInfo LinkInfo() const;

  // ---- FAILOVER (server/replication/failover.cc; Redis 7.0's coordinated failover) ----
  // FAILOVER [TO host port [FORCE]] [TIMEOUT ms] [ABORT], its arguments parsed (port 0: no TO;
  // timeout_ms 0: none): "" when started or aborted, else Redis's error text. A started
  // failover pauses writes (as CLIENT PAUSE WRITE), waits until a replica (the target, or the
  // first one) acknowledged this primary's offset, then turns this server into a replica of it
  // with a PSYNC ... FAILOVER that tells it to take over; the pause ends when that PSYNC is
  // answered, or when the failover is aborted (timeout without FORCE, ABORT, the target
  // refusing). Worker thread; never blocks.
  std::string StartFailover(const std::string& host, int port, bool force, int64_t timeout_ms,
                            bool abort);
  // INFO master_failover_state: no-failover, waiting-for-sync, failover-in-progress.
  std::string FailoverState() const;
  // PSYNC <replid> <offset> FAILOVER received (loop thread): a replica whose replication id is
  // `replid` takes over (becomes a primary) before the PSYNC is served. False with *error set
  // when it is not one.
  bool TakeOverForFailover(const std::string& replid, std::string* error);

 private:
  friend class Sender;
  // Where a sender starts: the local sequence number to read the WAL from and the offset of
  // the first batch it sends; own_from/shift as Replication's own_from_/shift_ then.
  struct WalPosition {
    uint64_t local = 0;
    uint64_t offset = 0;
    uint64_t own_from = 0;
    int64_t shift = 0;
  };
  // An applied batch's place in the local WAL.
  struct Mark {
    uint64_t offset;
    uint64_t local;
  };
  static constexpr uint64_t kMarkEvery = 16;
  static constexpr size_t kMaxMarks = 1 << 16;
  // Finds where the history `replid` continues at offset `from` in this server's WAL. False
  // when it cannot (another history, an offset past the shared part, or not in the WAL).
  bool Locate(const std::string& replid, uint64_t from, WalPosition* pos);
  // The local position of applied offset `offset` (marks_); false when unknown.
  bool LocateApplied(uint64_t offset, uint64_t* local);
  // After a batch was applied: offsets [first, next) at local sequence numbers [local, ...).
  void NoteApplied(uint64_t first, uint64_t next, uint64_t local, uint64_t local_next);
  // The applied positions start again: offset `next` is at local sequence `local_next`.
  void ResetApplied(uint64_t next, uint64_t local_next);
  // A checkpoint for a full sync of a replica of this server, and the offset and replication id
  // it holds (a replica's: taken between two applied batches).
  StatusOr<storage::CheckpointFiles> CheckpointForReplica(const std::string& dir, uint64_t* offset,
                                                          std::string* replid);
  // Ends every sender (this server's replicas reconnect). Blocks until they are joined.
  void StopSenders();
  void LinkThread();
  // One connection to the primary, from connect to link down. Returns after the link ends.
  void RunLink(const std::string& host, int port, uint64_t generation);
  bool Stale(uint64_t generation) const;
  // A full sync: receives the checkpoint into "<dir>/sync" (storage/data_dir.h) and swaps the
  // database for it.
  void ReceiveCheckpoint(LinkIo* io, const std::string& replid, uint64_t offset,
                         uint64_t generation);
  // After +CONTINUE: applies batches until the link ends.
  void StreamFromPrimary(LinkIo* io, storage::ReplicationState state, uint64_t generation);
  // Consecutive batches (the first `count` of `reps`), joined into one write, under their keys'
  // stripes (see top); `state` is where the last one ends. False when they could not be applied.
  bool ApplyBatches(const std::vector<std::string>& reps, size_t count,
                    const storage::ReplicationState& state, uint64_t generation);
  // A sender saw an acknowledgement (wakes WAIT).
  void NoteAck();
  // Counts the good replicas again and sets LacksGoodReplicas.
  void RefreshGoodReplicas();
  void ReapSenders();
  // Answers the AddAckWaiter clients whose wait is over (acknowledged, timed out, shut down).
  void AckWaitThread();
  // Drives a started FAILOVER until it is done or aborted (failover.cc).
  void FailoverThread();
  // Ends a failover (lifts its pause); logs `why` when it was aborted.
  void EndFailover(const char* why);
  // The link's PSYNC was answered (`accepted`) while this server hands over to its new primary.
  void FailoverPsyncAnswered(bool accepted);

  Server* const server_;
  const std::string run_id_;
  std::atomic<bool> replica_{false};
  std::atomic<bool> refuse_writes_{false};
  std::atomic<bool> refuse_stale_reads_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> lacks_good_replicas_{false};
  std::atomic<int64_t> good_replicas_{0};

  mutable std::mutex mu_;  // the fields below
  std::condition_variable link_cv_;
  std::string replid_;
  std::string replid2_;         // master_replid2 ("" none)
  uint64_t second_offset_ = 0;  // second_repl_offset (0 none)
  // A primary's own writes are the batches at local sequence numbers >= own_from_; its offsets
  // are those numbers less shift_ (0 for a server that never followed another). A replica:
  // own_from_ is UINT64_MAX.
  uint64_t own_from_ = 0;
  int64_t shift_ = 0;
  std::string master_host_;
  int master_port_ = 0;
  uint64_t generation_ = 0;  // bumped by each REPLICAOF: a link of an older one stops
  ReplicaLinkInfo link_;
  int link_fd_ = -1;
  bool resume_now_ = false;         // a full sync was loaded: reconnect at once
  bool resume_after_full_ = false;  // the next PSYNC follows a loaded full sync (rc-resume)  // the
                                    // link's socket while connected (KillByType shuts it down)
  std::thread link_thread_;
  std::vector<std::unique_ptr<Sender>> senders_;

  // Held while a batch or a checkpoint is applied; BecomePrimary takes it to stop applying.
  // Taken before mu_ and index_mu_.
  std::mutex apply_mu_;

  std::mutex index_mu_;  // the fields below; taken alone
  std::deque<Mark> marks_;
  Mark applied_next_{0, 0};  // the offset after the last applied batch (local 0: unknown)
  uint64_t applied_batches_ = 0;

  // FAILOVER (guarded by mu_): its phase, target (port 0: the first replica to catch up),
  // deadline (0: none) and FORCE; psync_failover_: the link's next PSYNC says FAILOVER.
  enum class FailoverPhase { kNone, kWaitForSync, kInProgress };
  FailoverPhase failover_phase_ = FailoverPhase::kNone;
  std::string failover_host_;
  int failover_port_ = 0;
  int64_t failover_end_ms_ = 0;
  bool failover_force_ = false;
  bool failover_abort_ = false;
  bool psync_failover_ = false;
  std::condition_variable failover_cv_;
  std::thread failover_thread_;

  std::atomic<uint64_t> sync_full_{0};
  std::atomic<uint64_t> sync_partial_ok_{0};
  std::atomic<uint64_t> sync_partial_err_{0};

  struct AckWaiter {
    uint32_t loop;
    std::shared_ptr<ClientInfo> client;
    uint64_t offset;
    int64_t replicas;
    int64_t deadline_ms;
  };
  std::mutex ack_mu_;
  std::condition_variable ack_cv_;
  std::vector<AckWaiter> ack_waiters_;  // guarded by ack_mu_
  uint64_t acks_seen_ = 0;              // guarded by ack_mu_: bumped by every acknowledgement
  std::thread ack_wait_thread_;
};

// INFO replication, in Redis's fields and formats (server/replication/info.cc). Worker thread.
void AppendReplicationInfo(Server& server, std::string* out);

}  // namespace replication
}  // namespace rockcache::server
