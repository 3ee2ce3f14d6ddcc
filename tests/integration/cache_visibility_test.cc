// The read cache seen from outside: every kind of write invalidates or updates what other
// connections read, at once, and a SET over a cached key rewrites its entry in place.

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::CacheVerify;
using rockcache::testing::Client;
using rockcache::testing::InfoNumber;
using rockcache::testing::Run;
using rockcache::testing::RunRtc;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;
using rockcache::testing::Ttl100;
using rockcache::testing::VerifyResult;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace cache_visibility_test {

namespace {

// A writer and a reader connection; checks that the reader sees each write at once.
struct Pair {
  explicit Pair(int port) : w(port), r(port), admin(port) {}
  Client w, r, admin;
  std::string Read(const std::vector<std::string>& args) { return Run(r, args); }
  std::string Write(const std::vector<std::string>& args) { return Run(w, args); }
  // Reads through the reader and REQUIREs the answer came from the cache (so it is warm).
  std::string Warm(const std::vector<std::string>& args) {
    Run(r, args);  // may miss and fill
    return RunRtc(admin, r, args);
  }
  void Verify() {
    VerifyResult v = CacheVerify(admin);
    INFO(v.text);
    CHECK(v.mismatches == 0);
  }
};

}  // namespace

TEST_CASE("every kind of write is seen at once by other connections", "[cache]") {
  TestServer server;
  Pair p(server.port());

  SECTION("string writes") {
    p.Write({"SET", "k", "v0"});
    CHECK(p.Warm({"GET", "k"}) == "bulk:v0");
    CHECK(p.Write({"SET", "k", "v1"}) == "status:OK");
    CHECK(p.Read({"GET", "k"}) == "bulk:v1");
    CHECK(p.Read({"STRLEN", "k"}) == "int:2");

    CHECK(p.Write({"SETEX", "k", "100", "v2"}) == "status:OK");
    CHECK(p.Read({"GET", "k"}) == "bulk:v2");
    CHECK(Ttl100(p.Read({"TTL", "k"})));

    CHECK(p.Write({"PSETEX", "k", "200000", "v3"}) == "status:OK");
    CHECK(p.Read({"GET", "k"}) == "bulk:v3");
    CHECK(p.Read({"TTL", "k"}) == "int:200");

    CHECK(p.Write({"SET", "k", "v4"}) == "status:OK");  // clears the TTL
    CHECK(p.Read({"TTL", "k"}) == "int:-1");

    CHECK(p.Warm({"GET", "k"}) == "bulk:v4");
    CHECK(p.Write({"APPEND", "k", "-more"}) == "int:7");
    CHECK(p.Read({"GET", "k"}) == "bulk:v4-more");
    CHECK(p.Read({"STRLEN", "k"}) == "int:7");

    CHECK(p.Write({"SET", "k", "x", "NX"}) == "nil");
    CHECK(p.Read({"GET", "k"}) == "bulk:v4-more");
    CHECK(p.Write({"SET", "k", "v5", "XX", "GET"}) == "bulk:v4-more");
    CHECK(p.Read({"GET", "k"}) == "bulk:v5");
    CHECK(p.Write({"GETSET", "k", "v6"}) == "bulk:v5");
    CHECK(p.Read({"GET", "k"}) == "bulk:v6");
    CHECK(p.Write({"SETNX", "k", "v7"}) == "int:0");
    CHECK(p.Read({"GET", "k"}) == "bulk:v6");

    p.Write({"SET", "n", "10"});
    CHECK(p.Warm({"GET", "n"}) == "bulk:10");
    CHECK(p.Write({"INCR", "n"}) == "int:11");
    CHECK(p.Read({"GET", "n"}) == "bulk:11");
    CHECK(p.Write({"INCRBY", "n", "9"}) == "int:20");
    CHECK(p.Read({"GET", "n"}) == "bulk:20");
    CHECK(p.Write({"DECR", "n"}) == "int:19");
    CHECK(p.Read({"GET", "n"}) == "bulk:19");
    CHECK(p.Write({"DECRBY", "n", "20"}) == "int:-1");
    CHECK(p.Read({"GET", "n"}) == "bulk:-1");
    CHECK(p.Read({"STRLEN", "n"}) == "int:2");

    p.Write({"SET", "f", "1.5"});
    CHECK(p.Warm({"GET", "f"}) == "bulk:1.5");
    CHECK(p.Write({"INCRBYFLOAT", "f", "2"}) == "bulk:3.5");
    CHECK(p.Read({"GET", "f"}) == "bulk:3.5");

    p.Write({"SET", "r", "hello"});
    CHECK(p.Warm({"GET", "r"}) == "bulk:hello");
    CHECK(p.Write({"SETRANGE", "r", "0", "J"}) == "int:5");
    CHECK(p.Read({"GET", "r"}) == "bulk:Jello");
    CHECK(p.Write({"SETRANGE", "r", "7", "!"}) == "int:8");
    CHECK(p.Read({"GET", "r"}) == std::string("bulk:Jello\0\0!", 13));

    CHECK(p.Warm({"GET", "r"}) == std::string("bulk:Jello\0\0!", 13));
    CHECK(p.Write({"GETDEL", "r"}) == std::string("bulk:Jello\0\0!", 13));
    CHECK(p.Read({"GET", "r"}) == "nil");
    CHECK(p.Read({"EXISTS", "r"}) == "int:0");
    CHECK(p.Read({"STRLEN", "r"}) == "int:0");

    p.Write({"MSET", "m1", "a", "m2", "b"});
    CHECK(p.Warm({"GET", "m1"}) == "bulk:a");
    CHECK(p.Warm({"GET", "m2"}) == "bulk:b");
    CHECK(p.Write({"MSET", "m1", "A", "m2", "B", "m1", "AA"}) == "status:OK");
    CHECK(p.Read({"GET", "m1"}) == "bulk:AA");
    CHECK(p.Read({"MGET", "m1", "m2"}) == "[bulk:AA, bulk:B]");
    CHECK(p.Write({"MSETNX", "m2", "x", "m3", "y"}) == "int:0");
    CHECK(p.Read({"MGET", "m1", "m2", "m3"}) == "[bulk:AA, bulk:B, nil]");
    p.Verify();
  }

  SECTION("GETEX, DEL, UNLINK") {
    p.Write({"SET", "g", "v", "EX", "100"});
    CHECK(p.Warm({"GET", "g"}) == "bulk:v");
    CHECK(Ttl100(p.Warm({"TTL", "g"})));
    CHECK(p.Write({"GETEX", "g", "PERSIST"}) == "bulk:v");
    CHECK(p.Read({"TTL", "g"}) == "int:-1");
    CHECK(p.Warm({"TTL", "g"}) == "int:-1");
    CHECK(p.Write({"GETEX", "g", "EX", "50"}) == "bulk:v");
    CHECK(p.Read({"TTL", "g"}) == "int:50");
    CHECK(p.Write({"GETEX", "g", "PX", "70000"}) == "bulk:v");
    CHECK(p.Read({"TTL", "g"}) == "int:70");
    CHECK(p.Write({"GETEX", "g"}) == "bulk:v");
    CHECK(p.Read({"TTL", "g"}) == "int:70");

    p.Write({"SET", "d", "v"});
    CHECK(p.Warm({"GET", "d"}) == "bulk:v");
    CHECK(p.Write({"DEL", "d"}) == "int:1");
    CHECK(p.Read({"GET", "d"}) == "nil");
    CHECK(p.Read({"EXISTS", "d"}) == "int:0");
    CHECK(p.Read({"TYPE", "d"}) == "status:none");
    CHECK(p.Read({"TTL", "d"}) == "int:-2");

    p.Write({"SET", "u", "v"});
    p.Write({"HSET", "uh", "f", "v"});
    CHECK(p.Warm({"GET", "u"}) == "bulk:v");
    CHECK(p.Warm({"HGET", "uh", "f"}) == "bulk:v");
    CHECK(p.Write({"UNLINK", "u", "uh", "nokey"}) == "int:2");
    CHECK(p.Read({"GET", "u"}) == "nil");
    CHECK(p.Read({"HGET", "uh", "f"}) == "nil");
    CHECK(p.Read({"HGETALL", "uh"}) == "[]");
    CHECK(p.Read({"EXISTS", "u", "uh"}) == "int:0");
    p.Verify();
  }

  SECTION("EXPIRE, PEXPIRE, EXPIREAT, PERSIST") {
    p.Write({"SET", "e", "v"});
    CHECK(p.Warm({"TTL", "e"}) == "int:-1");
    CHECK(p.Write({"EXPIRE", "e", "100"}) == "int:1");
    CHECK(Ttl100(p.Read({"TTL", "e"})));
    CHECK(Ttl100(p.Warm({"TTL", "e"})));
    CHECK(p.Write({"PEXPIRE", "e", "50000"}) == "int:1");
    CHECK(p.Read({"TTL", "e"}) == "int:50");
    int64_t at = rockcache::testing::NowMs() / 1000 + 300;
    CHECK(p.Write({"EXPIREAT", "e", std::to_string(at)}) == "int:1");
    std::string ttl = p.Read({"TTL", "e"});
    CHECK((ttl == "int:300" || ttl == "int:299"));
    CHECK(p.Write({"EXPIRE", "e", "10", "GT"}) == "int:0");
    std::string ttl2 = p.Read({"TTL", "e"});
    CHECK((ttl2 == "int:300" || ttl2 == "int:299"));
    CHECK(p.Write({"PERSIST", "e"}) == "int:1");
    CHECK(p.Read({"TTL", "e"}) == "int:-1");
    CHECK(p.Read({"PTTL", "e"}) == "int:-1");
    CHECK(p.Warm({"GET", "e"}) == "bulk:v");
    // A time in the past deletes the key.
    CHECK(p.Write({"EXPIRE", "e", "-1"}) == "int:1");
    CHECK(p.Read({"GET", "e"}) == "nil");
    CHECK(p.Read({"TTL", "e"}) == "int:-2");

    p.Write({"HSET", "eh", "f", "v"});
    CHECK(p.Warm({"HGET", "eh", "f"}) == "bulk:v");
    CHECK(p.Write({"PEXPIRE", "eh", "90000"}) == "int:1");
    CHECK(p.Read({"TTL", "eh"}) == "int:90");
    CHECK(p.Write({"PEXPIRE", "eh", "0"}) == "int:1");
    CHECK(p.Read({"HGET", "eh", "f"}) == "nil");
    CHECK(p.Read({"EXISTS", "eh"}) == "int:0");
    p.Verify();
  }

  SECTION("RENAME both ways") {
    p.Write({"SET", "src", "S"});
    p.Write({"SET", "dst", "D", "EX", "100"});
    CHECK(p.Warm({"GET", "src"}) == "bulk:S");
    CHECK(p.Warm({"GET", "dst"}) == "bulk:D");
    CHECK(Ttl100(p.Warm({"TTL", "dst"})));
    CHECK(p.Write({"RENAME", "src", "dst"}) == "status:OK");
    CHECK(p.Read({"GET", "src"}) == "nil");
    CHECK(p.Read({"GET", "dst"}) == "bulk:S");
    CHECK(p.Read({"TTL", "dst"}) == "int:-1");
    CHECK(p.Warm({"GET", "dst"}) == "bulk:S");
    CHECK(p.Write({"RENAME", "dst", "src"}) == "status:OK");
    CHECK(p.Read({"GET", "dst"}) == "nil");
    CHECK(p.Read({"GET", "src"}) == "bulk:S");
    // A hash renamed over a cached string, and RENAMENX.
    p.Write({"HSET", "rh", "f", "v"});
    CHECK(p.Warm({"HGET", "rh", "f"}) == "bulk:v");
    CHECK(p.Warm({"GET", "src"}) == "bulk:S");
    CHECK(p.Write({"RENAME", "rh", "src"}) == "status:OK");
    CHECK(p.Read({"HGET", "src", "f"}) == "bulk:v");
    CHECK(p.Read({"GET", "src"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Read({"TYPE", "src"}) == "status:hash");
    CHECK(p.Read({"HGET", "rh", "f"}) == "nil");
    p.Write({"SET", "nx1", "1"});
    CHECK(p.Warm({"GET", "nx1"}) == "bulk:1");
    CHECK(p.Write({"RENAMENX", "nx1", "nx2"}) == "int:1");
    CHECK(p.Read({"GET", "nx1"}) == "nil");
    CHECK(p.Read({"GET", "nx2"}) == "bulk:1");
    p.Verify();
  }

  SECTION("FLUSHALL and FLUSHDB") {
    for (int i = 0; i < 20; ++i) p.Write({"SET", "fl" + std::to_string(i), "v"});
    p.Write({"HSET", "flh", "f", "v"});
    for (int i = 0; i < 20; ++i) CHECK(p.Warm({"GET", "fl" + std::to_string(i)}) == "bulk:v");
    CHECK(p.Warm({"HGET", "flh", "f"}) == "bulk:v");
    CHECK(p.Write({"FLUSHALL"}) == "status:OK");
    for (int i = 0; i < 20; ++i) CHECK(p.Read({"GET", "fl" + std::to_string(i)}) == "nil");
    CHECK(p.Read({"HGET", "flh", "f"}) == "nil");
    CHECK(p.Read({"EXISTS", "fl0", "flh"}) == "int:0");
    // The reads above remembered the keys as absent (negative entries); nothing else survives.
    CHECK(InfoNumber(p.admin, "cache", "cache_keys") ==
          InfoNumber(p.admin, "cache", "cache_negative_keys"));
    p.Write({"SET", "fl0", "again"});
    CHECK(p.Warm({"GET", "fl0"}) == "bulk:again");
    CHECK(p.Write({"FLUSHDB"}) == "status:OK");
    CHECK(p.Read({"GET", "fl0"}) == "nil");
    p.Verify();
  }

  SECTION("hash writes") {
    p.Write({"HSET", "h", "f", "v0", "g", "w"});
    CHECK(p.Warm({"HGET", "h", "f"}) == "bulk:v0");
    CHECK(p.Write({"HSET", "h", "f", "v1"}) == "int:0");
    CHECK(p.Read({"HGET", "h", "f"}) == "bulk:v1");
    CHECK(p.Read({"HGETALL", "h"}) == "[bulk:f, bulk:v1, bulk:g, bulk:w]");
    CHECK(p.Write({"HMSET", "h", "a", "1"}) == "status:OK");
    CHECK(p.Read({"HGETALL", "h"}) == "[bulk:a, bulk:1, bulk:f, bulk:v1, bulk:g, bulk:w]");
    CHECK(p.Read({"HLEN", "h"}) == "int:3");
    CHECK(p.Warm({"HLEN", "h"}) == "int:3");
    CHECK(p.Write({"HINCRBY", "h", "a", "5"}) == "int:6");
    CHECK(p.Read({"HGET", "h", "a"}) == "bulk:6");
    CHECK(p.Warm({"HGET", "h", "a"}) == "bulk:6");
    CHECK(p.Write({"HINCRBYFLOAT", "h", "a", "0.5"}) == "bulk:6.5");
    CHECK(p.Read({"HGET", "h", "a"}) == "bulk:6.5");
    CHECK(p.Warm({"HEXISTS", "h", "n"}) == "int:0");
    CHECK(p.Write({"HSETNX", "h", "n", "new"}) == "int:1");
    CHECK(p.Read({"HEXISTS", "h", "n"}) == "int:1");
    CHECK(p.Read({"HGET", "h", "n"}) == "bulk:new");
    CHECK(p.Warm({"HSTRLEN", "h", "n"}) == "int:3");
    CHECK(p.Write({"HDEL", "h", "n", "a", "nofield"}) == "int:2");
    CHECK(p.Read({"HGET", "h", "n"}) == "nil");
    CHECK(p.Read({"HSTRLEN", "h", "n"}) == "int:0");
    CHECK(p.Read({"HMGET", "h", "f", "g", "a"}) == "[bulk:v1, bulk:w, nil]");
    // HDEL of the last fields: the key is gone.
    CHECK(p.Warm({"HGETALL", "h"}) == "[bulk:f, bulk:v1, bulk:g, bulk:w]");
    CHECK(p.Write({"HDEL", "h", "f", "g"}) == "int:2");
    CHECK(p.Read({"HGET", "h", "f"}) == "nil");
    CHECK(p.Read({"HGETALL", "h"}) == "[]");
    CHECK(p.Read({"HLEN", "h"}) == "int:0");
    CHECK(p.Read({"EXISTS", "h"}) == "int:0");
    CHECK(p.Read({"TYPE", "h"}) == "status:none");
    p.Verify();
  }

  SECTION("type changes") {
    p.Write({"HSET", "t", "f", "v"});
    CHECK(p.Warm({"HGET", "t", "f"}) == "bulk:v");
    CHECK(p.Warm({"TYPE", "t"}) == "status:hash");
    CHECK(p.Write({"DEL", "t"}) == "int:1");
    CHECK(p.Write({"SET", "t", "str"}) == "status:OK");
    CHECK(p.Read({"GET", "t"}) == "bulk:str");
    CHECK(p.Read({"TYPE", "t"}) == "status:string");
    CHECK(p.Read({"HGET", "t", "f"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Warm({"GET", "t"}) == "bulk:str");
    CHECK(p.Write({"DEL", "t"}) == "int:1");
    CHECK(p.Write({"HSET", "t", "f", "again"}) == "int:1");
    CHECK(p.Read({"HGET", "t", "f"}) == "bulk:again");
    CHECK(p.Read({"GET", "t"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Read({"TYPE", "t"}) == "status:hash");
    CHECK(p.Read({"MGET", "t"}) == "[nil]");
    // SET straight over a cached hash replaces it.
    CHECK(p.Warm({"HGETALL", "t"}) == "[bulk:f, bulk:again]");
    CHECK(p.Write({"SET", "t", "plain"}) == "status:OK");
    CHECK(p.Read({"GET", "t"}) == "bulk:plain");
    CHECK(p.Read({"TYPE", "t"}) == "status:string");
    CHECK(p.Read({"HGETALL", "t"}).rfind("err:WRONGTYPE", 0) == 0);
    // A failed write of another type leaves the cached value alone.
    CHECK(p.Warm({"GET", "t"}) == "bulk:plain");
    CHECK(p.Write({"HSET", "t", "f", "x"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Write({"LPUSH", "t", "x"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Read({"GET", "t"}) == "bulk:plain");
    // Another type's write after DEL of a cached string.
    CHECK(p.Write({"DEL", "t"}) == "int:1");
    CHECK(p.Write({"LPUSH", "t", "x"}) == "int:1");
    CHECK(p.Read({"TYPE", "t"}) == "status:list");
    CHECK(p.Read({"GET", "t"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(p.Read({"EXISTS", "t"}) == "int:1");
    p.Verify();
  }
}

TEST_CASE(
    "negative entries: a known-absent key is answered in the loop, and every write that "
    "creates it is seen at once",
    "[cache]") {
  TestServer server;
  Pair p(server.port());
  // Every read the cache can answer for an absent key, with its reply, warmed into the cache
  // (the first read misses and remembers the absence; the second is answered in the loop).
  auto warm_absent = [&p](const std::string& k) {
    CHECK(p.Warm({"GET", k}) == "nil");
    CHECK(p.Warm({"HGET", k, "f"}) == "nil");
    CHECK(p.Warm({"EXISTS", k}) == "int:0");
    CHECK(p.Warm({"TTL", k}) == "int:-2");
    CHECK(p.Warm({"PTTL", k}) == "int:-2");
    CHECK(p.Warm({"TYPE", k}) == "status:none");
    CHECK(p.Warm({"STRLEN", k}) == "int:0");
    CHECK(p.Warm({"HLEN", k}) == "int:0");
    CHECK(p.Warm({"HGETALL", k}) == "[]");
    CHECK(p.Warm({"MGET", k, k}) == "[nil, nil]");
  };
  struct Creator {
    std::vector<std::vector<std::string>> setup;  // writes to other keys first
    std::vector<std::string> write;               // creates "k"
    std::string type;                             // TYPE k afterwards
    std::string get;                              // GET k afterwards
  };
  const std::string wt = "err:WRONGTYPE Operation against a key holding the wrong kind of value";
  std::vector<Creator> creators = {
      {{}, {"SET", "k", "v"}, "status:string", "bulk:v"},
      {{}, {"SET", "k", "v", "KEEPTTL"}, "status:string", "bulk:v"},
      {{}, {"SETNX", "k", "v"}, "status:string", "bulk:v"},
      {{}, {"SETEX", "k", "100", "v"}, "status:string", "bulk:v"},
      {{}, {"PSETEX", "k", "100000", "v"}, "status:string", "bulk:v"},
      {{}, {"GETSET", "k", "v"}, "status:string", "bulk:v"},
      {{}, {"MSET", "k", "v", "other", "o"}, "status:string", "bulk:v"},
      {{}, {"MSETNX", "k", "v", "other2", "o"}, "status:string", "bulk:v"},
      {{}, {"APPEND", "k", "v"}, "status:string", "bulk:v"},
      {{}, {"INCR", "k"}, "status:string", "bulk:1"},
      {{}, {"INCRBYFLOAT", "k", "1.5"}, "status:string", "bulk:1.5"},
      {{}, {"SETRANGE", "k", "0", "v"}, "status:string", "bulk:v"},
      {{}, {"HSET", "k", "f", "v"}, "status:hash", wt},
      {{}, {"HSETNX", "k", "f", "v"}, "status:hash", wt},
      {{}, {"HINCRBY", "k", "f", "1"}, "status:hash", wt},
      {{}, {"LPUSH", "k", "a"}, "status:list", wt},
      {{}, {"RPUSH", "k", "a"}, "status:list", wt},
      {{}, {"SADD", "k", "a"}, "status:set", wt},
      {{}, {"ZADD", "k", "1", "a"}, "status:zset", wt},
      {{{"SET", "src", "v"}}, {"RENAME", "src", "k"}, "status:string", "bulk:v"},
      {{{"SET", "src", "v"}}, {"RENAMENX", "src", "k"}, "status:string", "bulk:v"},
      {{{"RPUSH", "src", "a"}}, {"RPOPLPUSH", "src", "k"}, "status:list", wt},
      {{{"RPUSH", "src", "a"}}, {"LMOVE", "src", "k", "LEFT", "RIGHT"}, "status:list", wt},
      {{{"SADD", "src", "a"}}, {"SMOVE", "src", "k", "a"}, "status:set", wt},
      {{{"SADD", "src", "a"}}, {"SUNIONSTORE", "k", "src"}, "status:set", wt},
      {{{"ZADD", "src", "1", "a"}}, {"ZRANGESTORE", "k", "src", "0", "-1"}, "status:zset", wt},
  };
  for (const auto& c : creators) {
    INFO("creator " << c.write[0]);
    p.Write({"DEL", "k", "src"});
    for (const auto& w : c.setup) p.Write(w);
    warm_absent("k");
    p.Write(c.write);
    CHECK(p.Read({"TYPE", "k"}) == c.type);
    CHECK(p.Read({"EXISTS", "k"}) == "int:1");
    CHECK(p.Read({"GET", "k"}) == c.get);
    CHECK(p.Read({"TTL", "k"}) != "int:-2");
    if (c.type == "status:hash") CHECK(p.Read({"HGET", "k", "f"}) != "nil");
    p.Verify();
  }

  // A key that expires becomes a negative entry, and a new SET replaces it.
  p.Write({"DEL", "k"});
  // 1 s: a sanitizer build on a loaded machine took more than 100 ms to reach the first GET.
  CHECK(p.Write({"SET", "k", "short", "PX", "1000"}) == "status:OK");
  CHECK(p.Warm({"GET", "k"}) == "bulk:short");
  SleepMs(1100);
  CHECK(p.Read({"GET", "k"}) == "nil");
  CHECK(p.Warm({"GET", "k"}) == "nil");
  CHECK(p.Write({"SET", "k", "again"}) == "status:OK");
  CHECK(p.Read({"GET", "k"}) == "bulk:again");
  // EXPIRE/PERSIST of a known-absent key create nothing; the absence stays right.
  p.Write({"DEL", "k"});
  warm_absent("k");
  CHECK(p.Write({"EXPIRE", "k", "100"}) == "int:0");
  CHECK(p.Write({"PERSIST", "k"}) == "int:0");
  CHECK(p.Write({"HDEL", "k", "f"}) == "int:0");
  CHECK(p.Warm({"GET", "k"}) == "nil");
  // FLUSHALL drops negative entries with the rest; a SET after it is seen.
  warm_absent("gone");
  CHECK(p.Write({"FLUSHALL"}) == "status:OK");
  CHECK(p.Read({"GET", "gone"}) == "nil");
  CHECK(p.Write({"SET", "gone", "back"}) == "status:OK");
  CHECK(p.Read({"GET", "gone"}) == "bulk:back");
  p.Verify();

  // A known-absent key costs the pool nothing: answered in the network thread.
  warm_absent("still-absent");
  CHECK(InfoNumber(p.admin, "cache", "cache_negative_hits") > 0);
  CHECK(InfoNumber(p.admin, "cache", "cache_negative_keys") > 0);
}

// SET over a key the cache holds rewrites the entry in place (server/commands/cache_access.h,
// CacheOverwriteString): counted as an update, not a fill, and what readers see (value, type,
// TTL) and what the entry is charged are those of a fresh entry.
TEST_CASE("a SET over a cached key rewrites its entry in place", "[cache]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  const std::string big(1000, 'b');
  REQUIRE(Run(c, {"SET", "k1", big}) == "status:OK");
  REQUIRE(RunRtc(admin, c, {"GET", "k1"}) == "bulk:" + big);

  // Big value -> small one: the charge is the small value's, as a new entry of it would be.
  const uint64_t fills = InfoNumber(admin, "cache", "cache_fills");
  const uint64_t updates = InfoNumber(admin, "cache", "cache_updates");
  REQUIRE(Run(c, {"SET", "k1", "v2"}) == "status:OK");
  CHECK(InfoNumber(admin, "cache", "cache_fills") == fills);
  CHECK(InfoNumber(admin, "cache", "cache_updates") == updates + 1);
  CHECK(RunRtc(admin, c, {"GET", "k1"}) == "bulk:v2");
  const uint64_t in_place = InfoNumber(admin, "cache", "cache_used_bytes");
  REQUIRE(Run(c, {"DEL", "k1"}) == "int:1");
  REQUIRE(Run(c, {"SET", "k1", "v2"}) == "status:OK");  // not cached now: a new entry
  CHECK(InfoNumber(admin, "cache", "cache_used_bytes") == in_place);

  // TTLs: SET ... EX gives the cached entry one, a plain SET clears it.
  REQUIRE(Run(c, {"SET", "k1", "v3", "EX", "1000"}) == "status:OK");
  std::string ttl = RunRtc(admin, c, {"TTL", "k1"});
  REQUIRE(ttl.rfind("int:", 0) == 0);
  CHECK(std::stoll(ttl.substr(4)) > 900);
  REQUIRE(Run(c, {"SET", "k1", "v4"}) == "status:OK");
  CHECK(RunRtc(admin, c, {"TTL", "k1"}) == "int:-1");
  CHECK(RunRtc(admin, c, {"GET", "k1"}) == "bulk:v4");

  // Another type cached under the key: the entry becomes a string.
  REQUIRE(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  Run(c, {"HGET", "h", "f"});
  REQUIRE(RunRtc(admin, c, {"HGET", "h", "f"}) == "bulk:v");
  REQUIRE(Run(c, {"SET", "h", "s"}) == "status:OK");
  CHECK(RunRtc(admin, c, {"GET", "h"}) == "bulk:s");
  CHECK(Run(c, {"TYPE", "h"}) == "status:string");
  CHECK(Run(c, {"HGET", "h", "f"}).rfind("err:WRONGTYPE", 0) == 0);
  CHECK(CacheVerify(admin).mismatches == 0);
}

}  // namespace cache_visibility_test
