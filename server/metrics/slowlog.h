// SlowLog: the last `slowlog-max-len` commands whose total time (parsed -> reply written) was
// at least `slowlog-log-slower-than` microseconds, as Redis's SLOWLOG, each entry also carrying
// the stage breakdown (server/metrics/metrics.h).
//
// Redis logs execution time only; we log and threshold the total, because a command that waited
// in the queue is slow for its client too — the stage breakdown says where the time went.
//
// Thread-safety: all methods are thread-safe (one mutex; only slow commands reach it).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "config/mutex.h"
#include "server/metrics/metrics.h"

namespace rockcache::server {

struct SlowLogEntry {
  uint64_t id = 0;
  int64_t unix_time = 0;          // seconds, when it was logged
  uint64_t duration_us = 0;       // total
  std::vector<std::string> args;  // truncated as Redis: 32 arguments, 128 bytes each
  std::string client_addr;
  std::string client_name;
  uint64_t stage_us[kStageCount] = {};
  bool in_loop = false;  // ran in the network thread: only execute and total are meaningful
  // The pool's view (0 for in-loop commands): the MLFQ level its batch ran at, the pool tasks
  // (slices) it took — 1 unless the command is resumable — and their total queue wait.
  int level = 0;
  uint32_t slices = 0;
  uint64_t slices_queue_wait_us = 0;
};

class SlowLog {
 public:
  // Adds an entry if `total_us` reaches the threshold (< 0: disabled; 0: every command).
  bool ShouldLog(uint64_t total_us, int64_t threshold_us) const {
    return threshold_us >= 0 && total_us >= static_cast<uint64_t>(threshold_us);
  }
  void Add(SlowLogEntry entry, size_t max_len);
  // Newest first, at most `count` (count < 0: all).
  std::vector<SlowLogEntry> Get(int64_t count) const;
  size_t size() const;
  void Reset();
  // Trims to max_len (CONFIG SET slowlog-max-len).
  void Trim(size_t max_len);

  // Redis's truncation of a command's arguments for the log.
  static std::vector<std::string> TruncateArgs(const std::vector<std::string>& argv);

 private:
  mutable Mutex mu_;
  std::deque<SlowLogEntry> entries_ GUARDED_BY(mu_);  // newest at the front
  uint64_t next_id_ GUARDED_BY(mu_) = 0;
};

}  // namespace rockcache::server
