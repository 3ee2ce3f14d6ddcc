// Sliced scans (server/slicing/sliced_scan.h) over a real server: SCAN / HSCAN / SSCAN / ZSCAN
// with a COUNT far above slice-items run in steps and must reply what one big call replies
// (every item once, cursor 0), keep MATCH and TYPE, keep pipeline order, survive a client that
// goes away, and leave small COUNTs as they were.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace sliced_scan_test {

namespace {

constexpr int kN = 5000;

std::string Name(const char* prefix, int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s%06d", prefix, i);
  return buf;
}

long long Stat(Client& c, const char* field) {
  return std::stoll(InfoFields(InfoText(c, "stats"))[field]);
}

// Runs `commands` as one pipeline and REQUIREs that none failed.
void Pipeline(Client& c, const std::vector<std::vector<std::string>>& commands) {
  for (const auto& command : commands) c.Append(command);
  for (size_t i = 0; i < commands.size(); ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    REQUIRE(r.type != REDIS_REPLY_ERROR);
  }
}

// kN keys: even i a string "str:i", odd i a hash "hash:i".
void FillKeys(Client& c) {
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < kN; ++i) {
    if (i % 2 == 0) {
      commands.push_back({"SET", Name("str:", i), "v"});
    } else {
      commands.push_back({"HSET", Name("hash:", i), "f", "v"});
    }
  }
  Pipeline(c, commands);
}

// A collection of each type with kN entries: hash "h" (m -> v), set "s", zset "z" (score i).
void FillCollections(Client& c) {
  for (int i = 0; i < kN; i += 500) {
    std::vector<std::string> hset = {"HSET", "h"}, sadd = {"SADD", "s"}, zadd = {"ZADD", "z"};
    for (int j = i; j < i + 500; ++j) {
      hset.push_back(Name("m", j));
      hset.push_back(Name("v", j));
      sadd.push_back(Name("m", j));
      zadd.push_back(std::to_string(j));
      zadd.push_back(Name("m", j));
    }
    c.Command(hset);
    c.Command(sadd);
    c.Command(zadd);
  }
}

// The items of a scan reply ([cursor, [items]]), REQUIRing cursor 0.
std::vector<std::string> WholeScan(const Reply& r) {
  INFO(Describe(r).substr(0, 200));
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  REQUIRE(r.elements.size() == 2);
  CHECK(r.elements[0].str == "0");
  std::vector<std::string> items;
  for (const auto& e : r.elements[1].elements) items.push_back(e.str);
  return items;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> Names(const char* prefix, int first, int step) {
  std::vector<std::string> out;
  for (int i = first; i < kN; i += step) out.push_back(Name(prefix, i));
  return out;
}

}  // namespace

TEST_CASE("SCAN with a big COUNT is sliced and returns every key once", "[slicing][scan]") {
  TestServer server;  // default slice-items (1024): 5,000 keys take several steps
  Client c(server.port());
  FillKeys(c);
  std::vector<std::string> all = Names("str:", 0, 2), hashes = Names("hash:", 1, 2);
  all.insert(all.end(), hashes.begin(), hashes.end());
  all = Sorted(all);

  long long sliced = Stat(c, "sliced_commands");
  CHECK(Sorted(WholeScan(c.Command({"SCAN", "0", "COUNT", "1000000"}))) == all);
  CHECK(Stat(c, "sliced_commands") > sliced);
  sliced = Stat(c, "sliced_commands");
  CHECK(Sorted(WholeScan(c.Command({"SCAN", "0", "COUNT", "1000000", "TYPE", "hash"}))) == hashes);
  CHECK(Sorted(WholeScan(c.Command({"SCAN", "0", "MATCH", "str:*", "COUNT", "1000000"}))) ==
        Names("str:", 0, 2));
  CHECK(WholeScan(c.Command({"SCAN", "0", "MATCH", "hash:*", "TYPE", "string", "COUNT", "1000000"}))
            .empty());
  CHECK(Stat(c, "sliced_commands") - sliced >= 3);
  // Inside EXEC (no continuation possible) one call does the whole COUNT.
  c.Command({"MULTI"});
  c.Command({"SCAN", "0", "COUNT", "1000000", "TYPE", "hash"});
  Reply exec = c.Command({"EXEC"});
  REQUIRE(exec.elements.size() == 1);
  CHECK(Sorted(WholeScan(exec.elements[0])) == hashes);
  CHECK(Stat(c, "command_slices") > Stat(c, "sliced_commands"));

  // A big COUNT that stops before the end: a cursor to go on with, no key twice overall.
  Reply part = c.Command({"SCAN", "0", "COUNT", "3000"});
  REQUIRE(part.elements.size() == 2);
  CHECK(part.elements[0].str != "0");
  std::vector<std::string> got;
  for (const auto& e : part.elements[1].elements) got.push_back(e.str);
  CHECK(got.size() >= 2000);
  for (const auto& key : WholeScan(c.Command({"SCAN", part.elements[0].str, "COUNT", "100000"}))) {
    got.push_back(key);
  }
  CHECK(Sorted(got) == all);

  // Small COUNT (default 10): the cursor walk still returns every key.
  std::set<std::string> walked;
  std::string cursor = "0";
  int calls = 0;
  do {
    Reply r = c.Command({"SCAN", cursor});
    REQUIRE(r.elements.size() == 2);
    cursor = r.elements[0].str;
    for (const auto& e : r.elements[1].elements) walked.insert(e.str);
    ++calls;
  } while (cursor != "0" && calls < 10 * kN);
  CHECK(calls > 100);
  CHECK(std::vector<std::string>(walked.begin(), walked.end()) == all);
}

