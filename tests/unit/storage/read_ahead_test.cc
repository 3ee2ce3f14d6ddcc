// Store::BeginReadAhead (storage/meta_read_ahead.h): the metas of a group's misses read with one
// MultiGet, then served to the point reads that follow. The reads must return what they would
// without it (strings, absent keys, other types, expired keys, keys of other databases), and
// must not touch RocksDB again for a key read ahead: RocksDB's PerfContext counts the memtable
// lookups and key comparisons each read makes (storage/perf_counters.h).
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "config/current_db.h"
#include "storage/perf_counters.h"
#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::storage::read_ahead_test {
namespace {

using testing::Ok;
using testing::StoreFixture;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Put(Store& store, std::string_view key, std::string_view value, int64_t expire_at_ms = 0) {
  SetOptions o;
  if (expire_at_ms != 0) {
    o.expiry.mode = Expiry::Mode::kAt;
    o.expiry.at_ms = expire_at_ms;
  }
  REQUIRE(Ok(store.Set(key, value, o)).written);
}

TEST_CASE_METHOD(StoreFixture, "Reads after a read-ahead answer as without it, from what it read",
                 "[storage][read-ahead]") {
  Put(*store, "s1", "one");
  Put(*store, "s2", "two", NowMs() + 60'000);
  Put(*store, "soon", "gone", NowMs() + 30);
  REQUIRE(Ok(store->HSet("h", {{"f", "v"}})) == 1);
  {
    DbScope scope(store->PhysicalDb(3));
    Put(*store, "s1", "other db");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // "soon" has expired

  const int db0 = store->PhysicalDb(0);
  const int db3 = store->PhysicalDb(3);
  std::vector<ReadAheadKey> keys = {{db0, "s1"},   {db0, "s2"}, {db0, "soon"}, {db0, "h"},
                                    {db0, "none"}, {db3, "s1"}, {db0, "s1"}};
  store->BeginReadAhead(keys);
  PerfScope perf;
  int64_t expire_at = -1;
  CHECK(Ok(store->Get("s1", &expire_at)) == "one");
  CHECK(expire_at == 0);
  CHECK(Ok(store->Get("s2", &expire_at)) == "two");
  CHECK(expire_at > NowMs());
  CHECK_FALSE(Ok(store->Get("soon")).has_value());
  CHECK_FALSE(Ok(store->Get("none")).has_value());
  auto wrong = store->Get("h");
  CHECK(wrong.status().IsWrongType());
  {
    DbScope scope(db3);
    CHECK(Ok(store->Get("s1")) == "other db");
  }
  const PerfCounts counts = perf.Read();
  // Everything was in the memtables: a read that went to RocksDB would have searched them.
  CHECK(counts.get_from_memtable == 0);
  CHECK(counts.user_key_comparison == 0);
  store->EndReadAhead();

  // Without the read-ahead the same reads do search the memtables (the check above can fail).
  perf.Reset();
  CHECK(Ok(store->Get("s1")) == "one");
  CHECK(perf.Read().get_from_memtable > 0);
}

TEST_CASE_METHOD(StoreFixture, "A read-ahead ends with EndReadAhead and never serves a later write",
                 "[storage][read-ahead]") {
  Put(*store, "a", "1");
  Put(*store, "b", "2");
  const int db = store->PhysicalDb(0);
  store->BeginReadAhead({{db, "a"}, {db, "b"}});
  CHECK(Ok(store->Get("a")) == "1");
  store->EndReadAhead();
  Put(*store, "a", "changed");
  CHECK(Ok(store->Get("a")) == "changed");
  // A new read-ahead replaces the previous one, and one key alone is not read ahead.
  store->BeginReadAhead({{db, "a"}, {db, "b"}});
  store->BeginReadAhead({{db, "b"}});
  PerfScope perf;
  CHECK(Ok(store->Get("a")) == "changed");
  CHECK(perf.Read().get_from_memtable > 0);
  store->EndReadAhead();
}

TEST_CASE_METHOD(StoreFixture, "A write of a key read ahead drops it from the read-ahead",
                 "[storage][read-ahead]") {
  // Callers never write a key they read ahead (Store::BeginReadAhead's contract), but a write
  // they did not foresee (a blocked client served after a push writes its destination) must not
  // leave the old record to the reads after it.
  Put(*store, "a", "1");
  Put(*store, "b", "2");
  Put(*store, "c", "3");
  const int db = store->PhysicalDb(0);
  store->BeginReadAhead({{db, "a"}, {db, "b"}, {db, "c"}});
  Put(*store, "a", "written");
  REQUIRE(Ok(store->Del({"b"})) == 1);
  CHECK(Ok(store->Get("a")) == "written");
  CHECK_FALSE(Ok(store->Get("b")).has_value());
  CHECK(Ok(store->Get("c")) == "3");
  store->EndReadAhead();
}

}  // namespace
}  // namespace rockcache::storage::read_ahead_test
