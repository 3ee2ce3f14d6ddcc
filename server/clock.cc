#include "server/clock.h"

#include <chrono>
#include <thread>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace rockcache::server {
namespace {

bool HasInvariantTsc() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  __cpuid(0x80000007, eax, ebx, ecx, edx);
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

void Clock::Calibrate() {
#if defined(__x86_64__)
  if (!HasInvariantTsc()) return;
  uint64_t ns0 = MonotonicNs();
  uint64_t t0 = __rdtsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  uint64_t ns1 = MonotonicNs();
  uint64_t t1 = __rdtsc();
  if (t1 <= t0 || ns1 <= ns0) return;
  ns_per_tick_ = static_cast<double>(ns1 - ns0) / static_cast<double>(t1 - t0);
  use_tsc_ = true;
#endif
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t NowUnixUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace rockcache::server
