// NetLoop: one network thread — a libevent event_base, its own SO_REUSEPORT listener(s), its
// connections, and its completion queue.
//
// Threads: everything here runs on the loop's own thread except PostCompletion(s) (any thread),
// Start/StopListening/Stop/Join (the main thread). The loop never blocks on disk: storage
// commands go to the worker pool as a BatchTask; their replies come back through
// PostCompletion(), which queues them (mutex-protected vector, multi-producer / single-consumer)
// and wakes the loop with an eventfd write when the queue was empty.
//
// The implementation is split by concern:
//   net_loop.cc      lifecycle: listen, accept, wake-up, close, the 1 s timer (idle timeouts)
//   net_io.cc        connection I/O: read, query-buffer limit, Flush, output-buffer limit
//   net_dispatch.cc  parse and route (server/admission.h): RTC cache answers, in-loop
//                    commands, batches (group commit, submit / park)
//   net_completions.cc  replies back from the pool, blocking-pop waits
//   net_record.cc    metrics and slow-log entries of commands and batches
//   net_pause.cc     CLIENT PAUSE: holding connections at a paused command, resuming them
//   net_memory.cc    what each client holds (CLIENT LIST, INFO), maxmemory-clients
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "config/mutex.h"
#include "config/status.h"
#include "server/batch.h"
#include "server/commands/command.h"
#include "server/connection.h"
#include "server/flat_key_set.h"
#include "server/memory_read_gate.h"
#include "server/protocol/args_pool.h"
#include "server/pubsub/inbox.h"
#include "server/server_stats.h"

struct event_base;
struct evconnlistener;
struct event;
struct sockaddr;

namespace rockcache::server {

class Server;

class NetLoop {
 public:
  NetLoop(Server* server, uint32_t index);
  ~NetLoop();
  NetLoop(const NetLoop&) = delete;
  NetLoop& operator=(const NetLoop&) = delete;

  // Creates the event base and one listener per address (SO_REUSEPORT, so every loop listens on
  // the same port). Main thread, before Start().
  [[nodiscard]] Status Listen(const std::vector<std::string>& addresses, int port);
  void Start();          // spawns the loop thread
  void StopListening();  // closes the listeners (from any thread; done inside the loop)
  void Stop();           // flushes what it can and ends the loop (any thread)
  void Join();

  // Any thread. Hands replies (or a kill request) to the loop that owns conn_id.
  void PostCompletion(Completion completion);
  // Any thread. Hands several completions at once (one lock, at most one wake-up).
  void PostCompletions(std::vector<Completion> completions);

  // Any thread: this loop's queue of published messages (server/pubsub/inbox.h).
  PubSubInbox& pubsub_inbox() { return *pubsub_inbox_; }

  uint32_t index() const { return index_; }
  Server* server() const { return server_; }

  // ---- loop thread only (called from handlers of kConnection commands) ----
  // Appends replies to the connection's output and writes what the socket takes.
  void Flush(Connection* conn);
  // A worker finished a group of this loop's batches (GroupTask, just before posting its
  // completions). Any thread.
  void NoteGroupDone() { groups_done_.fetch_add(1, std::memory_order_relaxed); }
  // The connection with this id, or nullptr when it closed.
  Connection* FindConnection(uint64_t id);

 private:
  // An input buffer keeps up to this much capacity across reads; a bigger one is freed once
  // empty (net_io.cc reads, net_dispatch.cc consumes).
  static constexpr size_t kKeepInput = 64 * 1024;
  // The same for the output buffer once every reply in it is written (net_io.cc).
  static constexpr size_t kKeepOutput = 64 * 1024;

  // ---- net_loop.cc: lifecycle (loop thread) ----
  static void OnAccept(evconnlistener* listener, int fd, sockaddr* addr, int socklen, void* arg);
  static void OnWake(int fd, short events, void* arg);
  static void OnTimer(int fd, short events, void* arg);
  void Accept(int fd, sockaddr* addr);
  void CloseConnection(Connection* conn);
  void CheckIdleTimeouts();

  // ---- net_io.cc: connection I/O (loop thread) ----
  static void OnReadable(int fd, short events, void* arg);
  static void OnWritable(int fd, short events, void* arg);
  void ReadFrom(Connection* conn);
  // Closes conn (true) when its unparsed input plus its partly parsed command pass
  // client-query-buffer-limit.
  bool CloseIfOverQueryLimit(Connection* conn);
  // client-output-buffer-limit (normal class): true when `pending` reply bytes are over the hard
  // limit, or over the soft limit for longer than its seconds (Redis's rule); logs why.
  bool OverOutputLimit(Connection* conn, size_t pending);

  // ---- net_memory.cc: per-client memory, maxmemory-clients (loop thread) ----
  // Stores what conn holds in its ClientInfo and the registry's sum; past maxmemory-clients,
  // evicts the biggest clients (EvictClients).
  void NoteClientMemory(Connection* conn);
  // Disconnects the clients with the most memory (not NO-EVICT) until the sum is back under
  // `limit`, as Redis 7's client eviction. At most once per kEvictionInterval per loop:
  // O(clients log clients) each time.
  void EvictClients(uint64_t limit);
  // Gives conn's memory back to the registry's sum (its close).
  void ForgetClientMemory(Connection* conn);

