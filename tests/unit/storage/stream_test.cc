// Streams in storage: XADD ids and errors, XRANGE/XREVRANGE bounds and COUNT, XDEL/XTRIM, the
// empty stream that stays, and the cost of reads and trims on a stream with a long deletion
// history: RocksDB's PerfContext counts the tombstones each call stepped over
// (storage/perf_counters.h); it must stay bounded by a small constant whatever was trimmed or
// deleted before (no timing).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "storage/perf_counters.h"
#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::storage::stream_test {
namespace {

using testing::Ok;
using testing::StoreFixture;

using Fields = std::vector<std::pair<std::string_view, std::string_view>>;

XAddSpec Explicit(uint64_t ms, uint64_t seq = 0) {
  XAddSpec spec;
  spec.id_kind = XAddSpec::IdKind::kExplicit;
  spec.id = StreamId{ms, seq};
  return spec;
}

std::vector<uint64_t> Ms(const std::vector<StreamEntry>& entries) {
  std::vector<uint64_t> out;
  for (const auto& e : entries) out.push_back(e.id.ms);
  return out;
}

constexpr uint64_t kBound = 16;

// ROCKCACHE_DRAIN_REPORT=1 prints the worst count of each phase (as drain_test.cc).
void Report(const char* phase, uint64_t worst) {
  const char* v = std::getenv("ROCKCACHE_DRAIN_REPORT");
  if (v && *v && *v != '0')
    std::printf("%-40s worst skipped/op %llu\n", phase, (unsigned long long)worst);
}

}  // namespace

TEST_CASE_METHOD(StoreFixture, "Stream: XADD ids, XRANGE, XDEL, XTRIM, the empty stream",
                 "[storage][stream]") {
  Fields f = {{"a", "1"}, {"b", ""}};
  CHECK(Ok(store->XAdd("s", Explicit(5, 1), f)) == StreamId{5, 1});
  XAddSpec seq;
  seq.id_kind = XAddSpec::IdKind::kAutoSeq;
  seq.id = StreamId{5, 0};
  CHECK(Ok(store->XAdd("s", seq, f)) == StreamId{5, 2});
  seq.id = StreamId{7, 0};
  CHECK(Ok(store->XAdd("s", seq, f)) == StreamId{7, 0});
  auto smaller = store->XAdd("s", Explicit(7, 0), f);
  CHECK(smaller.status().message() ==
        "The ID specified in XADD is equal or smaller than the target stream top item");
  auto now = Ok(store->XAdd("s", XAddSpec(), f));
  CHECK(now->ms > 7);
  CHECK(Ok(store->XLen("s")) == 4);
  CHECK(Ok(store->Type("s")) == KeyType::kStream);

  auto all = Ok(store->XRange("s", StreamId::Min(), StreamId::Max(), false, 0));
  REQUIRE(all.size() == 4);
  CHECK(all[0].fields == std::vector<std::pair<std::string, std::string>>{{"a", "1"}, {"b", ""}});
  CHECK(Ms(Ok(store->XRange("s", StreamId{5, 2}, StreamId{7, 0}, false, 0))) ==
        std::vector<uint64_t>{5, 7});
  CHECK(Ms(Ok(store->XRange("s", StreamId::Min(), StreamId::Max(), true, 2))) ==
        std::vector<uint64_t>{now->ms, 7});
  CHECK(Ok(store->XRange("s", StreamId{8, 0}, StreamId{6, 0}, false, 0)).empty());

  CHECK(Ok(store->XDel("s", {StreamId{5, 1}, StreamId{5, 1}, StreamId{9, 9}})) == 1);
  CHECK(Ok(store->XDel("s", {*now})) == 1);
  CHECK(Ms(Ok(store->XRange("s", StreamId::Min(), StreamId::Max(), false, 0))) ==
        std::vector<uint64_t>{5, 7});
  // The last id stays the floor after its entry is deleted.
  CHECK_FALSE(store->XAdd("s", Explicit(8), f).ok());

  StreamTrim minid;
  minid.strategy = StreamTrim::Strategy::kMinId;
  minid.minid = StreamId{6, 0};
  CHECK(Ok(store->XTrim("s", minid)) == 1);
  StreamTrim zero;
  zero.strategy = StreamTrim::Strategy::kMaxLen;
  CHECK(Ok(store->XTrim("s", zero)) == 1);
  CHECK(Ok(store->XLen("s")) == 0);
  CHECK(Ok(store->Exists({"s"})) == 1);  // an empty stream stays, as in Redis
  CHECK(Ok(store->XRange("s", StreamId::Min(), StreamId::Max(), false, 0)).empty());
  XAddSpec after = Explicit(now->ms, now->seq + 1);
  CHECK(Ok(store->XAdd("s", after, f)) == StreamId{now->ms, now->seq + 1});
  CHECK(Ok(store->XLen("s")) == 1);

  // MAXLEN 0 on XADD removes the new entry too; NOMKSTREAM on an absent key adds nothing.
  XAddSpec drop = Explicit(1);
  drop.trim = zero;
  CHECK(Ok(store->XAdd("t", drop, f)) == StreamId{1, 0});
  CHECK(Ok(store->XLen("t")) == 0);
  CHECK(Ok(store->Type("t")) == KeyType::kStream);
  XAddSpec nomk;
  nomk.nomkstream = true;
  CHECK_FALSE(Ok(store->XAdd("absent", nomk, f)).has_value());
  CHECK(Ok(store->Exists({"absent"})) == 0);

  // Other types: WRONGTYPE both ways.
  Ok(store->Set("str", "v", SetOptions()));
  CHECK(store->XAdd("str", XAddSpec(), f).status().IsWrongType());
  CHECK(store->XRange("str", StreamId::Min(), StreamId::Max(), false, 0).status().IsWrongType());
  CHECK(store->Get("s").status().IsWrongType());
  CHECK(store->LLen("s").status().IsWrongType());

  // RENAME copies the entries and the last id.
  CHECK(Ok(store->Rename("s", "s2", false)));
  CHECK(Ok(store->XLen("s2")) == 1);
  CHECK_FALSE(store->XAdd("s2", Explicit(8), f).ok());
}

