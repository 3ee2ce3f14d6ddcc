// Pub/sub and keyspace notifications over real sockets: replies, patterns, subscribed mode,
// delivery across network loops, the pubsub output-buffer class, keyspace events per family
// (including `expired`), and Debian's python3-redis client.
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Contains;
using rockcache::testing::Describe;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::RunShell;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace pubsub_test {

namespace {

// The next push a subscribed client receives, described ("[bulk:message, bulk:ch, bulk:hi]").
std::string Next(Client& c) {
  Reply r;
  REQUIRE(c.GetReply(&r));
  return Describe(r);
}

std::string Message(const std::string& channel, const std::string& text) {
  return "[bulk:message, bulk:" + channel + ", bulk:" + text + "]";
}

std::string PMessage(const std::string& pattern, const std::string& channel,
                     const std::string& text) {
  return "[bulk:pmessage, bulk:" + pattern + ", bulk:" + channel + ", bulk:" + text + "]";
}

// Waits (bounded) until `cond` holds, polling; returns whether it did.
template <typename Cond>
bool Eventually(Cond cond, int timeout_ms = 20000) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (cond()) return true;
    rockcache::testing::SleepMs(20);
  }
  return cond();
}

}  // namespace

TEST_CASE("SUBSCRIBE, PUBLISH, UNSUBSCRIBE replies and messages", "[pubsub]") {
  TestServer server;
  Client sub(server.port());
  Client pub(server.port());

  sub.Append({"SUBSCRIBE", "news", "sport"});
  CHECK(Next(sub) == "[bulk:subscribe, bulk:news, int:1]");
  CHECK(Next(sub) == "[bulk:subscribe, bulk:sport, int:2]");
  sub.Append({"SUBSCRIBE", "news"});  // again: the same count
  CHECK(Next(sub) == "[bulk:subscribe, bulk:news, int:2]");

  CHECK(Run(pub, {"PUBLISH", "news", "hello"}) == "int:1");
  CHECK(Run(pub, {"PUBLISH", "nobody", "x"}) == "int:0");
  CHECK(Next(sub) == Message("news", "hello"));
  CHECK(Run(pub, {"PUBLISH", "sport", std::string("bin\0ary", 7)}) == "int:1");
  CHECK(Next(sub) == Message("sport", std::string("bin\0ary", 7)));

  CHECK(Run(pub, {"PUBSUB", "NUMSUB", "news", "sport", "none"}) ==
        "[bulk:news, int:1, bulk:sport, int:1, bulk:none, int:0]");
  CHECK(Run(pub, {"PUBSUB", "CHANNELS", "n*"}) == "[bulk:news]");
  CHECK(Run(pub, {"PUBSUB", "NUMPAT"}) == "int:0");
  CHECK(Run(pub, {"PUBSUB", "NUMSUB"}) == "[]");
  CHECK(Run(pub, {"PUBSUB", "FOO"}) == "err:ERR unknown subcommand 'FOO'. Try PUBSUB HELP.");
  std::string info = Describe(pub.Command({"INFO", "stats"}));
  CHECK(info.find("pubsub_channels:2") != std::string::npos);
  CHECK(info.find("pubsub_patterns:0") != std::string::npos);
  std::string list = Describe(pub.Command({"CLIENT", "LIST", "TYPE", "pubsub"}));
  CHECK(list.find("flags=P db=0 sub=2 psub=0") != std::string::npos);
  CHECK(Describe(pub.Command({"CLIENT", "LIST", "TYPE", "normal"})).find("flags=P") ==
        std::string::npos);

  sub.Append({"UNSUBSCRIBE", "news", "other"});
  CHECK(Next(sub) == "[bulk:unsubscribe, bulk:news, int:1]");
  CHECK(Next(sub) == "[bulk:unsubscribe, bulk:other, int:1]");
  CHECK(Run(pub, {"PUBLISH", "news", "gone"}) == "int:0");
  sub.Append({"UNSUBSCRIBE"});
  CHECK(Next(sub) == "[bulk:unsubscribe, bulk:sport, int:0]");
  sub.Append({"UNSUBSCRIBE"});  // nothing left: one reply with a nil channel
  CHECK(Next(sub) == "[bulk:unsubscribe, nil, int:0]");
  sub.Append({"PUNSUBSCRIBE"});
  CHECK(Next(sub) == "[bulk:punsubscribe, nil, int:0]");
  // Out of subscribed mode: any command again.
  CHECK(Run(sub, {"SET", "k", "v"}) == "status:OK");
  CHECK(Run(pub, {"PUBSUB", "CHANNELS"}) == "[]");
}