  // ---- net_dispatch.cc: parse and route, batches (loop thread) ----
  static void OnRetryParked(int fd, short events, void* arg);
  static void OnSubmitGroup(int fd, short events, void* arg);
  // Parses and runs commands until the input is used up or a batch goes in flight.
  void ProcessInput(Connection* conn);
  // Whether a long-running script holds a key the command needs (-BUSY then).
  bool KeysBusy(const CommandSpec& spec, const Args& argv) const;
  // The bytes a batch's replies may take: what client-output-buffer-limit leaves of conn's
  // pending replies.
  uint64_t ReplyBudget(const Connection* conn) const;
  // Hands a batch to the pool, or parks it (and stops reading from conn) when the pool has no
  // room. Never waits. Sets conn->in_flight.
  void SubmitOrPark(Connection* conn, std::vector<PreparedCommand> batch, BatchTimes times);
  // Submits parked batches, oldest first, while the pool has room; re-arms the retry timer.
  void SubmitParked();
  // Group commit (server/group_commit.h): queues a connection's batch; the batches queued during
  // one loop pass go to the pool as one task at the end of the pass. submit_event_ is made active
  // when the first batch is queued: libevent appends it to the tail of the active queue it is
  // running, so it runs after every event already active in this pass (reads, the completion
  // wake-up) and within the same pass.
  void QueueBatch(Connection* conn, std::vector<PreparedCommand> batch, BatchTimes times);
  // Hands a group of batches to the pool (Server::SubmitGroup) and counts it in flight.
  void SendGroup(std::vector<ConnBatch> group, int level = 0);
  // Whether the pool still runs (or has queued) a group this loop sent: then a miss read here
  // costs the worker nothing and the client no wait behind that group. One relaxed load.
  bool PoolBehind() const { return groups_done_.load(std::memory_order_relaxed) != groups_sent_; }
  // CLIENT PAUSE (server/client_pause.h): whether the pause in effect holds this command of
  // conn (for EXEC: whether its queued commands hold a write).
  bool PauseHolds(const Connection* conn, const CommandSpec* spec) const;
  // Holds conn at its next command until the pause ends: reading stops, the pause timer is armed.
  void HoldForPause(Connection* conn);
  // The pause ended (its timer, or CLIENT UNPAUSE): resumes the held connections in the order
  // they were held; re-arms the timer when the pause was extended meanwhile.
  void ResumeHeld();
  static void OnPauseTimer(int fd, short events, void* arg);
  void ArmPauseTimer(int64_t now_ms);  // for the pause's end (or a day, whichever is sooner)

  // ---- net_completions.cc: replies back, blocking-pop waits (loop thread) ----
  static void OnWaitTimeout(int fd, short events, void* arg);
  // Blocking pops (server/blocking/): gives a kMayBlock command its waiter and arms the timeout;
  // ends the wait when the command's reply is back; times it out.
  void BeginWait(Connection* conn, PreparedCommand* command);
  void EndWait(Connection* conn);
  void WaitTimedOut(Connection* conn);
  void DrainCompletions();

  // ---- net_record.cc: metrics (loop thread) ----
  // Records metrics (and slow-log entries) for a completed batch.
  void RecordBatch(Connection* conn, const Completion& completion, uint64_t written);
  // Records the blocked command whose wait `completion` ends (Completion::unblock).
  void RecordUnblocked(Connection* conn, const Completion& completion);
  // Records a command run in this thread (cache answer, connection or anywhere command).
  void RecordInLoop(Connection* conn, int command_id, const Args& argv, bool rtc, const char* reply,
                    size_t reply_length, uint64_t parsed, uint64_t start, uint64_t end);

  Server* const server_;
  const uint32_t index_;
  event_base* base_ = nullptr;
  std::vector<evconnlistener*> listeners_;
  int wake_fd_ = -1;
  event* wake_event_ = nullptr;
  event* timer_event_ = nullptr;
  event* submit_event_ = nullptr;
  std::vector<ConnBatch> pending_group_;  // loop thread only: batches queued in this pass
  // Loop thread only: this pass's batches of one script each, sent as a group of their own.
  std::vector<ConnBatch> pending_scripts_;
  ArgsPool spare_args_;  // loop thread only: finished commands' argument vectors, for reuse
  // Loop thread only: whether misses try RocksDB's caches, and resident file pages.
  MemoryReadGate memory_gate_;
  MemoryReadGate mapped_gate_;
  // Loop thread only, per ProcessInput pass: the keys its batch writes, and a scratch vector.
  FlatKeySet written_in_batch_;
  std::vector<std::string_view> command_keys_;
  uint64_t groups_sent_ = 0;              // loop thread only: groups handed to the pool (SendGroup)
  std::atomic<uint64_t> groups_done_{0};  // of those, the ones a worker has finished
  event* retry_event_ = nullptr;          // one-shot: retries parked batches
  event* pause_timer_ = nullptr;          // one-shot: the pause's end, while connections are held
  std::deque<uint64_t> pause_held_;       // connections held by CLIENT PAUSE, in order; loop thread
  int64_t last_client_eviction_ms_ = 0;   // loop thread: EvictClients' last scan
  std::thread thread_;
  std::atomic<bool> stop_listening_{false};
  std::atomic<bool> stopping_{false};

  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;  // loop thread only
  std::deque<uint64_t> parked_;   // connections with a parked batch, oldest first; loop thread
  LoopCounters* const counters_;  // this loop's slot in ServerStats; written by this thread only

  std::unique_ptr<PubSubInbox> pubsub_inbox_;

  Mutex completions_mu_;
  std::vector<Completion> completions_ GUARDED_BY(completions_mu_);
};

}  // namespace rockcache::server
