// The pool's machine-derived defaults (pool/auto_tune.h).
#include "pool/auto_tune.h"

#include <catch2/catch.hpp>

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::pool::auto_tune_test {
namespace {

TEST_CASE("Pool defaults leave the network threads their cores", "[pool][auto-tune]") {
  SECTION("2 cores: one worker (the core the network thread leaves), no spinning") {
    AutoTune t = DerivePoolDefaults(2, AutoNetThreads(2), /*sync_writes=*/false);
    CHECK(AutoNetThreads(2) == 1);
    CHECK(t.threads == 1);
    CHECK(t.workers_per_list == 1);
    CHECK(t.spin_count == 0);
    CHECK(t.max_yield_usec == 0);
  }
  SECTION("2 cores with storage-sync always: two workers in one list (one waits on fsync)") {
    AutoTune t = DerivePoolDefaults(2, AutoNetThreads(2), /*sync_writes=*/true);
    CHECK(t.threads == 2);
    CHECK(t.workers_per_list == 2);
    CHECK(t.spin_count == 0);
  }
  SECTION("1 core: one worker, two with storage-sync always") {
    CHECK(DerivePoolDefaults(1, 1, false).threads == 1);
    CHECK(DerivePoolDefaults(1, 1, true).threads == 2);
    CHECK(DerivePoolDefaults(1, 1, false).spin_count == 0);
  }
  SECTION("3 cores: no core to spare for a spinner") {
    AutoTune t = DerivePoolDefaults(3, AutoNetThreads(3), false);
    CHECK(t.threads == 2);
    CHECK(t.spin_count == 0);
    CHECK(t.max_yield_usec == 0);
  }
  SECTION("4 cores: three workers, one list, idle workers may spin") {
    AutoTune t = DerivePoolDefaults(4, AutoNetThreads(4), false);
    CHECK(t.threads == 3);
    CHECK(t.workers_per_list == 3);
    CHECK(t.spin_count == 200);
    CHECK(t.max_yield_usec == 100);
  }
  SECTION("16 cores: 4 network threads, 12 workers in lists of 2") {
    CHECK(AutoNetThreads(16) == 4);
    AutoTune t = DerivePoolDefaults(16, 4, false);
    CHECK(t.threads == 12);
    CHECK(t.workers_per_list == 2);
    CHECK(t.spin_count == 200);
  }
  SECTION("more network threads than spare cores: no spinning") {
    AutoTune t = DerivePoolDefaults(8, 6, false);
    CHECK(t.threads == 2);
    CHECK(t.spin_count == 0);
  }
}

TEST_CASE("Network threads read a pipeline's misses themselves when they have every core",
          "[pool][auto-tune]") {
  CHECK(AutoMappedReadsPerPipeline(1, AutoNetThreads(1)) == 64);
  CHECK(AutoMappedReadsPerPipeline(2, 2) == 64);                 // net-threads 2 on 2 cores
  CHECK(AutoMappedReadsPerPipeline(2, AutoNetThreads(2)) == 2);  // the worker has a core
  CHECK(AutoMappedReadsPerPipeline(4, 4) == 64);
  CHECK(AutoMappedReadsPerPipeline(4, AutoNetThreads(4)) == 2);
  CHECK(AutoMappedReadsPerPipeline(16, AutoNetThreads(16)) == 2);
}

TEST_CASE("workers-per-list follows the thread count in effect", "[pool][auto-tune]") {
  CHECK(AutoWorkersPerList(1) == 1);
  CHECK(AutoWorkersPerList(2) == 2);  // pool-threads 2 where the auto count is 1
  CHECK(AutoWorkersPerList(4) == 4);
  CHECK(AutoWorkersPerList(8) == 2);
}

TEST_CASE("UsableCores counts the CPUs this process may run on", "[pool][auto-tune]") {
  CHECK(UsableCores() >= 1);
}

}  // namespace
}  // namespace rockcache::pool::auto_tune_test
