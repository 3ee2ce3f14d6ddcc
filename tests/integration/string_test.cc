// String commands with Redis 7 semantics and error texts (replies checked against redis-server
// 7.0): GET/SET and its options, SETNX, SETEX, PSETEX, MGET, MSET, MSETNX, GETSET, GETDEL, GETEX,
// APPEND, STRLEN, INCR family, INCRBYFLOAT, GETRANGE, SETRANGE, binary safety, big values, expiry.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::kNotInteger;
using rockcache::testing::kSyntax;
using rockcache::testing::NowMs;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace string_test {

namespace {

long long Ttl(Client& c, const std::string& key) {
  Reply r = c.Command({"TTL", key});
  REQUIRE(r.type == REDIS_REPLY_INTEGER);
  return r.integer;
}

long long Pttl(Client& c, const std::string& key) {
  Reply r = c.Command({"PTTL", key});
  REQUIRE(r.type == REDIS_REPLY_INTEGER);
  return r.integer;
}

}  // namespace

TEST_CASE("GET and SET basics", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"GET", "k"}) == "nil");
  CHECK(Run(c, {"SET", "k", "v"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");
  CHECK(Run(c, {"SET", "k", "v2"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v2");
  CHECK(Run(c, {"set", "K", "upper"}) == "status:OK");  // keys are case sensitive
  CHECK(Run(c, {"GET", "k"}) == "bulk:v2");
  CHECK(Run(c, {"GET", "K"}) == "bulk:upper");
  CHECK(Run(c, {"GET", "k", "x"}) == "err:ERR wrong number of arguments for 'get' command");
  CHECK(Run(c, {"SET", "k"}) == "err:ERR wrong number of arguments for 'set' command");
  CHECK(Run(c, {"SET", "k", "v", "foo"}) == kSyntax);
  CHECK(Run(c, {"GET", "k"}) == "bulk:v2");
}

TEST_CASE("SET options EX PX EXAT PXAT KEEPTTL", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "k", "v", "EX", "0"}) == "err:ERR invalid expire time in 'set' command");
  CHECK(Run(c, {"SET", "k", "v", "PX", "-5"}) == "err:ERR invalid expire time in 'set' command");
  CHECK(Run(c, {"SET", "k", "v", "EXAT", "0"}) == "err:ERR invalid expire time in 'set' command");
  CHECK(Run(c, {"SET", "k", "v", "PXAT", "0"}) == "err:ERR invalid expire time in 'set' command");
  CHECK(Run(c, {"SET", "k", "v", "EX", "9223372036854775807"}) ==
        "err:ERR invalid expire time in 'set' command");
  CHECK(Run(c, {"SET", "k", "v", "EX", "abc"}) == kNotInteger);
  CHECK(Run(c, {"SET", "k", "v", "EX"}) == kSyntax);
  CHECK(Run(c, {"SET", "k", "v", "EX", "10", "PX", "10"}) == kSyntax);
  CHECK(Run(c, {"SET", "k", "v", "KEEPTTL", "EX", "10"}) == kSyntax);
  CHECK(Run(c, {"SET", "k", "v", "NX", "XX"}) == kSyntax);
  CHECK(Run(c, {"EXISTS", "k"}) == "int:0");  // failed SETs store nothing

  CHECK(Run(c, {"SET", "k", "v", "EX", "100"}) == "status:OK");
  CHECK(Ttl(c, "k") == 100);
  CHECK(Run(c, {"SET", "k", "v", "ex", "100"}) == "status:OK");  // options are case-insensitive
  CHECK(Run(c, {"SET", "k", "v2", "KEEPTTL"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v2");
  CHECK(Ttl(c, "k") > 95);
  CHECK(Run(c, {"SET", "k", "v3"}) == "status:OK");  // a plain SET drops the TTL
  CHECK(Ttl(c, "k") == -1);

  CHECK(Run(c, {"SET", "p", "v", "PX", "100000"}) == "status:OK");
  long long pttl = Pttl(c, "p");
  CHECK(pttl > 95000);
  CHECK(pttl <= 100000);

  long long now_s = NowMs() / 1000;
  CHECK(Run(c, {"SET", "e", "v", "EXAT", std::to_string(now_s + 500)}) == "status:OK");
  long long ttl = Ttl(c, "e");
  CHECK(ttl >= 497);
  CHECK(ttl <= 500);
  CHECK(Run(c, {"EXPIRETIME", "e"}) == "int:" + std::to_string(now_s + 500));

  long long at_ms = NowMs() + 300000;
  CHECK(Run(c, {"SET", "f", "v", "PXAT", std::to_string(at_ms)}) == "status:OK");
  CHECK(Run(c, {"PEXPIRETIME", "f"}) == "int:" + std::to_string(at_ms));
  ttl = Ttl(c, "f");
  CHECK(ttl >= 297);
  CHECK(ttl <= 300);

  // An absolute time in the past: Redis stores, then the key is immediately gone.
  CHECK(Run(c, {"SET", "past", "v", "PXAT", "1"}) == "status:OK");
  CHECK(Run(c, {"GET", "past"}) == "nil");
  CHECK(Run(c, {"EXISTS", "past"}) == "int:0");
}

TEST_CASE("SET NX XX GET", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "k", "v", "XX"}) == "nil");
  CHECK(Run(c, {"EXISTS", "k"}) == "int:0");
  CHECK(Run(c, {"SET", "k", "v", "NX"}) == "status:OK");
  CHECK(Run(c, {"SET", "k", "w", "NX"}) == "nil");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");
  CHECK(Run(c, {"SET", "k", "x", "XX"}) == "status:OK");
  CHECK(Run(c, {"GET", "k"}) == "bulk:x");

  CHECK(Run(c, {"SET", "g", "1", "GET"}) == "nil");  // missing → nil, but the SET happens
  CHECK(Run(c, {"GET", "g"}) == "bulk:1");
  CHECK(Run(c, {"SET", "g", "2", "GET"}) == "bulk:1");
  CHECK(Run(c, {"GET", "g"}) == "bulk:2");
  // NX GET: returns the old value and does not set.
  CHECK(Run(c, {"SET", "g", "3", "NX", "GET"}) == "bulk:2");
  CHECK(Run(c, {"GET", "g"}) == "bulk:2");
  CHECK(Run(c, {"SET", "ng", "1", "NX", "GET"}) == "nil");
  CHECK(Run(c, {"GET", "ng"}) == "bulk:1");
  // XX GET on a missing key: nil and nothing set.
  CHECK(Run(c, {"SET", "xg", "1", "XX", "GET"}) == "nil");
  CHECK(Run(c, {"EXISTS", "xg"}) == "int:0");
  CHECK(Run(c, {"SET", "g", "4", "XX", "GET", "EX", "100"}) == "bulk:2");
  CHECK(Run(c, {"GET", "g"}) == "bulk:4");
  CHECK(Ttl(c, "g") == 100);
  // Redis accepts a repeated flag.
  CHECK(Run(c, {"SET", "g", "5", "GET", "GET"}) == "bulk:4");
  CHECK(Run(c, {"SET", "g", "6", "XX", "XX"}) == "status:OK");
  CHECK(Run(c, {"GET", "g"}) == "bulk:6");
}

TEST_CASE("SETNX, SETEX, PSETEX", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SETNX", "k", "v"}) == "int:1");
  CHECK(Run(c, {"SETNX", "k", "w"}) == "int:0");
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");
  CHECK(Run(c, {"SETNX", "k"}) == "err:ERR wrong number of arguments for 'setnx' command");

  CHECK(Run(c, {"SETEX", "e", "100", "v"}) == "status:OK");
  CHECK(Run(c, {"GET", "e"}) == "bulk:v");
  CHECK(Ttl(c, "e") == 100);
  CHECK(Run(c, {"SETEX", "e", "0", "v"}) == "err:ERR invalid expire time in 'setex' command");
  CHECK(Run(c, {"SETEX", "e", "-1", "v"}) == "err:ERR invalid expire time in 'setex' command");
  CHECK(Run(c, {"SETEX", "e", "abc", "v"}) == kNotInteger);
  CHECK(Run(c, {"SETEX", "e", "10"}) == "err:ERR wrong number of arguments for 'setex' command");
  CHECK(Ttl(c, "e") == 100);  // the failed SETEXs did not touch it

  CHECK(Run(c, {"PSETEX", "p", "100000", "v"}) == "status:OK");
  long long pttl = Pttl(c, "p");
  CHECK(pttl > 95000);
  CHECK(pttl <= 100000);
  CHECK(Run(c, {"PSETEX", "p", "0", "v"}) == "err:ERR invalid expire time in 'psetex' command");
  CHECK(Run(c, {"PSETEX", "p", "x", "v"}) == kNotInteger);
  CHECK(Run(c, {"PSETEX", "short", "100", "v"}) == "status:OK");
  SleepMs(300);
  CHECK(Run(c, {"GET", "short"}) == "nil");
}

TEST_CASE("MGET, MSET, MSETNX, GETSET, GETDEL", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"MSET", "a", "1", "b", "2"}) == "status:OK");
  CHECK(Run(c, {"MGET", "a", "nokey", "b", "a"}) == "[bulk:1, nil, bulk:2, bulk:1]");
  CHECK(Run(c, {"MGET", "nokey"}) == "[nil]");
  CHECK(Run(c, {"MSET", "a"}) == "err:ERR wrong number of arguments for 'mset' command");
  CHECK(Run(c, {"MSET", "a", "1", "b"}) == "err:ERR wrong number of arguments for 'mset' command");
  CHECK(Run(c, {"MGET"}) == "err:ERR wrong number of arguments for 'mget' command");
  // The last value of a repeated key wins.
  CHECK(Run(c, {"MSET", "r", "1", "r", "2"}) == "status:OK");
  CHECK(Run(c, {"GET", "r"}) == "bulk:2");

  CHECK(Run(c, {"MSETNX", "a", "9", "c", "3"}) == "int:0");  // a exists: nothing is set
  CHECK(Run(c, {"EXISTS", "c"}) == "int:0");
  CHECK(Run(c, {"GET", "a"}) == "bulk:1");
  CHECK(Run(c, {"MSETNX", "c", "3", "d", "4"}) == "int:1");
  CHECK(Run(c, {"MGET", "c", "d"}) == "[bulk:3, bulk:4]");
  CHECK(Run(c, {"MSETNX", "e", "1", "e", "2"}) == "int:1");
  CHECK(Run(c, {"GET", "e"}) == "bulk:2");
  CHECK(Run(c, {"MSETNX", "x", "1", "y"}) ==
        "err:ERR wrong number of arguments for 'msetnx' command");

  CHECK(Run(c, {"SET", "t", "v", "EX", "100"}) == "status:OK");
  CHECK(Run(c, {"GETSET", "t", "w"}) == "bulk:v");
  CHECK(Run(c, {"GET", "t"}) == "bulk:w");
  CHECK(Ttl(c, "t") == -1);  // GETSET drops the TTL
  CHECK(Run(c, {"GETSET", "newkey", "5"}) == "nil");
  CHECK(Run(c, {"GET", "newkey"}) == "bulk:5");

  CHECK(Run(c, {"GETDEL", "t"}) == "bulk:w");
  CHECK(Run(c, {"EXISTS", "t"}) == "int:0");
  CHECK(Run(c, {"GETDEL", "t"}) == "nil");
  CHECK(Run(c, {"GETDEL", "t", "x"}) == "err:ERR wrong number of arguments for 'getdel' command");
}

