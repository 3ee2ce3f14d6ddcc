// WorkerPool shutdown, delayed tasks and backpressure, for both modes.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "pool/testing.h"
#include "pool/worker_pool.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::pool::shutdown_test {
namespace {

using Clock = std::chrono::steady_clock;
using testing::Eventually;
using testing::kSlowdown;
using testing::MakeTask;
using testing::ModeName;
using testing::Signal;

// Occupies every worker of a 2-thread pool (both modes; adaptive with one shared list) with a
// task that waits for Open(). One at a time: a worker could otherwise take both in one chain.
class Gate {
 public:
  explicit Gate(WorkerPool* pool, int workers = 2) {
    for (int i = 0; i < workers; ++i) {
      pool->Submit(MakeTask([started = started_, open = open_] {
        started->fetch_add(1);
        open->Wait();
      }));
      REQUIRE(Eventually([&] { return started_->load() == i + 1; }));
    }
  }
  void Open() { open_->Set(); }

 private:
  // Shared with the gate tasks, which may outlive the Gate until the pool shuts down.
  std::shared_ptr<std::atomic<int>> started_ = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<Signal> open_ = std::make_shared<Signal>();
};

Options TwoWorkers(Mode mode) {
  Options o;
  o.mode = mode;
  o.threads = 2;
  o.workers_per_list = 2;
  return o;
}

TEST_CASE("Shutdown runs queued tasks, cancels delayed ones and refuses late ones inline",
          "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  auto pool = WorkerPool::Create(TwoWorkers(mode));
  Gate gate(pool.get());
  std::atomic<int> ran{0}, cancelled{0};
  auto task = [&] { return MakeTask([&ran] { ran++; }, [&cancelled] { cancelled++; }); };
  constexpr int kQueued = 1000, kDelayed = 10, kLate = 10;
  for (int i = 0; i < kQueued; ++i) pool->Submit(task(), static_cast<uint64_t>(i));
  for (int i = 0; i < kDelayed; ++i) pool->ScheduleAt(Clock::now() + std::chrono::hours(1), task());
  REQUIRE(pool->GetStats().delayed_pending == kDelayed);

  std::thread stopper([&] { pool->Shutdown(); });
  // Shutdown stops accepting, then cancels the timer's tasks, then waits for the gated workers.
  REQUIRE(Eventually([&] { return cancelled.load() == kDelayed; }));
  const auto me = std::this_thread::get_id();
  for (int i = 0; i < kLate; ++i) {
    std::thread::id canceller;
    const int before = cancelled.load();
    pool->Submit(MakeTask([&ran] { ran++; },
                          [&] {
                            canceller = std::this_thread::get_id();
                            cancelled++;
                          }));
    REQUIRE(cancelled.load() == before + 1);  // inline, before Submit returned
    REQUIRE(canceller == me);
  }
  REQUIRE(ran.load() == 0);
  gate.Open();
  stopper.join();
  REQUIRE(ran.load() == kQueued);
  REQUIRE(cancelled.load() == kDelayed + kLate);

  pool->Submit(task());
  pool->ScheduleAt(Clock::now(), task());
  REQUIRE(cancelled.load() == kDelayed + kLate + 2);
  pool->Shutdown();                                    // idempotent
  REQUIRE(pool->GetStats().tasks_run == kQueued + 2);  // + the gate tasks
}

TEST_CASE("Submit racing Shutdown: every task is answered exactly once", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o;
  o.mode = mode;
  o.threads = 3;
  auto pool = WorkerPool::Create(o);
  constexpr int kProducers = 4;
  const int kCap = 40000 / kSlowdown;
  std::vector<std::atomic<uint8_t>> answers(kProducers * kCap);
  std::atomic<int> submitted{0}, ran{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = p * kCap; i < (p + 1) * kCap && !stop.load(); ++i) {
        auto& a = answers[i];
        pool->Submit(MakeTask([&a, &ran] { a++, ran++; }, [&a] { a++; }), i);
        submitted++;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  pool->Shutdown();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  stop = true;
  for (auto& t : producers) t.join();
  int answered = 0, twice = 0;
  for (auto& a : answers) answered += a.load() == 1, twice += a.load() > 1;
  REQUIRE(twice == 0);
  REQUIRE(answered == submitted.load());
  REQUIRE(pool->GetStats().tasks_run == static_cast<uint64_t>(ran.load()));
}

TEST_CASE("delayed tasks run in (deadline, ScheduleAt) order and never early", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o;
  o.mode = mode;
  o.threads = 1;  // one worker, so dispatch order is run order
  auto pool = WorkerPool::Create(o);
  const int offsets_ms[] = {30, 10, 20, 10, 0, 30, 20, 0, 10, 45};
  constexpr int kTasks = sizeof(offsets_ms) / sizeof(offsets_ms[0]);
  const auto base = Clock::now() + std::chrono::milliseconds(20);
  std::mutex mu;
  std::vector<std::pair<int, Clock::time_point>> runs;
  for (int i = 0; i < kTasks; ++i) {
    pool->ScheduleAt(base + std::chrono::milliseconds(offsets_ms[i]), MakeTask([&, i] {
                       std::lock_guard<std::mutex> lock(mu);
                       runs.emplace_back(i, Clock::now());
                     }));
  }
  REQUIRE(pool->GetStats().delayed_pending == kTasks);
  REQUIRE(Eventually([&] {
    std::lock_guard<std::mutex> lock(mu);
    return runs.size() == kTasks;
  }));
  std::vector<int> expected(kTasks);
  for (int i = 0; i < kTasks; ++i) expected[i] = i;
  std::stable_sort(expected.begin(), expected.end(),
                   [&](int a, int b) { return offsets_ms[a] < offsets_ms[b]; });
  std::lock_guard<std::mutex> lock(mu);
  for (int k = 0; k < kTasks; ++k) {
    INFO("position " << k);
    REQUIRE(runs[k].first == expected[k]);
    REQUIRE(runs[k].second >= base + std::chrono::milliseconds(offsets_ms[runs[k].first]));
  }
  REQUIRE(pool->GetStats().delayed_pending == 0);
}

TEST_CASE("a far timer delays neither normal tasks nor Shutdown; past deadlines run now",
          "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  auto pool = WorkerPool::Create(TwoWorkers(mode));
  std::atomic<bool> far_cancelled{false};
  pool->ScheduleAt(Clock::now() + std::chrono::hours(1),
                   MakeTask([] {}, [&far_cancelled] { far_cancelled = true; }));
  for (int i = 0; i < 20; ++i) {
    auto done = std::make_shared<Signal>();
    const auto t0 = Clock::now();
    pool->Submit(MakeTask([done] { done->Set(); }));
    REQUIRE(done->WaitFor(std::chrono::seconds(5)));
    REQUIRE(Clock::now() - t0 < std::chrono::seconds(1));
  }
  auto past = std::make_shared<Signal>();
  pool->ScheduleAt(Clock::now() - std::chrono::seconds(1), MakeTask([past] { past->Set(); }));
  REQUIRE(past->WaitFor(std::chrono::seconds(5)));
  REQUIRE(pool->GetStats().delayed_pending == 1);
  const auto t0 = Clock::now();
  pool->Shutdown();
  REQUIRE(Clock::now() - t0 < std::chrono::seconds(1));
  REQUIRE(far_cancelled.load());
}

TEST_CASE("backpressure: one producer never pushes a list past queue_max_size", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o = TwoWorkers(mode);
  o.queue_slow_size = 8;
  o.queue_max_size = 32;
  auto pool = WorkerPool::Create(o);
  Gate gate(pool.get());
  constexpr int kTasks = 1000;
  std::atomic<int> submitted{0}, ran{0};
  std::thread producer([&] {
    for (int i = 0; i < kTasks; ++i) {
      pool->Submit(MakeTask([&ran] { ran++; }), 5);
      submitted++;
    }
  });
  REQUIRE(Eventually([&] { return pool->GetStats().producer_waits >= 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Stats s = pool->GetStats();
  REQUIRE(s.queued_now == 32);
  REQUIRE(s.depth_high_water == 32);
  REQUIRE(submitted.load() == 32);  // the 33rd Submit is waiting
  REQUIRE(s.producer_yields >= 1);  // 9th..32nd Submit found the list above queue_slow_size
  gate.Open();
  producer.join();
  pool->Shutdown();
  s = pool->GetStats();
  REQUIRE(ran.load() == kTasks);
  REQUIRE(s.depth_high_water <= 32);
  REQUIRE(s.producer_waits >= 1);
}

TEST_CASE("backpressure: 4 producers overshoot by at most one task each", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o = TwoWorkers(mode);
  o.queue_slow_size = 8;
  o.queue_max_size = 32;
  auto pool = WorkerPool::Create(o);
  constexpr int kProducers = 4;
  const int kPerProducer = 20000 / kSlowdown;
  std::atomic<int> ran{0};
  {
    Gate gate(pool.get());
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&] {
        for (int i = 0; i < kPerProducer; ++i) pool->Submit(MakeTask([&ran] { ran++; }), 1);
      });
    }
    REQUIRE(Eventually([&] { return pool->GetStats().producer_waits >= kProducers; }));
    gate.Open();
    for (auto& t : producers) t.join();
  }
  pool->Shutdown();
  const Stats s = pool->GetStats();
  REQUIRE(ran.load() == kProducers * kPerProducer);
  // Classic checks under its mutex: exact. Adaptive checks, then links: one extra per producer.
  REQUIRE(s.depth_high_water <=
          static_cast<uint64_t>(mode == Mode::kClassic ? 32 : 32 + kProducers));
}

TEST_CASE("raising queue_max_size releases a waiting producer", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o = TwoWorkers(mode);
  o.queue_max_size = 4;
  auto pool = WorkerPool::Create(o);
  Gate gate(pool.get());
  std::atomic<int> submitted{0};
  std::thread producer([&] {
    for (int i = 0; i < 100; ++i) pool->Submit(MakeTask([] {})), submitted++;
  });
  REQUIRE(
      Eventually([&] { return submitted.load() == 4 && pool->GetStats().producer_waits == 1; }));
  o.queue_max_size = 1000;
  pool->SetTunables(o);
  producer.join();  // finishes while the workers are still gated
  REQUIRE(pool->GetStats().queued_now == 100);
  gate.Open();
}

TEST_CASE("Submit from a worker never waits for room (no self-deadlock)", "[pool]") {
  const Mode mode = GENERATE(Mode::kAdaptive, Mode::kClassic);
  INFO("mode " << ModeName(mode));
  Options o;
  o.mode = mode;
  o.threads = 1;
  o.queue_max_size = 4;
  auto pool = WorkerPool::Create(o);
  std::atomic<int> ran{0};
  WorkerPool* p = pool.get();
  pool->Submit(MakeTask([p, &ran] {
    for (int i = 0; i < 100; ++i) p->Submit(MakeTask([&ran] { ran++; }));
  }));
  REQUIRE(Eventually([&] { return ran.load() == 100; }));
  pool->Shutdown();
}

}  // namespace
}  // namespace rockcache::pool::shutdown_test
