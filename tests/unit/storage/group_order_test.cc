// A write group writes its records in key order (batch_records::SortedByKey, and
// TxOverlay::LastWritesInKeyOrder for an indexed group), and the meta column families give
// memtable inserts a hint (MetaRunPrefix in storage/rocks_options.cc): each insert of a group then
// starts its skiplist search from the one before it. Measured with RocksDB's count of key
// comparisons (PerfContext user_key_comparison_count, several per skiplist step) on the
// committing thread, which does the memtable inserts.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/perf_counters.h"
#include "storage/store.h"
#include "tests/support/store_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using rockcache::storage::testing::Ok;
using rockcache::storage::testing::StoreFixture;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace group_order_test {

namespace {

constexpr int kFilled = 20000;  // keys in the memtable before the measured group
constexpr int kGroup = 400;     // writes in the measured group

// Keys spread over the filled ones in no order (a fixed LCG, so the counts are reproducible).
std::vector<std::string> SpreadKeys(const char* prefix, int n, uint32_t seed) {
  std::vector<std::string> keys;
  uint32_t x = seed;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    keys.push_back(prefix + std::to_string(x % (4 * kFilled)));
  }
  return keys;
}

struct GroupOrderFixture : StoreFixture {
  void Fill() {
    auto group = store->OpenWriteGroup();
    for (int i = 0; i < kFilled; ++i) {
      REQUIRE(Ok(store->Set("k:" + std::to_string(i * 4), "v", SetOptions())).written);
      if (i % 500 == 499) REQUIRE(group->Commit().ok());
    }
    REQUIRE(group->Commit().ok());
  }
};

}  // namespace

TEST_CASE_METHOD(GroupOrderFixture, "a group's spread writes are inserted in key order",
                 "[storage][group]") {
  Fill();
  const std::vector<std::string> keys = SpreadKeys("k:", kGroup, 7);
  auto group = store->OpenWriteGroup();
  for (size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(Ok(store->Set(keys[i], "a" + std::to_string(i), SetOptions())).written);
  }
  // One key written three times: its last write wins after sorting.
  for (const char* value : {"first", "second", "last"}) {
    REQUIRE(Ok(store->Set("k:dup", value, SetOptions())).written);
  }
  PerfScope perf;
  REQUIRE(group->Commit().ok());
  const PerfCounts counts = perf.Read();
  const double per_insert = static_cast<double>(counts.user_key_comparison) / (kGroup + 3);
  INFO("key comparisons per insert: " << per_insert);
  // ~72 in key order from the hint; ~104 in arrival order or without the metas' hint (each
  // insert a search from the top of the skiplist).
  CHECK(per_insert < 90);
  // Last write of each key wins.
  std::vector<std::optional<std::string>> want(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i; j < keys.size(); ++j) {
      if (keys[j] == keys[i]) want[i] = "a" + std::to_string(j);
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) CHECK(Ok(store->Get(keys[i])) == want[i]);
  CHECK(Ok(store->Get("k:dup")) == "last");
}

TEST_CASE_METHOD(GroupOrderFixture, "an indexed group's members are inserted in key order",
                 "[storage][group]") {
  Fill();
  const std::vector<std::string> fields = SpreadKeys("f:", kGroup, 11);
  {  // the hash's existing fields, spread like the keys
    auto group = store->OpenWriteGroup();
    for (int i = 0; i < kFilled; ++i) {
      REQUIRE(Ok(store->HSet("h", {{"f:" + std::to_string(i * 4), "old"}})) >= 0);
      if (i % 500 == 499) REQUIRE(group->Commit().ok());
    }
    REQUIRE(group->Commit().ok());
  }
  auto group = store->OpenWriteGroup();
  group->BeginIndexed();
  for (size_t i = 0; i < fields.size(); ++i) {
    REQUIRE(Ok(store->HSet("h", {{fields[i], "n" + std::to_string(i)}})) >= 0);
  }
  PerfScope perf;
  REQUIRE(group->Commit().ok());
  const double per_insert = static_cast<double>(perf.Read().user_key_comparison) / kGroup;
  INFO("key comparisons per insert: " << per_insert);
  CHECK(per_insert < 100);  // ~74 in key order; ~131 in arrival order
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string want;
    for (size_t j = i; j < fields.size(); ++j) {
      if (fields[j] == fields[i]) want = "n" + std::to_string(j);
    }
    CHECK(Ok(store->HGet("h", fields[i])) == want);
  }
}

TEST_CASE_METHOD(GroupOrderFixture, "FLUSHDB right after a group of writes in the same memtable",
                 "[storage][group]") {
  // The metas' insert hint must not reach the range deletion FLUSHDB writes (RocksDB would give
  // it a point entry's position in another skiplist): DeleteMetaRange breaks the run.
  for (int round = 0; round < 3; ++round) {
    auto group = store->OpenWriteGroup();
    for (const std::string& key : SpreadKeys("k:", 200, 3 + round)) {
      REQUIRE(Ok(store->Set(key, "v", SetOptions())).written);
    }
    REQUIRE(group->Commit().ok());
    REQUIRE(store->FlushDb().ok());
    CHECK(Ok(store->DbSize()) == 0);
    CHECK(Ok(store->Get(SpreadKeys("k:", 1, 3 + round)[0])) == std::nullopt);
    auto after = store->OpenWriteGroup();
    REQUIRE(Ok(store->Set("k:after", "1", SetOptions())).written);
    REQUIRE(Ok(store->Set("k:0", "2", SetOptions())).written);
    REQUIRE(after->Commit().ok());
    CHECK(Ok(store->Get("k:after")) == "1");
    CHECK(Ok(store->Get("k:0")) == "2");
    CHECK(Ok(store->DbSize()) == 2);
    REQUIRE(store->FlushDb().ok());
  }
}

}  // namespace group_order_test
