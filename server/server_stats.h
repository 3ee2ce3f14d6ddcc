// Server-wide counters behind INFO stats: per-loop LoopCounters (single writer each) and the
// rare relaxed atomics of ServerStats. Any thread reads them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rockcache::server {

// The counters a network loop bumps on every read, write and command: one cache line per loop,
// written by that loop only (relaxed load + store, no locked instruction), summed on read.
struct alignas(64) LoopCounters {
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> net_input_bytes{0};
  std::atomic<uint64_t> net_output_bytes{0};
  std::atomic<uint64_t> rtc_answers{0};        // commands answered in the loop from the cache
  std::atomic<uint64_t> rtc_storage_fills{0};  // ... of which after a fill from RocksDB's memory
  std::atomic<uint64_t> parked_batches{0};     // batches held back: the pool had no room
  // The loop thread's mincore calls for those fills (storage::ResidencyChecksOfThisThread).
  std::atomic<uint64_t> rtc_resident_checks{0};
  // Single writer: the owning loop's thread.
  static void Add(std::atomic<uint64_t>* counter, uint64_t n) {
    counter->store(counter->load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

// Server-wide counters for INFO stats. The rare ones are relaxed atomics; the per-command and
// per-byte ones live in per-loop LoopCounters and are summed (minus the RESETSTAT baseline) by
// the accessors below, from any thread.
struct ServerStats {
  static constexpr size_t kMaxLoops = 64;  // net-threads' upper bound
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> expired_keys{0};
  std::atomic<uint64_t> coalesced_misses{0};  // misses served by another worker's fill
  // Sliced reads (server/slicing/): commands whose first step did not finish, and the steps
  // they took in all (the first one included). Bumped by workers, relaxed.
  std::atomic<uint64_t> sliced_commands{0};
  std::atomic<uint64_t> command_slices{0};
  // Write runs (WriteRun, server/commands/command.h): runs, and the commands they joined.
  std::atomic<uint64_t> write_runs{0};
  std::atomic<uint64_t> write_run_commands{0};
  LoopCounters loops[kMaxLoops];

  uint64_t total_commands_processed() const { return Sum(&LoopCounters::commands, 0); }
  uint64_t total_net_input_bytes() const { return Sum(&LoopCounters::net_input_bytes, 1); }
  uint64_t total_net_output_bytes() const { return Sum(&LoopCounters::net_output_bytes, 2); }
  uint64_t rtc_answers() const { return Sum(&LoopCounters::rtc_answers, 3); }
  uint64_t parked_batches() const { return Sum(&LoopCounters::parked_batches, 4); }
  uint64_t rtc_storage_fills() const { return Sum(&LoopCounters::rtc_storage_fills, 5); }
  uint64_t rtc_resident_checks() const { return Sum(&LoopCounters::rtc_resident_checks, 6); }
  // CONFIG RESETSTAT for the per-loop counters (their writers keep going; readers subtract).
  void ResetLoopCounters() {
    base_[0] = Sum(&LoopCounters::commands, -1);
    base_[1] = Sum(&LoopCounters::net_input_bytes, -1);
    base_[2] = Sum(&LoopCounters::net_output_bytes, -1);
    base_[3] = Sum(&LoopCounters::rtc_answers, -1);
    base_[4] = Sum(&LoopCounters::parked_batches, -1);
    base_[5] = Sum(&LoopCounters::rtc_storage_fills, -1);
    base_[6] = Sum(&LoopCounters::rtc_resident_checks, -1);
  }

 private:
  uint64_t Sum(std::atomic<uint64_t> LoopCounters::*field, int base) const {
    uint64_t total = 0;
    for (const auto& loop : loops) total += (loop.*field).load(std::memory_order_relaxed);
    uint64_t b = base >= 0 ? base_[base].load(std::memory_order_relaxed) : 0;
    return total > b ? total - b : 0;
  }
  std::atomic<uint64_t> base_[7] = {};
};

}  // namespace rockcache::server
