// Scripting's server-wide state: the EVAL script cache, the function libraries, and what SCRIPT
// KILL / FUNCTION KILL reach — how many
// scripts are running and the kill requests. One per Server; any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "config/mutex.h"
#include "server/scripting/functions.h"
#include "server/scripting/script_cache.h"

namespace rockcache::server::scripting {

class Scripting {
 public:
  ScriptCache& cache() { return cache_; }
  FunctionRegistry& functions() { return functions_; }

  // A script run starts / ends (script_vm.cc). Start returns the kill epoch the run watches.
  uint64_t StartRun() {
    running_.fetch_add(1, std::memory_order_acq_rel);
    return kill_epoch_.load(std::memory_order_acquire);
  }
  void EndRun() { running_.fetch_sub(1, std::memory_order_acq_rel); }
  int running() const { return running_.load(std::memory_order_acquire); }

  // SCRIPT KILL: every script running now stops at its next check (within ~100k Lua
  // instructions, well under 100 ms) and is rolled back. False when none runs.
  bool KillRunning() {
    if (running() == 0) return false;
    kill_epoch_.fetch_add(1, std::memory_order_acq_rel);
    return true;
  }
  // The stripes each running script unit holds, and since when: commands that need them get
  // -BUSY once the script has run past busy-reply-threshold (BusyFor), instead of tying up a
  // worker waiting for the lock. Register returns a handle for Unregister.
  // `command`: the running command's arguments (EVAL... / FCALL...), read by FUNCTION STATS
  // until UnregisterUnit.
  uint64_t RegisterUnit(const std::vector<uint32_t>& stripes, bool all, int64_t start_ms,
                        const std::vector<std::string>* command);
  void UnregisterUnit(uint64_t handle);
  // Network thread, per command bound for the pool: one relaxed load while no unit runs. True
  // when a unit running since before now_ms - threshold_ms holds one of `stripes`.
  bool BusyFor(const std::vector<uint32_t>& stripes, int64_t now_ms, int64_t threshold_ms) const {
    if (units_.load(std::memory_order_relaxed) == 0) return false;
    return BusyForSlow(stripes, now_ms, threshold_ms);
  }

  // Whether any unit runs (one relaxed load), and whether one has run since before `since_ms`.
  bool units_running() const { return units_.load(std::memory_order_relaxed) != 0; }
  bool AnyRunningSince(int64_t since_ms) const;

  // FUNCTION STATS' running_script: the longest-running script's name (the function's, or
  // "f_<sha1>" for EVAL and EVALSHA, as Redis), its command and how long it has run.
  struct RunningScript {
    std::string name;
    std::vector<std::string> command;
    int64_t duration_ms = 0;
  };
  // False when no script runs. Any thread; copies under the unit mutex.
  bool OldestRunning(int64_t now_ms, RunningScript* out) const;

  // Bytes the workers' Lua states hold (each state reports its change after a run).
  void AddVmBytes(int64_t delta) { vm_bytes_.fetch_add(delta, std::memory_order_relaxed); }
  uint64_t vm_bytes() const {
    const int64_t bytes = vm_bytes_.load(std::memory_order_relaxed);
    return bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  }

  // Whether a run that started at `epoch` was asked to stop.
  bool KillRequested(uint64_t epoch) const {
    return kill_epoch_.load(std::memory_order_acquire) != epoch;
  }

 private:
  ScriptCache cache_;
  FunctionRegistry functions_;
  std::atomic<int> running_{0};
  std::atomic<uint64_t> kill_epoch_{0};
  std::atomic<int64_t> vm_bytes_{0};

  struct Unit {
    uint64_t handle;
    int64_t start_ms;
    bool all;
    std::vector<uint32_t> stripes;  // ascending
    const std::vector<std::string>* command;
  };
  bool BusyForSlow(const std::vector<uint32_t>& stripes, int64_t now_ms,
                   int64_t threshold_ms) const;
  mutable Mutex units_mu_;
  std::vector<Unit> running_units_ GUARDED_BY(units_mu_);
  uint64_t next_handle_ GUARDED_BY(units_mu_) = 1;
  std::atomic<int> units_{0};
};

}  // namespace rockcache::server::scripting
