// The overlay's collection cursors (storage/overlay_cursor.h): inside a transaction or an indexed
// group, a run of pops reads each head one step after the previous one instead of seeking again.
// The tests check the results against a model while members come and go in every way the
// cursor's memory must survive (pops from both ends, re-adding popped members, adding below the
// head, removing ahead of it, reads in between), and count RocksDB's memtable seeks and gets to
// show the reuse (PerfContext: counts, no timing).
#include "storage/overlay_cursor.h"

#include <rocksdb/db.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "storage/store.h"
#include "storage/tx_overlay.h"
#include "tests/support/store_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using rockcache::storage::testing::Ok;
using rockcache::storage::testing::StoreFixture;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace overlay_cursor_test {

namespace {

std::string Member(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "m%03d", i);
  return buf;
}

// Opens a transaction or an indexed group (the two owners of an overlay).
std::unique_ptr<WriteGroup> Open(Store* store, bool atomic) {
  auto group = store->OpenWriteGroup();
  if (atomic) {
    group->BeginAtomic();
  } else {
    group->BeginIndexed();
  }
  return group;
}

struct PerfCounts {
  uint64_t memtable_seeks = 0;
  uint64_t memtable_gets = 0;
};

template <typename Fn>
PerfCounts Count(Fn fn) {
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  fn();
  PerfCounts c;
  c.memtable_seeks = rocksdb::get_perf_context()->seek_on_memtable_count;
  c.memtable_gets = rocksdb::get_perf_context()->get_from_memtable_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  return c;
}

}  // namespace

