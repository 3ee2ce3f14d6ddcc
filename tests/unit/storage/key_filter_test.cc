// storage/key_filter: no key it was given is ever ruled out (across layers and databases), few
// keys it was not given get through, it turns itself off at its memory bound; and the store
// built on it answers keys never written without a RocksDB read, yet sees every key it opened
// with.
#include "storage/key_filter.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "storage/perf_counters.h"
#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::storage::key_filter_test {
namespace {

using testing::Ok;
using testing::StoreFixture;

std::string Key(uint64_t i) { return "key:" + std::to_string(i); }

// Never-added keys that get through, out of `n`.
uint64_t FalsePositives(const KeyFilter& filter, uint64_t n) {
  uint64_t hits = 0;
  for (uint64_t i = 0; i < n; ++i) hits += filter.MayContain(0, "absent:" + std::to_string(i));
  return hits;
}

TEST_CASE("key_filter: every key added is kept, across layers, with ~1% false positives",
          "[storage][key-filter]") {
  KeyFilter filter(10, 64 << 20, 0);
  REQUIRE(filter.GetStats().on);
  CHECK(filter.GetStats().layers == 1);
  CHECK(FalsePositives(filter, 100000) == 0);  // empty

  // Past the first layer's capacity (kMinLayerKeys), so a second layer takes the rest.
  const uint64_t n = KeyFilter::kMinLayerKeys + KeyFilter::kMinLayerKeys / 2;
  for (uint64_t i = 0; i < n; ++i) filter.Add(0, Key(i));
  const KeyFilter::Stats stats = filter.GetStats();
  CHECK(stats.on);
  CHECK(stats.layers == 2);
  // The 1-in-64 estimate of the keys added.
  CHECK(stats.keys_added > n * 95 / 100);
  CHECK(stats.keys_added < n * 105 / 100);
  uint64_t lost = 0;
  for (uint64_t i = 0; i < n; ++i) lost += !filter.MayContain(0, Key(i));
  CHECK(lost == 0);
  // Two layers, each ~0.9% at 10 bits a key (the second is less full).
  const uint64_t fp = FalsePositives(filter, 100000);
  INFO("false positives in 100000: " << fp);
  CHECK(fp < 2500);
  CHECK(fp > 0);  // it is a Bloom filter: a test of 100,000 absent keys that none pass is suspect
}

TEST_CASE("key_filter: adds from several threads while it grows are never lost to readers",
          "[storage][key-filter][concurrency]") {
  // Writers add their own keys and publish how far they got (release); a reader checks every
  // key below what it saw (acquire), as a command reads a key after the write it follows. The
  // writers add 2.5M keys in all: a second layer is made while they run.
  constexpr int kWriters = 3;
  constexpr uint64_t kPerWriter = 850000;
  KeyFilter filter(10, 64 << 20, 0);
  std::atomic<uint64_t> done[kWriters] = {};
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (uint64_t i = 0; i < kPerWriter; ++i) {
        filter.Add(0, std::to_string(w) + ":" + std::to_string(i));
        done[w].store(i + 1, std::memory_order_release);
      }
    });
  }
  uint64_t checked = 0, lost = 0;
  std::thread reader([&] {
    while (!stop.load(std::memory_order_acquire)) {
      for (int w = 0; w < kWriters; ++w) {
        const uint64_t upto = done[w].load(std::memory_order_acquire);
        for (uint64_t i = upto > 64 ? upto - 64 : 0; i < upto; ++i) {  // the newest ones
          lost += !filter.MayContain(0, std::to_string(w) + ":" + std::to_string(i));
          ++checked;
        }
      }
    }
  });
  for (auto& t : writers) t.join();
  stop.store(true, std::memory_order_release);
  reader.join();
  CHECK(lost == 0);
  CHECK(checked > 0);
  CHECK(filter.GetStats().layers == 2);
  uint64_t missing = 0;
  for (int w = 0; w < kWriters; ++w) {
    for (uint64_t i = 0; i < kPerWriter; ++i) {
      missing += !filter.MayContain(0, std::to_string(w) + ":" + std::to_string(i));
    }
  }
  CHECK(missing == 0);
}

TEST_CASE("key_filter: databases are distinct, and 0 bits a key is off", "[storage][key-filter]") {
  KeyFilter filter(10, 64 << 20, 0);
  for (uint64_t i = 0; i < 1000; ++i) filter.Add(3, Key(i));
  uint64_t in_db3 = 0, in_db0 = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    in_db3 += filter.MayContain(3, Key(i));
    in_db0 += filter.MayContain(0, Key(i));
  }
  CHECK(in_db3 == 1000);
  CHECK(in_db0 < 30);

  KeyFilter off(0, 64 << 20, 0);
  CHECK_FALSE(off.GetStats().on);
  CHECK(off.GetStats().bytes == 0);
  CHECK(off.MayContain(0, "anything"));
}

TEST_CASE("key_filter: past its memory bound it turns off instead of growing",
          "[storage][key-filter]") {
  // 2 MB holds the first layer (a million keys at 10 bits: 1.25 MB) but not the second (2.5 MB).
  KeyFilter filter(10, 2 << 20, 0);
  REQUIRE(filter.GetStats().on);
  const uint64_t n = KeyFilter::kMinLayerKeys + KeyFilter::kMinLayerKeys / 10;
  for (uint64_t i = 0; i < n; ++i) filter.Add(0, Key(i));
  const KeyFilter::Stats stats = filter.GetStats();
  CHECK_FALSE(stats.on);
  CHECK(stats.full);
  CHECK(stats.layers == 1);
  CHECK(stats.bytes <= (2u << 20));
  // Off: nothing is ruled out any more.
  CHECK(FalsePositives(filter, 1000) == 1000);
  CHECK(filter.MayContain(0, Key(n - 1)));

  // A bound below one layer of the minimum size: the first layer is what fits.
  KeyFilter small(10, 64 << 10, 0);
  CHECK(small.GetStats().on);
  CHECK(small.GetStats().bytes <= (64u << 10));
}

