// Bitmap commands and LCS over a real socket, with Redis 7.0's replies and error strings
// (expected values taken from redis-server 7.0.15): SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
// BITFIELD, BITFIELD_RO, LCS; TTLs kept by the in-place writes, cleared by BITOP's target.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::kWrongType;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace bitmap_test {

namespace {
const char kBadOffset[] = "err:ERR bit offset is not an integer or out of range";
}  // namespace

TEST_CASE("SETBIT and GETBIT: replies, growth, limits and errors", "[bitmap]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SETBIT", "b", "7", "1"}) == "int:0");
  CHECK(Run(c, {"SETBIT", "b", "7", "1"}) == "int:1");
  CHECK(Run(c, {"GET", "b"}) == "bulk:\x01");
  CHECK(Run(c, {"SETBIT", "b", "0", "1"}) == "int:0");
  CHECK(Run(c, {"GET", "b"}) == "bulk:\x81");
  CHECK(Run(c, {"SETBIT", "z", "20", "0"}) == "int:0");  // a clear bit still creates the key
  CHECK(Run(c, {"STRLEN", "z"}) == "int:3");
  CHECK(Run(c, {"GETBIT", "b", "0"}) == "int:1");
  CHECK(Run(c, {"GETBIT", "b", "1"}) == "int:0");
  CHECK(Run(c, {"GETBIT", "b", "1000"}) == "int:0");
  CHECK(Run(c, {"GETBIT", "nokey", "3"}) == "int:0");
  // offset < 2^32 (proto-max-bulk-len 512MB, in bits)
  CHECK(Run(c, {"SETBIT", "b", "4294967296", "1"}) == kBadOffset);
  CHECK(Run(c, {"SETBIT", "b", "-1", "1"}) == kBadOffset);
  CHECK(Run(c, {"SETBIT", "b", "x", "1"}) == kBadOffset);
  CHECK(Run(c, {"GETBIT", "b", "4294967296"}) == kBadOffset);
  CHECK(Run(c, {"SETBIT", "b", "1", "2"}) == "err:ERR bit is not an integer or out of range");
  CHECK(Run(c, {"SETBIT", "b", "1", "01"}) == "err:ERR bit is not an integer or out of range");
  CHECK(Run(c, {"RPUSH", "l", "a"}) == "int:1");
  CHECK(Run(c, {"SETBIT", "l", "1", "1"}) == kWrongType);
  CHECK(Run(c, {"GETBIT", "l", "1"}) == kWrongType);
  // The TTL stays.
  CHECK(Run(c, {"SET", "t", "a", "EX", "1000"}) == "status:OK");
  CHECK(Run(c, {"SETBIT", "t", "100", "1"}) == "int:0");
  CHECK(Run(c, {"TTL", "t"}) != "int:-1");
  CHECK(Run(c, {"GETBIT", "t", "100"}) == "int:1");
  CHECK(Run(c, {"SETBIT", "b"}) == "err:ERR wrong number of arguments for 'setbit' command");
}

TEST_CASE("BITCOUNT and BITPOS: byte and bit ranges, negative indexes, errors", "[bitmap]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "foobar"}) == "status:OK");
  CHECK(Run(c, {"BITCOUNT", "s"}) == "int:26");
  CHECK(Run(c, {"BITCOUNT", "s", "0", "0"}) == "int:4");
  CHECK(Run(c, {"BITCOUNT", "s", "1", "1"}) == "int:6");
  CHECK(Run(c, {"BITCOUNT", "s", "1", "1", "BIT"}) == "int:1");
  CHECK(Run(c, {"BITCOUNT", "s", "5", "30", "bit"}) == "int:17");
  CHECK(Run(c, {"BITCOUNT", "s", "-1", "-3"}) == "int:0");
  CHECK(Run(c, {"BITCOUNT", "s", "-2", "-1"}) == "int:7");
  CHECK(Run(c, {"BITCOUNT", "s", "0", "-1", "xx"}) == "err:ERR syntax error");
  CHECK(Run(c, {"BITCOUNT", "s", "0"}) == "err:ERR syntax error");
  CHECK(Run(c, {"BITCOUNT", "s", "a", "b"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"BITCOUNT", "nokey", "a", "b"}) == "int:0");  // 7.0 looks the key up first
  CHECK(Run(c, {"BITPOS", "s", "1"}) == "int:1");
  CHECK(Run(c, {"BITPOS", "s", "0"}) == "int:0");
  CHECK(Run(c, {"BITPOS", "s", "1", "2"}) == "int:17");
  CHECK(Run(c, {"BITPOS", "s", "1", "7", "15", "BIT"}) == "int:9");
  CHECK(Run(c, {"BITPOS", "s", "0", "7", "15", "BIT"}) == "int:7");
  CHECK(Run(c, {"BITPOS", "s", "2"}) == "err:ERR The bit argument must be 1 or 0.");
  CHECK(Run(c, {"BITPOS", "nokey", "0"}) == "int:0");
  CHECK(Run(c, {"BITPOS", "nokey", "1"}) == "int:-1");
  CHECK(Run(c, {"SET", "ff", "\xff\xff"}) == "status:OK");
  CHECK(Run(c, {"BITPOS", "ff", "0"}) == "int:16");  // no end: zero-padded on the right
  CHECK(Run(c, {"BITPOS", "ff", "0", "0"}) == "int:16");
  CHECK(Run(c, {"BITPOS", "ff", "0", "0", "-1"}) == "int:-1");  // explicit end: not found
  CHECK(Run(c, {"BITPOS", "ff", "0", "0", "-1", "BIT"}) == "int:-1");
  CHECK(Run(c, {"BITPOS", "ff", "1", "3", "-1", "BIT"}) == "int:3");
  CHECK(Run(c, {"BITPOS", "ff", "1", "5", "2"}) == "int:-1");
  CHECK(Run(c, {"BITPOS", "ff", "1", "0", "1", "foo"}) == "err:ERR syntax error");
  CHECK(Run(c, {"RPUSH", "l", "a"}) == "int:1");
  CHECK(Run(c, {"BITCOUNT", "l"}) == kWrongType);
  CHECK(Run(c, {"BITPOS", "l", "1"}) == kWrongType);
}

