// ClientPause: CLIENT PAUSE timeout [WRITE|ALL] / CLIENT UNPAUSE, the server-wide state (Redis
// 7.0 semantics). While a pause is in effect the network loops hold the commands it covers
// (server/net_dispatch.cc): the connection stops parsing at that command and stops reading, its
// loop keeps it in a list and arms a timer for the pause's end; nothing waits, no worker is held.
// When the pause ends (its time passes, or UNPAUSE) each loop resumes its held connections in
// the order it held them.
//
// What a pause covers, as Redis 7.0: ALL holds every command of every client (CLIENT UNPAUSE
// included: only the timeout ends such a pause, as in Redis). WRITE holds the commands that may
// write or replicate: write commands, EVAL/EVALSHA/FCALL (every script, see
// MayWriteDuringPause), PUBLISH/SPUBLISH, PFCOUNT, and EXEC of a transaction holding one; reads
// (cache hits included) go through. While either is in effect nothing expires actively (the
// expiry sweep deletes nothing; expired keys still read as missing), as Redis.
//
// Threads: every method is thread-safe. Paused() is one relaxed load while no pause is in
// effect (the per-command cost).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "config/mutex.h"

namespace rockcache::server {

struct CommandSpec;

enum class PauseMode : int { kNone = 0, kWrite = 1, kAll = 2 };

// Who paused, as Redis's pause purposes: each ends on its own (CLIENT UNPAUSE ends only the
// CLIENT PAUSE, never a FAILOVER's), and what is in effect is the strongest of those not ended.
enum class PausePurpose : int { kClientCommand = 0, kFailover = 1 };

class ClientPause {
 public:
  // A pause by `purpose` at `now_ms`, in effect until `end_ms` (unix ms). As Redis, a purpose's
  // pause in effect only grows: the mode becomes the stronger of the two and the end the later.
  void Pause(PausePurpose purpose, int64_t now_ms, int64_t end_ms, PauseMode mode);
  // Ends `purpose`'s pause now (CLIENT UNPAUSE, a FAILOVER's end) and calls the resume hook (the
  // loops resume their held connections; those another purpose still covers are held again).
  void Unpause(PausePurpose purpose, int64_t now_ms);
  // The pause in effect at `now_ms` (kNone once every purpose's end has passed).
  PauseMode Mode(int64_t now_ms) const {
    const auto mode = static_cast<PauseMode>(mode_.load(std::memory_order_relaxed));
    if (mode == PauseMode::kNone) return mode;
    if (now_ms < end_ms_.load(std::memory_order_relaxed)) return mode;
    return ModeAfterEarliestEnd(now_ms);
  }
  // False while no pause was set since the last UNPAUSE (one relaxed load); true says nothing
  // more: ask Mode().
  bool maybe_active() const { return mode_.load(std::memory_order_relaxed) != 0; }
  // When what is in effect next changes (unix ms: the earliest end of a purpose's pause); 0 with
  // none.
  int64_t end_ms() const { return end_ms_.load(std::memory_order_relaxed); }
  // Pauses whose end has passed go (maybe_active() false again once none is left).
  void ClearIfEnded(int64_t now_ms);
  // Whether keys may be deleted by expiry now (no pause in effect).
  bool ExpiryPaused(int64_t now_ms) const { return Mode(now_ms) != PauseMode::kNone; }
  // Set once by the server before the loops start: wakes every loop to resume its connections.
  void set_resume_hook(std::function<void()> hook) { resume_hook_ = std::move(hook); }

 private:
  struct PurposePause {
    int mode = 0;
    int64_t end_ms = 0;
  };
  static constexpr int kPurposes = 2;
  // Mode() past the earliest end, before ClearIfEnded ran: from the purposes themselves.
  PauseMode ModeAfterEarliestEnd(int64_t now_ms) const;
  // Sets mode_ / end_ms_ from the purposes not ended at `now_ms`.
  void Combine(int64_t now_ms) REQUIRES(mu_);

  mutable Mutex mu_;  // orders Pause / Unpause (the atomics are read without it)
  PurposePause purposes_[kPurposes] GUARDED_BY(mu_);
  // The strongest mode in effect and the earliest end among the purposes that set it.
  std::atomic<int> mode_{0};
  std::atomic<int64_t> end_ms_{0};
  std::function<void()> resume_hook_;
};

// Whether a pause in `mode` holds this command. `exec_with_writes`: for EXEC, whether its queued
// commands hold one that a WRITE pause covers. `spec` may be null (an unknown command: held only
// by ALL, as every command).
bool HeldByPause(PauseMode mode, const CommandSpec* spec, bool exec_with_writes);

// A WRITE pause covers it (write, script, PUBLISH, PFCOUNT). Scripts are held whatever their
// flags: a `#!lua flags=no-writes` script is held too (Redis lets it through).
bool MayWriteDuringPause(const CommandSpec& spec);

}  // namespace rockcache::server