TEST_CASE_METHOD(StoreFixture,
                 "Stream: trims, deletions and reads cost the same whatever came before",
                 "[storage][stream][drain]") {
  const uint64_t n = 20000;
  Fields f = {{"field", "value"}};
  for (uint64_t i = 1; i <= n; ++i) Ok(store->XAdd("s", Explicit(i), f));
  // One big trim (a range tombstone) then reads from both ends.
  StreamTrim half;
  half.strategy = StreamTrim::Strategy::kMaxLen;
  half.maxlen = n / 2;
  CHECK(Ok(store->XTrim("s", half)) == int64_t(n / 2));
  PerfScope perf;
  uint64_t worst = 0;
  auto measure = [&](const std::function<void()>& op) {
    perf.Reset();
    op();
    worst = std::max(worst, perf.Read().Skipped());
  };
  measure([&] {
    CHECK(Ms(Ok(store->XRange("s", StreamId::Min(), StreamId::Max(), false, 1))) ==
          std::vector<uint64_t>{n / 2 + 1});
  });
  Report("XRANGE COUNT 1 after a big XTRIM", worst);
  CHECK(worst <= kBound);
  // RQ's pattern: XADD MAXLEN 10 (one trimmed per add) and XREVRANGE + - COUNT 1; then
  // XRANGE - + COUNT 1 from the trimmed front.
  XAddSpec add;
  add.trim.strategy = StreamTrim::Strategy::kMaxLen;
  add.trim.maxlen = 10;
  // The first add trims n/2 - 9 entries at once (O(removed): not measured).
  add.id_kind = XAddSpec::IdKind::kExplicit;
  add.id = StreamId{n + 1, 0};
  Ok(store->XAdd("s", add, f));
  CHECK(Ok(store->XLen("s")) == 10);
  for (uint64_t i = n + 2; i <= 2 * n; ++i) {
    add.id = StreamId{i, 0};
    measure([&] { REQUIRE(Ok(store->XAdd("s", add, f)) == StreamId{i, 0}); });
    measure([&] {
      REQUIRE(Ms(Ok(store->XRange("s", StreamId::Min(), StreamId::Max(), true, 1))) ==
              std::vector<uint64_t>{i});
    });
    measure([&] {
      REQUIRE(Ms(Ok(store->XRange("s", StreamId::Min(), StreamId::Max(), false, 1))) ==
              std::vector<uint64_t>{i - 9});
    });
  }
  Report("XADD MAXLEN 10 + XREVRANGE/XRANGE COUNT 1", worst);
  CHECK(worst <= kBound);
  CHECK(Ok(store->XLen("s")) == 10);

  // XDEL from the front and from the top, one at a time, with reads between.
  for (uint64_t i = 2 * n + 1; i <= 3 * n; ++i) Ok(store->XAdd("d", Explicit(i), f));
  worst = 0;
  uint64_t lo = 2 * n + 1, hi = 3 * n;
  while (hi - lo > 2) {
    measure([&] { REQUIRE(Ok(store->XDel("d", {StreamId{lo++, 0}})) == 1); });
    measure([&] { REQUIRE(Ok(store->XDel("d", {StreamId{hi--, 0}})) == 1); });
    measure([&] {
      REQUIRE(Ms(Ok(store->XRange("d", StreamId::Min(), StreamId::Max(), false, 1))) ==
              std::vector<uint64_t>{lo});
    });
    measure([&] {
      REQUIRE(Ms(Ok(store->XRange("d", StreamId::Min(), StreamId::Max(), true, 1))) ==
              std::vector<uint64_t>{hi});
    });
  }
  Report("XDEL at both ends + XRANGE/XREVRANGE", worst);
  CHECK(worst <= kBound);
  // XTRIM MINID one at a time.
  for (uint64_t i = 3 * n + 1; i <= 4 * n; ++i) Ok(store->XAdd("m", Explicit(i), f));
  worst = 0;
  StreamTrim minid;
  minid.strategy = StreamTrim::Strategy::kMinId;
  for (uint64_t i = 3 * n + 2; i <= 4 * n; ++i) {
    minid.minid = StreamId{i, 0};
    measure([&] { REQUIRE(Ok(store->XTrim("m", minid)) == 1); });
  }
  Report("XTRIM MINID one at a time", worst);
  CHECK(worst <= kBound);
  CHECK(Ok(store->XLen("m")) == 1);
}

}  // namespace rockcache::storage::stream_test
