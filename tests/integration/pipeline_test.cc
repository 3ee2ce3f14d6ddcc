// Pipelining: many commands in one write, replies in order, read-your-writes inside a pipeline,
// connection and storage commands mixed, and requests split at every possible byte boundary.
#include <catch2/catch.hpp>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace pipeline_test {

namespace {

std::string Bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// A batch of commands (multibulk and inline) and the exact bytes Redis answers.
void MixedBatch(const std::string& tag, std::string* request, std::string* expected) {
  std::string k = "mix:" + tag;
  *request += Resp({"SET", k, "1"});
  *expected += "+OK\r\n";
  *request += Resp({"CLIENT", "SETNAME", "n" + tag});
  *expected += "+OK\r\n";
  *request += Resp({"GET", k});
  *expected += Bulk("1");
  *request += Resp({"CLIENT", "GETNAME"});
  *expected += Bulk("n" + tag);
  *request += Resp({"INCR", k});
  *expected += ":2\r\n";
  *request += Resp({"PING"});
  *expected += "+PONG\r\n";
  *request += "GET " + k + "\r\n";  // inline
  *expected += Bulk("2");
  *request += Resp({"nosuch", "x"});
  *expected += "-ERR unknown command 'nosuch', with args beginning with: 'x' \r\n";
  *request += Resp({"APPEND", k, "0"});
  *expected += ":2\r\n";
  *request += Resp({"ECHO", "e" + tag});
  *expected += Bulk("e" + tag);
  *request += Resp({"EXISTS", k, k});
  *expected += ":2\r\n";
  *request += Resp({"GET", k});
  *expected += Bulk("20");
  *request += Resp({"DEL", k});
  *expected += ":1\r\n";
  *request += Resp({"GET", k});
  *expected += "$-1\r\n";
  *request += Resp({"MGET", k, "nokey"});
  *expected += "*2\r\n$-1\r\n$-1\r\n";
  *request += Resp({"GET"});
  *expected += "-ERR wrong number of arguments for 'get' command\r\n";
}

}  // namespace

TEST_CASE("10,000 pipelined SETs in one write, then 10,000 pipelined GETs", "[pipeline]") {
  TestServer server;
  const int n = 10000;
  {
    RawConnection raw(server.port());
    std::string request;
    for (int i = 0; i < n; ++i) {
      request += Resp({"SET", "key:" + std::to_string(i), "val:" + std::to_string(i)});
    }
    raw.Send(request);
    std::string expected;
    for (int i = 0; i < n; ++i) expected += "+OK\r\n";
    std::string got = raw.ReadExactly(expected.size(), 30000);
    CHECK(got.size() == expected.size());
    CHECK(got == expected);
    CHECK(raw.ReadExactly(1, 200).empty());  // nothing more
  }

  Client c(server.port(), 30000);
  CHECK(Run(c, {"DBSIZE"}) == "int:10000");
  for (int i = 0; i < n; ++i) c.Append({"GET", "key:" + std::to_string(i)});
  int mismatches = 0;
  for (int i = 0; i < n; ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    if (Describe(r) != "bulk:val:" + std::to_string(i)) {
      if (++mismatches <= 5) FAIL_CHECK("GET key:" << i << " -> " << Describe(r));
    }
  }
  CHECK(mismatches == 0);
  // The connection is in a normal state afterwards.
  CHECK(Run(c, {"GET", "key:9999"}) == "bulk:val:9999");
}