TEST_CASE("GETEX options and their TTL effects", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"GETEX", "nokey"}) == "nil");
  CHECK(Run(c, {"GETEX", "nokey", "EX", "10"}) == "nil");
  CHECK(Run(c, {"EXISTS", "nokey"}) == "int:0");

  CHECK(Run(c, {"SET", "g", "v", "EX", "100"}) == "status:OK");
  CHECK(Run(c, {"GETEX", "g"}) == "bulk:v");
  CHECK(Ttl(c, "g") == 100);  // no option: TTL untouched
  CHECK(Run(c, {"GETEX", "g", "PERSIST"}) == "bulk:v");
  CHECK(Ttl(c, "g") == -1);
  CHECK(Run(c, {"GETEX", "g", "EX", "50"}) == "bulk:v");
  CHECK(Ttl(c, "g") == 50);
  CHECK(Run(c, {"GETEX", "g", "PX", "70000"}) == "bulk:v");
  long long pttl = Pttl(c, "g");
  CHECK(pttl > 65000);
  CHECK(pttl <= 70000);
  long long now_s = NowMs() / 1000;
  CHECK(Run(c, {"GETEX", "g", "EXAT", std::to_string(now_s + 1000)}) == "bulk:v");
  CHECK(Run(c, {"EXPIRETIME", "g"}) == "int:" + std::to_string(now_s + 1000));
  long long at_ms = NowMs() + 200000;
  CHECK(Run(c, {"GETEX", "g", "PXAT", std::to_string(at_ms)}) == "bulk:v");
  CHECK(Run(c, {"PEXPIRETIME", "g"}) == "int:" + std::to_string(at_ms));

  CHECK(Run(c, {"GETEX", "g", "foo"}) == kSyntax);
  CHECK(Run(c, {"GETEX", "g", "EX", "0"}) == "err:ERR invalid expire time in 'getex' command");
  CHECK(Run(c, {"GETEX", "g", "EX", "-1"}) == "err:ERR invalid expire time in 'getex' command");
  CHECK(Run(c, {"GETEX", "g", "EX", "abc"}) == kNotInteger);
  CHECK(Run(c, {"GETEX", "g", "PERSIST", "EX", "10"}) == kSyntax);
  CHECK(Run(c, {"GETEX", "g", "EX", "10", "PX", "10"}) == kSyntax);
  CHECK(Run(c, {"PEXPIRETIME", "g"}) == "int:" + std::to_string(at_ms));  // errors changed nothing

  // A past absolute time deletes the key (and still returns the value).
  CHECK(Run(c, {"GETEX", "g", "PXAT", "1"}) == "bulk:v");
  CHECK(Run(c, {"EXISTS", "g"}) == "int:0");
}

