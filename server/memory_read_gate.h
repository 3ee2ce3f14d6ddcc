// server::MemoryReadGate — whether a network thread should try to answer a cache miss from
// RocksDB's memory (TryAnswerFromMemory, server/executor.h) before handing it to the pool.
//
// The try answers a miss with no thread hop when the key's blocks are in memory (memtables and
// block cache). When they are not — most misses once the data is several times the block
// cache — it is wasted work: it probes the memtables, the files' filters and index partitions
// and the block cache, finds the data block missing, and the worker then repeats every one of
// those probes before its file read. The gate keeps a score of how recent tries ended (an
// exponentially decaying success rate over about the last kWindow tries) and lets a miss try
// while the score says at least half of them answer; below that it lets one miss in
// kProbeEvery through, so the score sees the data come back into memory (a shrinking working
// set, a grown block cache) within a few thousand misses.
//
// Loop thread only (one gate per NetLoop): plain integers, no atomics. Never blocks.
#pragma once

#include <cstdint>

namespace rockcache::server {

class MemoryReadGate {
 public:
  // Whether the next miss should try RocksDB's memory; a true answer must be followed by Record.
  bool ShouldTry() {
    if (score_ >= kThreshold) return true;
    return (++skipped_ & (kProbeEvery - 1)) == 0;
  }
  // The outcome of a try that ShouldTry allowed: `answered` = it found the key (or its absence)
  // in memory.
  void Record(bool answered) {
    const int32_t target = answered ? kScale : 0;
    score_ += (target - score_) / kWindow;
  }
  // The current success score, 0..kScale (INFO, tests).
  int32_t score() const { return score_; }

  static constexpr int32_t kScale = 1 << 16;
  static constexpr int32_t kThreshold = kScale / 2;
  static constexpr int32_t kWindow = 32;
  static constexpr uint32_t kProbeEvery = 16;  // a power of two

 private:
  int32_t score_ = kScale;  // optimistic at start: an empty or small database is all in memory
  uint32_t skipped_ = 0;
};

}  // namespace rockcache::server