TEST_CASE("a pipeline mixing connection and storage commands keeps reply order", "[pipeline]") {
  TestServer server;
  {
    // The exact case: SET a 1, CLIENT SETNAME x, GET a, CLIENT GETNAME, INCR a, PING.
    RawConnection raw(server.port());
    raw.Send(Resp({"SET", "a", "1"}) + Resp({"CLIENT", "SETNAME", "x"}) + Resp({"GET", "a"}) +
             Resp({"CLIENT", "GETNAME"}) + Resp({"INCR", "a"}) + Resp({"PING"}));
    std::string expected = "+OK\r\n+OK\r\n$1\r\n1\r\n$1\r\nx\r\n:2\r\n+PONG\r\n";
    CHECK(raw.ReadExactly(expected.size()) == expected);
    CHECK(raw.ReadExactly(1, 200).empty());
  }
  {
    // The same kind of mix, 300 times over in one write.
    RawConnection raw(server.port());
    std::string request, expected;
    for (int i = 0; i < 300; ++i) MixedBatch(std::to_string(i), &request, &expected);
    raw.Send(request);
    std::string got = raw.ReadExactly(expected.size(), 30000);
    CHECK(got.size() == expected.size());
    CHECK(got == expected);
  }
  {
    // Read-your-writes for a key whose old value was just read (and may sit in a cache).
    Client c(server.port());
    CHECK(Run(c, {"SET", "hot", "old"}) == "status:OK");
    CHECK(Run(c, {"GET", "hot"}) == "bulk:old");
    RawConnection raw(server.port());
    std::string request, expected;
    for (int i = 0; i < 200; ++i) {
      request += Resp({"GET", "hot"}) + Resp({"SET", "hot", "v" + std::to_string(i)}) +
                 Resp({"GET", "hot"}) + Resp({"PING"});
      expected += Bulk(i == 0 ? "old" : "v" + std::to_string(i - 1)) + "+OK\r\n" +
                  Bulk("v" + std::to_string(i)) + "+PONG\r\n";
    }
    raw.Send(request);
    CHECK(raw.ReadExactly(expected.size(), 30000) == expected);
    CHECK(Run(c, {"GET", "hot"}) == "bulk:v199");
  }
}