TEST_CASE("HSCAN, SSCAN and ZSCAN with a big COUNT are sliced and complete", "[slicing][scan]") {
  TestServer server({"--slice-items", "64"});
  Client c(server.port());
  FillCollections(c);
  std::vector<std::string> members = Names("m", 0, 1), pairs, scored;
  for (int i = 0; i < kN; ++i) {
    pairs.push_back(Name("m", i));
    pairs.push_back(Name("v", i));
    scored.push_back(Name("m", i));
    scored.push_back(std::to_string(i));
  }
  const long long sliced = Stat(c, "sliced_commands");
  // Items come in byte order: the Name()s are already sorted.
  CHECK(WholeScan(c.Command({"HSCAN", "h", "0", "COUNT", "1000000"})) == pairs);
  CHECK(WholeScan(c.Command({"SSCAN", "s", "0", "COUNT", "1000000"})) == members);
  CHECK(WholeScan(c.Command({"ZSCAN", "z", "0", "COUNT", "1000000"})) == scored);
  CHECK(WholeScan(c.Command({"SSCAN", "s", "0", "MATCH", "m0049*", "COUNT", "1000000"})) ==
        std::vector<std::string>(members.begin() + 4900, members.begin() + 5000));
  CHECK(Stat(c, "sliced_commands") - sliced >= 4);
  // Errors and absent keys are unchanged.
  CHECK(Run(c, {"HSCAN", "s", "0", "COUNT", "1000000"}).rfind("err:WRONGTYPE", 0) == 0);
  CHECK(Run(c, {"ZSCAN", "nothing", "0", "COUNT", "1000000"}) == "[bulk:0, []]");
  CHECK(Run(c, {"SSCAN", "s", "0", "MATCH", "", "COUNT", "1000000"}) == "[bulk:0, []]");
  // A small COUNT is one call, as before.
  Reply r = c.Command({"SSCAN", "s", "0", "COUNT", "5"});
  REQUIRE(r.elements.size() == 2);
  CHECK(r.elements[0].str != "0");
  CHECK(r.elements[1].elements.size() == 5);
}

TEST_CASE("a big SCAN in a pipeline keeps reply order; a client leaving mid-scan is harmless",
          "[slicing][scan]") {
  TestServer server({"--slice-items", "7", "--slice-usec", "10"});
  Client c(server.port());
  FillKeys(c);
  c.Append({"SCAN", "0", "COUNT", "1000000"});
  c.Append({"PING"});
  c.Append({"SET", "after", "1"});
  c.Append({"HSCAN", "hash:000001", "0", "COUNT", "1000000"});
  c.Append({"GET", "after"});
  Reply r;
  REQUIRE(c.GetReply(&r));
  CHECK(WholeScan(r).size() == static_cast<size_t>(kN));
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "status:PONG");
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "status:OK");
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "[bulk:0, [bulk:f, bulk:v]]");
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "bulk:1");

  for (int round = 0; round < 10; ++round) {
    RawConnection gone(server.port());
    gone.Send(Resp({"SCAN", "0", "COUNT", "1000000"}) + Resp({"PING"}));
    // Destroyed at once: closed with the scan (hundreds of steps) under way.
  }
  bool settled = false;
  for (int i = 0; i < 600 && !settled; ++i) {
    SleepMs(50);
    settled = InfoFields(InfoText(c, "clients"))["connected_clients"] == "1";
  }
  CHECK(settled);
  Client other(server.port());
  CHECK(Run(other, {"PING"}) == "status:PONG");
  CHECK(WholeScan(other.Command({"SCAN", "0", "COUNT", "1000000"})).size() ==
        static_cast<size_t>(kN + 1));  // "after" too
}

}  // namespace sliced_scan_test