TEST_CASE("APPEND and STRLEN", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"STRLEN", "nokey"}) == "int:0");
  CHECK(Run(c, {"APPEND", "a", "abc"}) == "int:3");
  CHECK(Run(c, {"APPEND", "a", "def"}) == "int:6");
  CHECK(Run(c, {"APPEND", "a", ""}) == "int:6");
  CHECK(Run(c, {"GET", "a"}) == "bulk:abcdef");
  CHECK(Run(c, {"STRLEN", "a"}) == "int:6");
  CHECK(Run(c, {"APPEND", "a", std::string("\0\r\n", 3)}) == "int:9");
  CHECK(Run(c, {"GET", "a"}) == std::string("bulk:abcdef\0\r\n", 14));
  // APPEND keeps the TTL.
  CHECK(Run(c, {"SET", "t", "x", "EX", "100"}) == "status:OK");
  CHECK(Run(c, {"APPEND", "t", "y"}) == "int:2");
  CHECK(Ttl(c, "t") == 100);
  // Integers are strings: APPEND to a counter.
  CHECK(Run(c, {"INCR", "n"}) == "int:1");
  CHECK(Run(c, {"APPEND", "n", "0"}) == "int:2");
  CHECK(Run(c, {"INCR", "n"}) == "int:11");
  CHECK(Run(c, {"STRLEN", "n"}) == "int:2");
  CHECK(Run(c, {"APPEND", "a"}) == "err:ERR wrong number of arguments for 'append' command");
}