TEST_CASE("PSUBSCRIBE patterns: pmessage, counts, glob rules", "[pubsub]") {
  TestServer server;
  Client sub(server.port());
  Client pub(server.port());
  sub.Append({"PSUBSCRIBE", "news.*", "h?llo", "[ab]x"});
  CHECK(Next(sub) == "[bulk:psubscribe, bulk:news.*, int:1]");
  CHECK(Next(sub) == "[bulk:psubscribe, bulk:h?llo, int:2]");
  CHECK(Next(sub) == "[bulk:psubscribe, bulk:[ab]x, int:3]");
  sub.Append({"SUBSCRIBE", "news.tech"});
  CHECK(Next(sub) == "[bulk:subscribe, bulk:news.tech, int:4]");

  CHECK(Run(pub, {"PUBSUB", "NUMPAT"}) == "int:3");
  // A channel subscriber and a matching pattern: two receivers, message before pmessage.
  CHECK(Run(pub, {"PUBLISH", "news.tech", "t"}) == "int:2");
  CHECK(Next(sub) == Message("news.tech", "t"));
  CHECK(Next(sub) == PMessage("news.*", "news.tech", "t"));
  CHECK(Run(pub, {"PUBLISH", "hallo", "a"}) == "int:1");
  CHECK(Next(sub) == PMessage("h?llo", "hallo", "a"));
  CHECK(Run(pub, {"PUBLISH", "bx", "b"}) == "int:1");
  CHECK(Next(sub) == PMessage("[ab]x", "bx", "b"));
  CHECK(Run(pub, {"PUBLISH", "cx", "c"}) == "int:0");

  sub.Append({"PUNSUBSCRIBE", "h?llo"});
  CHECK(Next(sub) == "[bulk:punsubscribe, bulk:h?llo, int:3]");
  CHECK(Run(pub, {"PUBLISH", "hallo", "a"}) == "int:0");
  CHECK(Run(pub, {"PUBSUB", "NUMPAT"}) == "int:2");
  // A second connection on the same pattern: NUMPAT counts patterns, not subscriptions.
  Client sub2(server.port());
  sub2.Append({"PSUBSCRIBE", "news.*"});
  CHECK(Next(sub2) == "[bulk:psubscribe, bulk:news.*, int:1]");
  CHECK(Run(pub, {"PUBSUB", "NUMPAT"}) == "int:2");
  CHECK(Run(pub, {"PUBLISH", "news.x", "y"}) == "int:2");
  CHECK(Next(sub) == PMessage("news.*", "news.x", "y"));
  CHECK(Next(sub2) == PMessage("news.*", "news.x", "y"));
}

TEST_CASE("A subscribed RESP2 connection runs only the pub/sub commands, PING, QUIT, RESET",
          "[pubsub]") {
  TestServer server;
  Client sub(server.port());
  sub.Append({"SUBSCRIBE", "ch"});
  CHECK(Next(sub) == "[bulk:subscribe, bulk:ch, int:1]");
  const std::string tail =
      "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
      "context";
  sub.Append({"GET", "k"});
  CHECK(Next(sub) == "err:ERR Can't execute 'get" + tail);
  sub.Append({"CONFIG", "GET", "port"});
  CHECK(Next(sub) == "err:ERR Can't execute 'config|get" + tail);
  sub.Append({"PUBLISH", "ch", "x"});
  CHECK(Next(sub) == "err:ERR Can't execute 'publish" + tail);
  sub.Append({"GET"});  // arity is checked first, as Redis
  CHECK(Next(sub) == "err:ERR wrong number of arguments for 'get' command");
  sub.Append({"PING"});
  CHECK(Next(sub) == "[bulk:pong, bulk:]");
  sub.Append({"PING", "hi"});
  CHECK(Next(sub) == "[bulk:pong, bulk:hi]");
  sub.Append({"RESET"});
  CHECK(Next(sub) == "status:RESET");
  CHECK(Run(sub, {"PING"}) == "status:PONG");
  CHECK(Run(sub, {"PUBSUB", "NUMSUB", "ch"}) == "[bulk:ch, int:0]");

  Client quitter(server.port());
  quitter.Append({"PSUBSCRIBE", "*"});
  CHECK(Next(quitter) == "[bulk:psubscribe, bulk:*, int:1]");
  quitter.Append({"QUIT"});
  CHECK(Next(quitter) == "status:OK");
  Client check(server.port());
  CHECK(Eventually([&] { return Run(check, {"PUBSUB", "NUMPAT"}) == "int:0"; }));
}

