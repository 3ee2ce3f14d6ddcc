// pool-bench: WorkerPool adaptive vs classic, side by side.
//
//   (a) throughput: 1..N producers submit empty tasks as fast as they can for --seconds each;
//       tasks/s = tasks submitted / (time until the pool has run them all).
//   (b) wake-up latency of a lightly loaded pool: one producer submits a task every ~100 µs;
//       latency = steady_clock from just before Submit to the start of Run; p50 / p99.
//
// Usage: pool-bench [--producers N=4] [--seconds S=1.5] [--threads T=4] [--quick]
// Default run ~20 s; --quick ~5 s.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "pool/worker_pool.h"

namespace {

using rockcache::pool::Mode;
using rockcache::pool::Options;
using rockcache::pool::Stats;
using rockcache::pool::Task;
using rockcache::pool::WorkerPool;
using Clock = std::chrono::steady_clock;

struct Flags {
  int producers = 4;
  double seconds = 1.5;
  int threads = 4;
  double latency_seconds = 2.0;
};

class EmptyTask : public Task {
 public:
  void Run() override {}
};

// Stores the submit -> Run delay in its slot; the slot is read after Shutdown joined the workers.
class StampTask : public Task {
 public:
  StampTask(Clock::time_point submitted, double* slot) : submitted_(submitted), slot_(slot) {}
  void Run() override {
    *slot_ = std::chrono::duration<double, std::micro>(Clock::now() - submitted_).count();
  }

 private:
  Clock::time_point submitted_;
  double* slot_;
};

struct Result {
  double value = 0;
  Stats stats;
};

Options PoolOptions(Mode mode, const Flags& f) {
  Options o;
  o.mode = mode;
  o.threads = f.threads;
  return o;
}

Result Throughput(Mode mode, int producers, const Flags& f) {
  auto pool = WorkerPool::Create(PoolOptions(mode, f));
  std::atomic<bool> stop{false};
  std::vector<uint64_t> submitted(producers);
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        pool->Submit(std::make_unique<EmptyTask>());
        ++n;
      }
      submitted[p] = n;
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(f.seconds));
  stop = true;
  for (auto& t : threads) t.join();
  uint64_t total = 0;
  for (uint64_t n : submitted) total += n;
  while (pool->GetStats().tasks_run < total)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  Result r;
  r.stats = pool->GetStats();
  r.value = static_cast<double>(total) / elapsed;
  return r;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// Returns p50 in value; p99 in *p99.
Result Latency(Mode mode, const Flags& f, double* p99) {
  auto pool = WorkerPool::Create(PoolOptions(mode, f));
  const size_t max_samples = static_cast<size_t>(f.latency_seconds * 1e6 / 50) + 1;
  std::vector<double> delays(max_samples, -1);
  const auto end = Clock::now() + std::chrono::duration<double>(f.latency_seconds);
  size_t n = 0;
  uint32_t rng = 12345;
  while (Clock::now() < end && n < max_samples) {
    rng = rng * 1664525u + 1013904223u;
    // 50-150 µs apart (sleep_for adds its own ~50 µs of timer slack on Linux).
    std::this_thread::sleep_for(std::chrono::microseconds(50 + (rng >> 8) % 100));
    const auto t0 = Clock::now();
    pool->Submit(std::make_unique<StampTask>(t0, &delays[n]), n + 1);
    ++n;
  }
  pool->Shutdown();
  delays.resize(n);
  Result r;
  r.stats = pool->GetStats();
  r.value = Percentile(delays, 0.50);
  *p99 = Percentile(delays, 0.99);
  return r;
}

void Row(const std::string& name, double adaptive, double classic, bool higher_is_better,
         int precision) {
  const double ratio = higher_is_better ? adaptive / classic : classic / adaptive;
  std::printf("%-34s %12.*f %12.*f %9.2fx\n", name.c_str(), precision, adaptive, precision, classic,
              ratio);
}

void WakeupRow(const std::string& name, const Stats& a, const Stats& c) {
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("  %-22s spin %-8llu yield %-8llu block %-8llu credit %+.2f | block %llu\n",
              name.c_str(), u(a.wakeups_spin), u(a.wakeups_yield), u(a.wakeups_block),
              a.yield_credit, u(c.wakeups_block));
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (arg == "--quick") {
      f->seconds = 0.4;
      f->latency_seconds = 0.5;
    } else if (arg == "--producers" && (v = next())) {
      f->producers = std::max(1, std::atoi(v));
    } else if (arg == "--seconds" && (v = next())) {
      f->seconds = std::max(0.05, std::atof(v));
      f->latency_seconds = std::max(0.2, f->seconds);
    } else if (arg == "--threads" && (v = next())) {
      f->threads = std::max(1, std::atoi(v));
    } else {
      std::fprintf(stderr,
                   "usage: %s [--producers N=4] [--seconds S=1.5] [--threads T=4] [--quick]\n",
                   argv[0]);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, &f)) return 2;
  std::printf("pool-bench: %d worker threads, %d cores, %.2f s per throughput point\n", f.threads,
              std::thread::hardware_concurrency(), f.seconds);
  std::printf("%-34s %12s %12s %10s\n", "scenario", "adaptive", "classic", "ratio");
  struct Wakeups {
    std::string name;
    Stats adaptive, classic;
  };
  std::vector<Wakeups> wakeups;
  for (int p = 1; p <= f.producers; ++p) {
    const Result a = Throughput(Mode::kAdaptive, p, f);
    const Result c = Throughput(Mode::kClassic, p, f);
    const std::string producers = std::to_string(p) + " producer" + (p > 1 ? "s" : "");
    Row("throughput, " + producers + " (Mtask/s)", a.value / 1e6, c.value / 1e6,
        /*higher_is_better=*/true, 3);
    wakeups.push_back({"throughput, " + producers, a.stats, c.stats});
  }
  double a99 = 0, c99 = 0;
  const Result a = Latency(Mode::kAdaptive, f, &a99);
  const Result c = Latency(Mode::kClassic, f, &c99);
  Row("wake-up latency p50 (us)", a.value, c.value, /*higher_is_better=*/false, 1);
  Row("wake-up latency p99 (us)", a99, c99, /*higher_is_better=*/false, 1);
  wakeups.push_back({"wake-up latency", a.stats, c.stats});
  std::printf(
      "ratio: adaptive/classic for throughput, classic/adaptive for latency; > 1 = adaptive "
      "better\nidle-worker wake-ups (adaptive | classic):\n");
  for (const auto& w : wakeups) WakeupRow(w.name, w.adaptive, w.classic);
  return 0;
}
