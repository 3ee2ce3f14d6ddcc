// storage::WriteGroup::BeginIndexed: group commit of commands on the same key. The thread's
// reads see the group's pending writes without a RocksDB write per command; Commit writes them
// as one batch; FlushThreadWriteGroup and range deletions write what is pending and go on.
#include <rocksdb/iostats_context.h>
#include <rocksdb/perf_level.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <thread>
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
namespace indexed_group_test {

namespace {

struct IndexedFixture : StoreFixture {
  // What another thread (no group) reads: what is in RocksDB.
  template <typename Fn>
  auto Elsewhere(Fn fn) {
    decltype(fn()) out{};
    std::thread t([&] { out = fn(); });
    t.join();
    return out;
  }
  std::optional<std::string> GetElsewhere(std::string_view key) {
    return Elsewhere([&] { return Ok(store->Get(key)); });
  }
  int64_t LLenElsewhere(std::string_view key) {
    return Elsewhere([&] { return Ok(store->LLen(key)); });
  }
};

std::vector<std::string> Strings(std::initializer_list<const char*> items) {
  return std::vector<std::string>(items.begin(), items.end());
}

}  // namespace

TEST_CASE_METHOD(IndexedFixture, "an indexed group reads its pending writes; Commit writes them",
                 "[storage][group]") {
  auto group = store->OpenWriteGroup();
  REQUIRE(Ok(store->Set("s", "0", SetOptions())).written);  // plain: pending, unseen
  CHECK(Ok(store->Get("s")) == std::nullopt);
  group->BeginIndexed();  // writes what was pending, then indexes
  CHECK(GetElsewhere("s") == "0");
  for (int i = 0; i < 50; ++i) REQUIRE(Ok(store->LPush("hot", {std::to_string(i)})) == i + 1);
  CHECK(Ok(store->LRange("hot", 0, 1)) == Strings({"49", "48"}));
  CHECK(Ok(store->IncrBy("s", 5)) == 5);
  CHECK(Ok(store->SAdd("set", {"a", "b"})) == 2);
  CHECK(Ok(store->SAdd("set", {"b", "c"})) == 1);
  CHECK(Ok(store->DbSize()) == 3);
  // None of it is in RocksDB yet: 53 commands, no write.
  CHECK(LLenElsewhere("hot") == 0);
  CHECK(GetElsewhere("s") == "0");
  CHECK(group->pending() > 0);
  REQUIRE(group->Commit().ok());
  CHECK(LLenElsewhere("hot") == 50);
  CHECK(GetElsewhere("s") == "5");
  CHECK(Elsewhere([&] { return Ok(store->SCard("set")); }) == 3);
  CHECK(Elsewhere([&] { return Ok(store->DbSize()); }) == 3);
  // Back to a plain group after the Commit.
  REQUIRE(Ok(store->Set("t", "1", SetOptions())).written);
  CHECK(Ok(store->Get("t")) == std::nullopt);
  REQUIRE(group->Commit().ok());
  CHECK(Ok(store->Get("t")) == "1");
}

TEST_CASE_METHOD(IndexedFixture, "an indexed group's early flush writes and goes on indexing",
                 "[storage][group]") {
  auto group = store->OpenWriteGroup();
  group->BeginIndexed();
  REQUIRE(Ok(store->RPush("l", {"a"})) == 1);
  // A blocked client may only be served what is durable: the flush writes the overlay.
  REQUIRE(store->FlushThreadWriteGroup().ok());
  CHECK(LLenElsewhere("l") == 1);
  REQUIRE(Ok(store->RPush("l", {"b"})) == 2);  // still read through the overlay
  CHECK(Ok(store->LRange("l", 0, -1)) == Strings({"a", "b"}));
  CHECK(LLenElsewhere("l") == 1);
  REQUIRE(group->Commit().ok());
  CHECK(LLenElsewhere("l") == 2);
}

TEST_CASE_METHOD(IndexedFixture, "a range deletion in an indexed group stays a range deletion",
                 "[storage][group]") {
  std::vector<std::string> items;
  for (int i = 0; i < 300; ++i) items.push_back("e" + std::to_string(i));
  std::vector<std::string_view> views(items.begin(), items.end());
  REQUIRE(Ok(store->RPush("big", views)) == 300);
  auto group = store->OpenWriteGroup();
  group->BeginIndexed();
  REQUIRE(Ok(store->RPush("big", {"new"})) == 301);
  REQUIRE(store->LTrim("big", 200, -1).ok());  // > 64 removed: a range deletion
  // Written at once, after the pending push it was computed over (not as 200 point deletes).
  CHECK(LLenElsewhere("big") == 101);
  CHECK(Elsewhere([&] { return Ok(store->LRange("big", -1, -1)); }) == Strings({"new"}));
  REQUIRE(Ok(store->RPush("big", {"newer"})) == 102);  // indexed again
  CHECK(Ok(store->LRange("big", 0, 0)) == Strings({"e200"}));
  CHECK(Ok(store->LRange("big", -2, -1)) == Strings({"new", "newer"}));
  CHECK(LLenElsewhere("big") == 101);
  REQUIRE(group->Commit().ok());
  CHECK(LLenElsewhere("big") == 102);
  CHECK(Ok(store->LRange("big", 0, 1)) == Strings({"e200", "e201"}));
}

// Memtable insert hints (rocks_options.cc, CollectionPrefix): a run of writes into one list, then
// a range deletion of it in the next RocksDB write on the same thread. RocksDB 7.8 aborts if the
// range deletion is handed the run's hint; every range deletion is preceded by a hint breaker.
// (The test above aborted the same way before the breaker.)
TEST_CASE_METHOD(IndexedFixture, "a range deletion right after a run of writes into its list",
                 "[storage][group]") {
  std::vector<std::string> items;
  for (int i = 0; i < 200; ++i) items.push_back("e" + std::to_string(i));
  std::vector<std::string_view> views(items.begin(), items.end());
  int64_t len = 0;
  for (int round = 0; round < 3; ++round) {
    auto group = store->OpenWriteGroup();
    group->BeginIndexed();
    for (int i = 0; i < 5; ++i) REQUIRE(Ok(store->RPush("l", views)) == (len += 200));
    REQUIRE(store->LTrim("l", 150, -1).ok());  // > 64 removed: a range deletion
    len -= 150;
    REQUIRE(Ok(store->RPush("l", {"x", "y"})) == (len += 2));
    REQUIRE(group->Commit().ok());
  }
  CHECK(LLenElsewhere("l") == len);
  CHECK(Ok(store->LRange("l", -2, -1)) == Strings({"x", "y"}));
}

// A key written many times in one group reaches RocksDB once, with its last write: the WAL
// grows by one record per key, not per write (IOStatsContext counts the bytes this thread
// wrote), and every key ends as its last write left it, also after a reopen.
TEST_CASE_METHOD(IndexedFixture, "a key written many times in one group is written once",
                 "[storage][group]") {
  const bool atomic = GENERATE(false, true);
  Ok(store->Set("gone", "x", SetOptions()));
  Ok(store->HSet("h", {{"f", "0"}, {"g", "0"}}));
  auto group = store->OpenWriteGroup();
  if (atomic) {
    group->BeginAtomic();
  } else {
    group->BeginIndexed();
  }
  const std::string value(1000, 'v');
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_iostats_context()->Reset();
  for (int i = 0; i < 200; ++i) {
    REQUIRE(Ok(store->Set("hot", value + std::to_string(i), SetOptions())).written);
    CHECK(Ok(store->IncrBy("counter", 1)) == i + 1);
    Ok(store->HSet("h", {{"f", std::to_string(i)}}));
  }
  Ok(store->Del({"gone"}));                   // put before the group, deleted in it
  Ok(store->Set("back", "1", SetOptions()));  // put, deleted, put again
  Ok(store->Del({"back"}));
  Ok(store->Set("back", "2", SetOptions()));
  Ok(store->HDel("h", {"g"}));
  REQUIRE(group->Commit().ok());
  const uint64_t wal_bytes = rocksdb::get_iostats_context()->bytes_written;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  INFO("bytes written by the commit: " << wal_bytes);
  CHECK(wal_bytes < 10 * value.size());  // one copy of the value, not 200
  auto check = [&] {
    CHECK(Elsewhere([&] { return Ok(store->Get("hot")); }) == value + "199");
    CHECK(Elsewhere([&] { return Ok(store->Get("counter")); }) == "200");
    CHECK(Elsewhere([&] { return Ok(store->Get("gone")); }) == std::nullopt);
    CHECK(Elsewhere([&] { return Ok(store->Get("back")); }) == "2");
    CHECK(Elsewhere([&] { return Ok(store->HGet("h", "f")); }) == "199");
    CHECK(Elsewhere([&] { return Ok(store->HGet("h", "g")); }) == std::nullopt);
    CHECK(Elsewhere([&] { return Ok(store->HLen("h")); }) == 1);
    CHECK(Elsewhere([&] { return Ok(store->DbSize()); }) == 4);  // hot, counter, back, h
  };
  check();
  store.reset();  // reopen: the WAL replays to the same state
  Options o;
  o.dir = dir.path();
  store = Ok(Store::Open(o));
  check();
}

TEST_CASE_METHOD(IndexedFixture,
                 "a group reads a key it does not write once, and its own writes after",
                 "[storage][group]") {
  const bool atomic = GENERATE(false, true);
  Ok(store->SAdd("set", {"m"}));
  ZAddOptions ch;
  ch.ch = true;
  Ok(store->ZAdd("z", {{1.0, "m"}}, ch));
  auto group = store->OpenWriteGroup();
  if (atomic) {
    group->BeginAtomic();
  } else {
    group->BeginIndexed();
  }
  PerfScope perf;
  // 50 clients' SADD / ZADD of a member already there, on one hot key: nothing changes.
  for (int i = 0; i < 100; ++i) {
    REQUIRE(Ok(store->SAdd("set", {"m"})) == 0);
    REQUIRE(Ok(store->ZAdd("z", {{1.0, "m"}}, ch)).count == 0);
  }
  // Each key's meta and member, and the sorted set's score, read once: a handful of memtable
  // lookups, not 400 (before, every command read them again).
  CHECK(perf.Read().get_from_memtable <= 8);
  // What the group writes decides its reads, whatever was remembered before.
  CHECK(Ok(store->SRem("set", {"m"})) == 1);
  CHECK(Ok(store->SIsMember("set", "m")) == false);
  CHECK(Ok(store->SAdd("set", {"m"})) == 1);
  CHECK(Ok(store->SCard("set")) == 1);
  CHECK(Ok(store->SIsMember("absent-set", "m")) == false);  // remembered as absent
  CHECK(Ok(store->SAdd("absent-set", {"m"})) == 1);
  CHECK(Ok(store->SIsMember("absent-set", "m")) == true);
  CHECK(Ok(store->ZScore("z", "m")) == 1.0);
  CHECK(Ok(store->ZAdd("z", {{2.0, "m"}}, ch)).count == 1);
  CHECK(Ok(store->ZScore("z", "m")) == 2.0);
  // An early flush ends the overlay: later reads go to the database, which now holds the writes.
  REQUIRE(store->FlushThreadWriteGroup().ok());
  CHECK(Ok(store->SAdd("absent-set", {"m"})) == 0);
  CHECK(Ok(store->ZScore("z", "m")) == 2.0);
  REQUIRE(group->Commit().ok());
  CHECK(Elsewhere([&] { return Ok(store->SCard("absent-set")); }) == 1);
  CHECK(Elsewhere([&] { return Ok(store->ZScore("z", "m")); }) == 2.0);
}

TEST_CASE_METHOD(IndexedFixture, "a group's RPOPs read ahead and still see the group's writes",
                 "[storage][group]") {
  const bool atomic = GENERATE(false, true);
  std::vector<std::string> model;
  for (int i = 0; i < 300; ++i) model.push_back("e" + std::to_string(i));
  for (const auto& e : model) Ok(store->RPush("l", {e}));
  auto group = store->OpenWriteGroup();
  if (atomic) {
    group->BeginAtomic();
  } else {
    group->BeginIndexed();
  }
  PerfScope perf;
  for (int i = 0; i < 200; ++i) {
    if (i % 7 == 3) {  // the tail element rewritten: the read-ahead copy must not be served
      REQUIRE(store->LSet("l", -1, "set" + std::to_string(i)).ok());
      model.back() = "set" + std::to_string(i);
    }
    if (i % 11 == 5) {  // a new tail pushed over a popped index, and popped again below
      Ok(store->RPush("l", {"push" + std::to_string(i)}));
      model.push_back("push" + std::to_string(i));
    }
    const uint64_t count = i % 13 == 0 ? 3 : 1;
    auto popped = Ok(store->RPop("l", count));
    REQUIRE(popped.has_value());
    for (const auto& e : *popped) {
      REQUIRE(e == model.back());
      model.pop_back();
    }
  }
  // One forward read per 32 elements, not a backward memtable search per pop.
  CHECK(perf.Read().prev_on_memtable == 0);
  CHECK(perf.Read().seek_on_memtable <= 20);
  CHECK(Ok(store->LRange("l", 0, -1)) == model);
  REQUIRE(group->Commit().ok());
  CHECK(Elsewhere([&] { return Ok(store->LRange("l", 0, -1)); }) == model);
}

TEST_CASE_METHOD(IndexedFixture, "a write that changes only entries leaves the meta record alone",
                 "[storage][group]") {
  Ok(store->HSet("h", {{"f", "0"}, {"g", "0"}}));
  Ok(store->RPush("l", {"a", "b"}));
  Ok(store->ZAdd("z", {{1.0, "m"}}, ZAddOptions()));
  auto group = store->OpenWriteGroup();
  CHECK(Ok(store->HSet("h", {{"f", "1"}})) == 0);  // the field's record only
  CHECK(group->pending() == 1);
  REQUIRE(store->LSet("l", 0, "A").ok());  // the element's record only
  CHECK(group->pending() == 2);
  CHECK(Ok(store->HSet("h", {{"new", "1"}})) == 1);  // the count changes: field and meta
  CHECK(group->pending() == 4);
  Ok(store->ExpireAt("z", 4102444800000, ExpireCondition::kAlways));  // the TTL: meta
  CHECK(group->pending() == 5);
  REQUIRE(group->Commit().ok());
  CHECK(Ok(store->HGet("h", "f")) == "1");
  CHECK(Ok(store->HLen("h")) == 3);
  CHECK(Ok(store->LRange("l", 0, -1)) == Strings({"A", "b"}));
  CHECK(Ok(store->PTtl("z")) > 0);
}

TEST_CASE_METHOD(IndexedFixture, "a group's SPOPs pick from what they read ahead, and only members",
                 "[storage][group]") {
  const bool atomic = GENERATE(false, true);
  std::set<std::string> model;
  for (int i = 0; i < 1000; ++i) {
    char member[16];
    std::snprintf(member, sizeof member, "m%04d", i);
    model.insert(member);
    Ok(store->SAdd("s", {member}));
  }
  auto group = store->OpenWriteGroup();
  if (atomic) {
    group->BeginAtomic();
  } else {
    group->BeginIndexed();
  }
  auto pop = [&](uint64_t count) {
    for (const auto& m : Ok(store->SPop("s", count))) {
      INFO("popped " << m);
      REQUIRE(model.erase(m) == 1);  // a member, and never twice
    }
  };
  {  // a run of pops and nothing else: each member is read about once (~280 steps for 240
     // pops; re-reading the whole read-ahead at every pop would be ~15,000)
    PerfScope perf;
    for (int i = 0; i < 240; ++i) pop(1);
    const PerfCounts counts = perf.Read();
    INFO("seeks " << counts.seek_on_memtable << ", steps " << counts.next_on_memtable);
    CHECK(counts.seek_on_memtable <= 10);
    CHECK(counts.next_on_memtable <= 400);
  }
  for (int i = 0; i < 300; ++i) {  // other writes between the pops
    if (i % 17 == 4) {  // the front member removed: a window read before must not serve it
      REQUIRE(Ok(store->SRem("s", {*model.begin()})) == 1);
      model.erase(model.begin());
    }
    if (i % 19 == 7) {  // a member added ahead of the front: it may be popped from now on
      const std::string added = "a" + std::to_string(i);
      REQUIRE(Ok(store->SAdd("s", {added})) == 1);
      model.insert(added);
    }
    pop(i % 13 == 0 ? 3 : 1);
  }
  CHECK(Ok(store->SCard("s")) == static_cast<int64_t>(model.size()));
  CHECK(Ok(store->SIsMember("s", *model.begin())));
  REQUIRE(group->Commit().ok());
  const auto members = Elsewhere([&] { return Ok(store->SMembers("s")); });
  CHECK(std::set<std::string>(members.begin(), members.end()) == model);
}

TEST_CASE_METHOD(IndexedFixture, "a group's ZPOPMINs take from what they read ahead, lowest first",
                 "[storage][group]") {
  const bool atomic = GENERATE(false, true);
  std::set<std::pair<double, std::string>> model;  // (score, member): ZPOPMIN's order
  for (int i = 0; i < 1000; ++i) {
    const std::string member = "m" + std::to_string(i);
    model.emplace(i, member);
    Ok(store->ZAdd("z", {{i, member}}, ZAddOptions()));
  }
  auto group = store->OpenWriteGroup();
  if (atomic) {
    group->BeginAtomic();
  } else {
    group->BeginIndexed();
  }
  auto pop = [&](uint64_t count) {
    const auto popped = Ok(store->ZPopMin("z", count));
    REQUIRE(popped.size() == std::min<size_t>(count, model.size()));
    for (const auto& p : popped) {
      INFO("popped " << p.member << " at " << p.score << ", lowest " << model.begin()->second);
      REQUIRE(std::make_pair(p.score, p.member) == *model.begin());
      model.erase(model.begin());
    }
  };
  {  // a run of pops and nothing else: each entry is read about once (re-reading the whole
     // read-ahead at every pop would be ~15,000 steps)
    PerfScope perf;
    for (int i = 0; i < 240; ++i) pop(1);
    const PerfCounts counts = perf.Read();
    INFO("seeks " << counts.seek_on_memtable << ", steps " << counts.next_on_memtable);
    CHECK(counts.seek_on_memtable <= 10);
    CHECK(counts.next_on_memtable <= 400);
  }
  for (int i = 0; i < 300; ++i) {  // other writes between the pops
    if (i % 17 == 4) {  // the lowest member removed: a read-ahead before must not serve it
      REQUIRE(Ok(store->ZRem("z", {model.begin()->second})) == 1);
      model.erase(model.begin());
    }
    if (i % 19 == 7) {  // a member below the lowest: the next pop takes it
      const std::string added = "low" + std::to_string(i);
      Ok(store->ZAdd("z", {{-i, added}}, ZAddOptions()));
      model.emplace(-i, added);
    }
    if (i % 23 == 11) {  // the next lowest moved to the end: not popped at its old score
      const auto next = *model.begin();
      model.erase(model.begin());
      Ok(store->ZAdd("z", {{5000 + i, next.second}}, ZAddOptions()));
      model.emplace(5000 + i, next.second);
    }
    pop(i % 13 == 0 ? 3 : 1);
  }
  CHECK(Ok(store->ZCard("z")) == static_cast<int64_t>(model.size()));
  REQUIRE(group->Commit().ok());
  ZRangeSpec all;
  all.start = 0;
  all.stop = -1;
  const auto rest = Elsewhere([&] { return Ok(store->ZRange("z", all)); });
  std::vector<std::pair<double, std::string>> got;
  for (const auto& m : rest) got.emplace_back(m.score, m.member);
  CHECK(got == std::vector<std::pair<double, std::string>>(model.begin(), model.end()));
}

}  // namespace indexed_group_test