TEST_CASE("PUBLISH reaches subscribers on every network loop", "[pubsub][concurrency]") {
  TestServer server({"--net-threads", "2"});
  constexpr int kSubscribers = 24;
  constexpr int kMessages = 200;
  std::vector<std::unique_ptr<Client>> subs;
  for (int i = 0; i < kSubscribers; ++i) {
    subs.push_back(std::make_unique<Client>(server.port()));
    subs.back()->Append({"SUBSCRIBE", "bus"});
    CHECK(Next(*subs.back()) == "[bulk:subscribe, bulk:bus, int:1]");
  }
  // Publishers on several connections (hence loops), each publishing its own sequence.
  constexpr int kPublishers = 4;
  std::vector<std::thread> publishers;
  std::atomic<int> wrong_counts{0};
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&, p] {
      Client pub(server.port());
      for (int m = 0; m < kMessages; ++m) {
        Reply r = pub.Command({"PUBLISH", "bus", std::to_string(p) + ":" + std::to_string(m)});
        if (r.integer != kSubscribers) ++wrong_counts;
      }
    });
  }
  for (auto& t : publishers) t.join();
  CHECK(wrong_counts.load() == 0);
  // Every subscriber gets every message once, each publisher's in its order.
  for (auto& sub : subs) {
    std::vector<int> next(kPublishers, 0);
    for (int i = 0; i < kPublishers * kMessages; ++i) {
      Reply r;
      REQUIRE(sub->GetReply(&r));
      REQUIRE(r.elements.size() == 3);
      const std::string& text = r.elements[2].str;
      int p = std::stoi(text.substr(0, text.find(':')));
      int m = std::stoi(text.substr(text.find(':') + 1));
      CHECK(m == next[p]);
      next[p] = m + 1;
    }
  }
}

TEST_CASE("A slow subscriber is cut off by the pubsub output limit; others keep going",
          "[pubsub][limits]") {
  // Two network threads: the publisher and the readers may sit on different loops, whose
  // deliveries arrive in batches (a reading subscriber is not cut off by a burst).
  TestServer server({"--client-output-buffer-limit", "pubsub 1mb 0 0", "--net-threads", "2"});
  Client admin(server.port());
  RawConnection slow(server.port());  // subscribes, then never reads
  slow.Send(rockcache::testing::Resp({"SUBSCRIBE", "feed"}));
  Client good(server.port());
  good.Append({"SUBSCRIBE", "feed"});
  CHECK(Next(good) == "[bulk:subscribe, bulk:feed, int:1]");
  REQUIRE(Eventually([&] {
    return Run(admin, {"PUBSUB", "NUMSUB", "feed"}) == "[bulk:feed, int:2]";
  }));

  constexpr int kMessages = 600;  // 64 KB each: ~38 MB, far past what socket buffers hold
  const std::string payload(64 * 1024, 'x');
  std::atomic<int> received{0};
  std::thread reader([&] {
    for (int i = 0; i < kMessages + 1; ++i) {
      Reply r;
      if (!good.GetReply(&r)) return;
      ++received;
    }
  });
  Client pub(server.port());
  for (int i = 0; i < kMessages; ++i) pub.Command({"PUBLISH", "feed", payload});
  // The slow one is closed (and unsubscribed); the good one stays.
  CHECK(Eventually([&] {
    return Run(admin, {"PUBSUB", "NUMSUB", "feed"}) == "[bulk:feed, int:1]";
  }));
  CHECK(Run(pub, {"PUBLISH", "feed", "end"}) == "int:1");
  reader.join();
  CHECK(received.load() == kMessages + 1);
  std::string ignored;
  CHECK(slow.WaitClosed(&ignored, 20000));
}

