// storage::Store keyspace commands across every type: TYPE, DEL, EXPIRE, RENAME, RANDOMKEY,
// SCAN's type filter, O(1) DEL of a huge collection and the compaction filters.
#include <stdlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/store.h"
#include "tests/support/store_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using namespace std::string_literals;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace keyspace_types_test {

namespace {

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/rockcache-keyspace-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

template <typename T>
T Ok(StatusOr<T> r) {
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::unique_ptr<Store> OpenAt(const std::string& dir, uint64_t write_buffer = 4 << 20) {
  Options o;
  o.dir = dir;
  o.write_buffer_bytes = write_buffer;
  o.block_cache_bytes = 8 << 20;
  return Ok(Store::Open(o));
}

struct Fixture : rockcache::storage::testing::KeyLocking {
  TempDir dir;
  std::unique_ptr<Store> store = OpenAt(dir.path());

  // One key of every type.
  void AllTypes() {
    REQUIRE(store->Set("str", "v", {}).ok());
    REQUIRE(store->HSet("hash", {{"f1", "v1"}, {"f2", "v2"}}).ok());
    REQUIRE(store->RPush("list", {"a", "b", "c"}).ok());
    REQUIRE(store->SAdd("set", {"x", "y"}).ok());
    REQUIRE(store->ZAdd("zset", {{1, "m1"}, {2, "m2"}}, {}).ok());
  }
};

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE_METHOD(Fixture, "TYPE, EXISTS, DEL, DBSIZE across types", "[storage][keyspace]") {
  AllTypes();
  CHECK(Ok(store->Type("str")) == KeyType::kString);
  CHECK(Ok(store->Type("hash")) == KeyType::kHash);
  CHECK(Ok(store->Type("list")) == KeyType::kList);
  CHECK(Ok(store->Type("set")) == KeyType::kSet);
  CHECK(Ok(store->Type("zset")) == KeyType::kZSet);
  CHECK(Ok(store->DbSize()) == 5);
  CHECK(Ok(store->Exists({"str", "hash", "list", "set", "zset", "none"})) == 5);
  CHECK(Ok(store->Keys("*")) == Strings{"hash", "list", "set", "str", "zset"});
  CHECK(Ok(store->Del({"hash", "list", "none"})) == 2);
  CHECK(Ok(store->DbSize()) == 3);
  CHECK(Ok(store->HLen("hash")) == 0);
  CHECK(Ok(store->LLen("list")) == 0);
}

TEST_CASE_METHOD(Fixture, "SCAN TYPE filter sees every type", "[storage][keyspace]") {
  AllTypes();
  for (auto [type, name] : std::vector<std::pair<KeyType, std::string>>{{KeyType::kString, "str"},
                                                                        {KeyType::kHash, "hash"},
                                                                        {KeyType::kList, "list"},
                                                                        {KeyType::kSet, "set"},
                                                                        {KeyType::kZSet, "zset"}}) {
    std::vector<std::string> found;
    uint64_t cursor = 0;
    do {
      auto r = Ok(store->Scan(cursor, "", 2, type));
      found.insert(found.end(), r.keys.begin(), r.keys.end());
      cursor = r.next_cursor;
    } while (cursor != 0);
    CHECK(found == Strings{name});
  }
}

TEST_CASE_METHOD(Fixture, "TTL on collections", "[storage][keyspace]") {
  AllTypes();
  for (const char* key : {"hash", "list", "set", "zset"}) {
    INFO(key);
    CHECK(Ok(store->ExpireAt(key, Now() + 100000, ExpireCondition::kAlways)));
    CHECK(Ok(store->PTtl(key)) > 90000);
    CHECK(Ok(store->Persist(key)));
    CHECK(Ok(store->PTtl(key)) == -1);
    CHECK(Ok(store->ExpireAt(key, Now() + 40, ExpireCondition::kAlways)));
  }
  // Writes keep the TTL.
  REQUIRE(store->RPush("list", {"d"}).ok());
  CHECK(Ok(store->PTtl("list")) > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  CHECK(Ok(store->Exists({"hash", "list", "set", "zset"})) == 0);
  CHECK(Ok(store->HGetAll("hash")).empty());
  CHECK(Ok(store->LRange("list", 0, -1)).empty());
  CHECK(Ok(store->SMembers("set")).empty());
  CHECK(Ok(store->ZRange("zset", ZRangeSpec{})).empty());
  CHECK(Ok(store->Keys("*")) == Strings{"str"});
  // A write after expiry starts a new, empty collection without TTL.
  CHECK(Ok(store->SAdd("set", {"new"})) == 1);
  CHECK(Ok(store->SMembers("set")) == Strings{"new"});
  CHECK(Ok(store->PTtl("set")) == -1);
  CHECK(Ok(store->RPush("list", {"n"})) == 1);
  CHECK(Ok(store->ZAdd("zset", {{5, "z"}}, {})).count == 1);
  CHECK(Ok(store->ZCard("zset")) == 1);
  CHECK(Ok(store->HSet("hash", {{"f1", "x"}})) == 1);
  CHECK(Ok(store->HLen("hash")) == 1);
  // Writing over an expired meta replaced it: nothing is left to sweep, and DBSIZE is exact.
  CHECK(Ok(store->SweepExpired(100, with_lock)) == 0);
  CHECK(Ok(store->DbSize()) == 5);
}

TEST_CASE_METHOD(Fixture, "RENAME and RENAMENX for every type", "[storage][keyspace]") {
  AllTypes();
  int64_t at = Now() + 100000;
  CHECK(Ok(store->ExpireAt("str", at, ExpireCondition::kAlways)));
  CHECK(Ok(store->Rename("str", "str2", false)));
  CHECK(Ok(store->Get("str2")) == "v");
  CHECK(Ok(store->ExpireTimeMs("str2")) == at);
  CHECK(Ok(store->Exists({"str"})) == 0);

  CHECK(Ok(store->Rename("hash", "hash2", false)));
  CHECK(Ok(store->HGetAll("hash2")) ==
        std::vector<std::pair<std::string, std::string>>{{"f1", "v1"}, {"f2", "v2"}});
  CHECK(Ok(store->HLen("hash2")) == 2);
  CHECK(Ok(store->Rename("list", "list2", false)));
  CHECK(Ok(store->LRange("list2", 0, -1)) == Strings{"a", "b", "c"});
  REQUIRE(store->LPush("list2", {"z"}).ok());  // head/tail carried over
  CHECK(Ok(store->LRange("list2", 0, -1)) == Strings{"z", "a", "b", "c"});
  CHECK(Ok(store->Rename("set", "set2", false)));
  CHECK(Ok(store->SMembers("set2")) == Strings{"x", "y"});
  CHECK(Ok(store->Rename("zset", "zset2", false)));
  CHECK(Ok(store->ZRank("zset2", "m2", false)) == 1);
  CHECK(Ok(store->ZScore("zset2", "m1")) == 1.0);
  CHECK(Ok(store->DbSize()) == 5);
  CHECK(Ok(store->Keys("*")) == Strings{"hash2", "list2", "set2", "str2", "zset2"});

  // Over an existing key of another type.
  CHECK(Ok(store->Rename("set2", "hash2", false)));
  CHECK(Ok(store->Type("hash2")) == KeyType::kSet);
  CHECK(Ok(store->SMembers("hash2")) == Strings{"x", "y"});
  CHECK(Ok(store->DbSize()) == 4);
  // NX.
  CHECK_FALSE(Ok(store->Rename("list2", "zset2", true)));
  CHECK(Ok(store->Type("list2")) == KeyType::kList);
  CHECK(Ok(store->Rename("list2", "list3", true)));
  // Same key; missing key.
  CHECK(Ok(store->Rename("list3", "list3", false)));
  CHECK_FALSE(Ok(store->Rename("list3", "list3", true)));
  auto missing = store->Rename("nope", "x", false);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "no such key");
  // The old name, reused, starts empty.
  REQUIRE(store->SAdd("set2", {"fresh"}).ok());
  CHECK(Ok(store->SMembers("set2")) == Strings{"fresh"});
}

TEST_CASE_METHOD(Fixture, "RANDOMKEY", "[storage][keyspace]") {
  CHECK_FALSE(Ok(store->RandomKey()).has_value());
  REQUIRE(store->Set("only", "v", {}).ok());
  CHECK(Ok(store->RandomKey()) == "only");
  std::vector<std::pair<std::string, std::string>> storage_kvs;
  for (int i = 0; i < 500; ++i) storage_kvs.emplace_back("key:" + std::to_string(i), "v");
  std::vector<std::pair<std::string_view, std::string_view>> kvs(storage_kvs.begin(),
                                                                 storage_kvs.end());
  REQUIRE(store->MSet(kvs).ok());
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    auto k = Ok(store->RandomKey());
    REQUIRE(k.has_value());
    CHECK(Ok(store->Exists({*k})) == 1);
    seen.insert(*k);
  }
  CHECK(seen.size() > 60);
  // Expired keys are never returned.
  REQUIRE(store->FlushAll().ok());
  SetOptions ex;
  ex.expiry.mode = Expiry::Mode::kAt;
  ex.expiry.at_ms = Now() + 20;
  for (int i = 0; i < 50; ++i) REQUIRE(store->Set("e" + std::to_string(i), "v", ex).ok());
  REQUIRE(store->Set("live", "v", {}).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  for (int i = 0; i < 20; ++i) CHECK(Ok(store->RandomKey()) == "live");
}

TEST_CASE("DEL of a 1,000,000-field hash is O(1); compaction reclaims it",
          "[storage][keyspace][slow]") {
  TempDir dir;
  auto store = OpenAt(dir.path(), 64 << 20);
  std::vector<std::string> fields;
  fields.reserve(1000000);
  for (int i = 0; i < 1000000; ++i) fields.push_back("field:" + std::to_string(i));
  std::vector<std::pair<std::string_view, std::string_view>> fv;
  fv.reserve(fields.size());
  for (const auto& f : fields) fv.emplace_back(f, "value");
  CHECK(Ok(store->HSet("big", fv)) == 1000000);
  CHECK(Ok(store->HLen("big")) == 1000000);
  REQUIRE(store->HSet("small", {{"a", "1"}}).ok());
  CHECK(Ok(store->CountDataEntries()) == 1000001);

  auto t0 = std::chrono::steady_clock::now();
  CHECK(Ok(store->Del({"big"})) == 1);
  auto elapsed = std::chrono::steady_clock::now() - t0;
  CHECK(elapsed < std::chrono::seconds(1));
  CHECK(Ok(store->HLen("big")) == 0);
  CHECK_FALSE(Ok(store->HGet("big", "field:7")).has_value());

  REQUIRE(store->CompactAll().ok());
  CHECK(Ok(store->CountDataEntries()) == 1);  // only "small"'s field is left
  CHECK(Ok(store->HGetAll("small")) ==
        std::vector<std::pair<std::string, std::string>>{{"a", "1"}});
}

TEST_CASE_METHOD(Fixture, "compaction drops expired metas and their data", "[storage][keyspace]") {
  std::vector<std::string> fields;
  for (int i = 0; i < 100; ++i) fields.push_back("f" + std::to_string(i));
  std::vector<std::pair<std::string_view, std::string_view>> fv;
  for (const auto& f : fields) fv.emplace_back(f, "v");
  REQUIRE(store->HSet("h", fv).ok());
  REQUIRE(store->ZAdd("z", {{1, "a"}, {2, "b"}}, {}).ok());
  REQUIRE(store->RPush("keep", {"x"}).ok());
  CHECK(Ok(store->ExpireAt("h", Now() + 30, ExpireCondition::kAlways)));
  CHECK(Ok(store->ExpireAt("z", Now() + 30, ExpireCondition::kAlways)));
  // Stale versions too: overwrite a set with a string.
  REQUIRE(store->SAdd("s", {"1", "2", "3"}).ok());
  REQUIRE(store->Set("s", "now a string", {}).ok());
  CHECK(Ok(store->CountDataEntries()) == 100 + 4 + 1 + 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  REQUIRE(store->CompactAll().ok());
  CHECK(Ok(store->CountDataEntries()) == 1);
  // The expired metas are gone too: the sweep finds nothing left to delete.
  CHECK(Ok(store->SweepExpired(1000, with_lock)) == 0);
  CHECK(Ok(store->Keys("*")) == Strings{"keep", "s"});
  CHECK(Ok(store->LRange("keep", 0, -1)) == Strings{"x"});
}

TEST_CASE_METHOD(Fixture, "FLUSHALL removes collections too", "[storage][keyspace]") {
  AllTypes();
  REQUIRE(store->FlushAll().ok());
  CHECK(Ok(store->DbSize()) == 0);
  CHECK(Ok(store->CountDataEntries()) == 0);
  CHECK(Ok(store->HLen("hash")) == 0);
  AllTypes();
  CHECK(Ok(store->DbSize()) == 5);
  CHECK(Ok(store->SMembers("set")) == Strings{"x", "y"});
}

TEST_CASE("collections survive reopen; versions never repeat", "[storage][durability]") {
  TempDir dir;
  {
    auto store = OpenAt(dir.path());
    REQUIRE(store->HSet("h", {{"old", "1"}}).ok());
    REQUIRE(store->Del({"h"}).ok());  // "old" stays on disk under a dead version
    REQUIRE(store->RPush("l", {"a", "b"}).ok());
    REQUIRE(store->ZAdd("z", {{1.5, "m"}}, {}).ok());
    REQUIRE(store->Close().ok());
  }
  {
    auto store = OpenAt(dir.path());
    CHECK(Ok(store->DbSize()) == 2);
    CHECK(Ok(store->LRange("l", 0, -1)) == Strings{"a", "b"});
    CHECK(Ok(store->ZScore("z", "m")) == 1.5);
    REQUIRE(store->HSet("h", {{"new", "2"}}).ok());
    CHECK(Ok(store->HGetAll("h")) ==
          std::vector<std::pair<std::string, std::string>>{{"new", "2"}});
  }
}

TEST_CASE_METHOD(Fixture, "concurrent collection writers stay consistent", "[storage][keyspace]") {
  // Catch2 assertions are not thread-safe: threads count failures, the main thread asserts.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::string m = std::to_string(t) + ":" + std::to_string(i);
        // Each write holds its key's lock, as the server's executor does (storage has none).
        auto locked = [&](std::string_view key, auto write) {
          auto guard = locks.Lock(key);
          return write();
        };
        bool ok = locked("list", [&] { return store->RPush("list", {m}).ok(); }) &&
                  locked("set", [&] { return store->SAdd("set", {m}).ok(); }) &&
                  locked("hash", [&] { return store->HIncrBy("hash", "n", 1).ok(); }) &&
                  locked("zset",
                         [&] {
                           return store->ZAdd("zset", {{static_cast<double>(i), m}}, {}).ok();
                         }) &&
                  (i % 10 != 0 || locked("list", [&] { return store->LPop("list", 1).ok(); }));
        if (!ok) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(failures.load() == 0);
  CHECK(Ok(store->LLen("list")) == 800 - 80);
  CHECK(Ok(store->LRange("list", 0, -1)).size() == 720);
  CHECK(Ok(store->SCard("set")) == 800);
  CHECK(Ok(store->SMembers("set")).size() == 800);
  CHECK(Ok(store->HGet("hash", "n")) == "800");
  CHECK(Ok(store->ZCard("zset")) == 800);
  CHECK(Ok(store->ZRange("zset", ZRangeSpec{})).size() == 800);
}

}  // namespace keyspace_types_test
