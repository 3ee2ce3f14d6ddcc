// storage::Store: the string commands against a real RocksDB in a temp dir.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "storage/perf_counters.h"
#include "storage/store.h"
#include "tests/support/store_commands_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using namespace std::string_literals;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace string_test {

using rockcache::storage::testing::store_commands::At;
using rockcache::storage::testing::store_commands::Cond;
using rockcache::storage::testing::store_commands::Fixture;
using rockcache::storage::testing::store_commands::Now;

TEST_CASE_METHOD(Fixture, "Get/Set basics and binary safety", "[storage][strings]") {
  CHECK_FALSE(Get("missing").has_value());
  Set("k", "v");
  CHECK(Get("k") == "v");
  Set("", "empty key");
  Set("a", "A");
  Set("a\0b"s, "with nul"s);
  Set("bin", "\0\xff\0"s);
  CHECK(Get("") == "empty key");
  CHECK(Get("a") == "A");
  CHECK(Get("a\0b"s) == "with nul");
  CHECK(Get("bin") == "\0\xff\0"s);
  CHECK_FALSE(Get("a\0"s).has_value());
  Set("k", "");
  CHECK(Get("k") == "");
  CHECK(DbSize() == 5);
  CHECK(KeyTypeName(KeyType::kZSet) == "zset"s);
  CHECK(ParseKeyTypeName("HaSh") == KeyType::kHash);
  CHECK(ParseKeyTypeName("stream") == KeyType::kStream);
  CHECK_FALSE(ParseKeyTypeName("streams").has_value());
}

TEST_CASE_METHOD(Fixture, "Set NX / XX / GET / KEEPTTL / expiry", "[storage][strings]") {
  auto r = store->Set("k", "1", Cond(SetOptions::Condition::kIfPresent));
  REQUIRE(r.ok());
  CHECK_FALSE(r->written);
  CHECK_FALSE(Get("k").has_value());

  r = store->Set("k", "1", Cond(SetOptions::Condition::kIfAbsent));
  REQUIRE(r.ok());
  CHECK(r->written);
  r = store->Set("k", "2", Cond(SetOptions::Condition::kIfAbsent));
  REQUIRE(r.ok());
  CHECK_FALSE(r->written);
  CHECK(Get("k") == "1");
  r = store->Set("k", "3", Cond(SetOptions::Condition::kIfPresent));
  REQUIRE(r.ok());
  CHECK(r->written);
  CHECK(Get("k") == "3");

  SetOptions get;
  get.return_old = true;
  r = store->Set("k", "4", get);
  REQUIRE(r.ok());
  CHECK(r->old_value == "3");
  r = store->Set("new", "x", get);
  REQUIRE(r.ok());
  CHECK_FALSE(r->old_value.has_value());
  CHECK(r->written);
  // NX + GET on an existing key: returns the old value, writes nothing.
  get.condition = SetOptions::Condition::kIfAbsent;
  r = store->Set("k", "5", get);
  REQUIRE(r.ok());
  CHECK_FALSE(r->written);
  CHECK(r->old_value == "4");

  // TTLs: SET EX, then plain SET clears it, KEEPTTL keeps it.
  SetOptions ex;
  ex.expiry = At(Now() + 100000);
  Set("t", "v", ex);
  auto ttl = store->PTtl("t");
  REQUIRE(ttl.ok());
  CHECK(*ttl > 90000);
  CHECK(*ttl <= 100000);
  SetOptions keep;
  keep.expiry.mode = Expiry::Mode::kKeep;
  Set("t", "v2", keep);
  CHECK(*store->PTtl("t") > 90000);
  Set("t", "v3");
  CHECK(*store->PTtl("t") == -1);
  // An expire-at in the past deletes the key (the write still "happens").
  ex.expiry = At(Now() - 1);
  Set("t", "gone", ex);
  CHECK_FALSE(Get("t").has_value());
  CHECK(*store->PTtl("t") == -2);
  CHECK(DbSize() == 2);
}

TEST_CASE_METHOD(Fixture, "MGet / MSet / MSetNx", "[storage][strings]") {
  Set("a", "1");
  REQUIRE(store->MSet({{"b", "2"}, {"c", "3"}, {"b", "2b"}}).ok());
  auto m = store->MGet({"a", "b", "c", "nope", "a"});
  REQUIRE(m.ok());
  REQUIRE(m->size() == 5);
  CHECK((*m)[0] == "1");
  CHECK((*m)[1] == "2b");
  CHECK((*m)[2] == "3");
  CHECK_FALSE((*m)[3].has_value());
  CHECK((*m)[4] == "1");
  CHECK(DbSize() == 3);

  auto nx = store->MSetNx({{"x", "1"}, {"a", "9"}});
  REQUIRE(nx.ok());
  CHECK_FALSE(*nx);
  CHECK_FALSE(Get("x").has_value());
  CHECK(Get("a") == "1");
  nx = store->MSetNx({{"x", "1"}, {"y", "2"}});
  REQUIRE(nx.ok());
  CHECK(*nx);
  CHECK(Get("y") == "2");
  CHECK(DbSize() == 5);

  // MSET clears TTLs.
  SetOptions ex;
  ex.expiry = At(Now() + 100000);
  Set("a", "1", ex);
  REQUIRE(store->MSet({{"a", "2"}}).ok());
  CHECK(*store->PTtl("a") == -1);
}