TEST_CASE_METHOD(StoreFixture,
                 "key_filter: the store reads nothing for keys never written, and sees every key "
                 "it opened with",
                 "[storage][key-filter]") {
  REQUIRE(Ok(store->Set("present", "v", SetOptions())).written);
  REQUIRE(Ok(store->HSet("hash", {{"f", "v"}})) == 1);
  PerfScope perf;

  perf.Reset();
  CHECK(Ok(store->Exists({"present"})) == 1);
  CHECK(perf.Read().get_from_memtable > 0);  // a key written: read from RocksDB

  perf.Reset();
  CHECK(Ok(store->Exists({"never"})) == 0);
  CHECK(Ok(store->Get("never")) == std::nullopt);
  CHECK(store->TryGetString("never", 1024, MemoryReach::kResidentFiles).outcome ==
        MemoryRead::Outcome::kAbsent);
  CHECK(Ok(store->MGet({"never", "nor-this"})) ==
        std::vector<std::optional<std::string>>{std::nullopt, std::nullopt});
  REQUIRE(Ok(store->Set("new", "v", SetOptions())).written);
  REQUIRE(Ok(store->LPush("new-list", {"a"})) == 1);
  CHECK(perf.Read().get_from_memtable == 0);  // none of them asked RocksDB

  // Reopened, the filter is rebuilt from the keys on disk: a write over them sees them.
  REQUIRE(store->Close().ok());
  Options o;
  o.dir = dir.path();
  store = Ok(Store::Open(o));
  CHECK(Ok(store->DbSize()) == 4);
  REQUIRE(Ok(store->Set("hash", "now a string", SetOptions())).written);
  REQUIRE(Ok(store->Set("present", "w", SetOptions())).written);
  CHECK(Ok(store->DbSize()) == 4);
  CHECK(Ok(store->Get("hash")) == std::optional<std::string>("now a string"));
  CHECK(Ok(store->LLen("new-list")) == 1);

  // The same reads with the filter off do ask RocksDB (what the count above would catch).
  REQUIRE(store->Close().ok());
  o.key_filter_bits_per_key = 0;
  store = Ok(Store::Open(o));
  REQUIRE(Ok(store->Set("in-the-memtable", "v", SetOptions())).written);
  perf.Reset();
  CHECK(Ok(store->Exists({"never"})) == 0);
  CHECK(perf.Read().get_from_memtable > 0);
}

TEST_CASE_METHOD(StoreFixture,
                 "key_filter: a new member of a collection made in this run is not read; members "
                 "of a collection from before a reopen always are",
                 "[storage][key-filter]") {
  REQUIRE(Ok(store->SAdd("set", {"a"})) == 1);
  REQUIRE(Ok(store->HSet("hash", {{"f", "v"}})) == 1);
  REQUIRE(Ok(store->ZAdd("zset", {{1.0, "m"}}, ZAddOptions())).count == 1);
  PerfScope perf;
  // Each write reads the collection's meta; an old member is read too, a new one is not.
  perf.Reset();
  CHECK(Ok(store->SAdd("set", {"a"})) == 0);
  const uint64_t old_member = perf.Read().get_from_memtable;
  perf.Reset();
  CHECK(Ok(store->SAdd("set", {"b"})) == 1);
  const uint64_t new_member = perf.Read().get_from_memtable;
  CHECK(new_member < old_member);
  perf.Reset();
  CHECK(Ok(store->HSet("hash", {{"g", "v"}})) == 1);
  CHECK(Ok(store->ZAdd("zset", {{2.0, "n"}}, ZAddOptions())).count == 1);
  CHECK(Ok(store->SIsMember("set", "c")) == false);
  CHECK(perf.Read().get_from_memtable == 4);  // the four metas only
  // Updates of members the filter holds read them (a zset's old score entry is replaced).
  CHECK(Ok(store->ZAdd("zset", {{5.0, "m"}}, ZAddOptions())).count == 0);
  CHECK(Ok(store->ZScore("zset", "m")) == std::optional<double>(5.0));
  CHECK(Ok(store->ZCount("zset", ScoreRange())) == 2);

  // Reopened: the collections are from an earlier run, so every member is read again.
  REQUIRE(store->Close().ok());
  Options o;
  o.dir = dir.path();
  store = Ok(Store::Open(o));
  CHECK(Ok(store->SAdd("set", {"a", "b", "c"})) == 1);
  CHECK(Ok(store->SCard("set")) == 3);
  CHECK(Ok(store->HSet("hash", {{"f", "w"}, {"g", "w"}})) == 0);
  CHECK(Ok(store->HGet("hash", "f")) == std::optional<std::string>("w"));
  CHECK(Ok(store->ZAdd("zset", {{7.0, "n"}}, ZAddOptions())).count == 0);
  CHECK(Ok(store->ZCount("zset", ScoreRange())) == 2);
  CHECK(Ok(store->ZScore("zset", "n")) == std::optional<double>(7.0));
}

}  // namespace
}  // namespace rockcache::storage::key_filter_test
