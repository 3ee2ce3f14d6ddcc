// MLFQ charging counts time on the CPU (pool/thread_cpu.h): a piece of work that sat off its CPU
// (a sleep here, a preemption in production) is not charged the pause, and a client whose
// tasks are slow only for that reason is not demoted.
#include "pool/thread_cpu.h"

#include <time.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "pool/internal.h"
#include "pool/testing.h"
#include "pool/worker_pool.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::pool::thread_cpu_test {
namespace {

using internal::NowNs;
using internal::ThreadCpu;
using testing::MakeTask;

constexpr int64_t kMs = 1'000'000;

int64_t ThreadCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Burns `ns` of this thread's CPU time.
void Spin(int64_t ns) {
  const int64_t until = ThreadCpuNow() + ns;
  while (ThreadCpuNow() < until) {
  }
}

TEST_CASE("thread_cpu: a span off the CPU is not charged, a span on it is", "[pool][mlfq]") {
  SECTION("short spans are their wall time") {
    const int64_t t0 = NowNs();
    ThreadCpu::MarkStart(t0);
    CHECK(ThreadCpu::Spent(t0, t0 + 300'000) == 300'000);
  }
  SECTION("a sleep") {
    const int64_t t0 = NowNs();
    ThreadCpu::MarkStart(t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    const int64_t t1 = NowNs();
    REQUIRE(t1 - t0 >= 60 * kMs);
    // Only the checkpoint's age (< 0.5 ms) and the sleep's own system calls are on the CPU.
    CHECK(ThreadCpu::Spent(t0, t1) < 20 * kMs);
  }
  SECTION("a busy loop") {
    const int64_t t0 = NowNs();
    ThreadCpu::MarkStart(t0);
    Spin(30 * kMs);
    const int64_t t1 = NowNs();
    const int64_t spent = ThreadCpu::Spent(t0, t1);
    CHECK(spent >= 30 * kMs);
    CHECK(spent <= t1 - t0);
  }
}

TEST_CASE("mlfq: a client whose task sat off the CPU stays at level 0", "[pool][mlfq]") {
  Options o;
  o.threads = 1;
  auto pool = WorkerPool::Create(o);
  constexpr uint64_t kSleeper = 21;
  constexpr uint64_t kSpinner = 22;
  std::atomic<int> done{0};
  // The sleeper's 40 ms are off the CPU (as a preempted batch), the spinner's 80 ms on it.
  // Level 1 starts at 5 ms; the spinner's figure halves every 100 ms, so it stays above 5 ms
  // for 600 ms after its charge.
  auto sleeper = MakeTask([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    done.fetch_add(1);
  });
  sleeper->set_client(kSleeper);
  pool->Submit(std::move(sleeper), kSleeper);
  auto spinner = MakeTask([&] {
    Spin(80 * kMs);
    done.fetch_add(1);
  });
  spinner->set_client(kSpinner);
  pool->Submit(std::move(spinner), kSpinner);
  REQUIRE(testing::Eventually([&] { return done.load() == 2; }, std::chrono::seconds(30)));
  pool->Shutdown();  // both tasks charged (the charge follows Run on the worker)
  CHECK(pool->ClientLevel(kSleeper) == 0);
  CHECK(pool->ClientLevel(kSpinner) >= 1);
}

}  // namespace
}  // namespace rockcache::pool::thread_cpu_test
