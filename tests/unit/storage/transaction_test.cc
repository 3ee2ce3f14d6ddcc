// storage::WriteGroup in a transaction (BeginAtomic .. Commit): the thread's reads see the
// transaction's writes, nothing of them reaches RocksDB (or another thread) before the Commit,
// which writes them as one batch, and a failed or abandoned transaction leaves nothing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/store.h"
#include "tests/support/store_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using rockcache::storage::testing::Ok;
using rockcache::storage::testing::StoreFixture;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace transaction_test {

namespace {

struct TxFixture : StoreFixture {
  std::optional<std::string> Get(std::string_view key) { return Ok(store->Get(key)); }
  // What another thread (no group, no transaction) reads.
  std::optional<std::string> GetElsewhere(std::string_view key) {
    std::optional<std::string> out;
    bool ok = false;
    std::thread t([&] {
      auto r = store->Get(key);
      ok = r.ok();
      if (ok) out = *r;
    });
    t.join();
    REQUIRE(ok);
    return out;
  }
  int64_t DbSizeElsewhere() {
    int64_t n = -1;
    std::thread t([&] { n = store->DbSize().ok() ? *store->DbSize() : -1; });
    t.join();
    return n;
  }
  void Set(std::string_view key, std::string_view value) {
    REQUIRE(Ok(store->Set(key, value, SetOptions())).written);
  }
};

std::vector<std::string> Strings(std::initializer_list<const char*> items) {
  return std::vector<std::string>(items.begin(), items.end());
}

}  // namespace

TEST_CASE_METHOD(TxFixture, "a transaction reads its own writes; others see them at Commit",
                 "[storage][group][transaction]") {
  Set("old", "0");
  auto group = store->OpenWriteGroup();
  group->BeginAtomic();
  Set("a", "1");
  CHECK(Get("a") == "1");                 // read-your-writes, no flush needed
  CHECK(Ok(store->IncrBy("a", 1)) == 2);  // read-modify-write of a pending key
  REQUIRE(Ok(store->RPush("l", {"x", "y"})) == 2);
  CHECK(Ok(store->LRange("l", 0, -1)) == Strings({"x", "y"}));
  CHECK(Ok(store->Del({"old"})) == 1);
  CHECK(Get("old") == std::nullopt);
  CHECK(Ok(store->DbSize()) == 2);  // a, l (old deleted): the transaction's own view
  CHECK(Ok(store->Keys("*")).size() == 2);
  REQUIRE(store->FlushThreadWriteGroup().ok());  // a no-op in a transaction
  // Nothing is visible to another thread, or counted, before the Commit.
  CHECK(GetElsewhere("a") == std::nullopt);
  CHECK(GetElsewhere("old") == "0");
  CHECK(DbSizeElsewhere() == 1);
  CHECK(group->pending() > 0);
  REQUIRE(group->Commit().ok());
  CHECK(GetElsewhere("a") == "2");
  CHECK(GetElsewhere("old") == std::nullopt);
  CHECK(DbSizeElsewhere() == 2);
  CHECK(Ok(store->LRange("l", 0, -1)) == Strings({"x", "y"}));
  // Back to a plain group: a write is pending (invisible) until the next commit.
  Set("c", "4");
  CHECK(Get("c") == std::nullopt);
  REQUIRE(store->FlushThreadWriteGroup().ok());
  CHECK(Get("c") == "4");
}

TEST_CASE_METHOD(TxFixture, "a transaction's iterations stay within their key",
                 "[storage][group][transaction]") {
  // Data entries of neighbouring keys, some pending in the transaction, some stored: every
  // iteration (LRANGE, HGETALL, SMEMBERS, ZRANGE) must see only its own key's entries.
  REQUIRE(Ok(store->RPush("k1", {"s1"})) == 1);
  REQUIRE(Ok(store->HSet("h1", {{"f0", "v0"}})) == 1);
  auto group = store->OpenWriteGroup();
  group->BeginAtomic();
  REQUIRE(Ok(store->RPush("k0", {"a"})) == 1);
  REQUIRE(Ok(store->RPush("k1", {"t1"})) == 2);
  REQUIRE(Ok(store->RPush("k2", {"b"})) == 1);
  REQUIRE(Ok(store->HSet("h0", {{"x", "1"}})) == 1);
  REQUIRE(Ok(store->HSet("h1", {{"f1", "v1"}})) == 1);
  REQUIRE(Ok(store->HSet("h2", {{"y", "2"}})) == 1);
  REQUIRE(Ok(store->SAdd("s0", {"m"})) == 1);
  REQUIRE(Ok(store->SAdd("s1", {"n", "o"})) == 2);
  REQUIRE(Ok(store->SAdd("s2", {"p"})) == 1);
  CHECK(Ok(store->LRange("k1", 0, -1)) == Strings({"s1", "t1"}));
  CHECK(Ok(store->LRange("k1", -1, -1)) == Strings({"t1"}));
  CHECK(Ok(store->HGetAll("h1")).size() == 2);
  CHECK(Ok(store->SMembers("s1")) == Strings({"n", "o"}));
  CHECK(Ok(store->SCard("s1")) == 2);
  REQUIRE(group->Commit().ok());
  CHECK(Ok(store->LRange("k1", 0, -1)) == Strings({"s1", "t1"}));
}

TEST_CASE_METHOD(TxFixture, "range deletions inside a transaction (LTRIM, DEL of a big list)",
                 "[storage][group][transaction]") {
  std::vector<std::string> items;
  for (int i = 0; i < 300; ++i) items.push_back("e" + std::to_string(i));
  std::vector<std::string_view> views(items.begin(), items.end());
  REQUIRE(Ok(store->RPush("big", views)) == 300);
  REQUIRE(Ok(store->RPush("after", {"z"})) == 1);
  auto group = store->OpenWriteGroup();
  group->BeginAtomic();
  REQUIRE(Ok(store->RPush("big", {"new"})) == 301);  // a pending entry inside the trimmed range
  REQUIRE(store->LTrim("big", 200, -1).ok());        // > 64 removed: a range deletion
  CHECK(Ok(store->LLen("big")) == 101);
  CHECK(Ok(store->LRange("big", 0, 0)) == Strings({"e200"}));
  CHECK(Ok(store->LRange("big", -1, -1)) == Strings({"new"}));
  CHECK(Ok(store->LRange("after", 0, -1)) == Strings({"z"}));
  CHECK(Ok(store->LRange("big", 0, -1)).size() == 101);
  REQUIRE(group->Commit().ok());
  CHECK(Ok(store->LLen("big")) == 101);
  CHECK(Ok(store->LRange("big", 0, 1)) == Strings({"e200", "e201"}));
  CHECK(Ok(store->LRange("after", 0, -1)) == Strings({"z"}));
}

TEST_CASE_METHOD(TxFixture, "a transaction never committed leaves nothing after a reopen",
                 "[storage][group][transaction]") {
  Set("kept", "1");
  {
    auto group = store->OpenWriteGroup();
    group->BeginAtomic();
    Set("gone", "1");
    REQUIRE(Ok(store->RPush("gl", {"a"})) == 1);
    CHECK(Get("gone") == "1");
    // Close flushes every memtable to SST files while the transaction is open: nothing of it
    // may be among them. The Commit after it fails (the store is closed): the crash.
    REQUIRE(store->Close().ok());
    CHECK(group->Commit().code() == Status::Code::kShutdown);
  }
  Options o;
  o.dir = dir.path();
  store.reset();
  store = Ok(Store::Open(o));
  CHECK(Get("kept") == "1");
  CHECK(Get("gone") == std::nullopt);
  CHECK(Ok(store->LLen("gl")) == 0);
}

// The overlay's merged reads (tx_overlay.h: point reads, iterations with only deletes pending,
// and merged iterations in both directions) against a model, over a sorted set whose member and
// score records are partly committed and partly pending: random ZADD/ZREM in a transaction, each
// followed by reads forward and in reverse, by rank, by score with LIMIT, and point reads.
TEST_CASE_METHOD(TxFixture, "a transaction's merged reads match a model in both directions",
                 "[storage][group][transaction]") {
  std::mt19937 rng(7);
  auto member = [](int i) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "m%03d", i);
    return std::string(buf);
  };
  for (int round = 0; round < 20; ++round) {
    const std::string key = "z" + std::to_string(round);
    std::map<std::string, double> model;
    // Committed base: a random subset of 60 members.
    std::vector<std::pair<double, std::string>> base;
    for (int i = 0; i < 60; ++i) {
      if (rng() % 2 == 0) continue;
      const double score = static_cast<double>(rng() % 20);
      base.emplace_back(score, member(i));
      model[member(i)] = score;
    }
    std::vector<std::pair<double, std::string_view>> add;
    for (const auto& [s, m] : base) add.emplace_back(s, m);
    if (!add.empty()) Ok(store->ZAdd(key, add, ZAddOptions()));

    auto expected = [&](bool reverse) {
      std::vector<std::pair<double, std::string>> v;
      for (const auto& [m, s] : model) v.emplace_back(s, m);
      std::sort(v.begin(), v.end());
      if (reverse) std::reverse(v.begin(), v.end());
      return v;
    };
    auto got = [&](const ZRangeSpec& spec) {
      std::vector<std::pair<double, std::string>> v;
      for (auto& sm : Ok(store->ZRange(key, spec))) v.emplace_back(sm.score, sm.member);
      return v;
    };
    auto group = store->OpenWriteGroup();
    group->BeginAtomic();
    // Only deletes pending for a while (the skip path), then mixed writes (the merged path).
    for (int op = 0; op < 40; ++op) {
      const std::string m = member(static_cast<int>(rng() % 60));
      if (op < 8 || rng() % 3 == 0) {
        Ok(store->ZRem(key, {m}));
        model.erase(m);
      } else {
        const double score = static_cast<double>(rng() % 20);
        Ok(store->ZAdd(key, {{score, m}}, ZAddOptions()));
        model[m] = score;
      }
      for (bool reverse : {false, true}) {
        ZRangeSpec all;
        all.reverse = reverse;
        REQUIRE(got(all) == expected(reverse));
        // By score, with LIMIT: a seek into the middle, then steps.
        ZRangeSpec by_score;
        by_score.by = ZRangeSpec::By::kScore;
        by_score.reverse = reverse;
        by_score.score.min = static_cast<double>(rng() % 10);
        by_score.score.max = by_score.score.min + static_cast<double>(rng() % 10);
        by_score.offset = static_cast<int64_t>(rng() % 3);
        by_score.limit = static_cast<int64_t>(rng() % 6);
        std::vector<std::pair<double, std::string>> want;
        for (const auto& e : expected(reverse)) {
          if (e.first >= by_score.score.min && e.first <= by_score.score.max) want.push_back(e);
        }
        want.erase(want.begin(), want.begin() + std::min<size_t>(want.size(), by_score.offset));
        if (want.size() > static_cast<size_t>(by_score.limit)) want.resize(by_score.limit);
        REQUIRE(got(by_score) == want);
      }
      // Point reads: a pending put, a pending delete, an untouched member.
      const std::string probe = member(static_cast<int>(rng() % 60));
      auto score = Ok(store->ZScore(key, probe));
      if (model.count(probe)) {
        REQUIRE(score.has_value());
        CHECK(*score == model[probe]);
      } else {
        CHECK_FALSE(score.has_value());
      }
      CHECK(Ok(store->ZCard(key)) == static_cast<int64_t>(model.size()));
    }
    REQUIRE(group->Commit().ok());
    ZRangeSpec all;
    CHECK(got(all) == expected(false));
  }
}

