// The read cache seen from outside, under writes: what users count stays exact over cached keys,
// misses filled in the network thread never install an outdated value, and pipelines keep order
// and read-your-writes.

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::CacheVerify;
using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoNumber;
using rockcache::testing::InfoText;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::RtcCalls;
using rockcache::testing::Run;
using rockcache::testing::RunRtc;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;
using rockcache::testing::VerifyResult;

// MSET writes a key the cache holds without reading its old meta (as SET does): what a user
// counts must not change for it. Keys cached as strings, with a TTL, as a hash, and not at all.
TEST_CASE("MSET over cached keys keeps DBSIZE, INFO keyspace and TTLs exact", "[cache]") {
  TestServer server;
  Client c(server.port());
  REQUIRE(Run(c, {"SET", "s", "1"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "t", "1", "EX", "1000"}) == "status:OK");
  REQUIRE(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  REQUIRE(Run(c, {"SET", "cold", "1"}) == "status:OK");
  CHECK(Run(c, {"GET", "s"}) == "bulk:1");
  CHECK(Run(c, {"GET", "t"}) == "bulk:1");
  CHECK(Run(c, {"HGETALL", "h"}) == "[bulk:f, bulk:v]");
  const uint64_t hits = InfoNumber(c, "cache", "cache_hits");
  CHECK(Run(c, {"GET", "s"}) == "bulk:1");
  CHECK(InfoNumber(c, "cache", "cache_hits") > hits);  // "s" is cached
  CHECK(InfoFields(InfoText(c, "keyspace"))["db0"].rfind("keys=4,expires=1,", 0) == 0);

  CHECK(Run(c, {"MSET", "s", "2", "t", "2", "h", "2", "cold", "2", "new", "2", "s", "3"}) ==
        "status:OK");
  CHECK(Run(c, {"MGET", "s", "t", "h", "cold", "new"}) ==
        "[bulk:3, bulk:2, bulk:2, bulk:2, bulk:2]");
  CHECK(Run(c, {"TTL", "t"}) == "int:-1");
  CHECK(Run(c, {"TYPE", "h"}) == "status:string");
  CHECK(Run(c, {"DBSIZE"}) == "int:5");
  CHECK(InfoFields(InfoText(c, "keyspace"))["db0"] == "keys=5,expires=0,avg_ttl=0");
  CHECK(CacheVerify(c).mismatches == 0);
  // And after a restart, from what RocksDB holds.
  server.Restart();
  Client after(server.port());
  CHECK(Run(after, {"DBSIZE"}) == "int:5");
  CHECK(Run(after, {"MGET", "s", "t", "h"}) == "[bulk:3, bulk:2, bulk:2]");
}

// INCR, INCRBY and DECR of a counter the cache holds compute from the cached value and write it
// blind (no RocksDB read): replies, errors, TTLs and counts must be what the store path gives.
TEST_CASE("INCR of cached counters replies and counts as from storage", "[cache]") {
  TestServer server;
  Client c(server.port());
  REQUIRE(Run(c, {"SET", "n", "10"}) == "status:OK");  // a SET leaves its value cached
  REQUIRE(Run(c, {"SET", "t", "1", "EX", "1000"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "s", "abc"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "z", "007"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "max", "9223372036854775807"}) == "status:OK");
  REQUIRE(Run(c, {"HSET", "h", "f", "1"}) == "int:1");
  CHECK(Run(c, {"HGETALL", "h"}) == "[bulk:f, bulk:1]");

  CHECK(Run(c, {"INCR", "n"}) == "int:11");
  CHECK(Run(c, {"INCRBY", "n", "5"}) == "int:16");
  CHECK(Run(c, {"DECR", "n"}) == "int:15");
  CHECK(Run(c, {"DECRBY", "n", "20"}) == "int:-5");
  CHECK(Run(c, {"GET", "n"}) == "bulk:-5");
  CHECK(Run(c, {"INCR", "t"}) == "int:2");
  const std::string ttl = Run(c, {"TTL", "t"});
  CHECK((ttl == "int:1000" || ttl == "int:999"));
  const std::string not_integer = "err:ERR value is not an integer or out of range";
  CHECK(Run(c, {"INCR", "s"}) == not_integer);
  CHECK(Run(c, {"INCR", "z"}) == not_integer);
  CHECK(Run(c, {"INCR", "max"}) == "err:ERR increment or decrement would overflow");
  CHECK(Run(c, {"DECR", "max"}) == "int:9223372036854775806");
  CHECK(Run(c, {"INCR", "h"}) ==
        "err:WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(Run(c, {"INCR", "fresh"}) == "int:1");
  CHECK(Run(c, {"DBSIZE"}) == "int:7");
  CHECK(InfoFields(InfoText(c, "keyspace"))["db0"].rfind("keys=7,expires=1,", 0) == 0);
  CHECK(CacheVerify(c).mismatches == 0);
  server.Restart();
  Client after(server.port());
  CHECK(Run(after, {"MGET", "n", "t", "max", "fresh"}) ==
        "[bulk:-5, bulk:2, bulk:9223372036854775806, bulk:1]");
  CHECK(Run(after, {"TTL", "t"}) != "int:-1");
  CHECK(Run(after, {"DBSIZE"}) == "int:7");
  // Not cached after the restart: the store path increments and fills the entry with the TTL it
  // kept, and the next INCR is answered from that entry.
  CHECK(Run(after, {"INCR", "t"}) == "int:3");
  CHECK(Run(after, {"INCR", "t"}) == "int:4");
  const std::string ttl_after = Run(after, {"TTL", "t"});
  CHECK((ttl_after == "int:1000" || ttl_after == "int:999" || ttl_after == "int:998"));
  CHECK(InfoFields(InfoText(after, "keyspace"))["db0"].rfind("keys=7,expires=1,", 0) == 0);
  CHECK(CacheVerify(after).mismatches == 0);
}

// cache_rtc_storage_fills: reads the network thread answered after filling the cache from
// RocksDB's memory.
uint64_t StorageFills(Client& admin) {
  return InfoNumber(admin, "cache", "cache_rtc_storage_fills");
}

TEST_CASE("a cache miss is read from RocksDB's memory in the network thread", "[cache]") {
  TestServer server;
  auto c = std::make_unique<Client>(server.port());
  auto admin = std::make_unique<Client>(server.port());
  REQUIRE(Run(*admin, {"CONFIG", "GET", "rtc-storage-read-max-bytes"}) ==
          "[bulk:rtc-storage-read-max-bytes, bulk:16384]");
  // Keys in RocksDB that the cache does not hold: written while the cache was off.
  const std::string big(20000, 'b');
  REQUIRE(Run(*admin, {"CONFIG", "SET", "cache-maxmemory", "0"}) == "status:OK");
  REQUIRE(Run(*c, {"SET", "s", "v"}) == "status:OK");
  REQUIRE(Run(*c, {"SET", "t", "w", "PX", "100000"}) == "status:OK");
  REQUIRE(Run(*c, {"SET", "big", big}) == "status:OK");
  REQUIRE(Run(*c, {"RPUSH", "l", "a"}) == "int:1");
  REQUIRE(Run(*c, {"HSET", "h", "f", "v"}) == "int:1");
  REQUIRE(Run(*admin, {"CONFIG", "SET", "cache-maxmemory", "64mb"}) == "status:OK");

  uint64_t fills = StorageFills(*admin);
  // A string: answered in the network thread, then from the entry it filled.
  CHECK(RunRtc(*admin, *c, {"GET", "s"}) == "bulk:v");
  CHECK(StorageFills(*admin) == ++fills);
  CHECK(RunRtc(*admin, *c, {"GET", "s"}) == "bulk:v");
  CHECK(StorageFills(*admin) == fills);
  // Its TTL comes along: PTTL is then answered from the filled entry.
  CHECK(RunRtc(*admin, *c, {"GET", "t"}) == "bulk:w");
  CHECK(StorageFills(*admin) == ++fills);
  const Reply pttl = c->Command({"PTTL", "t"});
  CHECK(pttl.type == REDIS_REPLY_INTEGER);
  CHECK(pttl.integer > 40000);
  CHECK(pttl.integer <= 100000);
  CHECK(StorageFills(*admin) == fills);
  // Absent keys: a negative entry, for each string read of one key.
  CHECK(RunRtc(*admin, *c, {"GET", "nokey"}) == "nil");
  CHECK(StorageFills(*admin) == ++fills);
  CHECK(RunRtc(*admin, *c, {"GET", "nokey"}) == "nil");
  CHECK(RunRtc(*admin, *c, {"STRLEN", "nokey2"}) == "int:0");
  CHECK(RunRtc(*admin, *c, {"GETBIT", "nokey3", "7"}) == "int:0");
  CHECK(RunRtc(*admin, *c, {"MGET", "nokey4"}) == "[nil]");
  fills += 3;
  CHECK(StorageFills(*admin) == fills);
  // What the network thread leaves to the pool: a value over the limit, other types, commands
  // that are not string reads of one key.
  CHECK(Run(*c, {"GET", "big"}) == "bulk:" + big);
  CHECK(Run(*c, {"GET", "l"}) ==
        "err:WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(Run(*c, {"HGET", "h", "f"}) == "bulk:v");
  CHECK(Run(*c, {"HGET", "nokey5", "f"}) == "nil");
  CHECK(Run(*c, {"TYPE", "l"}) == "status:list");
  CHECK(Run(*c, {"TTL", "nokey6"}) == "int:-2");
  CHECK(Run(*c, {"MGET", "s", "nokey7"}) == "[bulk:v, nil]");  // two keys
  CHECK(StorageFills(*admin) == fills);
  // A write after the fill is seen at once.
  CHECK(Run(*c, {"SET", "nokey", "now"}) == "status:OK");
  CHECK(Run(*c, {"GET", "nokey"}) == "bulk:now");
  // Switched off at runtime: misses go to the pool.
  REQUIRE(Run(*admin, {"CONFIG", "SET", "rtc-storage-read-max-bytes", "0"}) == "status:OK");
  CHECK(Run(*c, {"GET", "nokey8"}) == "nil");
  CHECK(StorageFills(*admin) == fills);
  REQUIRE(Run(*admin, {"CONFIG", "SET", "rtc-storage-read-max-bytes", "16kb"}) == "status:OK");
  CHECK(Run(*c, {"GET", "nokey9"}) == "nil");
  CHECK(StorageFills(*admin) == ++fills);

  // After a restart the data is in SST files (recovery flushes the WAL's memtable) and the
  // block cache is empty. The files were just written, so their pages are in the OS page cache:
  // the network thread reads the mapped block (rtc-storage-read-mapped: the first misses of a
  // pipeline, here a lone GET).
  c.reset();
  admin.reset();
  server.Restart();
  c = std::make_unique<Client>(server.port());
  admin = std::make_unique<Client>(server.port());
  fills = StorageFills(*admin);
  CHECK(Run(*c, {"GET", "s"}) == "bulk:v");
  CHECK(StorageFills(*admin) == fills + 1);
  VerifyResult verify = CacheVerify(*admin);
  CHECK(verify.checked > 0);
  CHECK(verify.mismatches == 0);

  // Without mapped reads the first read needs a file, so the pool reads it.
  c.reset();
  admin.reset();
  server.set_keep_dir(true);
  server.Stop();
  TestServer unmapped({"--rtc-storage-read-mapped", "0"}, server.dir());
  c = std::make_unique<Client>(unmapped.port());
  admin = std::make_unique<Client>(unmapped.port());
  fills = StorageFills(*admin);
  CHECK(Run(*c, {"GET", "s"}) == "bulk:v");
  CHECK(StorageFills(*admin) == fills);
  CHECK(Run(*c, {"GET", "s"}) == "bulk:v");
  verify = CacheVerify(*admin);
  CHECK(verify.checked > 0);
  CHECK(verify.mismatches == 0);
}

// The pool's one worker runs a script that spins until killed; meanwhile another client's
// pipelined misses (a cold cache and block cache after a restart, the data in SST files the OS
// holds in memory) are read by the network thread instead of queueing behind the script
// (rtc-storage-read-balance), and with the balance off they wait for the worker.
TEST_CASE("misses are read in the network thread while the pool is busy", "[cache]") {
  std::vector<std::string> flags = {
      "--pool-threads", "1", "--net-threads", "1", "--rtc-storage-read-mapped", "0"};
  TestServer server(flags);
  {
    Client setup(server.port());
    for (int i = 0; i < 10; ++i) {
      REQUIRE(Run(setup, {"SET", "key:" + std::to_string(i), "v" + std::to_string(i)}) ==
              "status:OK");
    }
  }
  // Pipelines GETs of the ten keys while a script spins on the pool's worker and returns whether
  // all ten replies came before the script was killed (1.5 s after it was sent).
  auto answered_while_spinning = [](TestServer& s) {
    Client admin(s.port());
    Client reader(s.port());
    RawConnection spinner(s.port());
    spinner.Send(Resp({"EVAL", "local i = 0 while true do i = i + 1 end", "0"}));
    // The loop has sent the script's batch to the pool once it has read it; the worker need
    // not have started it (with the balance off the GETs queue behind it either way).
    SleepMs(100);
    REQUIRE(Run(admin, {"PING"}) == "status:PONG");
    for (int i = 0; i < 10; ++i) reader.Append({"GET", "key:" + std::to_string(i)});
    const auto start = std::chrono::steady_clock::now();
    std::thread killer([&s] {
      SleepMs(1500);
      Client k(s.port());
      k.Command({"SCRIPT", "KILL"});
    });
    std::vector<std::string> replies;
    Reply r;
    for (int i = 0; i < 10 && reader.GetReply(&r); ++i) replies.push_back(Describe(r));
    const bool before_kill =
        std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1200);
    killer.join();
    CHECK(!spinner.ReadExactly(1).empty());  // the script's error reply
    REQUIRE(replies.size() == 10);
    for (int i = 0; i < 10; ++i) CHECK(replies[i] == "bulk:v" + std::to_string(i));
    return before_kill;
  };
  // After a restart the cache and block cache are empty and the data is in SST files.
  server.Restart();
  CHECK(answered_while_spinning(server));
  server.set_keep_dir(true);
  server.Stop();
  flags.insert(flags.end(), {"--rtc-storage-read-balance", "no"});
  TestServer unbalanced(flags, server.dir());
  CHECK_FALSE(answered_while_spinning(unbalanced));
}

TEST_CASE("a fill in the network thread never installs a value a pending group write replaces",
          "[cache]") {
  // A group's writes reach RocksDB at its commit, after the cache already shows them. Here the
  // new value is too big for a 4 KiB shard (64kb / 16 shards), so the write leaves the key
  // uncached, and the rest of the pipeline keeps the group's commit waiting: a reader's miss in
  // that gap finds the old value in RocksDB. Its fill must be refused (the stripe's write
  // window stays open until the commit), or the old value would be cached for good.
  TestServer server({"--cache-maxmemory", "64kb"});
  Client writer(server.port()), admin(server.port());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0};
  std::thread reader([&] {
    Client c(server.port());
    Reply r;
    while (!stop.load()) {
      if (!c.TryCommand({"GET", "k"}, &r)) return;
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  int stale = 0;
  std::string first_stale;
  for (int round = 0; round < 200 && stale == 0; ++round) {
    const std::string small = "small" + std::to_string(round);
    const std::string big = std::string(8000, 'b') + std::to_string(round);
    if (Run(writer, {"SET", "k", small}) != "status:OK") break;
    writer.Append({"SET", "k", big});
    for (int i = 0; i < 300; ++i) writer.Append({"SET", "other:" + std::to_string(i), "x"});
    Reply r;
    for (int i = 0; i < 301; ++i) REQUIRE(writer.GetReply(&r));
    const Reply now = writer.Command({"GET", "k"});
    if (now.str != big) {
      ++stale;
      first_stale = "round " + std::to_string(round) + ": " + Describe(now).substr(0, 40);
    }
  }
  stop = true;
  reader.join();
  INFO(first_stale);
  CHECK(stale == 0);
  CHECK(reads.load() > 0);
  VerifyResult verify = CacheVerify(admin);
  CHECK(verify.mismatches == 0);
}

TEST_CASE("pipelines through the cache: order and read-your-writes", "[cache]") {
  TestServer server;
  Client c(server.port()), admin(server.port()), other(server.port());

  SECTION("writes and cached reads mixed in one write") {
    // Warm the keys so that a read answered from the cache would show the old value.
    REQUIRE(Run(c, {"SET", "p:k", "old"}) == "status:OK");
    REQUIRE(Run(c, {"SET", "p:c", "10"}) == "status:OK");
    REQUIRE(Run(c, {"HSET", "p:h", "f", "old"}) == "int:1");
    REQUIRE(Run(c, {"HGET", "p:h", "f"}) == "bulk:old");
    CHECK(RunRtc(admin, other, {"GET", "p:k"}) == "bulk:old");
    CHECK(RunRtc(admin, other, {"HGET", "p:h", "f"}) == "bulk:old");

    std::vector<std::pair<std::vector<std::string>, std::string>> pipeline;
    auto add = [&pipeline](std::vector<std::string> args, std::string expected) {
      pipeline.emplace_back(std::move(args), std::move(expected));
    };
    for (int round = 0; round < 20; ++round) {
      std::string v = "v" + std::to_string(round);
      add({"GET", "p:k"}, round == 0 ? "bulk:old" : "bulk:v" + std::to_string(round - 1) + "+");
      add({"SET", "p:k", v}, "status:OK");
      for (int i = 0; i < 5; ++i) add({"GET", "p:k"}, "bulk:" + v);
      add({"INCR", "p:c"}, "int:" + std::to_string(11 + round));
      add({"GET", "p:c"}, "bulk:" + std::to_string(11 + round));
      add({"MGET", "p:k", "p:c", "p:none"},
          "[bulk:" + v + ", bulk:" + std::to_string(11 + round) + ", nil]");
      add({"APPEND", "p:k", "+"}, "int:" + std::to_string(v.size() + 1));
      add({"STRLEN", "p:k"}, "int:" + std::to_string(v.size() + 1));
      add({"HSET", "p:h", "f", v}, "int:0");
      add({"HGET", "p:h", "f"}, "bulk:" + v);
      add({"HGETALL", "p:h"}, "[bulk:f, bulk:" + v + "]");
      add({"DEL", "p:tmp"}, "int:0");
      add({"SET", "p:tmp", "x"}, "status:OK");
      add({"EXISTS", "p:tmp", "p:k"}, "int:2");
      add({"DEL", "p:tmp"}, "int:1");
      add({"GET", "p:tmp"}, "nil");
      add({"EXISTS", "p:tmp", "p:k"}, "int:1");
    }
    for (const auto& [args, expected] : pipeline) c.Append(args);
    for (size_t i = 0; i < pipeline.size(); ++i) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      INFO("pipeline entry " << i << ": " << pipeline[i].first[0] << " " << pipeline[i].first[1]);
      CHECK(Describe(r) == pipeline[i].second);
    }
    // Another connection sees the final values, from the cache.
    CHECK(RunRtc(admin, other, {"GET", "p:k"}) == "bulk:v19+");
    CHECK(Run(other, {"GET", "p:c"}) == "bulk:30");
    CHECK(RunRtc(admin, other, {"HGET", "p:h", "f"}) == "bulk:v19");
    CHECK(CacheVerify(admin).mismatches == 0);
  }

  SECTION("a pipeline of GETs of cached keys is answered entirely in the network thread") {
    const int n = 200;
    for (int i = 0; i < n; ++i) {
      REQUIRE(Run(c, {"SET", "g:" + std::to_string(i), "val" + std::to_string(i)}) == "status:OK");
    }
    uint64_t rtc_before = RtcCalls(admin, "get");
    uint64_t answers_before = InfoNumber(admin, "cache", "cache_rtc_answers");
    for (int i = 0; i < n; ++i) c.Append({"GET", "g:" + std::to_string(i)});
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      if (Describe(r) != "bulk:val" + std::to_string(i)) ++wrong;
    }
    CHECK(wrong == 0);
    CHECK(RtcCalls(admin, "get") == rtc_before + n);
    CHECK(InfoNumber(admin, "cache", "cache_rtc_answers") == answers_before + n);
  }

  SECTION(
      "a miss in a pipeline: hits behind it still answered here, a write and all after it "
      "go to a worker, in order") {
    // Misses go to the pool (not filled from RocksDB's memory in the network thread).
    REQUIRE(Run(admin, {"CONFIG", "SET", "rtc-storage-read-max-bytes", "0"}) == "status:OK");
    REQUIRE(Run(c, {"SET", "m:a", "A"}) == "status:OK");
    uint64_t rtc_before = RtcCalls(admin, "get");
    // GET m:a (RTC), GET m:none (miss: to the pool), GET m:a (a hit behind the miss: answered
    // in the loop, its reply carried in the batch), SET and the GET behind it (the pool).
    c.Append({"GET", "m:a"});
    c.Append({"GET", "m:none"});
    c.Append({"GET", "m:a"});
    c.Append({"SET", "m:a", "B"});
    c.Append({"GET", "m:a"});
    std::vector<std::string> expected = {"bulk:A", "nil", "bulk:A", "status:OK", "bulk:B"};
    for (const auto& e : expected) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      CHECK(Describe(r) == e);
    }
    CHECK(RtcCalls(admin, "get") == rtc_before + 2);
  }

  SECTION("a miss filled from RocksDB's memory keeps the pipeline in the network thread") {
    REQUIRE(Run(c, {"SET", "m:a", "A"}) == "status:OK");
    uint64_t rtc_before = RtcCalls(admin, "get");
    // GET m:a (RTC), GET m:none (filled in the loop), GET m:a, then SET and the GET behind it
    // go to the pool.
    c.Append({"GET", "m:a"});
    c.Append({"GET", "m:none"});
    c.Append({"GET", "m:a"});
    c.Append({"SET", "m:a", "B"});
    c.Append({"GET", "m:a"});
    std::vector<std::string> expected = {"bulk:A", "nil", "bulk:A", "status:OK", "bulk:B"};
    for (const auto& e : expected) {
      Reply r;
      REQUIRE(c.GetReply(&r));
      CHECK(Describe(r) == e);
    }
    CHECK(RtcCalls(admin, "get") == rtc_before + 3);
  }
}
