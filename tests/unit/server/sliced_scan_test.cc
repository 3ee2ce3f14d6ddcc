// SlicedScan (server/slicing/sliced_scan.h) over a real store: steps of slice-items entries chain
// the store's cursors into the reply of one big scan, in the database the scan started in,
// writing nothing before the last step, and stop at the byte room.
#include "server/slicing/sliced_scan.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "config/current_db.h"
#include "server/protocol/reply.h"
#include "server/settings.h"
#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::server::sliced_scan_test {
namespace {

using storage::testing::Ok;
using storage::testing::StoreFixture;

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k:%04d", i);
  return buf;
}

// Steps `scan` until complete; REQUIREs that only the last step wrote. Returns the reply.
std::string RunSteps(SlicedRead& scan, const Settings& settings, int* steps) {
  std::string out;
  bool complete = false;
  *steps = 0;
  while (!complete) {
    REQUIRE(out.empty());
    REQUIRE(scan.Step(settings, &out, &complete).ok());
    ++*steps;
    REQUIRE(*steps < 100000);
  }
  return out;
}

}  // namespace

TEST_CASE("a sliced scan chains cursors into one big scan's reply", "[sliced_scan]") {
  StoreFixture f;
  constexpr int kKeys = 300;
  {
    DbScope scope(1);  // the scan's database; the steps run from database 0
    for (int i = 0; i < kKeys; ++i) Ok(f.store->Set(Key(i), "v", {}));
    std::vector<std::pair<std::string_view, std::string_view>> fv = {{"f", "v"}};
    Ok(f.store->HSet("k:hash", fv));
  }
  Ok(f.store->Set("elsewhere", "v", {}));  // database 0: never seen
  Settings settings;
  settings.slice_items = 7;
  settings.slice_usec = 10 * 1000 * 1000;

  ScanRequest request;
  request.target = ScanTarget::kKeys;
  request.count = 1000000;
  int steps = 0;
  auto scan = NewSlicedScan(f.store.get(), 1, request, storage::kNoByteLimit);
  std::string expected;
  AppendArrayHeader(&expected, 2);
  AppendBulk(&expected, "0");
  AppendArrayHeader(&expected, kKeys + 1);
  for (int i = 0; i < kKeys; ++i) AppendBulk(&expected, Key(i));
  AppendBulk(&expected, "k:hash");
  CHECK(RunSteps(*scan, settings, &steps) == expected);
  CHECK(steps >= kKeys / 7);

  SECTION("the type filter and the pattern apply to every step") {
    request.type = storage::KeyType::kHash;
    scan = NewSlicedScan(f.store.get(), 1, request, storage::kNoByteLimit);
    CHECK(RunSteps(*scan, settings, &steps) == "*2\r\n$1\r\n0\r\n*1\r\n$6\r\nk:hash\r\n");
    request.type.reset();
    request.pattern = "k:02*";
    scan = NewSlicedScan(f.store.get(), 1, request, storage::kNoByteLimit);
    std::string reply = RunSteps(*scan, settings, &steps);
    CHECK(reply.rfind("*2\r\n$1\r\n0\r\n*100\r\n$6\r\nk:0200\r\n", 0) == 0);
  }
  SECTION("COUNT bounds the entries examined: a cursor to go on with") {
    request.count = 20;
    scan = NewSlicedScan(f.store.get(), 1, request, storage::kNoByteLimit);
    std::string reply = RunSteps(*scan, settings, &steps);
    CHECK(steps == 3);  // 7 + 7 + 6
    CHECK(reply.rfind("*2\r\n$1\r\n0\r\n", 0) != 0);
    CHECK(reply.find("*20\r\n") != std::string::npos);
  }
  SECTION("past the byte room the step reports OverLimit") {
    scan = NewSlicedScan(f.store.get(), 1, request, 1000);  // about 18 keys' worth
    std::string out;
    bool complete = false;
    Status s;
    for (int i = 0; i < 100 && s.ok() && !complete; ++i) s = scan->Step(settings, &out, &complete);
    CHECK(s.IsOverLimit());
    CHECK(out.empty());
  }
  SECTION("a collection: HSCAN / SSCAN / ZSCAN items in steps") {
    DbScope scope(1);
    std::vector<std::string> members;
    for (int i = 0; i < 100; ++i) members.push_back(Key(i));
    std::vector<std::string_view> views(members.begin(), members.end());
    Ok(f.store->SAdd("set", views));
    ScanRequest sscan;
    sscan.target = ScanTarget::kSet;
    sscan.key = "set";
    sscan.pattern = "*";
    sscan.count = 1000;
    scan = NewSlicedScan(f.store.get(), 1, sscan, storage::kNoByteLimit);
    std::string reply = RunSteps(*scan, settings, &steps);
    CHECK(steps >= 100 / 7);
    CHECK(reply.rfind("*2\r\n$1\r\n0\r\n*100\r\n$6\r\nk:0000\r\n", 0) == 0);
    sscan.target = ScanTarget::kHash;  // the set is another type now: WRONGTYPE is the reply
    scan = NewSlicedScan(f.store.get(), 1, sscan, storage::kNoByteLimit);
    CHECK(RunSteps(*scan, settings, &steps).rfind("-WRONGTYPE", 0) == 0);
  }
}

}  // namespace rockcache::server::sliced_scan_test
