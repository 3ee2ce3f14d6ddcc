// Sliced reads (server/slicing/sliced_read.h) over a real server: big replies run in many steps
// (slice-items set tiny) and must be complete, equal to the unsliced reply, in pipeline order,
// consistent under concurrent writers (one snapshot), and a client that goes away mid-reply
// must leave the server serving.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
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
namespace slicing_test {

namespace {

std::string Name(const char* prefix, int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s%06d", prefix, i);
  return buf;
}

std::vector<std::string> Strings(const Reply& r) {
  std::vector<std::string> out;
  for (const auto& e : r.elements) out.push_back(e.str);
  return out;
}

long long Stat(Client& c, const char* field) {
  return std::stoll(InfoFields(InfoText(c, "stats"))[field]);
}

// Fills hash h, list l, set s, zset z with n items each (item i = Name("m", i)).
void Fill(Client& c, int n) {
  for (int i = 0; i < n; i += 500) {
    std::vector<std::string> hset = {"HSET", "h"}, push = {"RPUSH", "l"}, sadd = {"SADD", "s"},
                             zadd = {"ZADD", "z"};
    for (int j = i; j < std::min(n, i + 500); ++j) {
      hset.push_back(Name("m", j));
      hset.push_back(Name("v", j));
      push.push_back(Name("m", j));
      sadd.push_back(Name("m", j));
      zadd.push_back(std::to_string(j));
      zadd.push_back(Name("m", j));
    }
    c.Command(hset);
    c.Command(push);
    c.Command(sadd);
    c.Command(zadd);
  }
}

}  // namespace

TEST_CASE("big replies are sliced, complete and equal to unsliced ones", "[slicing]") {
  TestServer server({"--slice-items", "16"});
  Client c(server.port());
  constexpr int kN = 5000;
  Fill(c, kN);
  std::vector<std::string> members, pairs, values, scored;
  for (int i = 0; i < kN; ++i) {
    members.push_back(Name("m", i));
    values.push_back(Name("v", i));
    pairs.push_back(Name("m", i));
    pairs.push_back(Name("v", i));
    scored.push_back(Name("m", i));
    scored.push_back(std::to_string(i));
  }
  const long long sliced_before = Stat(c, "sliced_commands");
  CHECK(Strings(c.Command({"HGETALL", "h"})) == pairs);
  CHECK(Strings(c.Command({"HKEYS", "h"})) == members);
  CHECK(Strings(c.Command({"HVALS", "h"})) == values);
  CHECK(Strings(c.Command({"SMEMBERS", "s"})) == members);
  CHECK(Strings(c.Command({"LRANGE", "l", "0", "-1"})) == members);
  CHECK(Strings(c.Command({"LRANGE", "l", "100", "-101"})) ==
        std::vector<std::string>(members.begin() + 100, members.end() - 100));
  CHECK(Strings(c.Command({"ZRANGE", "z", "0", "-1", "WITHSCORES"})) == scored);
  CHECK(Strings(c.Command({"ZREVRANGE", "z", "0", "-1"})) ==
        std::vector<std::string>(members.rbegin(), members.rend()));
  CHECK(Strings(c.Command({"ZRANGEBYSCORE", "z", "(99", "4000", "LIMIT", "1", "2000"})) ==
        std::vector<std::string>(members.begin() + 101, members.begin() + 2101));
  CHECK(Strings(c.Command({"ZRANGE", "z", "[m000010", "[m003000", "BYLEX"})) ==
        std::vector<std::string>(members.begin() + 10, members.begin() + 3001));
  std::vector<std::string> keys = Strings(c.Command({"KEYS", "*"}));
  CHECK(keys == std::vector<std::string>{"h", "l", "s", "z"});
  for (int i = 0; i < 300; ++i) c.Command({"SET", Name("key:", i), "v"});
  CHECK(c.Command({"KEYS", "key:*"}).elements.size() == 300);
  CHECK(Stat(c, "sliced_commands") - sliced_before >= 11);
  CHECK(Stat(c, "command_slices") > Stat(c, "sliced_commands"));

  // Pipeline order: a sliced read between small commands; replies in request order.
  c.Append({"SET", "a", "1"});
  c.Append({"HGETALL", "h"});
  c.Append({"GET", "a"});
  c.Append({"LRANGE", "l", "0", "-1"});
  c.Append({"INCR", "a"});
  Reply r;
  REQUIRE(c.GetReply(&r));
  CHECK(r.str == "OK");
  REQUIRE(c.GetReply(&r));
  CHECK(Strings(r) == pairs);
  REQUIRE(c.GetReply(&r));
  CHECK(r.str == "1");
  REQUIRE(c.GetReply(&r));
  CHECK(Strings(r) == members);
  REQUIRE(c.GetReply(&r));
  CHECK(r.integer == 2);
  // Errors and small reads are unchanged.
  CHECK(Run(c, {"HGETALL", "l"}).rfind("err:WRONGTYPE", 0) == 0);
  CHECK(Run(c, {"LRANGE", "nothing", "0", "-1"}) == "[]");
}

TEST_CASE("a sliced read is one snapshot while a writer appends", "[slicing]") {
  TestServer server({"--slice-items", "8", "--slice-usec", "10"});
  Client c(server.port());
  constexpr int kN = 3000;
  Fill(c, kN);
  std::atomic<bool> stop{false};
  std::atomic<int> written{kN};
  std::thread writer([&] {
    Client w(server.port());
    for (int i = kN; !stop; ++i) {
      Reply r;
      // The writer only appends: every consistent state is a prefix of the final sequence.
      if (!w.TryCommand({"RPUSH", "l", Name("m", i)}, &r)) return;
      if (!w.TryCommand({"ZADD", "z", std::to_string(i), Name("m", i)}, &r)) return;
      if (!w.TryCommand({"HSET", "h", Name("m", i), Name("v", i)}, &r)) return;
      written = i + 1;
    }
  });
  int checked = 0;
  for (int round = 0; round < 15; ++round) {
    for (const auto& cmd : std::vector<std::vector<std::string>>{
             {"LRANGE", "l", "0", "-1"}, {"ZRANGE", "z", "0", "-1"}, {"HKEYS", "h"}}) {
      std::vector<std::string> got = Strings(c.Command(cmd));
      INFO(cmd[0] << " round " << round);
      REQUIRE(got.size() >= static_cast<size_t>(kN));
      REQUIRE(got.size() <= static_cast<size_t>(written.load()) + 1);
      bool prefix = true;
      for (size_t i = 0; i < got.size() && prefix; ++i) prefix = got[i] == Name("m", int(i));
      CHECK(prefix);
      ++checked;
    }
  }
  stop = true;
  writer.join();
  CHECK(checked == 45);
  CHECK(written > kN);  // the writer did run meanwhile
}

TEST_CASE("a client closing mid-reply frees its sliced read; the server keeps serving",
          "[slicing]") {
  TestServer server({"--slice-items", "4", "--slice-usec", "10"});
  Client c(server.port());
  Fill(c, 20000);
  for (int round = 0; round < 20; ++round) {
    RawConnection gone(server.port());
    gone.Send(Resp({"HGETALL", "h"}) + Resp({"LRANGE", "l", "0", "-1"}));
    // Destroyed at once: closed with the reply (thousands of steps) under way.
  }
  // The server answers, and every sliced read ends (connections counted back to this one).
  bool settled = false;
  for (int i = 0; i < 600 && !settled; ++i) {
    SleepMs(50);
    settled = InfoFields(InfoText(c, "clients"))["connected_clients"] == "1";
  }
  CHECK(settled);
  CHECK(Run(c, {"PING"}) == "status:PONG");
  CHECK(c.Command({"HGETALL", "h"}).elements.size() == 40000);
}

TEST_CASE("a slow reader of a sliced reply is closed at the output limit", "[slicing]") {
  TestServer server({"--slice-items", "64"});
  Client c(server.port());
  const std::string value(1000, 'x');
  for (int i = 0; i < 20000; i += 500) {
    std::vector<std::string> hset = {"HSET", "big"};
    for (int j = i; j < i + 500; ++j) {
      hset.push_back(Name("f", j));
      hset.push_back(value);
    }
    c.Command(hset);
  }
  CHECK(c.Command({"HGETALL", "big"}).elements.size() == 40000);
  CHECK(Run(c, {"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"}) == "status:OK");
  // One that reads nothing is closed once pending passes 1 MB.
  const long long accepted = Stat(c, "total_connections_received");
  RawConnection slow(server.port());
  slow.Send(Resp({"HGETALL", "big"}));
  bool closed = false;
  for (int i = 0; i < 1200 && !closed; ++i) {
    SleepMs(50);
    closed = Stat(c, "total_connections_received") > accepted &&
             InfoFields(InfoText(c, "clients"))["connected_clients"] == "1";
  }
  CHECK(closed);
  std::string received;
  CHECK(slow.WaitClosed(&received, 10000));
  CHECK(received.size() < 20 * 1000 * 1000);
  CHECK(Run(c, {"PING"}) == "status:PONG");
}

}  // namespace slicing_test
