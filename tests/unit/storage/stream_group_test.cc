// Stream consumer groups in storage: group creation, delivery with `>` into the PEL, history
// reads, XACK, XCLAIM / XAUTOCLAIM ownership moves, DELCONSUMER / DESTROY, lag, and the cost of
// the PEL after a long acknowledgement history: RocksDB's PerfContext counts the tombstones each
// call stepped over (storage/perf_counters.h); it must stay bounded by a small constant after
// 10,000 entries were delivered and acknowledged (no timing).
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
namespace rockcache::storage::stream_group_test {
namespace {

using testing::Ok;
using testing::StoreFixture;

using Fields = std::vector<std::pair<std::string_view, std::string_view>>;

void Add(Store& store, std::string_view key, uint64_t ms) {
  XAddSpec spec;
  spec.id_kind = XAddSpec::IdKind::kExplicit;
  spec.id = StreamId{ms, 0};
  Fields f = {{"f", "v"}};
  REQUIRE(store.XAdd(key, spec, f).ok());
}

std::vector<uint64_t> Ms(const std::vector<StreamEntry>& entries) {
  std::vector<uint64_t> out;
  for (const auto& e : entries) out.push_back(e.id.ms);
  return out;
}

StreamGroupReadSpec Read(std::string_view consumer, uint64_t count) {
  StreamGroupReadSpec spec;
  spec.group = "g";
  spec.consumer = consumer;
  spec.count = count;
  return spec;
}

constexpr uint64_t kBound = 16;

}  // namespace

TEST_CASE_METHOD(StoreFixture, "Stream groups: deliver, read history, ack, claim, destroy",
                 "[storage][stream][group]") {
  for (uint64_t i = 1; i <= 5; ++i) Add(*store, "s", i);
  CHECK(store->XGroupCreate("nokey", "g", StreamId::Min(), false, -1).IsNotFound());
  REQUIRE(store->XGroupCreate("s", "g", StreamId::Min(), false, -1).ok());
  CHECK(store->XGroupCreate("s", "g", StreamId::Min(), false, -1).code() == Status::Code::kBusy);

  auto first = Ok(store->XReadGroup("s", Read("a", 2), 1000));
  REQUIRE(first);
  CHECK(Ms(*first) == std::vector<uint64_t>{1, 2});
  CHECK(Ms(*Ok(store->XReadGroup("s", Read("b", 0), 1000))) == std::vector<uint64_t>{3, 4, 5});
  CHECK_FALSE(Ok(store->XReadGroup("s", Read("b", 0), 1000)));  // nothing new: not served

  StreamPendingSummary sum = Ok(store->XPendingSummary("s", "g"));
  CHECK(sum.count == 5);
  CHECK(sum.min_id == StreamId{1, 0});
  CHECK(sum.max_id == StreamId{5, 0});
  REQUIRE(sum.consumers.size() == 2);
  CHECK(sum.consumers[0] == std::make_pair(std::string("a"), uint64_t{2}));

  // History: a's own pending entries, delivery count bumped.
  StreamGroupReadSpec history = Read("a", 0);
  history.after = StreamId::Min();
  CHECK(Ms(*Ok(store->XReadGroup("s", history, 2000))) == std::vector<uint64_t>{1, 2});
  StreamPendingQuery all;
  all.count = 10;
  auto pel = Ok(store->XPendingRange("s", "g", all, 3000));
  REQUIRE(pel.size() == 5);
  CHECK(pel[0].delivery_count == 2);
  CHECK(pel[0].delivery_time_ms == 2000);
  CHECK(pel[4].consumer == "b");

  CHECK(Ok(store->XAck("s", "g", {StreamId{1, 0}, StreamId{1, 0}, StreamId{9, 0}})) == 1);
  CHECK(Ok(store->XAck("s", "nog", {StreamId{2, 0}})) == 0);

  // b dies: a claims its entries; a deleted entry leaves the PEL instead.
  CHECK(Ok(store->XDel("s", {StreamId{4, 0}})) == 1);
  StreamClaimSpec claim;
  claim.group = "g";
  claim.consumer = "a";
  claim.ids = {StreamId{3, 0}, StreamId{4, 0}};
  claim.delivery_time_ms = 4000;
  auto claimed = Ok(store->XClaim("s", claim, 4000));
  CHECK(Ms(claimed.claimed) == std::vector<uint64_t>{3});
  // An id named twice is claimed twice, as Redis, and moves (and counts) once.
  claim.ids = {StreamId{3, 0}, StreamId{3, 0}};
  CHECK(Ms(Ok(store->XClaim("s", claim, 4000)).claimed) == std::vector<uint64_t>{3, 3});
  CHECK(Ok(store->XPendingSummary("s", "g")).consumers ==
        std::vector<std::pair<std::string, uint64_t>>{{"a", 2}, {"b", 1}});
  sum = Ok(store->XPendingSummary("s", "g"));
  CHECK(sum.count == 3);  // 2, 3 (a), 5 (b)
  auto autoclaim = Ok(store->XAutoClaim("s", "g", "c", 0, StreamId::Min(), 10, false, 5000));
  CHECK(Ms(autoclaim.claimed) == std::vector<uint64_t>{2, 3, 5});
  CHECK(autoclaim.next == StreamId::Min());
  StreamPendingQuery of_a = all;
  of_a.consumer = "a";
  CHECK(Ok(store->XPendingRange("s", "g", of_a, 5000)).empty());

  CHECK(Ok(store->XGroupDelConsumer("s", "g", "c")) == 3);
  CHECK(Ok(store->XPendingSummary("s", "g")).count == 0);
  auto groups = Ok(store->XInfoGroups("s"));
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].consumers == 2);
  CHECK(groups[0].entries_read == 5);
  CHECK(groups[0].lag == std::optional<int64_t>(0));
  CHECK(Ok(store->XGroupDestroy("s", "g")));
  CHECK_FALSE(Ok(store->XGroupDestroy("s", "g")));
  CHECK(Ok(store->XInfoGroups("s")).empty());

  // DEL drops the groups with the stream.
  REQUIRE(store->XGroupCreate("s", "g", StreamId::Min(), false, -1).ok());
  CHECK(Ok(store->Del({"s"})) == 1);
  Add(*store, "s", 10);
  CHECK(Ok(store->XInfoGroups("s")).empty());
  CHECK(store->XPendingSummary("s", "g").status().message() == kNoStreamGroup);
}

