// RESP3 as a client meets it ([resp3]): HELLO and its errors, redis-cli -3, push messages while
// a subscribed connection runs commands (pipelined, beside a sliced reply), nulls of blocking
// commands and transactions, and the protocol seen by CLIENT INFO. The byte-for-byte replies of
// every command under RESP3 are the differential tests' ([differential]).
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/differential_peer.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Contains;
using rockcache::testing::RespPeer;
using rockcache::testing::RunShell;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace resp3_test {

namespace {

bool IsPush(const std::string& frame) { return !frame.empty() && frame[0] == '>'; }

}  // namespace

TEST_CASE("HELLO switches the protocol and answers a map; errors as Redis", "[resp3]") {
  TestServer server({"--requirepass", "secret"});
  RespPeer peer(server.port());
  CHECK(peer.Call({"HELLO", "3"}).rfind("-NOAUTH HELLO must be called", 0) == 0);
  CHECK(peer.Call({"HELLO", "4"}) == "-NOPROTO unsupported protocol version\r\n");
  CHECK(peer.Call({"HELLO", "x"}) == "-ERR Protocol version is not an integer or out of range\r\n");
  CHECK(peer.Call({"HELLO", "3", "AUTH", "default", "wrong"})
            .rfind("-WRONGPASS invalid username-password pair", 0) == 0);
  const std::string hello = peer.Call({"HELLO", "3", "AUTH", "default", "secret", "SETNAME", "me"});
  CHECK(hello.rfind("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n", 0) == 0);
  CHECK(Contains(hello, "$5\r\nproto\r\n:3\r\n"));
  // Nulls, maps and doubles now, and CLIENT INFO's text as a verbatim string.
  CHECK(peer.Call({"GET", "nokey"}) == "_\r\n");
  CHECK(peer.Call({"HSET", "h", "f", "v"}) == ":1\r\n");
  CHECK(peer.Call({"HGETALL", "h"}) == "%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
  CHECK(peer.Call({"ZADD", "z", "1.5", "m"}) == ":1\r\n");
  CHECK(peer.Call({"ZSCORE", "z", "m"}) == ",1.5\r\n");
  const std::string info = peer.Call({"CLIENT", "INFO"});
  CHECK(info.rfind("=", 0) == 0);
  CHECK(Contains(info, "txt:id="));
  CHECK(Contains(info, " name=me "));
  CHECK(Contains(info, " resp=3"));
  // HELLO 2 goes back: the reply itself is RESP2, and so is everything after it.
  CHECK(peer.Call({"HELLO", "2"}).rfind("*14\r\n", 0) == 0);
  CHECK(peer.Call({"GET", "nokey"}) == "$-1\r\n");
  CHECK(peer.Call({"HGETALL", "h"}) == "*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
  CHECK(Contains(peer.Call({"CLIENT", "INFO"}), " resp=2"));
  // Another connection still speaks RESP2 (the protocol is per connection).
  RespPeer other(server.port());
  CHECK(other.Call({"AUTH", "secret"}) == "+OK\r\n");
  CHECK(other.Call({"ZSCORE", "z", "m"}) == "$3\r\n1.5\r\n");
}

TEST_CASE("redis-cli -3 reads rockcache's RESP3 replies", "[resp3][redis-cli]") {
  TestServer server;
  const std::string cli =
      "timeout 30 redis-cli -3 --no-raw -p " + std::to_string(server.port()) + " ";
  RunShell(cli + "HSET h a 1 b 2");
  // redis-cli prints a map as "key => value" lines and a double as "(double)".
  const std::string map = RunShell(cli + "HGETALL h");
  CHECK(Contains(map, "1# \"a\" => \"1\""));
  CHECK(Contains(map, "2# \"b\" => \"2\""));
  RunShell(cli + "ZADD z 2.5 m");
  CHECK(Contains(RunShell(cli + "ZSCORE z m"), "(double) 2.5"));
  CHECK(Contains(RunShell(cli + "GET nokey"), "(nil)"));
  CHECK(Contains(RunShell(cli + "SADD s x"), "(integer) 1"));
  CHECK(Contains(RunShell(cli + "SMEMBERS s"), "1~ \"x\""));
}

TEST_CASE("RESP3 pub/sub: commands while subscribed, messages as whole push frames in a pipeline",
          "[resp3][pubsub]") {
  TestServer server;
  RespPeer subscriber(server.port());
  REQUIRE(subscriber.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(subscriber.Call({"SUBSCRIBE", "news"}) == ">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
  // Normal commands work while subscribed (RESP2 would refuse them).
  CHECK(subscriber.Call({"SET", "k", "v"}) == "+OK\r\n");
  CHECK(subscriber.Call({"PING"}) == "+PONG\r\n");
  // A big hash, sliced when read (its reply comes in chunks from several pool tasks).
  {
    RespPeer writer(server.port());
    for (int batch = 0; batch < 20; ++batch) {
      std::vector<std::string> hset = {"HSET", "big"};
      for (int i = 0; i < 1000; ++i) {
        hset.push_back("field" + std::to_string(batch * 1000 + i));
        hset.push_back(std::string(100, 'v'));
      }
      writer.Call(hset);
    }
  }
  // Pipelined GETs and HGETALLs from the subscriber while a publisher publishes.
  constexpr int kMessages = 500;
  constexpr int kCommands = 300;
  std::thread publisher([&] {
    RespPeer pub(server.port(), /*asserting=*/false);
    for (int i = 0; i < kMessages; ++i) pub.Call({"PUBLISH", "news", "m" + std::to_string(i)});
  });
  std::string pipeline;
  for (int i = 0; i < kCommands; ++i) {
    std::vector<std::string> cmd = i % 50 == 7 ? std::vector<std::string>{"HGETALL", "big"}
                                               : std::vector<std::string>{"GET", "k"};
    pipeline += "*" + std::to_string(cmd.size()) + "\r\n";
    for (const auto& a : cmd) pipeline += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  subscriber.Send(pipeline);
  int replies = 0;
  int messages = 0;
  while (replies < kCommands || messages < kMessages) {
    const std::string frame = subscriber.ReadReply();  // REQUIREs whole frames
    if (IsPush(frame)) {
      CHECK(frame == ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$" +
                         std::to_string(std::string("m" + std::to_string(messages)).size()) +
                         "\r\nm" + std::to_string(messages) + "\r\n");
      ++messages;
      continue;
    }
    if (replies % 50 == 7) {
      CHECK(frame.rfind("%20000\r\n", 0) == 0);  // the whole map, never split by a push
    } else {
      CHECK(frame == "$1\r\nv\r\n");
    }
    ++replies;
  }
  publisher.join();
  CHECK(replies == kCommands);
  CHECK(messages == kMessages);
  CHECK(subscriber.Call({"UNSUBSCRIBE"}) == ">3\r\n$11\r\nunsubscribe\r\n$4\r\nnews\r\n:0\r\n");
  CHECK(subscriber.Call({"GET", "nokey"}) == "_\r\n");
}

TEST_CASE("RESP3 nulls of blocking commands and transactions", "[resp3][blocking][transaction]") {
  TestServer server;
  RespPeer a(server.port());
  RespPeer b(server.port());
  REQUIRE(a.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(a.Call({"BLPOP", "nolist", "0.05"}) == "_\r\n");
  CHECK(a.Call({"BLMOVE", "nolist", "l2", "LEFT", "LEFT", "0.05"}) == "_\r\n");
  // A RESP3 client blocked in BZPOPMIN, served by a RESP2 client's ZADD: its reply is RESP3.
  a.SendCommand({"BZPOPMIN", "z", "0"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(b.Call({"ZADD", "z", "2.5", "m"}) == ":1\r\n");
  CHECK(a.ReadReply() == "*3\r\n$1\r\nz\r\n$1\r\nm\r\n,2.5\r\n");
  // EXEC's replies are typed; an aborted EXEC is a null.
  CHECK(b.Call({"HSET", "h", "f", "v"}) == ":1\r\n");
  CHECK(a.Call({"MULTI"}) == "+OK\r\n");
  CHECK(a.Call({"HGETALL", "h"}) == "+QUEUED\r\n");
  CHECK(a.Call({"GET", "nokey"}) == "+QUEUED\r\n");
  CHECK(a.Call({"EXEC"}) == "*2\r\n%1\r\n$1\r\nf\r\n$1\r\nv\r\n_\r\n");
  CHECK(a.Call({"WATCH", "h"}) == "+OK\r\n");
  CHECK(b.Call({"HSET", "h", "f", "w"}) == ":0\r\n");
  CHECK(a.Call({"MULTI"}) == "+OK\r\n");
  CHECK(a.Call({"GET", "h"}) == "+QUEUED\r\n");
  CHECK(a.Call({"EXEC"}) == "_\r\n");
}

}  // namespace resp3_test
