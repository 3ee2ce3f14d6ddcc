#include "pool/auto_tune.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace rockcache::pool {

int UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int AutoNetThreads(int cores) { return std::max(1, cores / 4); }

int AutoMappedReadsPerPipeline(int cores, int net_threads) { return net_threads >= cores ? 64 : 2; }

int AutoWorkersPerList(int threads) { return threads <= 4 ? std::max(1, threads) : 2; }

AutoTune DerivePoolDefaults(int cores, int net_threads, bool sync_writes) {
  cores = std::max(1, cores);
  net_threads = std::max(1, net_threads);
  AutoTune t;
  t.threads = std::max(sync_writes ? 2 : 1, cores - net_threads);
  t.workers_per_list = AutoWorkersPerList(t.threads);
  const bool spare_core = cores >= net_threads + 3;
  t.spin_count = spare_core ? 200 : 0;
  t.max_yield_usec = spare_core ? 100 : 0;
  return t;
}

}  // namespace rockcache::pool