// The cache's knowledge (KnownKey) spares MSET the read of old metas, and the key count and
// the TTL counters stay what a read would have made them.
TEST_CASE_METHOD(Fixture, "MSet writes keys known present without reading them",
                 "[storage][strings]") {
  Set("a", "1");
  const int64_t t_at = Now() + 100000;
  SetOptions ex;
  ex.expiry = At(t_at);
  Set("t", "1", ex);
  REQUIRE(store->HSet("h", {{"f", "v"}}).ok());
  REQUIRE(store->GetKeyStats().expires == 1);
  PerfScope perf;

  perf.Reset();
  REQUIRE(store->MSet({{"a", "2"}}).ok());
  CHECK(perf.Read().get_from_memtable > 0);  // not known: its meta is read

  const std::vector<KnownKey> known = {{true, 0}, {true, t_at}, {true, 0}, {false, 0}, {true, 0}};
  perf.Reset();
  REQUIRE(store->MSet({{"a", "3"}, {"t", "4"}, {"h", "5"}, {"new", "6"}, {"a", "7"}}, &known).ok());
  CHECK(perf.Read().get_from_memtable == 0);  // known, or ruled out by the key filter
  CHECK(Get("a") == "7");
  CHECK(Get("t") == "4");
  CHECK(*store->PTtl("t") == -1);
  CHECK(Get("h") == "5");  // the hash became a string
  CHECK(Get("new") == "6");
  CHECK(DbSize() == 4);
  CHECK(store->GetKeyStats().keys == 4);
  CHECK(store->GetKeyStats().expires == 0);
}

TEST_CASE_METHOD(Fixture, "GetDel / GetEx", "[storage][strings]") {
  Set("k", "v");
  auto r = store->GetDel("k");
  REQUIRE(r.ok());
  CHECK(*r == "v");
  CHECK_FALSE(Get("k").has_value());
  r = store->GetDel("k");
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  CHECK(DbSize() == 0);

  Set("k", "v");
  r = store->GetEx("k", At(Now() + 50000));
  REQUIRE(r.ok());
  CHECK(*r == "v");
  CHECK(*store->PTtl("k") > 40000);
  Expiry keep;
  keep.mode = Expiry::Mode::kKeep;
  REQUIRE(store->GetEx("k", keep).ok());
  CHECK(*store->PTtl("k") > 40000);
  REQUIRE(store->GetEx("k", Expiry{}).ok());  // kClear = PERSIST
  CHECK(*store->PTtl("k") == -1);
  r = store->GetEx("k", At(Now() - 10));
  REQUIRE(r.ok());
  CHECK(*r == "v");
  CHECK_FALSE(Get("k").has_value());
  r = store->GetEx("missing", keep);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
}

TEST_CASE_METHOD(Fixture, "Append / StrLen keep the TTL", "[storage][strings]") {
  auto n = store->Append("k", "abc");
  REQUIRE(n.ok());
  CHECK(*n == 3);
  SetOptions keep;
  keep.expiry = At(Now() + 100000);
  Set("k", "abc", keep);
  n = store->Append("k", "\0de"s);
  REQUIRE(n.ok());
  CHECK(*n == 6);
  CHECK(Get("k") == "abc\0de"s);
  CHECK(*store->PTtl("k") > 0);
  CHECK(*store->StrLen("k") == 6);
  CHECK(*store->StrLen("missing") == 0);
  n = store->Append("empty", "");
  REQUIRE(n.ok());
  CHECK(*n == 0);
  CHECK(Get("empty") == "");  // APPEND creates the key even with ""
}