TEST_CASE_METHOD(TxFixture, "a savepoint rolls back one unit of a shared transaction",
                 "[storage][group][transaction]") {
  Set("old", "0");
  auto group = store->OpenWriteGroup();
  group->BeginAtomic();
  // First unit: kept.
  group->Savepoint();
  Set("a", "1");
  REQUIRE(Ok(store->RPush("l", {"x", "y"})) == 2);
  // Second unit: overwrites, creates, deletes, pops; rolled back.
  group->Savepoint();
  Set("a", "2");
  Set("b", "new");
  CHECK(Ok(store->Del({"old"})) == 1);
  CHECK(Ok(store->LPop("l", 1))->size() == 1);
  REQUIRE(Ok(store->RPush("l", {"z"})) == 2);
  CHECK(Ok(store->DbSize()) == 3);  // a, b, l
  group->RollbackToSavepoint();
  // Its reads see the first unit's state again, counts included.
  CHECK(Get("a") == "1");
  CHECK(Get("b") == std::nullopt);
  CHECK(Get("old") == "0");
  CHECK(Ok(store->LRange("l", 0, -1)) == Strings({"x", "y"}));
  CHECK(Ok(store->DbSize()) == 3);  // old, a, l
  // Third unit: kept, after the rollback.
  group->Savepoint();
  REQUIRE(Ok(store->IncrBy("a", 10)) == 11);
  CHECK(GetElsewhere("a") == std::nullopt);
  REQUIRE(group->Commit().ok());
  CHECK(GetElsewhere("a") == "11");
  CHECK(GetElsewhere("b") == std::nullopt);
  CHECK(GetElsewhere("old") == "0");
  CHECK(DbSizeElsewhere() == 3);
  CHECK(Ok(store->LRange("l", 0, -1)) == Strings({"x", "y"}));
}

}  // namespace transaction_test
