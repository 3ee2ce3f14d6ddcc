// NetLoop and CLIENT PAUSE (server/client_pause.h): a connection whose next command the pause
// holds stops there, stops reading and waits in the loop's held list; the pause's end (a timer
// per loop, or CLIENT UNPAUSE's kResumePaused message) resumes the held connections in order.
// Nothing waits: the loop goes on serving every other connection. Loop thread only.
#include <event2/event.h>

#include <algorithm>

#include "server/client_pause.h"
#include "server/clock.h"
#include "server/net_loop.h"
#include "server/server.h"
#include "server/tx/transaction.h"

namespace rockcache::server {

bool NetLoop::PauseHolds(const Connection* conn, const CommandSpec* spec) const {
  ClientPause& pause = server_->clients().pause();
  const int64_t now = NowUnixMs();
  const PauseMode mode = pause.Mode(now);
  if (mode == PauseMode::kNone) {
    pause.ClearIfEnded(now);  // the next commands skip the clock read again
    return false;
  }
  // EXEC of a transaction that queued a write is held as the write itself would be (the write
  // was queued before the pause: one queued during it is held before it is queued).
  bool exec_with_writes = false;
  if (mode == PauseMode::kWrite && spec != nullptr && conn->tx_multi() &&
      std::string_view(spec->name) == "exec") {
    const std::vector<PreparedCommand>& queued = conn->tx->queued;
    exec_with_writes = std::any_of(queued.begin(), queued.end(), [](const PreparedCommand& c) {
      return c.spec != nullptr && MayWriteDuringPause(*c.spec);
    });
  }
  return HeldByPause(mode, spec, exec_with_writes);
}

void NetLoop::HoldForPause(Connection* conn) {
  if (conn->pause_held) return;
  conn->pause_held = true;
  conn->info->paused.store(true, std::memory_order_relaxed);
  if (!conn->reading_paused) {
    event_del(conn->read_event);
    conn->reading_paused = true;
  }
  pause_held_.push_back(conn->id);
  if (!evtimer_pending(pause_timer_, nullptr)) ArmPauseTimer(NowUnixMs());
}

void NetLoop::ArmPauseTimer(int64_t now_ms) {
  // At most a day at a time (a timeout near INT64_MAX would overflow libevent's clock); a
  // pause still in effect when it fires re-arms it.
  constexpr int64_t kMaxWaitMs = 24LL * 3600 * 1000;
  const int64_t end = server_->clients().pause().end_ms();
  const int64_t wait_ms =
      end - now_ms > kMaxWaitMs ? kMaxWaitMs : std::max<int64_t>(1, end - now_ms);
  timeval after{static_cast<time_t>(wait_ms / 1000),
                static_cast<suseconds_t>((wait_ms % 1000) * 1000)};
  evtimer_add(pause_timer_, &after);
}

void NetLoop::OnPauseTimer(int, short, void* arg) { static_cast<NetLoop*>(arg)->ResumeHeld(); }

void NetLoop::ResumeHeld() {
  evtimer_del(pause_timer_);
  ClientPause& pause = server_->clients().pause();
  const int64_t now = NowUnixMs();
  pause.ClearIfEnded(now);                   // what is in effect from now on
  if (pause.Mode(now) == PauseMode::kAll) {  // extended meanwhile, or another purpose's
    if (!pause_held_.empty()) ArmPauseTimer(now);
    return;
  }
  // Every held connection goes on; one whose command a pause still in effect covers (a
  // FAILOVER's WRITE pause after an ALL one ended) is held again, in the same order.
  std::deque<uint64_t> held;
  held.swap(pause_held_);
  for (const uint64_t id : held) {
    Connection* conn = FindConnection(id);
    if (conn == nullptr || !conn->pause_held) continue;  // closed meanwhile
    conn->pause_held = false;
    conn->info->paused.store(false, std::memory_order_relaxed);
    if (conn->reading_paused && !conn->in_flight) {
      event_add(conn->read_event, nullptr);
      conn->reading_paused = false;
    }
    ProcessInput(conn);  // runs the held command and what follows it; flushes
  }
}

}  // namespace rockcache::server