TEST_CASE("INCR, DECR, INCRBY, DECRBY", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"INCR", "n"}) == "int:1");
  CHECK(Run(c, {"INCR", "n"}) == "int:2");
  CHECK(Run(c, {"DECR", "n"}) == "int:1");
  CHECK(Run(c, {"DECR", "m"}) == "int:-1");
  CHECK(Run(c, {"INCRBY", "n", "10"}) == "int:11");
  CHECK(Run(c, {"INCRBY", "n", "-3"}) == "int:8");
  CHECK(Run(c, {"DECRBY", "n", "5"}) == "int:3");
  CHECK(Run(c, {"DECRBY", "n", "-3"}) == "int:6");
  CHECK(Run(c, {"GET", "n"}) == "bulk:6");  // stored as a string

  CHECK(Run(c, {"SET", "s", "abc"}) == "status:OK");
  CHECK(Run(c, {"INCR", "s"}) == kNotInteger);
  CHECK(Run(c, {"INCRBY", "n", "abc"}) == kNotInteger);
  CHECK(Run(c, {"INCRBY", "n", "1.5"}) == kNotInteger);
  for (const char* bad : {" 1", "1 ", "01", "+1", "1.0", "", "0x10", "99999999999999999999"}) {
    INFO("value '" << bad << "'");
    CHECK(Run(c, {"SET", "b", bad}) == "status:OK");
    CHECK(Run(c, {"INCR", "b"}) == kNotInteger);
    CHECK(Run(c, {"GET", "b"}) == std::string("bulk:") + bad);
  }
  CHECK(Run(c, {"SET", "z", "-0"}) == "status:OK");
  CHECK(Run(c, {"INCR", "z"}) == kNotInteger);
  CHECK(Run(c, {"SET", "z", "-5"}) == "status:OK");
  CHECK(Run(c, {"INCR", "z"}) == "int:-4");

  CHECK(Run(c, {"SET", "max", "9223372036854775807"}) == "status:OK");
  CHECK(Run(c, {"INCR", "max"}) == "err:ERR increment or decrement would overflow");
  CHECK(Run(c, {"INCRBY", "max", "1"}) == "err:ERR increment or decrement would overflow");
  CHECK(Run(c, {"GET", "max"}) == "bulk:9223372036854775807");
  CHECK(Run(c, {"SET", "min", "-9223372036854775808"}) == "status:OK");
  CHECK(Run(c, {"DECR", "min"}) == "err:ERR increment or decrement would overflow");
  CHECK(Run(c, {"INCRBY", "min", "-1"}) == "err:ERR increment or decrement would overflow");
  CHECK(Run(c, {"INCR", "min"}) == "int:-9223372036854775807");
  // DECRBY of LLONG_MIN cannot be negated.
  CHECK(Run(c, {"DECRBY", "n", "-9223372036854775808"}) == "err:ERR decrement would overflow");
  CHECK(Run(c, {"DECRBY", "n", "9223372036854775808"}) == kNotInteger);
  CHECK(Run(c, {"SET", "n", "10"}) == "status:OK");
  CHECK(Run(c, {"INCRBY", "n", "9223372036854775807"}) ==
        "err:ERR increment or decrement would overflow");
  CHECK(Run(c, {"GET", "n"}) == "bulk:10");

  // INCR keeps the TTL.
  CHECK(Run(c, {"SET", "t", "1", "EX", "100"}) == "status:OK");
  CHECK(Run(c, {"INCR", "t"}) == "int:2");
  CHECK(Ttl(c, "t") == 100);
  CHECK(Run(c, {"INCR"}) == "err:ERR wrong number of arguments for 'incr' command");
  CHECK(Run(c, {"INCRBY", "n"}) == "err:ERR wrong number of arguments for 'incrby' command");
}

