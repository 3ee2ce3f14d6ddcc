// No lost wake-up: a task pushed while workers go idle (spin -> yield -> block) must always run.
// A lost wake-up shows as a 5 s timeout.
#include <atomic>
#include <catch2/catch.hpp>
#include <random>
#include <thread>
#include <vector>

#include "pool/testing.h"
#include "pool/worker_pool.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::pool::wakeup_test {
namespace {

using testing::kSlowdown;
using testing::MakeTask;
using testing::ModeName;
using testing::Signal;

struct WaitVariant {
  const char* name;
  int spin_count;
  int max_yield_usec;
};

// Sleeps 0..400 µs: long enough, some of the time, for workers to reach each of the three phases,
// so pushes land at every point of the spin -> yield -> block transition.
void IdleAWhile(std::mt19937& rng) {
  const int usec = std::uniform_int_distribution<int>(0, 400)(rng);
  if (usec > 20) std::this_thread::sleep_for(std::chrono::microseconds(usec));
}

TEST_CASE("no lost wake-up: one producer, a lone task after idleness always runs", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  const WaitVariant v = GENERATE(WaitVariant{"default", 200, 100}, WaitVariant{"block", 0, 0},
                                 WaitVariant{"spin-block", 50, 0});
  INFO("mode " << ModeName(mode) << ", wait " << v.name);
  Options o;
  o.mode = mode;
  o.threads = 2;
  o.workers_per_list = 2;  // two sleepers on one list: exercises notify_one with several waiters
  o.spin_count = v.spin_count;
  o.max_yield_usec = v.max_yield_usec;
  auto pool = WorkerPool::Create(o);
  std::mt19937 rng(12345);
  const int kRounds = 1500 / kSlowdown;
  int lost = 0;
  for (int r = 0; r < kRounds && lost == 0; ++r) {
    IdleAWhile(rng);
    auto done = std::make_shared<Signal>();
    pool->Submit(MakeTask([done] { done->Set(); }), static_cast<uint64_t>(r));
    if (!done->WaitFor(std::chrono::seconds(5))) ++lost;
  }
  REQUIRE(lost == 0);
  REQUIRE(pool->GetStats().wakeups_block > 0);
}

// The tightest race: the producer busy-polls for the previous task (staying on its core), then
// pushes after a random 0-2 µs delay, i.e. while the worker is between "list empty" and "blocked"
// (yield phase off, spin phase off or short). A producer that checked for sleepers or spinners
// before linking its task, or a worker that blocked without re-checking the list under the mutex,
// fails this (it caught the first mutation after ~110k rounds).
TEST_CASE("no lost wake-up: pushes racing the worker's way to sleep", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  const int threads = GENERATE(1, 2);
  const int spin_count = GENERATE(0, 30);  // 30 pauses: pushes also land on spinning workers
  INFO("mode " << ModeName(mode) << ", threads " << threads << ", spin " << spin_count);
  Options o;
  o.mode = mode;
  o.threads = threads;
  o.workers_per_list = threads;
  o.spin_count = spin_count;
  o.max_yield_usec = 0;
  auto pool = WorkerPool::Create(o);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> delay(0, 600);
  auto done = std::make_shared<std::atomic<int>>(0);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500 / kSlowdown);
  int rounds = 0;
  bool lost = false;
  while (!lost && std::chrono::steady_clock::now() < end) {
    for (int i = delay(rng); i > 0; --i) std::atomic_signal_fence(std::memory_order_seq_cst);
    pool->Submit(MakeTask([done] { done->fetch_add(1, std::memory_order_release); }));
    ++rounds;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (done->load(std::memory_order_acquire) != rounds) {
      if (std::chrono::steady_clock::now() > deadline) {
        lost = true;
        break;
      }
    }
  }
  INFO(rounds << " rounds");
  REQUIRE_FALSE(lost);
  REQUIRE(pool->GetStats().wakeups_block > 0);
}

TEST_CASE("no lost wake-up: 4 producers, each waits for its own task", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o;
  o.mode = mode;
  o.threads = 4;
  o.workers_per_list = 2;
  o.spin_count = 20;  // short phases: more of the pushes race a worker going to sleep
  o.max_yield_usec = 10;
  auto pool = WorkerPool::Create(o);
  std::atomic<int> lost{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 rng(p);
      for (int r = 0; r < 400 / kSlowdown && lost.load() == 0; ++r) {
        IdleAWhile(rng);
        auto done = std::make_shared<Signal>();
        pool->Submit(MakeTask([done] { done->Set(); }), r % 3 == 0 ? 0 : p + 1);
        if (!done->WaitFor(std::chrono::seconds(5))) lost.fetch_add(1);
      }
    });
  }
  for (auto& t : producers) t.join();
  REQUIRE(lost.load() == 0);
}

TEST_CASE("repeated Create / Submit / Shutdown cycles answer every task", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  const int kCycles = 300 / kSlowdown;
  for (int c = 0; c < kCycles; ++c) {
    Options o;
    o.mode = mode;
    o.threads = 1 + c % 3;
    o.workers_per_list = 1 + c % 2;
    auto pool = WorkerPool::Create(o);
    std::atomic<int> ran{0}, cancelled{0};
    std::vector<std::thread> producers;
    for (int p = 0; p < 2; ++p) {
      producers.emplace_back([&, p] {
        for (int i = 0; i < 50; ++i) {
          pool->Submit(MakeTask([&ran] { ran.fetch_add(1); }, [&cancelled] { cancelled++; }),
                       static_cast<uint64_t>(p * i));
        }
      });
    }
    pool->ScheduleAt(std::chrono::steady_clock::now(),
                     MakeTask([&ran] { ran.fetch_add(1); }, [&cancelled] { cancelled++; }));
    pool->ScheduleAt(std::chrono::steady_clock::now() + std::chrono::hours(1),
                     MakeTask([&ran] { ran.fetch_add(1); }, [&cancelled] { cancelled++; }));
    for (auto& t : producers) t.join();
    if (c % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    pool->Shutdown();
    // Every Submit returned before Shutdown: all ran. The due timer task either ran or, if the
    // timer had not dispatched it yet, was cancelled; the far one was cancelled.
    INFO("cycle " << c);
    REQUIRE(ran.load() + cancelled.load() == 102);
    REQUIRE(ran.load() >= 100);
    REQUIRE(cancelled.load() >= 1);
  }
}

}  // namespace
}  // namespace rockcache::pool::wakeup_test