TEST_CASE("notify-keyspace-events: CONFIG round trip and events per family", "[pubsub][notify]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"CONFIG", "GET", "notify-keyspace-events"}) ==
        "[bulk:notify-keyspace-events, bulk:]");
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "KEA"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "notify-keyspace-events"}) ==
        "[bulk:notify-keyspace-events, bulk:AKE]");
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "Elg$"}) == "status:OK");
  CHECK(Run(c, {"CONFIG", "GET", "notify-keyspace-events"}) ==
        "[bulk:notify-keyspace-events, bulk:g$lE]");
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "Q"}).rfind("err:", 0) == 0);

  // Key events only (E): the message is the key; one subscriber sees them in order.
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "EA"}) == "status:OK");
  Client sub(server.port());
  sub.Append({"PSUBSCRIBE", "__keyevent@0__:*"});
  CHECK(Next(sub) == "[bulk:psubscribe, bulk:__keyevent@0__:*, int:1]");
  auto expect = [&](const std::string& event, const std::string& key) {
    CHECK(Next(sub) == PMessage("__keyevent@0__:*", "__keyevent@0__:" + event, key));
  };
  CHECK(Run(c, {"SET", "s", "1"}) == "status:OK");
  expect("set", "s");
  CHECK(Run(c, {"SET", "s", "1", "EX", "100"}) == "status:OK");
  expect("set", "s");
  expect("expire", "s");
  CHECK(Run(c, {"INCRBY", "s", "2"}) == "int:3");
  expect("incrby", "s");
  CHECK(Run(c, {"INCRBYFLOAT", "s", "0.5"}) == "bulk:3.5");
  expect("incrbyfloat", "s");
  CHECK(Run(c, {"APPEND", "s", "x"}) == "int:4");
  expect("append", "s");
  CHECK(Run(c, {"SETRANGE", "s", "0", "y"}) == "int:4");
  expect("setrange", "s");
  CHECK(Run(c, {"PERSIST", "s"}) == "int:1");
  expect("persist", "s");
  CHECK(Run(c, {"EXPIRE", "s", "100"}) == "int:1");
  expect("expire", "s");
  CHECK(Run(c, {"RENAME", "s", "t"}) == "status:OK");
  expect("rename_from", "s");
  expect("rename_to", "t");
  CHECK(Run(c, {"DEL", "t", "missing"}) == "int:1");
  expect("del", "t");

  CHECK(Run(c, {"RPUSH", "l", "a", "b", "c"}) == "int:3");
  expect("rpush", "l");
  CHECK(Run(c, {"LPUSH", "l", "z"}) == "int:4");
  expect("lpush", "l");
  CHECK(Run(c, {"LSET", "l", "0", "y"}) == "status:OK");
  expect("lset", "l");
  CHECK(Run(c, {"LINSERT", "l", "BEFORE", "a", "q"}) == "int:5");
  expect("linsert", "l");
  CHECK(Run(c, {"LREM", "l", "0", "q"}) == "int:1");
  expect("lrem", "l");
  CHECK(Run(c, {"LTRIM", "l", "0", "2"}) == "status:OK");
  expect("ltrim", "l");
  CHECK(Run(c, {"RPOP", "l"}) == "bulk:b");
  expect("rpop", "l");
  CHECK(Run(c, {"LMOVE", "l", "l2", "LEFT", "RIGHT"}) == "bulk:y");
  expect("rpush", "l2");
  expect("lpop", "l");
  CHECK(Run(c, {"LPOP", "l"}) == "bulk:a");  // the last one: the key goes
  expect("lpop", "l");
  expect("del", "l");

  CHECK(Run(c, {"HSET", "h", "f", "1", "g", "2"}) == "int:2");
  expect("hset", "h");
  CHECK(Run(c, {"HINCRBY", "h", "f", "5"}) == "int:6");
  expect("hincrby", "h");
  CHECK(Run(c, {"HINCRBYFLOAT", "h", "f", "0.5"}) == "bulk:6.5");
  expect("hincrbyfloat", "h");
  CHECK(Run(c, {"HDEL", "h", "f", "g"}) == "int:2");
  expect("hdel", "h");
  expect("del", "h");

  CHECK(Run(c, {"SADD", "st", "a", "b"}) == "int:2");
  expect("sadd", "st");
  CHECK(Run(c, {"SREM", "st", "a"}) == "int:1");
  expect("srem", "st");
  CHECK(Run(c, {"SINTERSTORE", "st2", "st"}) == "int:1");
  expect("sinterstore", "st2");
  CHECK(Run(c, {"SPOP", "st"}) == "bulk:b");
  expect("spop", "st");
  expect("del", "st");

  CHECK(Run(c, {"ZADD", "z", "1", "a", "2", "b", "3", "c"}) == "int:3");
  expect("zadd", "z");
  CHECK(Run(c, {"ZINCRBY", "z", "1", "a"}) == "bulk:2");
  expect("zincr", "z");
  CHECK(Run(c, {"ZREM", "z", "a"}) == "int:1");
  expect("zrem", "z");
  CHECK(Run(c, {"ZPOPMIN", "z"}) == "[bulk:b, bulk:2]");
  expect("zpopmin", "z");
  CHECK(Run(c, {"ZREMRANGEBYSCORE", "z", "-inf", "+inf"}) == "int:1");
  expect("zremrangebyscore", "z");
  expect("del", "z");

  // Class filtering: only lists now; a string write sends nothing, a list write does.
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "El"}) == "status:OK");
  CHECK(Run(c, {"SET", "quiet", "1"}) == "status:OK");
  CHECK(Run(c, {"RPUSH", "loud", "1"}) == "int:1");
  expect("rpush", "loud");

  // Keyspace form (K): the channel names the key, the message is the event.
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "K$"}) == "status:OK");
  Client ks(server.port());
  ks.Append({"SUBSCRIBE", "__keyspace@0__:mykey"});
  CHECK(Next(ks) == "[bulk:subscribe, bulk:__keyspace@0__:mykey, int:1]");
  CHECK(Run(c, {"SET", "mykey", "v"}) == "status:OK");
  CHECK(Next(ks) == Message("__keyspace@0__:mykey", "set"));

  // Off again: nothing more is published (the next message the subscriber sees is ours).
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", ""}) == "status:OK");
  CHECK(Run(c, {"SET", "mykey", "w"}) == "status:OK");
  CHECK(Run(c, {"PUBLISH", "__keyspace@0__:mykey", "marker"}) == "int:1");
  CHECK(Next(ks) == Message("__keyspace@0__:mykey", "marker"));
}

