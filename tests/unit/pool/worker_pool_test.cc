// WorkerPool basics, for both modes: ordering, exactly-once delivery, statistics, idle CPU.
#include "pool/worker_pool.h"

#include <time.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "pool/testing.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::pool::worker_pool_test {
namespace {

using testing::Eventually;
using testing::kSlowdown;
using testing::MakeTask;
using testing::ModeName;
using testing::Signal;

double ProcessCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Index of the first element that is not i at position i, or -1.
int FirstOutOfOrder(const std::vector<int>& seen) {
  for (size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] != static_cast<int>(i)) return static_cast<int>(i);
  }
  return -1;
}

TEST_CASE("one worker runs one producer's tasks in submission order", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o;
  o.mode = mode;
  o.threads = 1;
  o.workers_per_list = 1;
  auto pool = WorkerPool::Create(o);
  const int kTasks = 100000 / kSlowdown;
  std::vector<int> seen;  // only the single worker writes; read after Shutdown joined it
  seen.reserve(kTasks);
  for (int i = 0; i < kTasks; ++i) {
    pool->Submit(MakeTask([&seen, i] { seen.push_back(i); }), 42);
  }
  pool->Shutdown();
  REQUIRE(seen.size() == static_cast<size_t>(kTasks));
  REQUIRE(FirstOutOfOrder(seen) == -1);
}

TEST_CASE("adaptive: one list per worker keeps each hint on one worker, in order", "[pool]") {
  Options o;
  o.threads = 4;
  o.workers_per_list = 1;
  auto pool = WorkerPool::Create(o);
  constexpr int kProducers = 4;
  const int kTasks = 50000 / kSlowdown;
  // Hints 1..4 map to lists 1, 2, 3, 0: each vector is written by one worker only (TSan checks).
  std::vector<std::vector<int>> seen(kProducers);
  std::vector<std::vector<std::thread::id>> runner(kProducers);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    seen[p].reserve(kTasks);
    runner[p].reserve(kTasks);
    producers.emplace_back([&, p] {
      for (int i = 0; i < kTasks; ++i) {
        pool->Submit(MakeTask([&, p, i] {
                       seen[p].push_back(i);
                       runner[p].push_back(std::this_thread::get_id());
                     }),
                     static_cast<uint64_t>(p + 1));
      }
    });
  }
  for (auto& t : producers) t.join();
  pool->Shutdown();
  for (int p = 0; p < kProducers; ++p) {
    INFO("producer " << p);
    REQUIRE(seen[p].size() == static_cast<size_t>(kTasks));
    REQUIRE(FirstOutOfOrder(seen[p]) == -1);
    bool one_worker = true;
    for (const auto& id : runner[p]) one_worker = one_worker && id == runner[p][0];
    REQUIRE(one_worker);
  }
}

// Tasks queued together are taken one at a time: a task stuck at the front of a burst does not
// hold the tasks behind it while a list-mate is free (a worker used to take and run the whole
// burst alone).
TEST_CASE("adaptive: a stuck task does not strand the tasks queued behind it", "[pool]") {
  Options o;
  o.threads = 2;
  o.workers_per_list = 2;
  o.spin_count = 0;
  o.max_yield_usec = 0;
  o.mlfq = false;
  o.heavy_lane = false;
  auto pool = WorkerPool::Create(o);
  // Both workers wait in a gate task while the burst queues up behind them.
  Signal open_gates;
  std::atomic<int> in_gates{0};
  for (int i = 0; i < 2; ++i) {
    pool->Submit(MakeTask([&] {
      in_gates.fetch_add(1);
      open_gates.Wait();
    }));
  }
  REQUIRE(Eventually([&] { return in_gates.load() == 2; }));
  Signal release_stuck;
  std::atomic<bool> stuck_running{false};
  pool->Submit(MakeTask([&] {
    stuck_running.store(true);
    release_stuck.Wait();
  }));
  constexpr int kBehind = 10;
  std::atomic<int> ran{0};
  for (int i = 0; i < kBehind; ++i) pool->Submit(MakeTask([&] { ran.fetch_add(1); }));
  open_gates.Set();
  // Whichever worker takes the stuck task, the other runs all ten while it is stuck.
  REQUIRE(Eventually([&] { return stuck_running.load(); }));
  const bool all_ran = Eventually([&] { return ran.load() == kBehind; });
  release_stuck.Set();
  REQUIRE(all_ran);
  REQUIRE(stuck_running.load());
  pool->Shutdown();
  REQUIRE(ran.load() == kBehind);
}

