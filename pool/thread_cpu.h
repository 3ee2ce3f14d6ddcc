// ThreadCpu: how much of a span of wall time the calling thread spent on a CPU, for the MLFQ's
// charging (pool/mlfq.h), without a syscall per task. Internal to pool/.
//
// Why: a client's level comes from the execution time of its pieces of work. Wall time charges a
// small batch for the time its worker sat preempted: on a busy 2-core machine a worker is often
// off its CPU for a scheduler time slice (several ms), and clients that send nothing but GETs
// were demoted (361 demotions in one plain redis-benchmark run). The thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID) is exact, but reading it is a syscall (0.3-1.5 us measured here),
// too dear for every task of a few microseconds.
//
// How: MarkStart(now) at the start of each piece keeps a per-thread checkpoint (wall, CPU) at
// most kCheckpointNs old, reading the CPU clock at most once per kCheckpointNs of a thread's
// work. Spent(start, now) returns the wall span as is when it is under kExactFromNs (far below
// the 5 ms of level 1, so the error cannot move a level), and otherwise reads the CPU clock once
// and returns min(wall span, CPU now - CPU at the checkpoint): an over-estimate by at most the
// checkpoint's age at `start` (< kCheckpointNs), never by time spent preempted.
//
// Threads: thread-local state; every call is about the calling thread. `start` must be at or
// after the calling thread's last MarkStart (or the result is the wall span).
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>

namespace rockcache::pool::internal {

// A thread's last reading of its CPU clock and when it was taken (steady clock).
struct CpuCheckpoint {
  int64_t wall_ns = INT64_MIN / 2;
  int64_t cpu_ns = -1;  // -1: the CPU clock could not be read
};
inline thread_local CpuCheckpoint tls_cpu_checkpoint;

class ThreadCpu {
 public:
  static constexpr int64_t kCheckpointNs = 500'000;
  static constexpr int64_t kExactFromNs = 1'000'000;

  // A piece of work starts at now_ns (steady clock).
  static void MarkStart(int64_t now_ns) {
    CpuCheckpoint& cp = tls_cpu_checkpoint;
    if (now_ns - cp.wall_ns >= kCheckpointNs) cp = CpuCheckpoint{now_ns, ReadCpuNs()};
  }

  // CPU time spent by this thread between start_ns and now_ns (steady clock), as above.
  static int64_t Spent(int64_t start_ns, int64_t now_ns) {
    const int64_t wall = std::max<int64_t>(0, now_ns - start_ns);
    const CpuCheckpoint& cp = tls_cpu_checkpoint;
    if (wall < kExactFromNs || cp.wall_ns > start_ns || cp.cpu_ns < 0) return wall;
    return std::clamp<int64_t>(ReadCpuNs() - cp.cpu_ns, 0, wall);
  }

 private:
  static int64_t ReadCpuNs() {
    timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
};

}  // namespace rockcache::pool::internal
