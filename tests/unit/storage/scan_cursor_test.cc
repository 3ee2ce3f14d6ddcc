// SCAN-family cursors carry their own position (storage/scan_cursor.h): any number of concurrent
// scanners finish, each seeing every key present throughout, even when keys share long prefixes
// and when the bounded table of exact positions has forgotten theirs.
#include "storage/scan_cursor.h"

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::storage::scan_cursor_test {
namespace {

using testing::Ok;
using testing::StoreFixture;

TEST_CASE("Scan cursor encoding round-trips and never yields 0", "[storage][scan]") {
  for (std::string p : {std::string("a"), std::string("\0\0", 2), std::string("abcde"),
                        std::string("\xff\xff\xff\xff\xff", 5)}) {
    for (uint32_t id : {0u, 1u, (1u << kCursorIdBits) - 1}) {
      uint64_t c = EncodeScanCursor(p, id);
      CHECK(c != 0);
      DecodedCursor d = DecodeScanCursor(c);
      CHECK(d.valid);
      CHECK(d.prefix == p);
      CHECK(d.id == id);
    }
  }
  CHECK_FALSE(DecodeScanCursor(0).valid);
  CHECK_FALSE(DecodeScanCursor(12345).valid);  // length bits 0: not a cursor we produce
}

// Keys sharing a 20-byte prefix, so resuming needs the exact position, not the 5-byte prefix.
std::string LongKey(int i) { return "session:user:profile:" + std::to_string(100000 + i); }

std::set<std::string> ScanAll(Store* store, uint64_t count, const std::string& pattern = "") {
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    auto r = Ok(store->Scan(cursor, pattern, count, std::nullopt));
    seen.insert(r.keys.begin(), r.keys.end());
    cursor = r.next_cursor;
    REQUIRE(++calls < 1000000);
  } while (cursor != 0);
  return seen;
}

TEST_CASE_METHOD(StoreFixture, "200 concurrent SCANs each see every key", "[storage][scan]") {
  const int kKeys = 3000;
  std::set<std::string> all;
  for (int i = 0; i < kKeys; ++i) {
    all.insert(LongKey(i));
    REQUIRE(store->Set(LongKey(i), "v", SetOptions()).ok());
  }
  for (int i = 0; i < 50; ++i) REQUIRE(store->Set("k" + std::to_string(i), "v", {}).ok());
  for (int i = 0; i < 50; ++i) all.insert("k" + std::to_string(i));
  std::atomic<int> complete{0};
  std::atomic<bool> stop{false};
  // Churn beside the scanners: keys that come and go (not "present throughout").
  std::thread churn([&] {
    for (int i = 0; !stop.load(); ++i) {
      std::string k = "session:user:profile:1" + std::to_string(i % 5000) + "x";
      (void)store->Set(k, "t", {});
      (void)store->Del({k});
    }
  });
  std::vector<std::thread> scanners;
  for (int t = 0; t < 200; ++t) {
    scanners.emplace_back([&, t] {
      std::set<std::string> seen;
      uint64_t cursor = 0;
      do {
        auto r = store->Scan(cursor, "", 1 + t % 17, std::nullopt);
        if (!r.ok()) return;
        seen.insert(r->keys.begin(), r->keys.end());
        cursor = r->next_cursor;
      } while (cursor != 0);
      bool ok = true;
      for (const auto& k : all) ok = ok && seen.count(k);
      if (ok) complete.fetch_add(1);
    });
  }
  for (auto& th : scanners) th.join();
  stop = true;
  churn.join();
  CHECK(complete.load() == 200);
}

TEST_CASE_METHOD(StoreFixture, "A SCAN whose exact position was forgotten resumes, not restarts",
                 "[storage][scan]") {
  const int kKeys = 400;
  std::set<std::string> all;
  for (int i = 0; i < kKeys; ++i) {
    all.insert(LongKey(i));
    REQUIRE(store->Set(LongKey(i), "v", {}).ok());
  }
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    auto r = Ok(store->Scan(cursor, "", 3, std::nullopt));
    seen.insert(r.keys.begin(), r.keys.end());
    cursor = r.next_cursor;
    if (++calls == 5) {
      // 70,000 other cursors: more than the table holds, so this scanner's entry is gone.
      uint64_t other = 0;
      for (int i = 0; i < 70000; ++i) {
        other = Ok(store->Scan(other, "", 1, std::nullopt)).next_cursor;
      }
    }
    REQUIRE(calls < 10000);
  } while (cursor != 0);
  CHECK(seen == all);
}

TEST_CASE_METHOD(StoreFixture, "SCAN with MATCH and tiny COUNT over keys with one long prefix",
                 "[storage][scan]") {
  std::set<std::string> all;
  for (int i = 0; i < 500; ++i) {
    all.insert(LongKey(i));
    REQUIRE(store->Set(LongKey(i), "v", {}).ok());
  }
  CHECK(ScanAll(store.get(), 1) == all);
  CHECK(ScanAll(store.get(), 1, "*7").size() == 50);
}

TEST_CASE_METHOD(StoreFixture, "Concurrent HSCAN / SSCAN / ZSCAN see every member",
                 "[storage][scan]") {
  std::vector<std::string> fields;
  for (int i = 0; i < 2000; ++i) fields.push_back("field:with:a:long:prefix:" + std::to_string(i));
  std::vector<std::pair<std::string_view, std::string_view>> fv;
  std::vector<std::string_view> members;
  std::vector<std::pair<double, std::string_view>> scored;
  for (const auto& f : fields) {
    fv.emplace_back(f, "v");
    members.push_back(f);
    scored.emplace_back(1.0, f);
  }
  Ok(store->HSet("h", fv));
  Ok(store->SAdd("s", members));
  Ok(store->ZAdd("z", scored, ZAddOptions()));
  const std::set<std::string> all(fields.begin(), fields.end());
  std::atomic<int> complete{0};
  std::vector<std::thread> scanners;
  for (int t = 0; t < 60; ++t) {
    scanners.emplace_back([&, t] {
      std::set<std::string> h, s, z;
      uint64_t ch = 0, cs = 0, cz = 0;
      const uint64_t count = 1 + t % 13;
      do {
        auto r = store->HScan("h", ch, "", count);
        if (!r.ok()) return;
        for (auto& [f, v] : r->items) h.insert(f);
        ch = r->next_cursor;
      } while (ch != 0);
      do {
        auto r = store->SScan("s", cs, "", count);
        if (!r.ok()) return;
        s.insert(r->keys.begin(), r->keys.end());
        cs = r->next_cursor;
      } while (cs != 0);
      do {
        auto r = store->ZScan("z", cz, "", count);
        if (!r.ok()) return;
        for (auto& m : r->items) z.insert(m.member);
        cz = r->next_cursor;
      } while (cz != 0);
      if (h == all && s == all && z == all) complete.fetch_add(1);
    });
  }
  for (auto& th : scanners) th.join();
  CHECK(complete.load() == 60);
}

}  // namespace
}  // namespace rockcache::storage::scan_cursor_test
