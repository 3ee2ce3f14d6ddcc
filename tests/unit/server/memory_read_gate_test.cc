// MemoryReadGate (server/memory_read_gate.h): a network thread tries RocksDB's memory for its
// misses while most tries answer, stops when most fail (probing one miss in kProbeEvery), and
// tries again once the probes answer.
#include "server/memory_read_gate.h"

#include <catch2/catch.hpp>

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::server::memory_read_gate_test {
namespace {

// How many of `misses` misses the gate lets try, each try ending as `answered` says.
int Tries(MemoryReadGate& gate, int misses, bool answered) {
  int tries = 0;
  for (int i = 0; i < misses; ++i) {
    if (!gate.ShouldTry()) continue;
    ++tries;
    gate.Record(answered);
  }
  return tries;
}

TEST_CASE("The memory-read gate follows how tries end", "[server][memory-gate]") {
  MemoryReadGate gate;
  // Answering tries keep it open.
  CHECK(Tries(gate, 1000, true) == 1000);
  // Failing tries close it within a few dozen; then only probes go through.
  CHECK(Tries(gate, 64, false) < 64);
  const int probes = Tries(gate, 1600, false);
  CHECK(probes == 1600 / static_cast<int>(MemoryReadGate::kProbeEvery));
  // When the probes start answering (the data is back in memory), it opens again.
  int misses = 0;
  while (!(gate.score() >= MemoryReadGate::kThreshold) && misses < 100000) {
    Tries(gate, 1, true);
    ++misses;
  }
  CHECK(misses < 5000);
  CHECK(Tries(gate, 100, true) == 100);
}

}  // namespace
}  // namespace rockcache::server::memory_read_gate_test