TEST_CASE("BITOP: AND, OR, XOR, NOT, empty results and errors", "[bitmap]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "a", "\xf0\x0f"}) == "status:OK");
  CHECK(Run(c, {"SET", "b", "\xff"}) == "status:OK");
  CHECK(Run(c, {"BITOP", "AND", "d", "a", "b"}) == "int:2");
  CHECK(c.Command({"GET", "d"}).str == std::string("\xf0\x00", 2));
  CHECK(Run(c, {"BITOP", "or", "d", "a", "b"}) == "int:2");
  CHECK(Run(c, {"GET", "d"}) == "bulk:\xff\x0f");
  CHECK(Run(c, {"BITOP", "XOR", "d", "a", "b", "nokey"}) == "int:2");
  CHECK(Run(c, {"GET", "d"}) == "bulk:\x0f\x0f");
  CHECK(Run(c, {"BITOP", "NOT", "d", "a"}) == "int:2");
  CHECK(Run(c, {"GET", "d"}) == "bulk:\x0f\xf0");
  CHECK(Run(c, {"EXPIRE", "d", "1000"}) == "int:1");
  CHECK(Run(c, {"BITOP", "NOT", "d", "b"}) == "int:1");
  CHECK(Run(c, {"TTL", "d"}) == "int:-1");  // the target is replaced, TTL and all
  CHECK(Run(c, {"BITOP", "OR", "d", "nokey1", "nokey2"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");  // an empty result deletes the target
  CHECK(Run(c, {"BITOP", "NOT", "d", "a", "b"}) ==
        "err:ERR BITOP NOT must be called with a single source key.");
  CHECK(Run(c, {"BITOP", "NAND", "d", "a"}) == "err:ERR syntax error");
  CHECK(Run(c, {"RPUSH", "l", "x"}) == "int:1");
  CHECK(Run(c, {"BITOP", "AND", "d", "a", "l"}) == kWrongType);
  CHECK(Run(c, {"BITOP", "AND", "l", "a"}) == "int:2");  // any type of target is replaced
  CHECK(Run(c, {"TYPE", "l"}) == "status:string");
}

TEST_CASE("BITFIELD and BITFIELD_RO: types, #offsets, overflow modes, errors", "[bitmap]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"BITFIELD", "bf",       "SET",  "i8",     "0",        "100", "GET",    "i8", "0",
                "INCRBY",   "i8",       "0",    "100",    "OVERFLOW", "SAT", "INCRBY", "i8", "0",
                "100",      "OVERFLOW", "FAIL", "INCRBY", "i8",       "0",   "100"}) ==
        "[int:0, int:100, int:-56, int:44, nil]");
  CHECK(Run(c, {"BITFIELD", "bf", "SET", "u8", "#1", "255", "GET", "u8", "#1", "INCRBY", "u4", "0",
                "20", "OVERFLOW", "WRAP", "INCRBY", "u63", "0", "-1"}) ==
        "[int:0, int:255, int:6, int:3926998137578717183]");
  CHECK(Run(c, {"BITFIELD", "bf", "GET", "i64", "0", "GET", "u63", "1", "GET", "i1", "3"}) ==
        "[int:7853996275157434366, int:7853996275157434366, int:0]");
  CHECK(Run(c, {"BITFIELD", "n", "INCRBY", "i64", "0", "9223372036854775807", "INCRBY", "i64", "0",
                "1", "OVERFLOW", "SAT", "INCRBY", "i64", "0", "-1"}) ==
        "[int:9223372036854775807, int:-9223372036854775808, int:-9223372036854775808]");
  const char kBadType[] =
      "err:ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported "
      "but i64 is.";
  CHECK(Run(c, {"BITFIELD", "bf", "GET", "u64", "0"}) == kBadType);
  CHECK(Run(c, {"BITFIELD", "bf", "GET", "I8", "0"}) == kBadType);
  CHECK(Run(c, {"BITFIELD", "bf", "GET", "i65", "0"}) == kBadType);
  CHECK(Run(c, {"BITFIELD", "bf", "GET", "i8", "#x"}) == kBadOffset);
  CHECK(Run(c, {"BITFIELD", "bf", "GET", "i8", "4294967296"}) == kBadOffset);
  CHECK(Run(c, {"BITFIELD", "bf", "OVERFLOW", "foo"}) == "err:ERR Invalid OVERFLOW type specified");
  CHECK(Run(c, {"BITFIELD", "bf", "GET", "i8"}) == "err:ERR syntax error");
  CHECK(Run(c, {"BITFIELD", "bf", "SET", "i8", "0", "x"}) ==
        "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"BITFIELD_RO", "bf", "GET", "i8", "0", "SET", "i8", "0", "1"}) ==
        "err:ERR BITFIELD_RO only supports the GET subcommand");
  CHECK(Run(c, {"BITFIELD_RO", "bf", "GET", "u4", "4"}) == "[int:12]");
  CHECK(Run(c, {"BITFIELD", "bf"}) == "[]");
  // A write form creates (and grows) the key even when every operation fails.
  CHECK(Run(c, {"BITFIELD", "nokey", "OVERFLOW", "FAIL", "SET", "u2", "100", "8"}) == "[nil]");
  CHECK(Run(c, {"STRLEN", "nokey"}) == "int:13");
  CHECK(Run(c, {"BITFIELD_RO", "absent", "GET", "i8", "0"}) == "[int:0]");
  CHECK(Run(c, {"EXISTS", "absent"}) == "int:0");
  CHECK(Run(c, {"RPUSH", "l", "x"}) == "int:1");
  CHECK(Run(c, {"BITFIELD", "l", "GET", "i8", "0"}) == kWrongType);
}

