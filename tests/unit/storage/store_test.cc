// storage::Store itself against a real RocksDB in a temp dir: data survives Close and reopen,
// invalid options are refused, a WriteGroup defers writes to one Commit on its own thread.
// The commands: string_test.cc, keyspace_test.cc and one file per data type.
#include "storage/store.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <thread>

#include "tests/support/store_commands_fixture.h"
#include "tests/support/store_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using namespace std::string_literals;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace store_test {

using rockcache::storage::testing::TempDir;
using rockcache::storage::testing::store_commands::Fixture;
using rockcache::storage::testing::store_commands::OpenAt;

TEST_CASE("data survives Close and reopen", "[storage][durability]") {
  TempDir dir;
  {
    auto store = OpenAt(dir.path());
    REQUIRE(store->Set("k", "v", {}).ok());
    REQUIRE(store->Set("bin\0"s, "\0"s, {}).ok());
    REQUIRE(store->Close().ok());
    REQUIRE(store->Close().ok());  // idempotent
    auto r = store->Get("k");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Status::Code::kShutdown);
  }
  {
    auto store = OpenAt(dir.path());
    CHECK(*store->Get("k") == "v");
    CHECK(*store->Get("bin\0"s) == "\0"s);
    CHECK(*store->DbSize() == 2);
    REQUIRE(store->Set("k2", "v2", {}).ok());
  }  // destructor closes
  {
    auto store = OpenAt(dir.path());
    CHECK(*store->DbSize() == 3);
    CHECK(*store->Get("k2") == "v2");
    CHECK(store->InfoRocksDb().find("rocksdb_total_sst_size:") != std::string::npos);
  }
}

TEST_CASE("invalid options are refused", "[storage]") {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.compression = "brotli";
  auto s = Store::Open(o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().IsInvalidArgument());
  for (const char* c : {"none", "snappy", "lz4", "zstd"}) {
    TempDir d;
    o.dir = d.path();
    o.compression = c;
    auto ok = Store::Open(o);
    INFO(c);
    CHECK(ok.ok());
  }
}

TEST_CASE_METHOD(Fixture, "a WriteGroup defers writes to one Commit", "[storage][group]") {
  Set("before", "1");
  {
    auto group = store->OpenWriteGroup();
    Set("a", "1");
    REQUIRE(store->HSet("h", {{"f", "v"}}).ok());
    REQUIRE(*store->Del({"before"}) == 1);
    CHECK(group->pending() == 4);  // records: a meta each, plus the hash field
    // Not visible, and not counted, before the commit.
    CHECK(Get("a") == std::nullopt);
    CHECK(Get("before") == "1");
    CHECK(DbSize() == 1);
    REQUIRE(group->Commit().ok());
    CHECK(group->pending() == 0);
    CHECK(Get("a") == "1");
    CHECK(*store->HGet("h", "f") == "v");
    CHECK(Get("before") == std::nullopt);
    CHECK(DbSize() == 2);
    // The group stays open: a later write is deferred again, and the destructor commits it.
    Set("b", "2");
    CHECK(Get("b") == std::nullopt);
  }
  CHECK(Get("b") == "2");
  CHECK(DbSize() == 3);
  // Without a group, writes are direct again.
  Set("c", "3");
  CHECK(Get("c") == "3");
}

TEST_CASE_METHOD(Fixture, "a WriteGroup is bound to its thread", "[storage][group]") {
  auto group = store->OpenWriteGroup();
  std::thread other([&] { REQUIRE(store->Set("other", "x", {}).ok()); });
  other.join();
  CHECK(Get("other") == "x");  // written directly: the group belongs to this thread
  CHECK(group->pending() == 0);
}

}  // namespace store_test