TEST_CASE_METHOD(StoreFixture, "Stream groups: a drained PEL costs bounded work per call",
                 "[storage][stream][group][drain]") {
  const uint64_t n = 10000;
  for (uint64_t i = 1; i <= n; ++i) Add(*store, "q", i);
  REQUIRE(store->XGroupCreate("q", "g", StreamId::Min(), false, -1).ok());
  PerfScope perf;
  uint64_t worst = 0;
  const char* where = "";
  auto measure = [&](const std::function<void()>& op) {
    perf.Reset();
    op();
    const uint64_t skipped = perf.Read().Skipped();
    if (skipped > kBound) WARN(where << ": " << skipped);
    worst = std::max(worst, skipped);
  };
  // Deliver in batches of 10 to two consumers and acknowledge in order: a queue.
  for (uint64_t done = 0; done < n; done += 10) {
    measure([&] {
      auto got = Ok(store->XReadGroup("q", Read(done % 20 ? "a" : "b", 10), 1));
      REQUIRE(got);
      REQUIRE(got->size() == 10);
    });
    for (uint64_t i = done + 1; i <= done + 10; ++i) {
      measure([&] { REQUIRE(Ok(store->XAck("q", "g", {StreamId{i, 0}})) == 1); });
    }
  }
  const char* report = std::getenv("ROCKCACHE_DRAIN_REPORT");
  if (report && *report && *report != '0') {
    std::printf("deliver + ack a queue of %llu: worst skipped/op %llu\n", (unsigned long long)n,
                (unsigned long long)worst);
  }
  CHECK(worst <= kBound);
  // Drained: every read of the PEL, of a consumer's history, a claim and new deliveries are
  // bounded work, not a walk over the 10,000 acknowledgements.
  worst = 0;
  StreamPendingQuery all;
  all.count = 10;
  where = "drained reads";
  measure([&] { CHECK(Ok(store->XPendingSummary("q", "g")).count == 0); });
  measure([&] { CHECK(Ok(store->XPendingRange("q", "g", all, 2)).empty()); });
  StreamGroupReadSpec history = Read("a", 10);
  history.after = StreamId::Min();
  measure([&] { CHECK(Ok(store->XReadGroup("q", history, 2))->empty()); });
  measure([&] {
    auto r = Ok(store->XAutoClaim("q", "g", "c", 0, StreamId::Min(), 10, false, 2));
    CHECK(r.claimed.empty());
  });
  for (uint64_t i = n + 1; i <= n + 50; ++i) {
    where = "one at a time";
    Add(*store, "q", i);
    measure([&] { REQUIRE(Ok(store->XReadGroup("q", Read("a", 1), 3))->size() == 1); });
    measure([&] { CHECK(Ok(store->XPendingRange("q", "g", all, 3)).size() == 1); });
    measure(
        [&] { CHECK(Ms(*Ok(store->XReadGroup("q", history, 3))) == std::vector<uint64_t>{i}); });
    measure([&] { REQUIRE(Ok(store->XAck("q", "g", {StreamId{i, 0}})) == 1); });
  }
  // Acknowledgements from the newest end move the upper bound the same way.
  uint64_t summary_worst = 0;
  for (uint64_t i = n + 51; i <= n + 250; ++i) Add(*store, "q", i);
  REQUIRE(Ok(store->XReadGroup("q", Read("b", 0), 4))->size() == 200);
  for (uint64_t i = n + 250; i > n + 50; --i) {
    where = "newest first";
    measure([&] { REQUIRE(Ok(store->XAck("q", "g", {StreamId{i, 0}})) == 1); });
    // The summary lists every consumer (3 here), as Redis does: each consumer record read may
    // step over its own recent overwrites in the memtable, up to RocksDB's reseek threshold
    // (max_sequential_skip_in_iterations, 8), so its bound is per consumer.
    perf.Reset();
    (void)Ok(store->XPendingSummary("q", "g"));
    summary_worst = std::max(summary_worst, perf.Read().Skipped());
  }
  CHECK(summary_worst <= 3 * kBound);
  if (report && *report && *report != '0') {
    std::printf("drained PEL reads, deliveries, acks: worst skipped/op %llu\n",
                (unsigned long long)worst);
  }
  CHECK(worst <= kBound);
}

