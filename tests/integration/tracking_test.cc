// Client-side caching ([tracking]): CLIENT TRACKING's modes as a client library uses them — the
// default mode (keys the client read), OPTIN with CLIENT CACHING YES, BCAST with prefixes,
// REDIRECT to a RESP2 connection subscribed to __redis__:invalidate — invalidations from writes
// on other connections, from write runs and from FLUSHALL, and a coherence stress: readers that
// keep a local copy and apply invalidations end with the server's values.
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/differential_peer.h"
#include "tests/integration/test_helpers.h"
#include "tests/integration/test_server.h"

using rockcache::testing::Contains;
using rockcache::testing::RespPeer;
using rockcache::testing::TestServer;

namespace {

std::string Invalidate(const std::vector<std::string>& keys) {
  std::string frame = ">2\r\n$10\r\ninvalidate\r\n*" + std::to_string(keys.size()) + "\r\n";
  for (const auto& key : keys) frame += "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
  return frame;
}

// The next reply that is not a push, pushes collected in *pushes.
std::string NextReply(RespPeer& peer, std::vector<std::string>* pushes) {
  for (;;) {
    std::string frame = peer.ReadReply();
    if (frame.empty() || frame[0] != '>') return frame;
    pushes->push_back(frame);
  }
}

}  // namespace