// The cursor's contract, checked directly against a RocksDB database: after SeekForward(t) it is
// on a database key k >= t with its value, and every database key in [t, k) has a pending write
// in the overlay (those the overlay decides may be skipped); Next() moves on the same way, and
// backward alike. Random seeks back and forth within what it walked, steps, and pending writes.
TEST_CASE("a cursor lands where a fresh iterator would, but for keys the overlay decides",
          "[storage][cursor]") {
  testing::TempDir dir;
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(options, dir.path(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  std::map<std::string, std::string> keys;  // the database's keys of the collection "c/"
  for (int i = 0; i < 60; i += 1 + i % 3) {
    char k[16];
    std::snprintf(k, sizeof(k), "c/%03d", i);
    // Small values are replayed from memory, big ones must be pending to be skipped.
    keys[k] = std::string(i % 5 == 0 ? 300 : 3, static_cast<char>('a' + i % 26));
    REQUIRE(db->Put(rocksdb::WriteOptions(), k, keys[k]).ok());
  }
  REQUIRE(db->Put(rocksdb::WriteOptions(), "b/000", "before").ok());
  REQUIRE(db->Put(rocksdb::WriteOptions(), "d/000", "after").ok());
  std::mt19937 rng(GENERATE(1, 2, 3, 4));
  TxOverlay tx(nullptr);
  CollectionCursor cursor(db.get(), cf, "c/");
  bool forward = true;
  std::string target;
  // Checks the position after a seek to (or a step from) `from`.
  auto check = [&](bool from_inclusive) {
    REQUIRE(cursor.status().ok());
    auto it = forward ? keys.lower_bound(target) : keys.end();
    if (forward) {
      if (!from_inclusive && it != keys.end() && it->first == target) ++it;
      while (it != keys.end() && tx.Find(cf->GetID(), it->first) != nullptr &&
             (!cursor.Valid() || it->first != cursor.key().ToString())) {
        ++it;  // skipped: the overlay decides it
      }
      if (it == keys.end()) {
        REQUIRE(!cursor.Valid());
        return;
      }
    } else {
      auto up = keys.upper_bound(target);
      if (!from_inclusive && up != keys.begin() && std::prev(up)->first == target) --up;
      while (up != keys.begin() && tx.Find(cf->GetID(), std::prev(up)->first) != nullptr &&
             (!cursor.Valid() || std::prev(up)->first != cursor.key().ToString())) {
        --up;
      }
      if (up == keys.begin()) {
        REQUIRE(!cursor.Valid());
        return;
      }
      it = std::prev(up);
    }
    REQUIRE(cursor.Valid());
    REQUIRE(cursor.key().ToString() == it->first);
    REQUIRE(cursor.value().ToString() == it->second);
    target = it->first;
  };
  for (int op = 0; op < 3000; ++op) {
    const int kind = static_cast<int>(rng() % 10);
    char t[16];
    std::snprintf(t, sizeof(t), "c/%03d", static_cast<int>(rng() % 62));
    if (kind < 3) {  // seek near the last position (often behind it, within what was walked)
      std::string near = target.empty() ? std::string(t) : target;
      if (near.size() == 5 && rng() % 2 == 0) {
        int n = std::atoi(near.c_str() + 2) - static_cast<int>(rng() % 8) + 3;
        std::snprintf(t, sizeof(t), "c/%03d", std::clamp(n, 0, 61));
      }
      if (rng() % 8 == 0) forward = !forward;
      target = t;
      forward ? cursor.SeekForward(target, tx) : cursor.SeekBackward(target, tx);
      check(true);
    } else if (kind < 7) {  // steps
      if (!cursor.Valid()) continue;
      forward ? cursor.Next() : cursor.Prev();
      check(false);
    } else if (kind < 9) {  // a pending write: a delete (a pop) or a put
      if (rng() % 2 == 0) {
        REQUIRE(tx.Delete(cf, t).ok());
      } else {
        REQUIRE(tx.Put(cf, t, "pending").ok());
      }
    } else {  // a fresh seek from anywhere
      target = t;
      forward = rng() % 2 == 0;
      forward ? cursor.SeekForward(target, tx) : cursor.SeekBackward(target, tx);
      check(true);
    }
  }
  INFO("seeks " << cursor.seeks() << ", reused " << cursor.reused());
  CHECK(cursor.reused() > 100);
}

TEST_CASE_METHOD(StoreFixture, "pops in one overlay match a model while members come and go",
                 "[storage][group][transaction][cursor]") {
  const bool atomic = GENERATE(true, false);
  std::mt19937 rng(atomic ? 11 : 12);
  for (int round = 0; round < 12; ++round) {
    const std::string key = "z" + std::to_string(round);
    std::map<std::string, double> model;
    std::vector<std::pair<double, std::string>> base;
    for (int i = 0; i < 80; ++i) {
      if (rng() % 3 == 0) continue;
      base.emplace_back(static_cast<double>(rng() % 40), Member(i));
      model[base.back().second] = base.back().first;
    }
    std::vector<std::pair<double, std::string_view>> add(base.begin(), base.end());
    Ok(store->ZAdd(key, add, ZAddOptions()));
    auto sorted = [&] {
      std::vector<std::pair<double, std::string>> v;
      for (const auto& [m, s] : model) v.emplace_back(s, m);
      std::sort(v.begin(), v.end());
      return v;
    };
    auto group = Open(store.get(), atomic);
    for (int op = 0; op < 60; ++op) {
      const int kind = static_cast<int>(rng() % 10);
      if (kind < 5) {  // the run of pops the cursor is for
        const uint64_t count = 1 + rng() % 3;
        auto want = sorted();
        want.resize(std::min<size_t>(want.size(), count));
        std::vector<std::pair<double, std::string>> got;
        for (auto& sm : Ok(store->ZPopMin(key, count))) got.emplace_back(sm.score, sm.member);
        REQUIRE(got == want);
        for (const auto& [s, m] : want) model.erase(m);
      } else if (kind == 5) {  // from the other end, a run of them
        for (uint64_t n = 1 + rng() % 4; n > 0; --n) {
          auto want = sorted();
          auto got = Ok(store->ZPopMax(key, 1));
          if (want.empty()) {
            REQUIRE(got.empty());
          } else {
            REQUIRE(got.size() == 1);
            REQUIRE(got[0].member == want.back().second);
            model.erase(want.back().second);
          }
        }
      } else if (kind <= 7) {  // (re)add any member, often one popped before, often below the head
        const std::string m = Member(static_cast<int>(rng() % 80));
        const double score = static_cast<double>(rng() % 40) - (kind == 7 ? 40 : 0);
        Ok(store->ZAdd(key, {{score, m}}, ZAddOptions()));
        model[m] = score;
      } else if (kind == 8) {  // remove ahead of the head
        const std::string m = Member(static_cast<int>(rng() % 80));
        Ok(store->ZRem(key, {m}));
        model.erase(m);
      } else if (rng() % 2 == 0) {  // a full read in between
        std::vector<std::pair<double, std::string>> got;
        for (auto& sm : Ok(store->ZRange(key, ZRangeSpec()))) got.emplace_back(sm.score, sm.member);
        REQUIRE(got == sorted());
      } else {  // a read that walks the head without removing it (steps over live members)
        ZRangeSpec first;  // from either end
        first.start = 0;
        first.stop = static_cast<int64_t>(rng() % 4);
        first.reverse = rng() % 2 == 0;
        auto want = sorted();
        want.resize(std::min<size_t>(want.size(), static_cast<size_t>(first.stop) + 1));
        REQUIRE(Ok(store->ZRangeStore(key + "-copy", key, first)) ==
                static_cast<int64_t>(want.size()));
      }
      CHECK(Ok(store->ZCard(key)) == static_cast<int64_t>(model.size()));
    }
    REQUIRE(group->Commit().ok());
    std::vector<std::pair<double, std::string>> got;
    for (auto& sm : Ok(store->ZRange(key, ZRangeSpec()))) got.emplace_back(sm.score, sm.member);
    REQUIRE(got == sorted());
  }
}

TEST_CASE_METHOD(StoreFixture, "list pops in one overlay match a model with pushes between them",
                 "[storage][group][transaction][cursor]") {
  const bool atomic = GENERATE(true, false);
  std::mt19937 rng(atomic ? 21 : 22);
  int next = 0;
  for (int round = 0; round < 12; ++round) {
    const std::string key = "l" + std::to_string(round);
    std::deque<std::string> model;
    std::vector<std::string> items;
    for (int i = 0; i < 40; ++i) items.push_back("v" + std::to_string(next++));
    Ok(store->RPush(key, std::vector<std::string_view>(items.begin(), items.end())));
    model.assign(items.begin(), items.end());
    auto group = Open(store.get(), atomic);
    for (int op = 0; op < 60; ++op) {
      const int kind = static_cast<int>(rng() % 8);
      if (kind < 4) {
        const uint64_t count = 1 + rng() % 3;
        auto got = Ok(store->LPop(key, count));
        std::vector<std::string> want(model.begin(),
                                      model.begin() + std::min<size_t>(model.size(), count));
        if (model.empty()) {
          REQUIRE_FALSE(got.has_value());
        } else {
          REQUIRE(got.has_value());
          REQUIRE(*got == want);
        }
        for (size_t i = 0; i < want.size(); ++i) model.pop_front();
      } else if (kind == 4) {  // from the tail, a run of them
        for (uint64_t n = 1 + rng() % 4; n > 0; --n) {
          auto got = Ok(store->RPop(key, 1));
          if (!model.empty()) {
            REQUIRE(got.has_value());
            REQUIRE(got->at(0) == model.back());
            model.pop_back();
          }
        }
      } else if (kind == 5) {  // a push at the head: an index below the cursor's position
        const std::string v = "v" + std::to_string(next++);
        Ok(store->LPush(key, {v}));
        model.push_front(v);
      } else if (kind == 6) {
        const std::string v = "v" + std::to_string(next++);
        Ok(store->RPush(key, {v}));
        model.push_back(v);
      } else {
        auto got = Ok(store->LRange(key, 0, -1));
        REQUIRE(got == std::vector<std::string>(model.begin(), model.end()));
      }
    }
    REQUIRE(group->Commit().ok());
    auto got = Ok(store->LRange(key, 0, -1));
    REQUIRE(got == std::vector<std::string>(model.begin(), model.end()));
  }
}

TEST_CASE_METHOD(StoreFixture, "set pops in one overlay match a model while members come and go",
                 "[storage][group][transaction][cursor]") {
  const bool atomic = GENERATE(true, false);
  std::mt19937 rng(atomic ? 21 : 22);
  for (int round = 0; round < 12; ++round) {
    const std::string key = "s" + std::to_string(round);
    std::set<std::string> model;
    std::vector<std::string> base;
    for (int i = 0; i < 120; ++i) {
      if (rng() % 3 == 0) continue;
      base.push_back(Member(i));
      model.insert(base.back());
    }
    Ok(store->SAdd(key, std::vector<std::string_view>(base.begin(), base.end())));
    auto group = Open(store.get(), atomic);
    for (int op = 0; op < 150; ++op) {
      const int kind = static_cast<int>(rng() % 10);
      const std::string m = Member(static_cast<int>(rng() % 120));
      if (kind < 6) {  // SPOP of 1 to 3
        const uint64_t count = 1 + rng() % 3;
        auto got = Ok(store->SPop(key, count));
        REQUIRE(got.size() == std::min<uint64_t>(count, model.size()));
        for (const auto& g : got) REQUIRE(model.erase(g) == 1);
      } else if (kind < 8) {  // re-add a member, popped or not (below or above the front)
        std::vector<std::string_view> one = {m};
        REQUIRE(Ok(store->SAdd(key, one)) == (model.insert(m).second ? 1 : 0));
      } else if (kind < 9) {  // remove one, possibly inside the window SPOP looked at
        std::vector<std::string_view> one = {m};
        REQUIRE(Ok(store->SRem(key, one)) == static_cast<int64_t>(model.erase(m)));
      } else {  // a read of the whole set in between
        auto all = Ok(store->SMembers(key));
        REQUIRE(std::set<std::string>(all.begin(), all.end()) == model);
      }
      REQUIRE(Ok(store->SCard(key)) == static_cast<int64_t>(model.size()));
    }
    REQUIRE(group->Commit().ok());
    auto all = Ok(store->SMembers(key));
    REQUIRE(std::set<std::string>(all.begin(), all.end()) == model);
  }
}

TEST_CASE_METHOD(StoreFixture, "a run of pops in one overlay seeks once, not once per pop",
                 "[storage][group][transaction][cursor]") {
  const bool atomic = GENERATE(true, false);
  constexpr int kItems = 2000;
  std::vector<std::pair<double, std::string>> members;
  std::vector<std::string> items;
  for (int i = 0; i < kItems; ++i) {
    members.emplace_back(i, "m" + std::to_string(i));
    items.push_back("v" + std::to_string(i));
  }
  Ok(store->ZAdd("queue",
                 std::vector<std::pair<double, std::string_view>>(members.begin(), members.end()),
                 ZAddOptions()));
  Ok(store->RPush("list", std::vector<std::string_view>(items.begin(), items.end())));
  std::vector<std::string_view> set_members;
  for (const auto& m : members) set_members.push_back(m.second);
  Ok(store->SAdd("set", set_members));

  auto group = Open(store.get(), atomic);
  // Without the cursor: two memtable seeks per ZPOPMIN (the read, the hint), one memtable get
  // per LPOP for the element. With it, a handful for the whole run.
  PerfCounts z = Count([&] {
    for (int i = 0; i < 500; ++i) {
      auto got = Ok(store->ZPopMin("queue", 1));
      REQUIRE(got.size() == 1);
      REQUIRE(got[0].member == "m" + std::to_string(i));
    }
  });
  PerfCounts l = Count([&] {
    for (int i = 0; i < 500; ++i) {
      auto got = Ok(store->LPop("list", 1));
      REQUIRE(got.has_value());
      REQUIRE(got->at(0) == "v" + std::to_string(i));
    }
  });
  // And from the other ends (ZPOPMAX, RPOP).
  PerfCounts zmax = Count([&] {
    for (int i = kItems - 1; i >= kItems - 500; --i) {
      auto got = Ok(store->ZPopMax("queue", 1));
      REQUIRE(got.size() == 1);
      REQUIRE(got[0].member == "m" + std::to_string(i));
    }
  });
  PerfCounts r = Count([&] {
    for (int i = kItems - 1; i >= kItems - 500; --i) {
      auto got = Ok(store->RPop("list", 1));
      REQUIRE(got.has_value());
      REQUIRE(got->at(0) == "v" + std::to_string(i));
    }
  });
  // SPOP re-reads the members it looked at and left: the cursor replays them.
  std::set<std::string> spopped;
  PerfCounts sp = Count([&] {
    for (int i = 0; i < 500; ++i) {
      auto got = Ok(store->SPop("set", 1));
      REQUIRE(got.size() == 1);
      REQUIRE(spopped.insert(got[0]).second);
    }
  });
  REQUIRE(group->Commit().ok());
  INFO("spop memtable seeks " << sp.memtable_seeks);
  CHECK(sp.memtable_seeks < 10);
  CHECK(Ok(store->SCard("set")) == kItems - 500);
  INFO("memtable seeks: zpopmin " << z.memtable_seeks << ", zpopmax " << zmax.memtable_seeks
                                  << "; memtable gets (the meta reads are among them): lpop "
                                  << l.memtable_gets << ", rpop " << r.memtable_gets);
  CHECK(z.memtable_seeks < 10);
  CHECK(zmax.memtable_seeks < 10);
  // Each pop still reads its meta with a Get (in the default column family): 500 of them.
  CHECK(l.memtable_gets < 500 + 10);
  CHECK(r.memtable_gets < 500 + 10);
  CHECK(Ok(store->ZCard("queue")) == kItems - 1000);
  CHECK(Ok(store->LLen("list")) == kItems - 1000);
}

}  // namespace overlay_cursor_test