TEST_CASE("INCRBYFLOAT", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "f", "10.50"}) == "status:OK");
  CHECK(Run(c, {"INCRBYFLOAT", "f", "0.1"}) == "bulk:10.6");
  CHECK(Run(c, {"INCRBYFLOAT", "f", "-5"}) == "bulk:5.6");
  CHECK(Run(c, {"GET", "f"}) == "bulk:5.6");
  CHECK(Run(c, {"SET", "f", "5.0e3"}) == "status:OK");
  CHECK(Run(c, {"INCRBYFLOAT", "f", "2.0e2"}) == "bulk:5200");
  CHECK(Run(c, {"INCRBYFLOAT", "new", "3"}) == "bulk:3");
  CHECK(Run(c, {"INCRBYFLOAT", "new2", "1.5e0"}) == "bulk:1.5");
  CHECK(Run(c, {"SET", "i", "3"}) == "status:OK");
  CHECK(Run(c, {"INCRBYFLOAT", "i", "0"}) == "bulk:3");
  CHECK(Run(c, {"SET", "f", "0.1"}) == "status:OK");
  CHECK(Run(c, {"INCRBYFLOAT", "f", "0.2"}) == "bulk:0.3");  // long double, 17 digits

  CHECK(Run(c, {"INCRBYFLOAT", "f", "abc"}) == "err:ERR value is not a valid float");
  CHECK(Run(c, {"SET", "s", "abc"}) == "status:OK");
  CHECK(Run(c, {"INCRBYFLOAT", "s", "1"}) == "err:ERR value is not a valid float");
  CHECK(Run(c, {"INCRBYFLOAT", "f", "inf"}) == "err:ERR increment would produce NaN or Infinity");
  CHECK(Run(c, {"INCRBYFLOAT", "f", "nan"}) == "err:ERR value is not a valid float");
  CHECK(Run(c, {"SET", "big", "1e308"}) == "status:OK");
  CHECK(Run(c, {"INCRBYFLOAT", "big", "1e308"}).rfind("bulk:199999999999999999993", 0) ==
        0);  // fits a long double; Redis prints it with %.17Lf
  CHECK(Run(c, {"GET", "f"}) == "bulk:0.3");
}