TEST_CASE("Tracking default mode: a read key is invalidated once by the next write",
          "[tracking][resp3]") {
  TestServer server;
  RespPeer reader(server.port());
  RespPeer writer(server.port());
  REQUIRE(reader.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(reader.Call({"CLIENT", "TRACKING", "ON"}) == "+OK\r\n");
  CHECK(reader.Call({"CLIENT", "GETREDIR"}) == ":0\r\n");
  CHECK(writer.Call({"SET", "k", "1"}) == "+OK\r\n");
  CHECK(reader.Call({"GET", "k"}) == "$1\r\n1\r\n");
  CHECK(reader.Call({"HGET", "h", "f"}) == "_\r\n");
  CHECK(writer.Call({"SET", "k", "2"}) == "+OK\r\n");
  CHECK(reader.ReadReply() == Invalidate({"k"}));
  // Not read since: the next write sends nothing; a read of it again re-arms it.
  CHECK(writer.Call({"SET", "k", "3"}) == "+OK\r\n");
  CHECK(writer.Call({"HSET", "h", "f", "v"}) == ":1\r\n");
  CHECK(reader.ReadReply() == Invalidate({"h"}));
  CHECK(reader.Call({"GET", "k"}) == "$1\r\n3\r\n");
  // The reader's own write: its reply first, then the invalidation (as Redis without NOLOOP).
  reader.SendCommand({"SET", "k", "4"});
  CHECK(reader.ReadReply() == "+OK\r\n");
  CHECK(reader.ReadReply() == Invalidate({"k"}));
  // A write run (pipelined pushes on one key) invalidates too.
  CHECK(reader.Call({"LRANGE", "l", "0", "-1"}) == "*0\r\n");
  std::vector<std::vector<std::string>> pushes(20, {"RPUSH", "l", "x"});
  writer.CallPipelined(pushes);
  CHECK(reader.ReadReply() == Invalidate({"l"}));
  // INFO counts it; OFF stops it.
  CHECK(Contains(reader.Call({"INFO", "clients"}), "tracking_clients:1"));
  CHECK(reader.Call({"GET", "k"}) == "$1\r\n4\r\n");
  CHECK(reader.Call({"CLIENT", "TRACKING", "OFF"}) == "+OK\r\n");
  CHECK(writer.Call({"SET", "k", "5"}) == "+OK\r\n");
  CHECK(reader.Call({"PING"}) == "+PONG\r\n");  // no push came before it
  CHECK(reader.Call({"CLIENT", "GETREDIR"}) == ":-1\r\n");
}

TEST_CASE("Tracking OPTIN, BCAST prefixes, FLUSHALL and REDIRECT to a RESP2 subscriber",
          "[tracking][resp3]") {
  TestServer server;
  RespPeer writer(server.port());
  {
    RespPeer optin(server.port());
    REQUIRE(optin.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
    CHECK(optin.Call({"CLIENT", "TRACKING", "ON", "OPTIN"}) == "+OK\r\n");
    CHECK(optin.Call({"GET", "a"}) == "_\r\n");  // not cached: no CACHING YES before it
    CHECK(optin.Call({"CLIENT", "CACHING", "YES"}) == "+OK\r\n");
    CHECK(optin.Call({"GET", "b"}) == "_\r\n");
    CHECK(writer.Call({"MSET", "a", "1", "b", "2"}) == "+OK\r\n");
    CHECK(optin.ReadReply() == Invalidate({"b"}));
    CHECK(optin.Call({"PING"}) == "+PONG\r\n");  // nothing for a
  }
  {
    RespPeer bcast(server.port());
    REQUIRE(bcast.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
    CHECK(bcast.Call({"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:"}) == "+OK\r\n");
    CHECK(writer.Call({"SET", "other", "1"}) == "+OK\r\n");
    CHECK(writer.Call({"SET", "user:1", "1"}) == "+OK\r\n");
    CHECK(bcast.ReadReply() == Invalidate({"user:1"}));
    CHECK(writer.Call({"FLUSHALL"}) == "+OK\r\n");
    CHECK(bcast.ReadReply() == ">2\r\n$10\r\ninvalidate\r\n_\r\n");
    CHECK(bcast.Call({"PING"}) == "+PONG\r\n");
  }
  // RESP2: the invalidations go to the connection named by REDIRECT, as messages of
  // __redis__:invalidate.
  RespPeer sink(server.port());
  const std::string sink_id = sink.Call({"CLIENT", "ID"}).substr(1);
  CHECK(sink.Call({"SUBSCRIBE", "__redis__:invalidate"}).rfind("*3\r\n$9\r\nsubscribe", 0) == 0);
  RespPeer resp2(server.port());
  CHECK(resp2.Call({"CLIENT", "TRACKING", "ON", "REDIRECT", "99999"}) ==
        "-ERR The client ID you want redirect to does not exist\r\n");
  CHECK(resp2.Call({"CLIENT", "TRACKING", "ON", "REDIRECT",
                    sink_id.substr(0, sink_id.size() - 2)}) == "+OK\r\n");
  CHECK(resp2.Call({"GET", "r"}) == "$-1\r\n");
  CHECK(writer.Call({"SET", "r", "1"}) == "+OK\r\n");
  CHECK(sink.ReadReply() ==
        "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nr\r\n");
}

TEST_CASE("Tracking coherence: local copies with invalidations end at the server's values",
          "[tracking][resp3][stress]") {
  TestServer server({"--cache-maxmemory", "1mb"});
  constexpr int kKeys = 50;
  constexpr int kWrites = 3000;
  constexpr int kReaders = 3;
  std::atomic<bool> done{false};
  std::atomic<int> stale{0};
  std::atomic<long> local_hits{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      RespPeer peer(server.port(), /*asserting=*/false);
      peer.Call({"HELLO", "3"});
      peer.Call({"CLIENT", "TRACKING", "ON"});
      std::map<std::string, std::string> local;
      auto apply = [&](const std::string& push) {
        // >2 invalidate *n keys... or _ (all)
        if (push.find("invalidate") == std::string::npos) return;
        if (push.size() >= 3 && push.compare(push.size() - 3, 3, "_\r\n") == 0) {
          local.clear();
          return;
        }
        for (const auto& [key, value] : std::map<std::string, std::string>(local)) {
          if (push.find("\r\n" + key + "\r\n") != std::string::npos) local.erase(key);
        }
      };
      unsigned seed = static_cast<unsigned>(r * 7919 + 1);
      auto read = [&](const std::string& key) {
        peer.SendCommand({"GET", key});
        std::vector<std::string> pushes;
        std::string reply = NextReply(peer, &pushes);
        for (const auto& p : pushes) apply(p);
        return reply;
      };
      while (!done.load()) {
        seed = seed * 1103515245 + 12345;
        const std::string key = "k" + std::to_string((seed >> 8) % kKeys);
        if (local.count(key)) {
          local_hits.fetch_add(1);
          // Drain pushes that arrived meanwhile (a PING's reply comes after them).
          peer.SendCommand({"PING"});
          std::vector<std::string> pushes;
          NextReply(peer, &pushes);
          for (const auto& p : pushes) apply(p);
          continue;
        }
        local[key] = read(key);
      }
      // Settle: every invalidation of a write acknowledged before now is delivered before the
      // reply of a PING sent after it.
      peer.SendCommand({"PING"});
      std::vector<std::string> pushes;
      NextReply(peer, &pushes);
      for (const auto& p : pushes) apply(p);
      RespPeer check(server.port(), /*asserting=*/false);
      for (const auto& [key, value] : local) {
        if (check.Call({"GET", key}) != value) stale.fetch_add(1);
      }
    });
  }
  {
    RespPeer w1(server.port());
    for (int i = 0; i < kWrites; ++i) {
      w1.Call({"SET", "k" + std::to_string(i % kKeys), std::to_string(i)});
      if (i % 1000 == 999) w1.Call({"DEL", "k" + std::to_string((i / 1000) % kKeys)});
    }
  }
  done.store(true);
  for (auto& t : readers) t.join();
  INFO("local hits " << local_hits.load());
  CHECK(stale.load() == 0);
  CHECK(local_hits.load() > 0);
}