TEST_CASE("expired events: a key found expired on access, and one removed by the sweep",
          "[pubsub][notify]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"CONFIG", "SET", "notify-keyspace-events", "Ex"}) == "status:OK");
  Client sub(server.port());
  sub.Append({"SUBSCRIBE", "__keyevent@0__:expired"});
  CHECK(Next(sub) == "[bulk:subscribe, bulk:__keyevent@0__:expired, int:1]");

  // Found expired on access: read after its TTL; the event follows (exactly once).
  CHECK(Run(c, {"SET", "gone", "v", "PX", "50"}) == "status:OK");
  rockcache::testing::SleepMs(120);
  CHECK(Run(c, {"GET", "gone"}) == "nil");
  CHECK(Next(sub) == Message("__keyevent@0__:expired", "gone"));

  // Never read: the expiry sweep removes it and announces it.
  CHECK(Run(c, {"SET", "swept", "v", "PX", "50"}) == "status:OK");
  CHECK(Next(sub) == Message("__keyevent@0__:expired", "swept"));
  CHECK(Run(c, {"EXISTS", "swept"}) == "int:0");
  CHECK(Describe(c.Command({"INFO", "stats"})).find("expired_keys:2") != std::string::npos);

  // Each key was announced once: the next message is this marker.
  CHECK(Run(c, {"PUBLISH", "__keyevent@0__:expired", "marker"}) == "int:1");
  CHECK(Next(sub) == Message("__keyevent@0__:expired", "marker"));
}

TEST_CASE("python3-redis pubsub(): subscribe, get_message, psubscribe", "[pubsub][python]") {
  int rc = -1;
  RunShell("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1", &rc);
  if (rc != 0) {
    WARN("python3-redis (Debian's) not installed: python pub/sub test skipped");
    return;
  }
  TestServer server;
  std::string script = std::string(__FILE__);
  script = script.substr(0, script.rfind('/')) + "/pubsub_client.py";
  std::string out = RunShell(
      "timeout 60 /usr/bin/python3 " + script + " " + std::to_string(server.port()) + " 2>&1", &rc);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("OK") != std::string::npos);
}

