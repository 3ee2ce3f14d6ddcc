// LatencyMonitor: Redis's latency monitor (LATENCY LATEST / HISTORY / RESET / DOCTOR). Events
// ("command" for slow commands, "fast-command" for slow O(1) commands) whose latency reaches
// latency-monitor-threshold milliseconds are kept per event: the latest 160 samples (one per
// second, the worst of that second, as Redis) and the all-time maximum.
//
// Threads: any thread. ShouldRecord is one relaxed load (called for every command by the network
// threads); Record and the readers take a mutex, but Record only runs for commands slower than
// the threshold, which is off (0) by default.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "config/mutex.h"

namespace rockcache::server {

class LatencyMonitor {
 public:
  static constexpr size_t kHistory = 160;  // samples kept per event, as Redis

  struct Sample {
    int64_t unix_time = 0;  // seconds
    uint64_t latency_ms = 0;
  };
  struct Event {
    std::vector<Sample> samples;  // oldest first, at most kHistory
    uint64_t max_ms = 0;          // since start or the last RESET
  };

  // 0 turns the monitor off.
  void set_threshold_ms(int64_t ms) { threshold_ns_.store(ms <= 0 ? 0 : uint64_t(ms) * 1000000); }
  int64_t threshold_ms() const { return static_cast<int64_t>(threshold_ns_.load() / 1000000); }
  bool ShouldRecord(uint64_t latency_ns) const {
    uint64_t threshold = threshold_ns_.load(std::memory_order_relaxed);
    return threshold != 0 && latency_ns >= threshold;
  }
  // Adds a sample; a second sample in the same second keeps the larger latency.
  void Record(const std::string& event, uint64_t latency_ms, int64_t unix_time);

  std::map<std::string, Event> Events() const;
  // Resets the named events (all when `events` is empty); returns how many existed.
  int64_t Reset(const std::vector<std::string>& events);
  // LATENCY DOCTOR's report.
  std::string Doctor() const;

 private:
  std::atomic<uint64_t> threshold_ns_{0};
  mutable Mutex mu_;
  std::map<std::string, Event> events_ GUARDED_BY(mu_);
};

}  // namespace rockcache::server