TEST_CASE_METHOD(StoreFixture,
                 "Stream groups: a stuck entry does not make later acknowledgements walk the PEL",
                 "[storage][stream][group][drain]") {
  // A consumer died holding entry 1 (a poison message); the others deliver and acknowledge
  // 5,000 entries in batches of 10, the newest of each batch last: each such ack moves the
  // PEL's upper bound down to the stuck entry, past every earlier acknowledgement.
  Add(*store, "q", 1);
  REQUIRE(store->XGroupCreate("q", "g", StreamId::Min(), false, -1).ok());
  REQUIRE(Ok(store->XReadGroup("q", Read("dead", 1), 1))->size() == 1);
  PerfScope perf;
  uint64_t worst = 0;
  auto measure = [&](const std::function<void()>& fn) {
    perf.Reset();
    fn();
    const uint64_t skipped = perf.Read().Skipped();
    worst = std::max(worst, skipped);
  };
  StreamPendingQuery first10;
  first10.count = 10;
  for (uint64_t base = 2; base < 5002; base += 10) {
    for (uint64_t i = base; i < base + 10; ++i) Add(*store, "q", i);
    measure([&] { REQUIRE(Ok(store->XReadGroup("q", Read("w", 10), 2))->size() == 10); });
    for (uint64_t i = base; i < base + 10; ++i) {
      measure([&] { REQUIRE(Ok(store->XAck("q", "g", {StreamId{i, 0}})) == 1); });
    }
    measure([&] { REQUIRE(Ok(store->XPendingRange("q", "g", first10, 3)).size() == 1); });
    measure([&] {
      auto r = Ok(store->XAutoClaim("q", "g", "x", 3600000, StreamId::Min(), 10, true, 3));
      REQUIRE(r.claimed.empty());
    });
  }
  const char* report = std::getenv("ROCKCACHE_DRAIN_REPORT");
  if (report && *report && *report != '0') {
    std::printf("stuck entry + 5000 acks: worst skipped/op %llu\n", (unsigned long long)worst);
  }
  // The acknowledgement of each batch's newest entry walks back over that batch's earlier
  // acknowledgements (a reverse step meets each one's Put and Delete), never over older batches:
  // a bound by the batch size (10), whatever the history.
  CHECK(worst <= 4 * 10);
  StreamPendingSummary sum = Ok(store->XPendingSummary("q", "g"));
  CHECK(sum.count == 1);
  CHECK(sum.max_id == StreamId{1, 0});
}

}  // namespace rockcache::storage::stream_group_test