TEST_CASE("every task runs exactly once: 8 producers x 125,000 tasks", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o;
  o.mode = mode;
  o.threads = 4;
  o.workers_per_list = 2;
  auto pool = WorkerPool::Create(o);
  constexpr int kProducers = 8;
  const int kPerProducer = 125000 / kSlowdown;
  const int kTotal = kProducers * kPerProducer;
  std::vector<std::atomic<uint8_t>> runs(kTotal);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = p * kPerProducer; i < (p + 1) * kPerProducer; ++i) {
        const uint64_t hint = i % 4 == 0 ? 0 : static_cast<uint64_t>(i);  // mix round robin in
        pool->Submit(MakeTask([&runs, i] { runs[i].fetch_add(1, std::memory_order_relaxed); }),
                     hint);
      }
    });
  }
  for (auto& t : producers) t.join();
  pool->Shutdown();
  int wrong = 0;
  for (auto& r : runs) wrong += r.load() != 1;
  REQUIRE(wrong == 0);
  const Stats s = pool->GetStats();
  REQUIRE(s.tasks_run == static_cast<uint64_t>(kTotal));
  REQUIRE(s.queue_wait_count == static_cast<uint64_t>(kTotal));
  REQUIRE(s.queued_now == 0);
  REQUIRE(s.queue_wait_p50_us <= s.queue_wait_p99_us);
  REQUIRE(s.queue_wait_p99_us <= s.queue_wait_p999_us);
  REQUIRE(s.queue_wait_sum_us > 0);
  REQUIRE(s.yield_credit >= -1.0);
  REQUIRE(s.yield_credit <= 1.0);
  if (mode == Mode::kClassic) {
    REQUIRE(s.wakeups_spin == 0);
    REQUIRE(s.wakeups_yield == 0);
  }
}

TEST_CASE("an idle pool blocks its workers: ~0 CPU, and new work counts a block wake-up",
          "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o;
  o.mode = mode;
  o.threads = 4;
  auto pool = WorkerPool::Create(o);
  auto first = std::make_shared<Signal>();
  pool->Submit(MakeTask([first] { first->Set(); }));
  REQUIRE(first->WaitFor(std::chrono::seconds(5)));

  // Spin (~µs) and yield (<= 100 µs) phases are long over after 50 ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double cpu_before = ProcessCpuMs();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double idle_cpu_ms = ProcessCpuMs() - cpu_before;
  INFO("CPU used by an idle pool in 300 ms: " << idle_cpu_ms << " ms");
  REQUIRE(idle_cpu_ms < 15.0);  // four spinning workers would burn ~1200 ms

  const uint64_t blocks_before = pool->GetStats().wakeups_block;
  for (uint64_t hint = 1; hint <= 4; ++hint) {
    auto done = std::make_shared<Signal>();
    pool->Submit(MakeTask([done] { done->Set(); }), hint);
    REQUIRE(done->WaitFor(std::chrono::seconds(5)));
  }
  REQUIRE(pool->GetStats().wakeups_block > blocks_before);
}

TEST_CASE("ResetStats restarts counters and the histogram", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o;
  o.mode = mode;
  o.threads = 2;
  auto pool = WorkerPool::Create(o);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) pool->Submit(MakeTask([&ran] { ran.fetch_add(1); }));
  REQUIRE(Eventually([&] { return pool->GetStats().tasks_run == 100; }));
  REQUIRE(pool->GetStats().queue_wait_count == 100);
  REQUIRE(pool->GetStats().depth_high_water >= 1);

  pool->ResetStats();
  Stats s = pool->GetStats();
  REQUIRE(s.tasks_run == 0);
  REQUIRE(s.queue_wait_count == 0);
  REQUIRE(s.queue_wait_p99_us == 0);
  REQUIRE(s.depth_high_water == 0);

  for (int i = 0; i < 10; ++i) pool->Submit(MakeTask([&ran] { ran.fetch_add(1); }));
  REQUIRE(Eventually([&] { return pool->GetStats().tasks_run == 10; }));
  s = pool->GetStats();
  REQUIRE(s.queue_wait_count == 10);
  REQUIRE(s.queue_wait_p50_us > 0);
  pool->Shutdown();
  REQUIRE(ran.load() == 110);
}

TEST_CASE("SetTunables and odd options are accepted; mode() reports the mode", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  Options o;
  o.mode = mode;
  o.threads = 0;           // clamped to 1
  o.workers_per_list = 9;  // clamped to threads
  o.queue_max_size = -5;   // clamped to 1
  o.cpu_affinity = true;
  auto pool = WorkerPool::Create(o);
  REQUIRE(pool->mode() == mode);
  Options t;
  t.spin_count = 0;
  t.max_yield_usec = 0;
  t.yield_sampling = 0;
  t.queue_slow_size = 1;
  t.queue_max_size = 4;
  pool->SetTunables(t);
  std::atomic<int> ran{0};
  for (int i = 0; i < 1000; ++i) pool->Submit(MakeTask([&ran] { ran.fetch_add(1); }));
  pool->Shutdown();
  REQUIRE(ran.load() == 1000);
  REQUIRE(pool->GetStats().depth_high_water <= 4);
}

}  // namespace
}  // namespace rockcache::pool::worker_pool_test