TEST_CASE("LCS: string, LEN, IDX with MINMATCHLEN and WITHMATCHLEN, errors", "[bitmap][lcs]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"MSET", "a", "ohmytext", "b", "mynewtext"}) == "status:OK");
  CHECK(Run(c, {"LCS", "a", "b"}) == "bulk:mytext");
  CHECK(Run(c, {"LCS", "a", "b", "LEN"}) == "int:6");
  CHECK(Run(c, {"LCS", "a", "b", "IDX"}) ==
        "[bulk:matches, [[[int:4, int:7], [int:5, int:8]], [[int:2, int:3], [int:0, int:1]]], "
        "bulk:len, int:6]");
  CHECK(Run(c, {"LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"}) ==
        "[bulk:matches, [[[int:4, int:7], [int:5, int:8], int:4]], bulk:len, int:6]");
  CHECK(Run(c, {"LCS", "a", "nokey"}) == "bulk:");
  CHECK(Run(c, {"LCS", "a", "b", "IDX", "LEN"}) ==
        "err:ERR If you want both the length and indexes, please just use IDX.");
  CHECK(Run(c, {"LCS", "a", "b", "foo"}) == "err:ERR syntax error");
  CHECK(Run(c, {"LCS", "a", "b", "MINMATCHLEN", "x"}) ==
        "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"RPUSH", "l", "x"}) == "int:1");
  CHECK(Run(c, {"LCS", "a", "l"}) == "err:ERR The specified keys must contain string values");
  // The transient table is bounded by proto-max-bulk-len, as Redis.
  CHECK(Run(c, {"CONFIG", "SET", "proto-max-bulk-len", "1048576"}) == "status:OK");
  CHECK(Run(c, {"SET", "big1", std::string(1000, 'x')}) == "status:OK");
  CHECK(Run(c, {"SET", "big2", std::string(1000, 'y')}) == "status:OK");
  CHECK(Run(c, {"LCS", "big1", "big2"}) ==
        "err:ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
}

}  // namespace bitmap_test