TEST_CASE("timeout closes idle clients but not subscribers", "[pubsub]") {
  TestServer server({"--timeout", "1"});
  Client sub(server.port());
  sub.Append({"SUBSCRIBE", "ch"});
  CHECK(Next(sub) == "[bulk:subscribe, bulk:ch, int:1]");
  Client idle(server.port());
  CHECK(Run(idle, {"PING"}) == "status:PONG");
  rockcache::testing::SleepMs(3000);
  Reply r;
  CHECK_FALSE(idle.TryCommand({"PING"}, &r));  // closed as idle
  Client pub(server.port());
  CHECK(Run(pub, {"PUBLISH", "ch", "still"}) == "int:1");
  CHECK(Next(sub) == Message("ch", "still"));
}

TEST_CASE("shard channels: SSUBSCRIBE, SPUBLISH, SUNSUBSCRIBE, PUBSUB SHARD* (Redis 7, one shard)",
          "[pubsub]") {
  TestServer server({"--net-threads", "2"});
  Client sub(server.port());
  Client pub(server.port());
  sub.Append({"SSUBSCRIBE", "news", "sport"});
  CHECK(Next(sub) == "[bulk:ssubscribe, bulk:news, int:1]");
  CHECK(Next(sub) == "[bulk:ssubscribe, bulk:sport, int:2]");
  // A namespace of its own: the counts of (P)SUBSCRIBE and SSUBSCRIBE are separate.
  sub.Append({"SUBSCRIBE", "news"});
  CHECK(Next(sub) == "[bulk:subscribe, bulk:news, int:1]");
  CHECK(Run(pub, {"SPUBLISH", "news", "hello"}) == "int:1");
  CHECK(Next(sub) == "[bulk:smessage, bulk:news, bulk:hello]");
  CHECK(Run(pub, {"PUBLISH", "news", "plain"}) == "int:1");
  CHECK(Next(sub) == Message("news", "plain"));
  CHECK(Run(pub, {"SPUBLISH", "nobody", "x"}) == "int:0");
  CHECK(Run(pub, {"PUBSUB", "SHARDCHANNELS"}).find("bulk:news") != std::string::npos);
  CHECK(Run(pub, {"PUBSUB", "SHARDCHANNELS", "s*"}) == "[bulk:sport]");
  CHECK(Run(pub, {"PUBSUB", "SHARDNUMSUB", "news", "other"}) ==
        "[bulk:news, int:1, bulk:other, int:0]");
  CHECK(Run(pub, {"PUBSUB", "CHANNELS"}) == "[bulk:news]");
  CHECK(Contains(Run(pub, {"CLIENT", "LIST"}), "sub=1 psub=0 ssub=2 "));
  // Subscribed mode lasts while shard subscriptions remain.
  sub.Append({"UNSUBSCRIBE"});
  CHECK(Next(sub) == "[bulk:unsubscribe, bulk:news, int:0]");
  sub.Append({"GET", "x"});
  CHECK(Next(sub) ==
        "err:ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
        "RESET are allowed in this context");
  sub.Append({"SUNSUBSCRIBE", "news", "zz"});
  CHECK(Next(sub) == "[bulk:sunsubscribe, bulk:news, int:1]");
  CHECK(Next(sub) == "[bulk:sunsubscribe, bulk:zz, int:1]");
  CHECK(Run(pub, {"SPUBLISH", "news", "gone"}) == "int:0");
  sub.Append({"SUNSUBSCRIBE"});
  CHECK(Next(sub) == "[bulk:sunsubscribe, bulk:sport, int:0]");
  CHECK(Run(sub, {"SUNSUBSCRIBE"}) == "[bulk:sunsubscribe, nil, int:0]");
  CHECK(Run(sub, {"PING"}) == "status:PONG");  // out of subscribed mode
  CHECK(Run(pub, {"PUBSUB", "SHARDNUMSUB", "sport"}) == "[bulk:sport, int:0]");
}

}  // namespace pubsub_test
