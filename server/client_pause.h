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

class ClientPause {
 public:
  // CLIENT PAUSE at `now_ms`: in effect until `end_ms` (unix ms). As Redis, a pause in effect
  // only grows: the mode becomes the stronger of the two and the end the later one.
  void Pause(int64_t now_ms, int64_t end_ms, PauseMode mode);
  // CLIENT UNPAUSE: ends the pause now and calls the resume hook (the loops resume their held
  // connections).
  void Unpause();

  // The pause in effect at `now_ms` (kNone once its end has passed).
  PauseMode Mode(int64_t now_ms) const {
    const auto mode = static_cast<PauseMode>(mode_.load(std::memory_order_relaxed));
    if (mode == PauseMode::kNone) return mode;
    return now_ms < end_ms_.load(std::memory_order_relaxed) ? mode : PauseMode::kNone;
  }
  // False while no pause was set since the last UNPAUSE (one relaxed load); true says nothing
  // more: ask Mode().
  bool maybe_active() const { return mode_.load(std::memory_order_relaxed) != 0; }
  // When the pause in effect ends (unix ms); 0 with none.
  int64_t end_ms() const { return end_ms_.load(std::memory_order_relaxed); }
  // A pause whose end has passed goes back to none (maybe_active() false again).
  void ClearIfEnded(int64_t now_ms);
  // Whether keys may be deleted by expiry now (no pause in effect).
  bool ExpiryPaused(int64_t now_ms) const { return Mode(now_ms) != PauseMode::kNone; }

  // Set once by the server before the loops start: wakes every loop to resume its connections.
  void set_resume_hook(std::function<void()> hook) { resume_hook_ = std::move(hook); }

 private:
  Mutex mu_;  // orders Pause / Unpause (the atomics are read without it)
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