TEST_CASE("requests split at every byte boundary", "[pipeline]") {
  TestServer server;
  std::string request, expected;
  request += Resp({"SET", "split", "a\r\nb"});
  expected += "+OK\r\n";
  request += Resp({"GET", "split"});
  expected += Bulk("a\r\nb");
  request += "PING\r\n";
  expected += "+PONG\r\n";
  request += "set inl \"x y\"\r\n";
  expected += "+OK\r\n";
  request += Resp({"APPEND", "split", std::string("\0", 1)});
  expected += ":5\r\n";
  request += Resp({"CLIENT", "SETNAME", "splitter"});
  expected += "+OK\r\n";
  request += Resp({"GET", "inl"});
  expected += Bulk("x y");
  request += Resp({"CLIENT", "GETNAME"});
  expected += Bulk("splitter");
  request += Resp({"STRLEN", "split"});
  expected += ":5\r\n";

  SECTION("one byte at a time") {
    RawConnection raw(server.port());
    for (char ch : request) {
      raw.Send(std::string(1, ch));
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    CHECK(raw.ReadExactly(expected.size()) == expected);
    CHECK(raw.ReadExactly(1, 200).empty());
  }

  SECTION("every split point of a two-part write") {
    // For each position p: first write request[0, p), then the rest.
    for (size_t p = 1; p < request.size(); p += 1) {
      RawConnection raw(server.port());
      raw.Send(request.substr(0, p));
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      raw.Send(request.substr(p));
      std::string got = raw.ReadExactly(expected.size());
      INFO("split at " << p);
      REQUIRE(got == expected);
    }
  }

  SECTION("random chunk sizes over a long pipeline") {
    std::string big_request, big_expected;
    for (int i = 0; i < 100; ++i) {
      MixedBatch("r" + std::to_string(i), &big_request, &big_expected);
      big_request += request;
      big_expected += expected;
    }
    std::mt19937 rng(12345);
    std::uniform_int_distribution<size_t> chunk(1, 97);
    RawConnection raw(server.port());
    size_t pos = 0;
    int writes = 0;
    while (pos < big_request.size()) {
      size_t len = std::min(chunk(rng), big_request.size() - pos);
      raw.Send(big_request.substr(pos, len));
      pos += len;
      if (++writes % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::string got = raw.ReadExactly(big_expected.size(), 30000);
    CHECK(got.size() == big_expected.size());
    CHECK(got == big_expected);
  }
}

// Group commit on one key: a pipeline of list commands on one list (pushes, pops, reads, trims
// of more than 64 elements, which are range deletions) runs in groups that read through their
// pending writes rather than writing RocksDB once per command. Every reply must be what a
// sequential run gives, and after kill -9 the list must hold exactly what was acknowledged.
TEST_CASE("a pipeline on one key reads its own writes and survives kill -9", "[pipeline]") {
  TestServer server;
  std::deque<std::string> model;
  std::mt19937 rng(7);
  Client c(server.port(), 30000);
  std::vector<std::string> expected;
  constexpr int kCommands = 6000;
  for (int i = 0; i < kCommands; ++i) {
    const std::string v = "v" + std::to_string(i);
    // Every 400th command trims to the last 10: the list has grown by ~180 since the last trim,
    // so more than 64 go (a range deletion).
    const int op = i % 400 == 399 ? 99 : static_cast<int>(rng() % 97);
    if (op < 40) {
      c.Append({"RPUSH", "hot", v});
      model.push_back(v);
      expected.push_back("int:" + std::to_string(model.size()));
    } else if (op < 60) {
      c.Append({"LPUSH", "hot", v});
      model.push_front(v);
      expected.push_back("int:" + std::to_string(model.size()));
    } else if (op < 75) {
      c.Append({"LPOP", "hot"});
      expected.push_back(model.empty() ? "nil" : "bulk:" + model.front());
      if (!model.empty()) model.pop_front();
    } else if (op < 90) {
      c.Append({"LINDEX", "hot", "-1"});
      expected.push_back(model.empty() ? "nil" : "bulk:" + model.back());
    } else if (op < 97) {
      c.Append({"LLEN", "hot"});
      expected.push_back("int:" + std::to_string(model.size()));
    } else {
      c.Append({"LTRIM", "hot", "-10", "-1"});
      while (model.size() > 10) model.pop_front();
      expected.push_back("status:OK");
    }
  }
  int mismatches = 0;
  for (int i = 0; i < kCommands; ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    if (Describe(r) != expected[static_cast<size_t>(i)]) {
      if (++mismatches <= 5) {
        FAIL_CHECK("command " << i << ": " << Describe(r) << ", want " << expected[i]);
      }
    }
  }
  CHECK(mismatches == 0);
  std::string want = "[";
  for (size_t i = 0; i < model.size(); ++i) want += (i ? ", bulk:" : "bulk:") + model[i];
  want += "]";
  CHECK(Run(c, {"LRANGE", "hot", "0", "-1"}) == want);
  server.Kill9();
  server.Restart();
  Client after(server.port(), 30000);
  CHECK(Run(after, {"LRANGE", "hot", "0", "-1"}) == want);
}

// A big read right after writes to its key in the same pipeline: the group reads through its
// pending writes, but the read's later steps (slice-items 16: many steps) run on other threads
// over a snapshot, which must hold those writes.
TEST_CASE("a sliced read sees the writes of its own pipeline", "[pipeline][slicing]") {
  TestServer server({"--slice-items", "16"});
  Client c(server.port(), 30000);
  constexpr int kItems = 3000;
  for (int i = 0; i < kItems; ++i) c.Append({"RPUSH", "big", std::to_string(i)});
  c.Append({"LRANGE", "big", "0", "-1"});
  for (int i = 0; i < 500; ++i) c.Append({"HSET", "h", "f" + std::to_string(i), "v"});
  c.Append({"HLEN", "h"});
  c.Append({"HGETALL", "h"});
  for (int i = 0; i < 400; ++i) c.Append({"SADD", "s", std::to_string(i)});
  c.Append({"SUNION", "s", "nosuch"});
  for (int i = 0; i < kItems; ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    REQUIRE(Describe(r) == "int:" + std::to_string(i + 1));
  }
  Reply range;
  REQUIRE(c.GetReply(&range));
  REQUIRE(range.elements.size() == static_cast<size_t>(kItems));
  int out_of_place = 0;
  for (int i = 0; i < kItems; ++i) {
    if (range.elements[static_cast<size_t>(i)].str != std::to_string(i)) ++out_of_place;
  }
  CHECK(out_of_place == 0);
  for (int i = 0; i < 500; ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
  }
  Reply hlen, hall, sunion;
  REQUIRE(c.GetReply(&hlen));
  CHECK(Describe(hlen) == "int:500");
  REQUIRE(c.GetReply(&hall));
  CHECK(hall.elements.size() == 1000);
  for (int i = 0; i < 400; ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
  }
  REQUIRE(c.GetReply(&sunion));
  CHECK(sunion.elements.size() == 400);
  CHECK(Run(c, {"INFO", "stats"}).find("sliced_commands:0") == std::string::npos);
}

}  // namespace pipeline_test
