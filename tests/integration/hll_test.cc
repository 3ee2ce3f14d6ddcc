// HyperLogLog commands with Redis 7.0's representation, counts and errors (expected values taken
// from redis-server 7.0): PFADD, PFCOUNT of one and several keys, PFMERGE, the cached
// cardinality bytes, sparse to dense promotion, values copied with GET/SET, WRONGTYPE and
// INVALIDOBJ, TTL kept.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::kWrongType;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace hll_test {

namespace {

const char kNotHll[] = "err:WRONGTYPE Key is not a valid HyperLogLog string value.";
const char kCorrupt[] = "err:INVALIDOBJ Corrupted HLL object detected";

std::vector<std::string> Elements(const char* cmd, const char* key, int from, int to) {
  std::vector<std::string> args = {cmd, key};
  for (int i = from; i < to; ++i) args.push_back("e" + std::to_string(i));
  return args;
}

std::string Bytes(const char* data, size_t n) { return std::string(data, n); }

}  // namespace

TEST_CASE("PFADD and PFCOUNT: replies, exact bytes and the cached cardinality", "[hll]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"PFCOUNT", "h"}) == "int:0");
  CHECK(Run(c, {"PFADD", "h", "a"}) == "int:1");
  CHECK(Run(c, {"PFADD", "h", "a"}) == "int:0");  // no register changed
  CHECK(Run(c, {"PFADD", "h"}) == "int:0");
  CHECK(Run(c, {"PFADD", "new"}) == "int:1");  // created
  CHECK(Run(c, {"TYPE", "h"}) == "status:string");
  // Sparse: header with a stale cache (top bit set), then XZERO, VAL, XZERO (as redis-server).
  const std::string stale = Bytes("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80q\xa6\x84NW", 21);
  CHECK(c.Command({"GET", "h"}).str == stale);
  CHECK(Run(c, {"PFCOUNT", "h"}) == "int:1");
  const std::string cached = Bytes("HYLL\x01\0\0\0\x01\0\0\0\0\0\0\0q\xa6\x84NW", 21);
  CHECK(c.Command({"GET", "h"}).str == cached);  // PFCOUNT stored the cardinality
  CHECK(Run(c, {"PFADD", "h", "b", "c", "d", "e", "f", "g"}) == "int:1");
  CHECK(Run(c, {"PFCOUNT", "h"}) == "int:7");
  CHECK(Run(c, {"PFCOUNT", "h", "nokey"}) == "int:7");
  CHECK(Run(c, {"PFCOUNT"}) == "err:ERR wrong number of arguments for 'pfcount' command");
  CHECK(Run(c, {"PFADD"}) == "err:ERR wrong number of arguments for 'pfadd' command");
}

TEST_CASE("PFADD turns dense past hll-sparse-max-bytes; counts match redis-server", "[hll]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, Elements("PFADD", "big", 0, 5000)) == "int:1");
  CHECK(Run(c, {"PFCOUNT", "big"}) == "int:4968");
  CHECK(Run(c, {"STRLEN", "big"}) == "int:12304");
  CHECK(c.Command({"GET", "big"}).str.substr(0, 5) == Bytes("HYLL\0", 5));
  CHECK(Run(c, Elements("PFADD", "big2", 2500, 10000)) == "int:1");
  CHECK(Run(c, {"PFCOUNT", "big", "big2"}) == "int:9973");
  CHECK(Run(c, {"PFMERGE", "u", "big", "big2"}) == "status:OK");
  CHECK(Run(c, {"PFCOUNT", "u"}) == "int:9973");
  CHECK(Run(c, {"STRLEN", "u"}) == "int:12304");
}

TEST_CASE("PFMERGE: union into the destination, which counts as a source", "[hll]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, Elements("PFADD", "s1", 0, 100)) == "int:1");
  CHECK(Run(c, Elements("PFADD", "s2", 50, 200)) == "int:1");
  CHECK(Run(c, {"PFCOUNT", "s1", "s2"}) == "int:200");
  CHECK(Run(c, {"PFMERGE", "s3", "s1", "s2"}) == "status:OK");
  CHECK(Run(c, {"PFCOUNT", "s3"}) == "int:200");
  CHECK(Run(c, {"PFMERGE", "s1", "s2"}) == "status:OK");  // s1 = s1 U s2
  CHECK(Run(c, {"PFCOUNT", "s1"}) == "int:200");
  CHECK(Run(c, {"PFMERGE", "empty"}) == "status:OK");  // an empty HyperLogLog
  CHECK(c.Command({"GET", "empty"}).str == Bytes("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x7f\xff", 18));
  CHECK(Run(c, {"PFCOUNT", "empty"}) == "int:0");
  CHECK(Run(c, {"PFMERGE"}) == "err:ERR wrong number of arguments for 'pfmerge' command");
}

TEST_CASE("HyperLogLog values move with GET/SET and keep their TTL", "[hll]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, Elements("PFADD", "h", 0, 300)) == "int:1");
  std::string value = c.Command({"GET", "h"}).str;
  CHECK(Run(c, {"SET", "copy", value}) == "status:OK");
  CHECK(Run(c, {"PFCOUNT", "copy"}) == "int:302");  // redis-server counts 302 too
  CHECK(Run(c, {"EXPIRE", "h", "100"}) == "int:1");
  CHECK(Run(c, {"PFADD", "h", "another"}) == "int:1");
  CHECK(c.Command({"TTL", "h"}).integer > 0);
}

TEST_CASE("HyperLogLog errors: WRONGTYPE, not a HyperLogLog, corrupt", "[hll]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"RPUSH", "list", "a"}) == "int:1");
  CHECK(Run(c, {"PFADD", "list", "a"}) == kWrongType);
  CHECK(Run(c, {"PFCOUNT", "list"}) == kWrongType);
  CHECK(Run(c, {"PFMERGE", "list"}) == kWrongType);
  CHECK(Run(c, {"SET", "str", "hello"}) == "status:OK");
  CHECK(Run(c, {"PFADD", "str", "a"}) == kNotHll);
  CHECK(Run(c, {"PFCOUNT", "str", "list"}) == kNotHll);
  CHECK(Run(c, {"PFMERGE", "dst", "str"}) == kNotHll);
  CHECK(Run(c, {"EXISTS", "dst"}) == "int:0");
  // Unknown encoding byte; dense of the wrong length.
  CHECK(Run(c, {"SET", "f2", Bytes("HYLL\x05\0\0\0\0\0\0\0\0\0\0\0", 16)}) == "status:OK");
  CHECK(Run(c, {"PFCOUNT", "f2"}) == kNotHll);
  CHECK(Run(c, {"SET", "f3", Bytes("HYLL\0\0\0\0\0\0\0\0\0\0\0\0", 16)}) == "status:OK");
  CHECK(Run(c, {"PFCOUNT", "f3"}) == kNotHll);
  // A sparse body that does not cover 16384 registers; its cache bytes say 0 (valid).
  CHECK(Run(c, {"SET", "fake", Bytes("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x41", 17)}) == "status:OK");
  CHECK(Run(c, {"PFCOUNT", "fake"}) == "int:0");
  CHECK(Run(c, {"PFADD", "fake", "x"}) == kCorrupt);
  CHECK(Run(c, {"PFCOUNT", "fake", "fake"}) == kCorrupt);
  CHECK(Run(c, {"PFMERGE", "dst", "fake"}) == kCorrupt);
}

}  // namespace hll_test