TEST_CASE("INCRBYFLOAT formats like Redis's long double", "[string]") {
  // redis-server 7.0 on x86-64 answers "5010.60000000000000009" here (17 significant digits of
  // a long double), not "5010.6".
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "f", "10.50"}) == "status:OK");
  CHECK(Run(c, {"INCRBYFLOAT", "f", "0.1"}) == "bulk:10.6");
  CHECK(Run(c, {"INCRBYFLOAT", "f", "5.0e3"}) == "bulk:5010.60000000000000009");
}

TEST_CASE("GETRANGE and SETRANGE", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "Hello World"}) == "status:OK");
  CHECK(Run(c, {"GETRANGE", "s", "0", "4"}) == "bulk:Hello");
  CHECK(Run(c, {"GETRANGE", "s", "-3", "-1"}) == "bulk:rld");
  CHECK(Run(c, {"GETRANGE", "s", "0", "-1"}) == "bulk:Hello World");
  CHECK(Run(c, {"GETRANGE", "s", "0", "-100"}) == "bulk:H");
  CHECK(Run(c, {"GETRANGE", "s", "-100", "-50"}) == "bulk:H");
  CHECK(Run(c, {"GETRANGE", "s", "5", "3"}) == "bulk:");
  CHECK(Run(c, {"GETRANGE", "s", "0", "1000"}) == "bulk:Hello World");
  CHECK(Run(c, {"GETRANGE", "s", "-1", "-1"}) == "bulk:d");
  CHECK(Run(c, {"GETRANGE", "s", "100", "200"}) == "bulk:");
  CHECK(Run(c, {"GETRANGE", "nokey", "0", "-1"}) == "bulk:");
  CHECK(Run(c, {"GETRANGE", "s", "a", "1"}) == kNotInteger);
  CHECK(Run(c, {"SUBSTR", "s", "6", "10"}) == "bulk:World");

  CHECK(Run(c, {"SETRANGE", "s", "6", "Redis"}) == "int:11");
  CHECK(Run(c, {"GET", "s"}) == "bulk:Hello Redis");
  CHECK(Run(c, {"SETRANGE", "s", "13", "!"}) == "int:14");
  CHECK(Run(c, {"GET", "s"}) == std::string("bulk:Hello Redis\0\0!", 19));
  CHECK(Run(c, {"SETRANGE", "pad", "5", "x"}) == "int:6");
  CHECK(Run(c, {"GET", "pad"}) == std::string("bulk:\0\0\0\0\0x", 11));
  CHECK(Run(c, {"SETRANGE", "s", "0", ""}) == "int:14");  // empty value: length only
  CHECK(Run(c, {"SETRANGE", "nokey", "10", ""}) == "int:0");
  CHECK(Run(c, {"EXISTS", "nokey"}) == "int:0");  // and nothing created
  CHECK(Run(c, {"SETRANGE", "s", "-1", "x"}) == "err:ERR offset is out of range");
  CHECK(Run(c, {"SETRANGE", "s", "536870912", "x"}) ==
        "err:ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  CHECK(Run(c, {"SETRANGE", "s", "a", "x"}) == kNotInteger);
  CHECK(Run(c, {"STRLEN", "s"}) == "int:14");
  // SETRANGE keeps the TTL.
  CHECK(Run(c, {"SET", "t", "abc", "EX", "100"}) == "status:OK");
  CHECK(Run(c, {"SETRANGE", "t", "1", "X"}) == "int:3");
  CHECK(Run(c, {"GET", "t"}) == "bulk:aXc");
  CHECK(Ttl(c, "t") == 100);
}

