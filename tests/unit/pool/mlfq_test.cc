// The MLFQ (pool/mlfq.h): client levels from decayed time, the share the scheduler gives level
// 0 (a simulation on a synthetic clock), and the real pool keeping a worker for small work.
#include "pool/mlfq.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include "pool/testing.h"
#include "pool/worker_pool.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::pool::mlfq_test {
namespace {

using internal::Choice;
using internal::ClientTable;
using internal::LevelPolicy;
using internal::ShareScheduler;
using testing::Eventually;
using testing::MakeTask;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

TEST_CASE("mlfq: a client's level follows its own recent pieces of work", "[pool][mlfq]") {
  ClientTable table;  // half-life 100 ms, level 1 from 5 ms, level 2 from 100 ms
  const LevelPolicy policy;
  int64_t now = 1000 * kMs;
  REQUIRE(table.Level(7, now) == 0);  // never charged
  table.Charge(7, 300 * kMs, now);
  // Client 8 sends 100,000 small batches of 20 µs (2 s of work in all): small pieces.
  for (int i = 0; i < 100000; ++i) table.Charge(8, 20 * kUs, now + i * 10 * kUs);
  now += 100000 * 10 * kUs;  // one second later
  table.Charge(7, 300 * kMs, now);
  CHECK(table.Level(7, now) == 2);
  CHECK(table.Level(8, now) == 0);  // neither its rate nor client 7's big work demotes it
  CHECK(table.demotions() == 1);
  // 300 ms decays to 75 ms after two half-lives: level 1; after six, ~4.7 ms: level 0.
  now += 2 * policy.half_life_ns;
  CHECK(table.Level(7, now) == 1);
  now += 4 * policy.half_life_ns;
  CHECK(table.Level(7, now) == 0);
  CHECK(table.promotions() == 2);
  CHECK(table.Load(7, now) == Approx(300.0 * kMs / 64).epsilon(1e-6));
  // A piece smaller than the decayed figure does not lower it.
  table.Charge(7, kUs, now);
  CHECK(table.Load(7, now) == Approx(300.0 * kMs / 64).epsilon(1e-6));
  table.Forget(7);
  CHECK(table.Level(7, now) == 0);
  CHECK(table.size() == 1);
}

// N simulated workers, level-0 work and level-2 work always waiting; every run time is chosen
// by the test and the clock only moves when a simulated worker finishes. Returns the fraction of
// worker time level 0 got.
double SimulatedLevel0Share(int workers, int share, int64_t small_ns, int64_t big_ns,
                            int64_t span_ns, int* max_high_running) {
  ShareScheduler sched(workers, share);
  std::vector<std::unique_ptr<Task>> owned;
  auto top_up = [&](int64_t now) {
    while (sched.HighQueued() < 2) {
      owned.push_back(MakeTask([] {}));
      REQUIRE(sched.PushHigh(owned.back().get(), 2, now));
    }
  };
  struct Worker {
    int64_t free_at = 0;
    int level = -1;  // running: 0 or 2; -1 idle
    int64_t start = 0;
  };
  std::vector<Worker> w(static_cast<size_t>(workers));
  int64_t given[3] = {0, 0, 0};
  int high_running = 0;
  *max_high_running = 0;
  int64_t now = 0;
  while (now < span_ns) {
    auto it = std::min_element(
        w.begin(), w.end(), [](const Worker& a, const Worker& b) { return a.free_at < b.free_at; });
    now = it->free_at;
    if (it->level >= 0) {  // it finishes what it ran
      sched.Finished(it->level, it->start, now);
      given[it->level] += now - it->start;
      if (it->level > 0) --high_running;
    }
    top_up(now);
    sched.NoteLevel0(now);
    const Choice c = sched.Choose(/*level0_waiting=*/true, now, /*drain=*/false);
    REQUIRE(c.kind != Choice::kWait);  // level 0 is waiting: never idle
    it->start = now;
    if (c.kind == Choice::kHigh) {
      REQUIRE(c.level == 2);
      it->level = 2;
      it->free_at = now + big_ns;
      *max_high_running = std::max(*max_high_running, ++high_running);
    } else {
      it->level = 0;
      it->free_at = now + small_ns;
    }
  }
  sched.Close();
  return static_cast<double>(given[0]) / static_cast<double>(given[0] + given[2]);
}

TEST_CASE("mlfq: level 0 gets pool-small-share of the time while both levels wait",
          "[pool][mlfq]") {
  const int workers = GENERATE(2, 4);
  const int share = GENERATE(50, 80, 95);
  INFO("workers " << workers << " share " << share);
  int max_high = 0;
  // Small tasks of 50 µs, big ones of 2 ms, 20 simulated seconds.
  const double got =
      SimulatedLevel0Share(workers, share, 50 * kUs, 2 * kMs, 20'000 * kMs, &max_high);
  CHECK(got == Approx(share / 100.0).margin(0.03));
  CHECK(max_high <= std::max(1, (workers * (100 - share) + 50) / 100));
}

TEST_CASE("mlfq: the share holds with big tasks far longer than small ones", "[pool][mlfq]") {
  int max_high = 0;
  // 200 ms big tasks (an unsliced KEYS *), 20 µs small ones, 2 workers, 60 simulated seconds.
  const double got = SimulatedLevel0Share(2, 80, 20 * kUs, 200 * kMs, 60'000 * kMs, &max_high);
  CHECK(got == Approx(0.80).margin(0.05));
  CHECK(max_high == 1);
}

// Small work is around but never queued when a worker looks (clients waiting for their replies
// send one request at a time); big work always is. Workers that may not run big work hold and
// look again every kHoldPollNs. Returns big work's time as a fraction of the span.
double SimulatedHighUse(int workers, int cpu_workers, int share, int64_t big_ns, int64_t span_ns) {
  ShareScheduler sched(workers, share, cpu_workers);
  std::vector<std::unique_ptr<Task>> owned;
  std::vector<int64_t> free_at(static_cast<size_t>(workers), 0);
  std::vector<int64_t> started(static_cast<size_t>(workers), -1);  // -1: holding
  int64_t high = 0;
  int64_t now = 0;
  while (now < span_ns) {
    const auto i =
        static_cast<size_t>(std::min_element(free_at.begin(), free_at.end()) - free_at.begin());
    now = free_at[i];
    if (started[i] >= 0) {
      sched.Finished(2, started[i], now);
      high += now - started[i];
    }
    while (sched.HighQueued() < 2) {
      owned.push_back(MakeTask([] {}));
      REQUIRE(sched.PushHigh(owned.back().get(), 2, now));
    }
    sched.NoteLevel0(now);
    const Choice c = sched.Choose(/*level0_waiting=*/false, now, /*drain=*/false);
    REQUIRE(c.kind != Choice::kLevel0);
    if (c.kind == Choice::kHigh) {
      started[i] = now;
      free_at[i] = now + big_ns;
    } else {
      started[i] = -1;
      free_at[i] = now + ShareScheduler::kHoldPollNs;
    }
  }
  sched.Close();
  return static_cast<double>(high) / static_cast<double>(now);
}

TEST_CASE("mlfq: with small work around, big work gets its share of the CPU, not a worker",
          "[pool][mlfq]") {
  const int share = GENERATE(50, 80, 95);
  const int cpu_workers = GENERATE(1, 2);
  INFO("share " << share << " cpu workers " << cpu_workers);
  // 1 ms slices, 2 workers, 20 simulated seconds. Before the budget, one worker ran big work
  // all the time (1.0 of the span) whatever the share.
  const double got = SimulatedHighUse(2, cpu_workers, share, kMs, 20'000 * kMs);
  const double want = std::min(1.0, cpu_workers * (100 - share) / 100.0);
  CHECK(got == Approx(want).margin(0.03));
}

TEST_CASE("mlfq: without small work around, big work takes every worker", "[pool][mlfq]") {
  ShareScheduler sched(4, 80);
  std::vector<std::unique_ptr<Task>> owned;
  for (int i = 0; i < 4; ++i) {
    owned.push_back(MakeTask([] {}));
    REQUIRE(sched.PushHigh(owned.back().get(), 1, 0));
  }
  // Level 0 was seen at 10 ms; within the linger only HighCap() (1) worker may run big work.
  const int64_t seen = 10 * kMs;
  sched.NoteLevel0(seen);
  CHECK(sched.Choose(false, seen + kUs, false).kind == Choice::kHigh);
  CHECK(sched.Choose(false, seen + 2 * kUs, false).kind == Choice::kWait);
  // After the linger, the rest go too.
  const int64_t later = seen + ShareScheduler::kLevel0LingerNs + kUs;
  CHECK(sched.Choose(false, later, false).kind == Choice::kHigh);
  CHECK(sched.Choose(false, later, false).kind == Choice::kHigh);
  CHECK(sched.Choose(false, later, false).kind == Choice::kHigh);
  CHECK(sched.HighQueued() == 0);
  CHECK(sched.HighActive() == 4);
  for (int i = 0; i < 4; ++i) sched.Finished(1, seen, later + kMs);
  CHECK(sched.HighActive() == 0);
  CHECK(sched.Choose(true, later, false).kind == Choice::kLevel0);
}

TEST_CASE("mlfq: the gap between a choice and its run never piles up as work in flight",
          "[pool][mlfq]") {
  // A worker's run starts a little after Choose popped its task (here 10 us). 100 simulated
  // seconds of 1 us big tasks, one per ms, beside level 0: far under the 20% budget, so every
  // choice must be the big task. When Finished subtracted the later start from the running
  // tasks' start sum, the gaps added up to phantom work in flight and, after ~60 s, the budget
  // read as spent for good.
  ShareScheduler sched(2, 80, 2);
  auto owned = MakeTask([] {});
  int refused = 0;
  for (int64_t i = 1; i <= 100'000; ++i) {
    const int64_t now = i * kMs;
    sched.NoteLevel0(now);
    REQUIRE(sched.PushHigh(owned.get(), 1, now));
    const Choice c = sched.Choose(false, now, false);
    if (c.kind != Choice::kHigh) {
      ++refused;
      sched.Choose(false, now, true);  // drain it, as shutdown would
    }
    sched.Finished(1, now + 10 * kUs, now + 11 * kUs);
  }
  CHECK(refused == 0);
  CHECK(sched.HighActive() == 0);
}

TEST_CASE("mlfq: a heavy client's tasks leave a worker to a light client's", "[pool][mlfq]") {
  Options o;
  o.threads = 2;
  o.workers_per_list = 2;
  o.spin_count = 0;
  o.max_yield_usec = 0;
  auto pool = WorkerPool::Create(o);
  constexpr uint64_t kHeavy = 1, kLight = 2;
  // One heavy piece of 60 ms: level 1 from then on (for the next ~300 ms at least).
  pool->Charge(kHeavy, 60 * kMs);
  REQUIRE(pool->ClientLevel(kHeavy) == 1);
  REQUIRE(pool->ClientLevel(kLight) == 0);
  constexpr int kBig = 8, kSmall = 2000;
  std::atomic<int> big_done{0}, small_done{0};
  std::atomic<int> big_done_when_small_finished{-1};
  for (int i = 0; i < kBig; ++i) {
    auto t = MakeTask([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      big_done.fetch_add(1);
    });
    t->set_client(kHeavy);
    pool->Submit(std::move(t), kHeavy);
  }
  for (int i = 0; i < kSmall; ++i) {
    auto t = MakeTask([&] {
      if (small_done.fetch_add(1) + 1 == kSmall) big_done_when_small_finished = big_done.load();
    });
    t->set_client(kLight);
    pool->Submit(std::move(t), kLight);
  }
  REQUIRE(Eventually([&] { return big_done.load() == kBig; }, std::chrono::seconds(60)));
  pool->Shutdown();
  CHECK(small_done.load() == kSmall);
  // At most one worker runs big work while small work is around, so the 2,000 small tasks
  // finish long before the eight 50 ms big ones (400 ms on one worker).
  CHECK(big_done_when_small_finished.load() < kBig);
  const Stats s = pool->GetStats();
  CHECK(s.mlfq);
  CHECK(s.levels[1].tasks == static_cast<uint64_t>(kBig));
  CHECK(s.levels[0].tasks == static_cast<uint64_t>(kSmall));
  CHECK(s.levels[1].exec_sum_us >= kBig * 50'000 * 0.9);
}

TEST_CASE("mlfq: off, every task runs at level 0", "[pool][mlfq]") {
  Options o;
  o.threads = 2;
  o.mlfq = false;
  auto pool = WorkerPool::Create(o);
  pool->Charge(1, 500 * kMs);  // ignored while off
  CHECK(pool->ClientLevel(1) == 0);
  std::atomic<int> done{0};
  for (int i = 0; i < 100; ++i) {
    auto t = MakeTask([&] { done.fetch_add(1); });
    t->set_client(1);
    t->set_level(2);
    pool->Submit(std::move(t), 1);
  }
  pool->Shutdown();
  CHECK(done.load() == 100);
  const Stats s = pool->GetStats();
  CHECK_FALSE(s.mlfq);
  CHECK(s.levels[0].tasks == 100);
  CHECK(s.levels[2].tasks == 0);
}

TEST_CASE("mlfq: shutdown runs queued high-level tasks", "[pool][mlfq]") {
  Options o;
  o.threads = 2;
  auto pool = WorkerPool::Create(o);
  std::atomic<int> done{0};
  testing::Signal gate;
  for (int i = 0; i < 2; ++i)
    pool->Submit(MakeTask([&] { gate.WaitFor(std::chrono::seconds(10)); }));
  for (int i = 0; i < 50; ++i) {
    auto t = MakeTask([&] { done.fetch_add(1); });
    t->set_level(1 + i % 2);
    pool->Submit(std::move(t));
  }
  gate.Set();
  pool->Shutdown();
  CHECK(done.load() == 50);
}

TEST_CASE("mlfq: a continuation carries its command's time and sinks by it", "[pool][mlfq]") {
  Options o;
  o.threads = 1;
  auto pool = WorkerPool::Create(o);
  constexpr uint64_t kClient = 9;
  std::atomic<int64_t> carried{0};
  testing::Signal done;
  // A first slice that has taken 150 ms already (as if after many slices) submits the next one.
  auto first = MakeTask([&] {
    auto next = MakeTask([&] {
      carried = WorkerPool::RunningTaskElapsedNs();
      done.Set();
    });
    next->set_client(kClient);
    next->set_elapsed_ns(WorkerPool::RunningTaskElapsedNs());
    pool->Submit(std::move(next), kClient);
  });
  first->set_client(kClient);
  first->set_elapsed_ns(150 * kMs);
  pool->Submit(std::move(first), kClient);  // level 2 by its own time (client still level 0)
  REQUIRE(done.WaitFor(std::chrono::seconds(30)));
  CHECK(carried.load() >= 150 * kMs);
  CHECK(WorkerPool::RunningTaskElapsedNs() == 0);  // not on a worker
  // The client's record holds the command's time: its next command starts at level 2.
  CHECK(pool->ClientLevel(kClient) == 2);
  pool->Shutdown();
  const Stats s = pool->GetStats();
  CHECK(s.levels[2].tasks == 2);
}

#ifdef __linux__
// Where a task ran: its thread's name and OS scheduling policy.
struct RanOn {
  std::string thread;
  int policy = -1;
};

RanOn RunAndSee(WorkerPool* pool, int level) {
  RanOn seen;
  testing::Signal done;
  auto t = MakeTask([&] {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    seen.thread = name;
    seen.policy = sched_getscheduler(0);
    done.Set();
  });
  t->set_level(level);
  pool->Submit(std::move(t));
  REQUIRE(done.WaitFor(std::chrono::seconds(30)));
  return seen;
}

TEST_CASE("mlfq: big work runs on the heavy lane at idle priority, small work on the workers",
          "[pool][mlfq]") {
  Options o;
  o.threads = 2;
  auto pool = WorkerPool::Create(o);
  // The lane's threads lowered themselves as they started (no privilege needed).
  REQUIRE(Eventually([&] { return pool->GetStats().heavy_lane_idle_threads == 2; },
                     std::chrono::seconds(10)));
  CHECK(pool->GetStats().heavy_lane);
  for (int level = 1; level <= 2; ++level) {
    const RanOn big = RunAndSee(pool.get(), level);
    CHECK(big.thread.rfind("rc-heavy-", 0) == 0);
    CHECK(big.policy == SCHED_IDLE);
  }
  const RanOn small = RunAndSee(pool.get(), 0);
  CHECK(small.thread.rfind("rc-pool-", 0) == 0);
  CHECK(small.policy == SCHED_OTHER);

  // Off (CONFIG SET pool-heavy-lane no): the workers run big work at normal priority.
  o.heavy_lane = false;
  pool->SetTunables(o);
  CHECK_FALSE(pool->GetStats().heavy_lane);
  const RanOn off = RunAndSee(pool.get(), 2);
  CHECK(off.thread.rfind("rc-pool-", 0) == 0);
  CHECK(off.policy == SCHED_OTHER);

  // On again: back to the lane.
  o.heavy_lane = true;
  pool->SetTunables(o);
  CHECK(RunAndSee(pool.get(), 1).policy == SCHED_IDLE);
  pool->Shutdown();
  const Stats s = pool->GetStats();
  CHECK(s.levels[1].tasks == 2);
  CHECK(s.levels[2].tasks == 2);
}

TEST_CASE("mlfq: a switch of the heavy lane hands queued big work over", "[pool][mlfq]") {
  Options o;
  o.threads = 2;
  o.heavy_lane = false;
  auto pool = WorkerPool::Create(o);
  // Both workers busy: big tasks queue. Switching the lane on lets its threads take them.
  testing::Signal gate;
  for (int i = 0; i < 2; ++i)
    pool->Submit(MakeTask([&] { gate.WaitFor(std::chrono::seconds(30)); }));
  std::atomic<int> done{0};
  for (int i = 0; i < 20; ++i) {
    auto t = MakeTask([&] { done.fetch_add(1); });
    t->set_level(1 + i % 2);
    pool->Submit(std::move(t));
  }
  o.heavy_lane = true;
  pool->SetTunables(o);
  CHECK(Eventually([&] { return done.load() == 20; }, std::chrono::seconds(10)));
  gate.Set();
  pool->Shutdown();
  CHECK(done.load() == 20);
}
#endif

}  // namespace
}  // namespace rockcache::pool::mlfq_test