TEST_CASE_METHOD(Fixture, "IncrBy: parsing, overflow, TTL", "[storage][strings]") {
  auto r = store->IncrBy("n", 1);
  REQUIRE(r.ok());
  CHECK(*r == 1);
  r = store->IncrBy("n", -11);
  REQUIRE(r.ok());
  CHECK(*r == -10);
  CHECK(Get("n") == "-10");

  for (const char* bad : {"abc", " 1", "1 ", "01", "+1", "1.5", "", "99999999999999999999"}) {
    INFO(bad);
    Set("bad", bad);
    r = store->IncrBy("bad", 1);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK(r.status().message() == "value is not an integer or out of range");
  }

  Set("max", "9223372036854775807");
  r = store->IncrBy("max", 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "increment or decrement would overflow");
  Set("min", "-9223372036854775808");
  r = store->IncrBy("min", -1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "increment or decrement would overflow");
  r = store->IncrBy("min", 1);
  REQUIRE(r.ok());
  CHECK(*r == INT64_MIN + 1);

  SetOptions ttl;
  ttl.expiry = At(Now() + 100000);
  Set("t", "5", ttl);
  REQUIRE(store->IncrBy("t", 5).ok());
  CHECK(Get("t") == "10");
  CHECK(*store->PTtl("t") > 0);
}

TEST_CASE_METHOD(Fixture, "IncrByFloat formats as Redis", "[storage][strings]") {
  Set("k", "10.50");
  auto r = store->IncrByFloat("k", 0.1L);
  REQUIRE(r.ok());
  CHECK(*r == "10.6");
  // Redis prints "%.17Lf" (17 decimals of an x86 80-bit long double, trailing zeros removed),
  // so past ~128 the long double's own error shows, exactly as redis-server on x86-64 replies
  // (redis/redis#3695: 1000 + 0.1 -> "1000.09999999999999998").
  r = store->IncrByFloat("k", 5.0e3L);
  REQUIRE(r.ok());
  CHECK(*r == "5010.60000000000000009");
  CHECK(Get("k") == *r);
  Set("k", "1000");
  CHECK(*store->IncrByFloat("k", 0.1L) == "1000.09999999999999998");
  Set("k", "5.0e3");
  CHECK(*store->IncrByFloat("k", 2.0e2L) == "5200");
  r = store->IncrByFloat("x", 3.0L);
  REQUIRE(r.ok());
  CHECK(*r == "3");
  Set("i", "5");
  r = store->IncrByFloat("i", -5.0L);
  REQUIRE(r.ok());
  CHECK(*r == "0");

  Set("bad", "abc");
  r = store->IncrByFloat("bad", 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "value is not a valid float");
  Set("big", "1e4932");  // valid for a long double
  r = store->IncrByFloat("big", 1e4932L);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "increment would produce NaN or Infinity");
}

TEST_CASE_METHOD(Fixture, "GetRange negative indexes", "[storage][strings]") {
  Set("k", "This is a string");
  auto gr = [&](int64_t s, int64_t e) {
    auto r = store->GetRange("k", s, e);
    REQUIRE(r.ok());
    return *r;
  };
  CHECK(gr(0, 3) == "This");
  CHECK(gr(-3, -1) == "ing");
  CHECK(gr(0, -1) == "This is a string");
  CHECK(gr(10, 100) == "string");
  CHECK(gr(5, 3) == "");
  CHECK(gr(-1, -5) == "");
  CHECK(gr(-100, 2) == "Thi");
  CHECK(gr(100, 200) == "");
  CHECK(*store->GetRange("missing", 0, -1) == "");
  Set("e", "");
  CHECK(*store->GetRange("e", 0, -1) == "");
}

TEST_CASE_METHOD(Fixture, "SetRange pads with NUL and checks the size", "[storage][strings]") {
  auto r = store->SetRange("k", 5, "hi", 512 << 20);
  REQUIRE(r.ok());
  CHECK(*r == 7);
  CHECK(Get("k") == "\0\0\0\0\0hi"s);
  r = store->SetRange("k", 0, "ab", 512 << 20);
  REQUIRE(r.ok());
  CHECK(*r == 7);
  CHECK(Get("k") == "ab\0\0\0hi"s);
  // Empty value: no write, current length (0 for an absent key, which stays absent).
  r = store->SetRange("missing", 10, "", 512 << 20);
  REQUIRE(r.ok());
  CHECK(*r == 0);
  CHECK_FALSE(Get("missing").has_value());
  r = store->SetRange("k", 100, "", 512 << 20);
  REQUIRE(r.ok());
  CHECK(*r == 7);
  r = store->SetRange("k", 10, "abc", 12);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "string exceeds maximum allowed size (proto-max-bulk-len)");
  r = store->SetRange("k", 9, "abc", 12);
  REQUIRE(r.ok());
  CHECK(*r == 12);
}

TEST_CASE_METHOD(Fixture, "concurrent IncrBy under the key lock is atomic", "[storage][strings]") {
  std::atomic<int> failures{0};  // Catch2 assertions are not thread-safe: assert after join
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        auto guard = locks.Lock("ctr");  // storage REQUIRES it (store.h); the executor takes it
        if (!store->IncrBy("ctr", 1).ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(failures.load() == 0);
  CHECK(Get("ctr") == "2000");
}

}  // namespace string_test