TEST_CASE("binary-safe keys and values", "[string]") {
  TestServer server;
  Client c(server.port());
  const std::string key_nul("k\0ey", 4);
  const std::string key_nul_prefix("k", 1);
  const std::string value_bin("a\0b\r\nc\xff\x00", 8);
  CHECK(Run(c, {"SET", key_nul, value_bin}) == "status:OK");
  CHECK(Run(c, {"GET", key_nul}) == "bulk:" + value_bin);
  CHECK(Run(c, {"GET", key_nul_prefix}) == "nil");  // not truncated at the NUL
  CHECK(Run(c, {"STRLEN", key_nul}) == "int:8");
  const std::string key_crlf("line1\r\nline2");
  CHECK(Run(c, {"SET", key_crlf, "\r\n"}) == "status:OK");
  CHECK(Run(c, {"GET", key_crlf}) == "bulk:\r\n");
  CHECK(Run(c, {"GET", "line1"}) == "nil");

  // Empty value and empty key.
  CHECK(Run(c, {"SET", "empty", ""}) == "status:OK");
  CHECK(Run(c, {"GET", "empty"}) == "bulk:");
  CHECK(Run(c, {"EXISTS", "empty"}) == "int:1");
  CHECK(Run(c, {"STRLEN", "empty"}) == "int:0");
  CHECK(Run(c, {"SET", "", "empty-key"}) == "status:OK");
  CHECK(Run(c, {"GET", ""}) == "bulk:empty-key");
  CHECK(Run(c, {"EXISTS", ""}) == "int:1");
  CHECK(Run(c, {"DEL", ""}) == "int:1");
  CHECK(Run(c, {"GET", ""}) == "nil");

  // All 256 byte values in one key and one value; survive a restart too.
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  CHECK(Run(c, {"SET", all, all}) == "status:OK");
  CHECK(Run(c, {"MGET", all, key_nul}) == "[bulk:" + all + ", bulk:" + value_bin + "]");
  server.Restart();
  Client c2(server.port());
  CHECK(Run(c2, {"GET", all}) == "bulk:" + all);
  CHECK(Run(c2, {"GET", key_nul}) == "bulk:" + value_bin);
  CHECK(Run(c2, {"GET", "empty"}) == "bulk:");
}

