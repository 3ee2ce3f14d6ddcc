// Clock: the cheap monotonic timestamps that stage timing uses on every command.
//
// On x86-64 it reads the time-stamp counter (rdtsc, ~7 ns, no syscall, no vDSO call) and
// converts ticks to nanoseconds with a factor calibrated once against CLOCK_MONOTONIC at start-up
// (Calibrate(), ~10 ms). This assumes an invariant TSC (constant rate, synchronised across
// cores), which every x86-64 CPU of the last decade has; Calibrate() checks the CPU flag and
// falls back to clock_gettime(CLOCK_MONOTONIC) (~20 ns) where it is missing, and elsewhere.
//
// Thread-safety: Now() and NanosBetween() from any thread after Calibrate() has run (main thread,
// before other threads start). Ticks from different threads are comparable.
//
// Also here: the wall clock (NowUnixMs / NowUnixUs) that expiry and replies read.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace rockcache::server {

// Wall-clock Unix time in milliseconds / microseconds (system_clock; may step). Any thread.
int64_t NowUnixMs();
int64_t NowUnixUs();

class Clock {
 public:
  // Measures the tick rate. Call once at start-up, before any thread uses Now().
  static void Calibrate();

  static uint64_t Now() {
#if defined(__x86_64__)
    if (use_tsc_) return __rdtsc();
#endif
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  }

  // Nanoseconds between two Now() values; 0 when `to` is not after `from`.
  static uint64_t NanosBetween(uint64_t from, uint64_t to) {
    if (to <= from) return 0;
    return use_tsc_ ? static_cast<uint64_t>(static_cast<double>(to - from) * ns_per_tick_)
                    : to - from;
  }

  static bool uses_tsc() { return use_tsc_; }
  static double ns_per_tick() { return ns_per_tick_; }

 private:
  static inline bool use_tsc_ = false;
  static inline double ns_per_tick_ = 1.0;
};

}  // namespace rockcache::server
