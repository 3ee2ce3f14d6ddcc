// Scripting's server-wide state: the EVAL script cache, the function libraries, and what SCRIPT
// KILL / FUNCTION KILL reach — how many
// scripts are running and the kill requests. One per Server; any thread.
#pragma once

#include <atomic>
#include <cstdint>

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
};

}  // namespace rockcache::server::scripting
