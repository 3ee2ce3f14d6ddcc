// Client-side caching ([tracking]): CLIENT TRACKING's modes as a client library uses them — the
// default mode (keys the client read), OPTIN with CLIENT CACHING YES, BCAST with prefixes,
// REDIRECT to a RESP2 connection subscribed to __redis__:invalidate — invalidations from writes
// on other connections, from write runs and from FLUSHALL, and a coherence stress: readers that
// keep a local copy and apply invalidations end with the server's values.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/differential_peer.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Contains;
using rockcache::testing::RespPeer;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace tracking_test {

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

namespace {

// The keys of an invalidation push (">2 invalidate" then an array of keys, or a null: every
// key, *all set). False for any other frame.
bool InvalidatedKeys(const std::string& push, std::vector<std::string>* keys, bool* all) {
  static const std::string kHead = ">2\r\n$10\r\ninvalidate\r\n";
  if (push.compare(0, kHead.size(), kHead) != 0) return false;
  size_t pos = kHead.size();
  if (push.compare(pos, 3, "_\r\n") == 0) {
    *all = true;
    return true;
  }
  size_t eol = push.find("\r\n", pos);
  const long count = std::stol(push.substr(pos + 1, eol - pos - 1));
  pos = eol + 2;
  for (long i = 0; i < count; ++i) {
    eol = push.find("\r\n", pos);
    const size_t len = std::stoul(push.substr(pos + 1, eol - pos - 1));
    keys->push_back(push.substr(eol + 2, len));
    pos = eol + 2 + len + 2;
  }
  return true;
}

// The change number a stress writer put in a value ("v<n>:padding"); -1 for a null reply, -2
// for anything else.
int64_t ValueVersion(const std::string& reply) {
  if (reply == "_\r\n") return -1;
  const size_t at = reply.find("\r\nv");
  if (reply.empty() || reply[0] != '$' || at == std::string::npos) return -2;
  return std::stoll(reply.substr(at + 3));
}

struct StressOptions {
  std::vector<std::string> server_args;
  int keys = 64;
  int writers = 3;
  int readers = 4;
  int changes_per_writer = 1500;
  size_t value_bytes = 100;
  bool expiries = true;  // SET ... PX, PEXPIRE (lazy and swept expiry)
};

// Readers (RESP3, CLIENT TRACKING ON) keep a local copy of each key they GET and drop it on
// its invalidation; they send one command at a time. Writers on other connections (spread over
// the server's network loops) each own keys % writers and change them: SET, SET PX of a few ms,
// PEXPIRE, DEL. Each change of a key has a number (issued[k] before it is sent, acked[k] after its
// reply), and a SET writes its number into the value. Checked while it runs:
// - a GET never returns a value older than a SET acknowledged before the GET was sent;
// - after a PING, a reader holds no local copy of a key that a change issued after the copy was
//   read has changed, once that change was acknowledged before the PING was sent: the
//   invalidation of an acknowledged write comes before the reply of any later command (the
//   change was issued after the read's reply arrived, so it ran after the read, which recorded
//   the key first).
// At the end, once the expiry sweep has removed every expired key, every local copy equals the
// server's value.
void RunCoherenceStress(const StressOptions& o) {
  TestServer server(o.server_args);
  std::unique_ptr<std::atomic<int64_t>[]> issued(new std::atomic<int64_t>[o.keys]);
  std::unique_ptr<std::atomic<int64_t>[]> acked(new std::atomic<int64_t>[o.keys]);
  std::unique_ptr<std::atomic<int64_t>[]> acked_set(new std::atomic<int64_t>[o.keys]);
  for (int k = 0; k < o.keys; ++k) {
    issued[k].store(0);
    acked[k].store(0);
    acked_set[k].store(0);
  }
  std::atomic<int> writers_left{o.writers};
  std::atomic<long> local_hits{0}, gets{0}, invalidated{0}, stale_in_run{0}, stale_reads{0},
      stale_at_end{0};
  std::mutex report_mu;
  std::string report;
  auto note = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(report_mu);
    if (report.size() < 4000) report += what + "\n";
  };
  auto key_name = [](int k) { return "k" + std::to_string(k); };

  std::vector<std::thread> threads;
  for (int r = 0; r < o.readers; ++r) {
    threads.emplace_back([&, r] {
      RespPeer peer(server.port(), /*asserting=*/false);
      peer.Call({"HELLO", "3"});
      peer.Call({"CLIENT", "TRACKING", "ON"});
      struct Copy {
        std::string reply;
        int64_t version = 0;       // ValueVersion(reply)
        int64_t issued_after = 0;  // issued[k] once the reply was in
      };
      std::map<int, Copy> local;
      auto apply = [&](const std::vector<std::string>& pushes) {
        for (const std::string& push : pushes) {
          std::vector<std::string> keys;
          bool all = false;
          if (!InvalidatedKeys(push, &keys, &all)) continue;
          invalidated.fetch_add(1);
          if (all) local.clear();
          for (const std::string& key : keys) local.erase(std::stoi(key.substr(1)));
        }
      };
      auto call = [&](const std::vector<std::string>& args) {
        peer.SendCommand(args);
        std::vector<std::string> pushes;
        std::string reply = NextReply(peer, &pushes);
        apply(pushes);
        return reply;
      };
      unsigned seed = static_cast<unsigned>(r * 7919 + 1);
      while (writers_left.load() > 0) {
        seed = seed * 1103515245 + 12345;
        const int k = static_cast<int>((seed >> 8) % o.keys);
        if (local.count(k) > 0) {
          const int64_t acked_before = acked[k].load();
          call({"PING"});
          local_hits.fetch_add(1);
          auto it = local.find(k);
          // (A null copy is left to the end's check: a change of a key that does not exist
          // need not invalidate it, as in Redis.)
          if (it != local.end() && it->second.version >= 0 &&
              acked_before > it->second.issued_after) {
            stale_in_run.fetch_add(1);
            note("reader " + std::to_string(r) + " kept " + key_name(k) + " read before change " +
                 std::to_string(it->second.issued_after + 1) + ", change " +
                 std::to_string(acked_before) + " acknowledged before a PING");
          }
          continue;
        }
        const int64_t set_before = acked_set[k].load();
        std::string reply = call({"GET", key_name(k)});
        const int64_t issued_after = issued[k].load();
        gets.fetch_add(1);
        const int64_t version = ValueVersion(reply);
        if (version == -2 || (version >= 0 && version < set_before)) {
          stale_reads.fetch_add(1);
          note("reader " + std::to_string(r) + " GET " + key_name(k) + " = " + reply +
               " after SET " + std::to_string(set_before) + " was acknowledged");
        }
        local[k] = Copy{std::move(reply), version, issued_after};
      }
      // The end: the writers are done; each round settles (a PING: every invalidation of a
      // write acknowledged before it comes first) and compares. Expired keys are invalidated
      // when they are removed (lazily, or by the sweep a few ticks later), so a copy of one may
      // need a few rounds.
      RespPeer check(server.port(), /*asserting=*/false);
      check.Call({"HELLO", "3"});
      int mismatched = 0;
      for (int round = 0; round < 50; ++round) {
        call({"PING"});
        mismatched = 0;
        std::string first;
        for (const auto& [k, copy] : local) {
          const std::string now = check.Call({"GET", key_name(k)});
          if (now != copy.reply) {
            if (first.empty()) first = key_name(k) + " local " + copy.reply + " server " + now;
            ++mismatched;
          }
        }
        if (mismatched == 0) break;
        if (round == 49) note("reader " + std::to_string(r) + " at the end: " + first);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      stale_at_end.fetch_add(mismatched);
    });
  }
  for (int w = 0; w < o.writers; ++w) {
    threads.emplace_back([&, w] {
      RespPeer peer(server.port(), /*asserting=*/false);
      unsigned seed = static_cast<unsigned>(w * 104729 + 7);
      const std::string padding(o.value_bytes, 'x');
      for (int i = 0; i < o.changes_per_writer; ++i) {
        seed = seed * 1103515245 + 12345;
        const int owned = (o.keys - w + o.writers - 1) / o.writers;
        const int k = w + o.writers * static_cast<int>((seed >> 8) % owned);
        const int64_t n = issued[k].load() + 1;
        issued[k].store(n);
        const unsigned kind = (seed >> 20) % 10;
        const std::string ms = std::to_string(1 + (seed >> 12) % 30);
        const std::string value = "v" + std::to_string(n) + ":" + padding;
        if (!o.expiries || kind < 6) {
          peer.Call({"SET", key_name(k), value});
        } else if (kind < 8) {
          peer.Call({"SET", key_name(k), value, "PX", ms});
        } else if (kind < 9) {
          peer.Call({"PEXPIRE", key_name(k), ms});
        } else {
          peer.Call({"DEL", key_name(k)});
        }
        if (!o.expiries || kind < 8) acked_set[k].store(n);
        acked[k].store(n);
      }
      writers_left.fetch_sub(1);
    });
  }
  for (auto& t : threads) t.join();
  INFO(report);
  INFO("GETs " << gets.load() << ", local hits " << local_hits.load() << ", invalidations "
               << invalidated.load());
  CHECK(stale_reads.load() == 0);
  CHECK(stale_in_run.load() == 0);
  CHECK(stale_at_end.load() == 0);
  CHECK(local_hits.load() > 0);
  CHECK(invalidated.load() > 0);
}

}  // namespace

TEST_CASE("Tracking coherence: local copies with invalidations end at the server's values",
          "[tracking][resp3][stress]") {
  // Several network loops, so writers and readers are on different ones.
  SECTION("writes and expiries, the cache holding every key") {
    StressOptions o;
    o.server_args = {"--net-threads", "3"};
    RunCoherenceStress(o);
  }
  SECTION(
      "writes and expiries, a cache too small for the keys: misses read in the loop or by a "
      "worker") {
    StressOptions o;
    o.server_args = {"--net-threads", "3", "--cache-maxmemory", "16kb"};
    o.keys = 256;
    o.value_bytes = 400;
    RunCoherenceStress(o);
  }
}

TEST_CASE("Tracking REDIRECT to a client that closed: tracking-redir-broken, as Redis 7.0",
          "[tracking][resp3]") {
  TestServer server;
  RespPeer writer(server.port());
  RespPeer resp3(server.port());
  RespPeer resp2(server.port());
  REQUIRE(resp3.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  std::string target;
  {
    RespPeer sink(server.port());
    target = sink.Call({"CLIENT", "ID"});
    target = target.substr(1, target.size() - 3);
    for (RespPeer* tracker : {&resp3, &resp2}) {
      CHECK(tracker->Call({"CLIENT", "TRACKING", "ON", "REDIRECT", target}) == "+OK\r\n");
      tracker->Call({"GET", "k"});
      tracker->Call({"GET", "k2"});
    }
  }
  for (int i = 0; i < 200 && Contains(writer.Call({"CLIENT", "LIST"}), "id=" + target + " "); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string info = "$8\r\nredirect\r\n:" + target + "\r\n$8\r\nprefixes\r\n*0\r\n";
  // Nothing is said before an invalidation finds the redirect client gone.
  CHECK(resp3.Call({"CLIENT", "TRACKINGINFO"}) == "%3\r\n$5\r\nflags\r\n~1\r\n$2\r\non\r\n" + info);
  CHECK(writer.Call({"MSET", "k", "1", "k2", "2"}) == "+OK\r\n");
  // RESP3: a push per key in place of the invalidation; tracking stays on, the redirect kept.
  const std::string broken = ">2\r\n$21\r\ntracking-redir-broken\r\n:" + target + "\r\n";
  CHECK(resp3.ReadReply() == broken);
  CHECK(resp3.ReadReply() == broken);
  CHECK(resp3.Call({"CLIENT", "TRACKINGINFO"}) ==
        "%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$15\r\nbroken_redirect\r\n" + info);
  CHECK(resp3.Call({"CLIENT", "GETREDIR"}) == ":" + target + "\r\n");
  // RESP2: nothing is sent; TRACKINGINFO shows it.
  CHECK(resp2.Call({"PING"}) == "+PONG\r\n");
  CHECK(resp2.Call({"CLIENT", "TRACKINGINFO"}) ==
        "*6\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$15\r\nbroken_redirect\r\n" + info);
  // Tracking again clears it.
  CHECK(resp3.Call({"CLIENT", "TRACKING", "ON"}) == "+OK\r\n");
  CHECK(resp3.Call({"CLIENT", "TRACKINGINFO"}) ==
        "%3\r\n$5\r\nflags\r\n~1\r\n$2\r\non\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n");
}

TEST_CASE("Tracking: a client blocked in BLPOP gets its invalidations while it waits",
          "[tracking][resp3][blocking]") {
  TestServer server;
  RespPeer writer(server.port());
  RespPeer reader(server.port());
  REQUIRE(reader.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(reader.Call({"CLIENT", "TRACKING", "ON"}) == "+OK\r\n");
  CHECK(reader.Call({"GET", "k"}) == "_\r\n");
  reader.SendCommand({"BLPOP", "l", "0"});
  for (int i = 0; i < 200 && !Contains(writer.Call({"INFO", "clients"}), "blocked_clients:1");
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(writer.Call({"SET", "k", "1"}) == "+OK\r\n");
  CHECK(reader.ReadReply() == Invalidate({"k"}));  // before the wait ends
  CHECK(writer.Call({"RPUSH", "l", "x"}) == ":1\r\n");
  CHECK(reader.ReadReply() == "*2\r\n$1\r\nl\r\n$1\r\nx\r\n");
  // A pop served at once: its reply, then the invalidation of its own write (as Redis).
  CHECK(reader.Call({"LRANGE", "l2", "0", "-1"}) == "*0\r\n");
  CHECK(writer.Call({"RPUSH", "l2", "y"}) == ":1\r\n");
  CHECK(reader.ReadReply() == Invalidate({"l2"}));
  CHECK(reader.Call({"LRANGE", "l2", "0", "-1"}) == "*1\r\n$1\r\ny\r\n");
  reader.SendCommand({"BLPOP", "l2", "0"});
  CHECK(reader.ReadReply() == "*2\r\n$2\r\nl2\r\n$1\r\ny\r\n");
  CHECK(reader.ReadReply() == Invalidate({"l2"}));
}

}  // namespace tracking_test