TEST_CASE("a 10 MB value round-trips", "[string]") {
  TestServer server;
  Client c(server.port(), 30000);
  std::string big(10 * 1024 * 1024, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  CHECK(Run(c, {"SET", "big", big}) == "status:OK");
  Reply r = c.Command({"GET", "big"});
  REQUIRE(r.type == REDIS_REPLY_STRING);
  CHECK(r.str.size() == big.size());
  CHECK(r.str == big);
  CHECK(Run(c, {"STRLEN", "big"}) == "int:10485760");
  CHECK(Run(c, {"GETRANGE", "big", "-3", "-1"}) == "bulk:" + big.substr(big.size() - 3));
  CHECK(Run(c, {"APPEND", "big", "tail"}) == "int:10485764");
  r = c.Command({"GETRANGE", "big", "10485756", "-1"});
  CHECK(Describe(r) == "bulk:" + big.substr(big.size() - 4) + "tail");
}

TEST_CASE("keys expire", "[string]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "k", "v"}) == "status:OK");
  CHECK(Run(c, {"PEXPIRE", "k", "100"}) == "int:1");
  long long pttl = Pttl(c, "k");
  CHECK(pttl > 0);
  CHECK(pttl <= 100);
  CHECK(Run(c, {"SET", "other", "v", "PX", "100"}) == "status:OK");
  CHECK(Run(c, {"GET", "other"}) == "bulk:v");  // read before expiry (may fill a cache)
  SleepMs(300);
  CHECK(Run(c, {"GET", "k"}) == "nil");
  CHECK(Run(c, {"EXISTS", "k"}) == "int:0");
  CHECK(Run(c, {"TTL", "k"}) == "int:-2");
  CHECK(Run(c, {"PTTL", "k"}) == "int:-2");
  CHECK(Run(c, {"STRLEN", "k"}) == "int:0");
  CHECK(Run(c, {"GET", "other"}) == "nil");
  CHECK(Run(c, {"MGET", "k", "other"}) == "[nil, nil]");
  CHECK(Run(c, {"DBSIZE"}) == "int:0");
  // An expired key counts as missing for NX, INCR and APPEND.
  CHECK(Run(c, {"SET", "k", "new", "NX"}) == "status:OK");
  CHECK(Run(c, {"TTL", "k"}) == "int:-1");
  CHECK(Run(c, {"SET", "n", "41", "PX", "100"}) == "status:OK");
  SleepMs(300);
  CHECK(Run(c, {"INCR", "n"}) == "int:1");
  CHECK(Run(c, {"TTL", "n"}) == "int:-1");
}

// A plain SET of a key the cache holds writes without reading the old meta
// (storage::SetOptions::known_present). It must still clear the TTL, replace a key of another
// type (whose old fields must never come back), keep DBSIZE exact, and survive a restart.
TEST_CASE("SET over a cached key: TTL cleared, other types replaced, DBSIZE exact", "[string]") {
  TestServer server;
  {
    Client c(server.port());
    CHECK(Run(c, {"SET", "s", "v1", "EX", "1000"}) == "status:OK");
    CHECK(Run(c, {"GET", "s"}) == "bulk:v1");  // cached
    CHECK(Run(c, {"SET", "s", "v2"}) == "status:OK");
    CHECK(Run(c, {"TTL", "s"}) == "int:-1");
    CHECK(Run(c, {"GET", "s"}) == "bulk:v2");
    CHECK(Run(c, {"SET", "s", "v3", "PX", "500000"}) == "status:OK");
    long long pttl = Pttl(c, "s");
    CHECK(pttl > 400000);
    CHECK(pttl <= 500000);

    CHECK(Run(c, {"HSET", "h", "f", "hv", "g", "gv"}) == "int:2");
    CHECK(Run(c, {"HGET", "h", "f"}) == "bulk:hv");  // the hash is cached
    CHECK(Run(c, {"HGET", "h", "f"}) == "bulk:hv");
    CHECK(Run(c, {"DBSIZE"}) == "int:2");
    CHECK(Run(c, {"SET", "h", "str"}) == "status:OK");
    CHECK(Run(c, {"DBSIZE"}) == "int:2");
    CHECK(Run(c, {"TYPE", "h"}) == "status:string");
    CHECK(Run(c, {"GET", "h"}) == "bulk:str");
    CHECK(Run(c, {"HGET", "h", "f"}).rfind("err:WRONGTYPE", 0) == 0);
    // A hash created again at that key starts empty: the old fields are unreachable.
    CHECK(Run(c, {"DEL", "h"}) == "int:1");
    CHECK(Run(c, {"HSET", "h", "n", "nv"}) == "int:1");
    CHECK(Run(c, {"HGETALL", "h"}) == "[bulk:n, bulk:nv]");
    CHECK(Run(c, {"SET", "h", "str2"}) == "status:OK");

    // EXAT in the past deletes the key.
    CHECK(Run(c, {"SET", "gone", "x"}) == "status:OK");
    CHECK(Run(c, {"GET", "gone"}) == "bulk:x");
    CHECK(Run(c, {"DBSIZE"}) == "int:3");
    CHECK(Run(c, {"SET", "gone", "y", "EXAT", "1"}) == "status:OK");
    CHECK(Run(c, {"EXISTS", "gone"}) == "int:0");
    CHECK(Run(c, {"DBSIZE"}) == "int:2");
  }
  server.Restart();
  Client c(server.port());
  CHECK(Run(c, {"DBSIZE"}) == "int:2");
  CHECK(Run(c, {"GET", "h"}) == "bulk:str2");
  CHECK(Run(c, {"GET", "s"}) == "bulk:v3");
  CHECK(Run(c, {"EXISTS", "gone"}) == "int:0");
}

}  // namespace string_test
