// CLIENT REPLY ON|OFF|SKIP ([client-reply]), CLIENT PAUSE / UNPAUSE ([client-pause]), CLIENT
// TRACKING NOLOOP and script reads under tracking ([tracking]), OBJECT IDLETIME from the cache
// ([object]) and blocked group readers woken by a stream's expiry ([stream]). Replies that can
// be compared are compared byte for byte with redis-server 7.0 when it is installed.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/differential_peer.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Contains;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::RawConnection;
using rockcache::testing::ReferenceRedis;
using rockcache::testing::Resp;
using rockcache::testing::RespPeer;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace client_control_test {

namespace {

using Commands = std::vector<std::vector<std::string>>;

const std::vector<std::string> kMark = {"ECHO", "end-of-script"};
const char kMarkReply[] = "$13\r\nend-of-script\r\n";

// Sends `commands` and a marker ECHO in one write, then returns every frame up to the marker's
// reply, concatenated: what a client sees of the pipeline.
std::string RunPipeline(RespPeer& peer, const Commands& commands) {
  std::string request;
  for (const auto& c : commands) request += Resp(c);
  request += Resp(kMark);
  peer.Send(request);
  std::string seen;
  for (;;) {
    std::string frame = peer.ReadReply();
    if (frame == kMarkReply) return seen;
    seen += frame;
  }
}

// Each script: a pipeline, sent on a fresh connection after FLUSHALL.
const std::vector<Commands>& ReplyScripts() {
  static const std::vector<Commands> scripts = {
      // SKIP drops exactly the next reply; OFF every reply; ON answers +OK; SKIP then ON: ON's
      // own reply shows; errors too are dropped.
      {{"CLIENT", "REPLY", "SKIP"},
       {"SET", "a", "1"},
       {"GET", "a"},
       {"CLIENT", "REPLY", "OFF"},
       {"GET", "a"},
       {"SET", "b", "2"},
       {"NOSUCHCOMMAND"},
       {"CLIENT", "REPLY", "SKIP"},
       {"CLIENT", "REPLY", "ON"},
       {"GET", "a"},
       {"CLIENT", "REPLY", "SKIP"},
       {"CLIENT", "REPLY", "ON"},
       {"CLIENT", "REPLY", "FOO"},
       {"GET", "b"}},
      // Cache hits, misses and pool commands mixed in one pipeline.
      {{"SET", "k", "v"},
       {"GET", "k"},
       {"CLIENT", "REPLY", "SKIP"},
       {"GET", "k"},
       {"GET", "missing"},
       {"CLIENT", "REPLY", "SKIP"},
       {"INCR", "n"},
       {"GET", "k"},
       {"CLIENT", "REPLY", "SKIP"},
       {"GET", "missing"},
       {"LPUSH", "l", "x", "y"},
       {"CLIENT", "REPLY", "OFF"},
       {"SET", "x", "1"},
       {"GET", "x"},
       {"GET", "k"},
       {"LRANGE", "l", "0", "-1"},
       {"HSET", "h", "f", "v"},
       {"HGETALL", "h"},
       {"CLIENT", "REPLY", "ON"},
       {"GET", "x"},
       {"MGET", "k", "x", "n"}},
      // Transactions: SKIP before MULTI drops MULTI's +OK only; under OFF nothing of it shows.
      {{"CLIENT", "REPLY", "SKIP"},
       {"MULTI"},
       {"SET", "t", "1"},
       {"EXEC"},
       {"PING"},
       {"CLIENT", "REPLY", "OFF"},
       {"MULTI"},
       {"INCR", "t"},
       {"EXEC"},
       {"CLIENT", "REPLY", "ON"},
       {"CLIENT", "REPLY", "SKIP"},
       {"WATCH", "t"},
       {"MULTI"},
       {"CLIENT", "SETNAME", "in-tx"},
       {"INCR", "t"},
       {"EXEC"},
       {"GET", "t"}},
      // A blocking pop that times out (and one served at once) under SKIP; a script.
      {{"CLIENT", "REPLY", "SKIP"},
       {"BLPOP", "nolist", "0.1"},
       {"PING"},
       {"RPUSH", "q", "e"},
       {"CLIENT", "REPLY", "SKIP"},
       {"BLPOP", "q", "0"},
       {"LLEN", "q"},
       {"CLIENT", "REPLY", "SKIP"},
       {"EVAL", "return redis.call('incr', KEYS[1])", "1", "n"},
       {"GET", "n"}},
      // Arity errors.
      {{"CLIENT", "REPLY"},
       {"CLIENT", "REPLY", "ON", "x"},
       {"CLIENT", "REPLY", "off"},
       {"PING"},
       {"CLIENT", "REPLY", "on"}},
  };
  return scripts;
}

// The replies of every script, one string per script.
std::vector<std::string> RunReplyScripts(int port) {
  std::vector<std::string> seen;
  for (const Commands& script : ReplyScripts()) {
    {
      RespPeer admin(port);
      admin.Call({"FLUSHALL"});
    }
    RespPeer peer(port);
    seen.push_back(RunPipeline(peer, script));
  }
  return seen;
}

}  // namespace

TEST_CASE("CLIENT REPLY: per-command replies dropped as redis-server drops them",
          "[client-reply][differential]") {
  TestServer server;
  const std::vector<std::string> ours = RunReplyScripts(server.port());
  // What a client must see, independently of the reference.
  CHECK(ours[0] == "$1\r\n1\r\n+OK\r\n$1\r\n1\r\n+OK\r\n-ERR syntax error\r\n$1\r\n2\r\n");
  CHECK(ours[1] ==
        "+OK\r\n$1\r\nv\r\n$-1\r\n$1\r\nv\r\n:2\r\n+OK\r\n$1\r\n1\r\n"
        "*3\r\n$1\r\nv\r\n$1\r\n1\r\n$1\r\n1\r\n");
  CHECK(ours[3] == "+PONG\r\n:1\r\n:0\r\n$1\r\n1\r\n");
  const std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: the differential half is skipped");
    return;
  }
  ReferenceRedis reference(redis);
  const std::vector<std::string> theirs = RunReplyScripts(reference.port());
  REQUIRE(theirs.size() == ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    INFO("script " << i);
    CHECK(ours[i] == theirs[i]);
  }
}

TEST_CASE("CLIENT REPLY: a long pipeline under OFF sends nothing, push messages still arrive",
          "[client-reply]") {
  TestServer server;
  RespPeer quiet(server.port());
  Commands script = {{"CLIENT", "REPLY", "OFF"}};
  for (int i = 0; i < 5000; ++i) {
    script.push_back({"SET", "key:" + std::to_string(i % 100), std::string(100, 'x')});
    script.push_back({"GET", "key:" + std::to_string(i % 100)});
  }
  script.push_back({"CLIENT", "REPLY", "ON"});
  script.push_back({"DBSIZE"});
  CHECK(RunPipeline(quiet, script) == "+OK\r\n:100\r\n");

  // RESP3 pushes are not replies: a subscriber under OFF still gets its messages (as Redis 7.0).
  RespPeer subscriber(server.port());
  REQUIRE(subscriber.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(subscriber.Call({"SUBSCRIBE", "ch"}) == ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
  subscriber.SendCommand({"CLIENT", "REPLY", "OFF"});
  subscriber.SendCommand({"GET", "key:1"});
  RespPeer publisher(server.port());
  CHECK(publisher.Call({"PUBLISH", "ch", "hello"}) == ":1\r\n");
  CHECK(subscriber.ReadReply() == ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n");
  CHECK(subscriber.Call({"CLIENT", "REPLY", "ON"}) == "+OK\r\n");
}

TEST_CASE("CLIENT PAUSE WRITE holds writes and scripts, lets reads through, resumes in order",
          "[client-pause]") {
  TestServer server({"--net-threads", "1"});
  RespPeer admin(server.port());
  CHECK(admin.Call({"SET", "k", "before"}) == "+OK\r\n");
  CHECK(admin.Call({"GET", "k"}) == "$6\r\nbefore\r\n");  // cached: the read below is a hit
  RespPeer tx(server.port());
  CHECK(tx.Call({"MULTI"}) == "+OK\r\n");
  CHECK(tx.Call({"INCR", "queued"}) == "+QUEUED\r\n");
  CHECK(admin.Call({"CLIENT", "PAUSE", "100000", "WRITE"}) == "+OK\r\n");

  RawConnection writer1(server.port());
  writer1.Send(Resp({"GET", "k"}) + Resp({"SET", "k", "one"}) + Resp({"GET", "k"}));
  RawConnection writer2(server.port());
  writer2.Send(Resp({"SET", "k", "two"}));
  RawConnection script(server.port());
  script.Send(Resp({"EVAL", "return redis.call('incr', KEYS[1])", "1", "n"}));
  RawConnection publisher(server.port());
  publisher.Send(Resp({"PUBLISH", "ch", "m"}));
  // The read before the held write is answered; nothing after it.
  CHECK(writer1.ReadExactly(12, 5000) == "$6\r\nbefore\r\n");
  CHECK(writer1.ReadExactly(1, 300).empty());
  CHECK(writer2.ReadExactly(1, 100).empty());
  CHECK(script.ReadExactly(1, 100).empty());
  CHECK(publisher.ReadExactly(1, 100).empty());
  // Reads from others go through, cache hits and misses, and read-only scripts.
  RespPeer reader(server.port());
  CHECK(reader.Call({"GET", "k"}) == "$6\r\nbefore\r\n");
  CHECK(reader.Call({"GET", "nokey"}) == "$-1\r\n");
  CHECK(reader.Call({"EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k"}) ==
        "$6\r\nbefore\r\n");
  CHECK(reader.Call({"SCRIPT", "LOAD", "return 1"}).rfind("$40\r\n", 0) == 0);
  // The EXEC of a transaction holding a write is held too; the paused clients are blocked.
  RawConnection exec(server.port());
  exec.Send(Resp({"MULTI"}) + Resp({"SET", "t", "1"}));
  CHECK(exec.ReadExactly(5, 5000) == "+OK\r\n");
  CHECK(exec.ReadExactly(1, 200).empty());  // SET is held before it is queued
  tx.SendCommand({"EXEC"});
  const std::string list = reader.Call({"CLIENT", "LIST"});
  CHECK(Contains(list, "flags=b"));
  CHECK(Contains(list, "cmd=publish"));
  CHECK(Contains(list, "cmd=exec"));
  // CLIENT UNPAUSE is no write: it runs, and the held commands run in the order they were held.
  CHECK(reader.Call({"CLIENT", "UNPAUSE"}) == "+OK\r\n");
  CHECK(writer1.ReadExactly(14, 5000) == "+OK\r\n$3\r\none\r\n");
  CHECK(writer2.ReadExactly(5, 5000) == "+OK\r\n");
  CHECK(script.ReadExactly(4, 5000) == ":1\r\n");
  CHECK(publisher.ReadExactly(4, 5000) == ":0\r\n");
  CHECK(exec.ReadExactly(9, 5000) == "+QUEUED\r\n");
  CHECK(tx.ReadReply() == "*1\r\n:1\r\n");
  CHECK(admin.Call({"GET", "k"}) == "$3\r\ntwo\r\n");
  CHECK(!Contains(admin.Call({"CLIENT", "LIST"}), "flags=b"));
}

TEST_CASE("CLIENT PAUSE ALL holds every command until its timeout", "[client-pause]") {
  TestServer server;
  RespPeer admin(server.port());
  CHECK(admin.Call({"SET", "k", "v"}) == "+OK\r\n");
  CHECK(admin.Call({"CLIENT", "PAUSE", "3000", "ALL"}) == "+OK\r\n");
  RawConnection other(server.port());
  other.Send(Resp({"PING"}) + Resp({"GET", "k"}));
  // Held while the pause lasts (3 s), then answered in order without anything else sent.
  CHECK(other.ReadExactly(1, 500).empty());
  CHECK(other.ReadExactly(14, 10000) == "+PONG\r\n$1\r\nv\r\n");
  CHECK(admin.Call({"PING"}) == "+PONG\r\n");
}

TEST_CASE("CLIENT PAUSE: nothing expires while paused; errors as redis-server's",
          "[client-pause][differential]") {
  TestServer server;
  RespPeer admin(server.port());
  auto expired_keys = [&] {
    rockcache::testing::Client info(server.port());
    return std::stoll(InfoFields(InfoText(info, "stats"))["expired_keys"]);
  };
  // 500 ms: the PAUSE must be in place before the key expires, also on a loaded machine.
  CHECK(admin.Call({"SET", "e", "v", "PX", "500"}) == "+OK\r\n");
  CHECK(admin.Call({"CLIENT", "PAUSE", "100000", "WRITE"}) == "+OK\r\n");
  SleepMs(1000);                                 // several expiry sweeps (hz 10) after it expired
  CHECK(admin.Call({"GET", "e"}) == "$-1\r\n");  // expired for every reader...
  CHECK(expired_keys() == 0);                    // ...but not deleted
  CHECK(admin.Call({"CLIENT", "UNPAUSE"}) == "+OK\r\n");
  int64_t expired = 0;
  for (int i = 0; i < 100 && expired == 0; ++i) {
    SleepMs(50);
    expired = expired_keys();
  }
  CHECK(expired == 1);
  // The largest timeout: held until UNPAUSE (the loop's timer re-arms at most daily).
  CHECK(admin.Call({"CLIENT", "PAUSE", "9223372036854775807", "WRITE"}) == "+OK\r\n");
  RawConnection writer(server.port());
  writer.Send(Resp({"SET", "z", "1"}));
  CHECK(writer.ReadExactly(1, 300).empty());
  CHECK(admin.Call({"CLIENT", "UNPAUSE"}) == "+OK\r\n");
  CHECK(writer.ReadExactly(5, 5000) == "+OK\r\n");

  const Commands errors = {{"CLIENT", "PAUSE", "abc"},
                           {"CLIENT", "PAUSE", "-1"},
                           {"CLIENT", "PAUSE", "10", "FOO"},
                           {"CLIENT", "PAUSE", "10", "WRITE", "X"},
                           {"CLIENT", "PAUSE"},
                           {"CLIENT", "UNPAUSE", "x"},
                           {"CLIENT", "PAUSE", "0", "write"},
                           {"CLIENT", "UNPAUSE"}};
  const std::string ours = RunPipeline(admin, errors);
  CHECK(Contains(ours, "-ERR timeout is negative\r\n"));
  const std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  RespPeer peer(reference.port());
  CHECK(ours == RunPipeline(peer, errors));
}

TEST_CASE("CLIENT TRACKING NOLOOP: no invalidation for the client's own writes",
          "[tracking][resp3]") {
  TestServer server;
  RespPeer reader(server.port());
  RespPeer writer(server.port());
  REQUIRE(reader.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(reader.Call({"CLIENT", "TRACKING", "ON", "NOLOOP"}) == "+OK\r\n");
  CHECK(writer.Call({"SET", "k", "1"}) == "+OK\r\n");
  CHECK(reader.Call({"GET", "k"}) == "$1\r\n1\r\n");
  // Its own write (and a write run of its own pipeline): no push before the next replies.
  CHECK(reader.Call({"SET", "k", "2"}) == "+OK\r\n");
  CHECK(reader.Call({"GET", "k"}) == "$1\r\n2\r\n");
  CHECK(RunPipeline(reader, {{"SET", "k", "3"}, {"SET", "k", "4"}, {"GET", "k"}}) ==
        "+OK\r\n+OK\r\n$1\r\n4\r\n");
  CHECK(reader.Call({"GET", "k"}) == "$1\r\n4\r\n");
  // Another client's write still invalidates, and is the first frame the reader gets.
  CHECK(writer.Call({"SET", "k", "5"}) == "+OK\r\n");
  CHECK(reader.ReadReply() == ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
  const std::string info = reader.Call({"CLIENT", "TRACKINGINFO"});
  CHECK(Contains(info, "noloop"));

  // BCAST with NOLOOP: the same.
  RespPeer bcast(server.port());
  REQUIRE(bcast.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(bcast.Call({"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "b:", "NOLOOP"}) == "+OK\r\n");
  CHECK(bcast.Call({"SET", "b:1", "x"}) == "+OK\r\n");
  CHECK(writer.Call({"SET", "b:2", "y"}) == "+OK\r\n");
  CHECK(bcast.ReadReply() == ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nb:2\r\n");
}

TEST_CASE("CLIENT TRACKING: keys a script reads are tracked for its caller",
          "[tracking][resp3][scripting]") {
  TestServer server;
  RespPeer reader(server.port());
  RespPeer writer(server.port());
  REQUIRE(reader.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(reader.Call({"CLIENT", "TRACKING", "ON"}) == "+OK\r\n");
  CHECK(writer.Call({"SET", "s1", "a"}) == "+OK\r\n");
  CHECK(writer.Call({"SET", "s2", "b"}) == "+OK\r\n");
  // s1 is read by the script; s2 is declared but only written... by nobody: only s1 is tracked.
  CHECK(reader.Call({"EVAL", "return redis.call('get', KEYS[1])", "2", "s1", "s2"}) ==
        "$1\r\na\r\n");
  CHECK(reader.Call({"EVAL_RO", "return redis.call('strlen', KEYS[1])", "1", "s1"}) == ":1\r\n");
  CHECK(writer.Call({"SET", "s2", "c"}) == "+OK\r\n");
  CHECK(writer.Call({"SET", "s1", "d"}) == "+OK\r\n");
  CHECK(reader.ReadReply() == ">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\ns1\r\n");
  // OPTIN: a script after CLIENT CACHING YES is tracked, one without it is not.
  RespPeer optin(server.port());
  REQUIRE(optin.Call({"HELLO", "3"}).rfind("%7", 0) == 0);
  CHECK(optin.Call({"CLIENT", "TRACKING", "ON", "OPTIN"}) == "+OK\r\n");
  CHECK(optin.Call({"EVAL", "return redis.call('get', KEYS[1])", "1", "o1"}) == "_\r\n");
  CHECK(optin.Call({"CLIENT", "CACHING", "YES"}) == "+OK\r\n");
  CHECK(optin.Call({"EVAL", "return redis.call('get', KEYS[1])", "1", "o2"}) == "_\r\n");
  CHECK(writer.Call({"SET", "o1", "x"}) == "+OK\r\n");
  CHECK(writer.Call({"SET", "o2", "x"}) == "+OK\r\n");
  CHECK(optin.ReadReply() == ">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\no2\r\n");
}

TEST_CASE("OBJECT IDLETIME counts from the key's last access; OBJECT does not touch",
          "[object][introspection]") {
  TestServer server;
  RespPeer c(server.port());
  // The clock has Redis's one-second steps: an access just made reads 0 or 1.
  auto idle = [&c] {
    const std::string reply = c.Call({"OBJECT", "IDLETIME", "k"});
    REQUIRE(reply.rfind(':', 0) == 0);
    return std::stoll(reply.substr(1));
  };
  CHECK(c.Call({"SET", "k", "v"}) == "+OK\r\n");
  CHECK(c.Call({"GET", "k"}) == "$1\r\nv\r\n");  // cached now
  CHECK(idle() <= 1);
  CHECK(c.Call({"OBJECT", "IDLETIME", "nokey"}) == "$-1\r\n");
  SleepMs(2200);
  CHECK(idle() >= 2);
  CHECK(idle() >= 2);                        // OBJECT itself is no access
  CHECK(c.Call({"TTL", "k"}) == ":-1\r\n");  // nor are TTL, TYPE and EXISTS (as Redis)
  CHECK(c.Call({"TYPE", "k"}) == "+string\r\n");
  CHECK(c.Call({"EXISTS", "k"}) == ":1\r\n");
  CHECK(idle() >= 2);
  CHECK(c.Call({"GET", "k"}) == "$1\r\nv\r\n");
  CHECK(idle() <= 1);
  CHECK(c.Call({"OBJECT", "FREQ", "k"}).rfind("-ERR An LFU maxmemory policy is not selected", 0) ==
        0);
  CHECK(c.Call({"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}) == "+OK\r\n");
  CHECK(c.Call({"OBJECT", "IDLETIME", "k"}).rfind("-ERR An LFU maxmemory policy is selected", 0) ==
        0);
}

TEST_CASE("A stream's expiry wakes its blocked group readers with Redis's error",
          "[stream][blocking]") {
  TestServer server;
  RespPeer admin(server.port());
  CHECK(admin.Call({"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}) == "+OK\r\n");
  RespPeer blocked(server.port());
  blocked.SendCommand({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"});
  // An EXPIRE is a write that leaves the stream there: the reader stays blocked.
  CHECK(admin.Call({"PEXPIRE", "s", "300"}) == ":1\r\n");
  for (int i = 0; i < 100 && !Contains(admin.Call({"CLIENT", "LIST"}), "flags=b"); ++i) SleepMs(20);
  CHECK(Contains(admin.Call({"CLIENT", "LIST"}), "flags=b"));
  // The expiry removes it: woken within the sweep's time.
  CHECK(blocked.ReadReply() == "-UNBLOCKED the stream key no longer exists\r\n");
  CHECK(admin.Call({"EXISTS", "s"}) == ":0\r\n");
}

namespace {

// The value of `field` in the CLIENT LIST line of client `id`, or -1.
long long ClientField(const std::string& list, long long id, const std::string& field) {
  const std::string start = "id=" + std::to_string(id) + " ";
  size_t line = list.find(start);
  if (line == std::string::npos) return -1;
  size_t end = list.find('\n', line);
  const std::string text = list.substr(line, end - line);
  size_t at = text.find(" " + field + "=");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + field.size() + 2));
}

}  // namespace

TEST_CASE("CLIENT LIST multi-mem / tot-mem / omem count what a client holds",
          "[client-memory][introspection]") {
  TestServer server;
  rockcache::testing::Client tx(server.port());
  rockcache::testing::Client admin(server.port());
  const long long tx_id = tx.Command({"CLIENT", "ID"}).integer;
  CHECK(tx.Command({"MULTI"}).str == "OK");
  const std::string value(100, 'v');
  for (int i = 0; i < 2000; ++i) tx.Append({"SET", "key:" + std::to_string(i), value});
  for (int i = 0; i < 2000; ++i) {
    rockcache::testing::Reply reply;
    REQUIRE(tx.GetReply(&reply));
  }
  const std::string list = admin.Command({"CLIENT", "LIST"}).str;
  const long long multi_mem = ClientField(list, tx_id, "multi-mem");
  const long long tot_mem = ClientField(list, tx_id, "tot-mem");
  CHECK(multi_mem >= 2000LL * 100);
  CHECK(tot_mem >= multi_mem);
  CHECK(ClientField(list, tx_id, "multi") == 2000);
  const auto memory = InfoFields(InfoText(admin, "memory"));
  CHECK(std::stoll(memory.at("mem_clients_normal")) >= tot_mem);
  CHECK(tx.Command({"DISCARD"}).str == "OK");
  const std::string after = admin.Command({"CLIENT", "LIST"}).str;
  CHECK(ClientField(after, tx_id, "multi-mem") == 0);
  CHECK(ClientField(after, tx_id, "tot-mem") < tot_mem);
  // CLIENT INFO shows the same fields for the caller; NO-EVICT shows as the `e` flag.
  CHECK(tx.Command({"CLIENT", "NO-EVICT", "ON"}).str == "OK");
  CHECK(Contains(tx.Command({"CLIENT", "INFO"}).str, "flags=e "));
  CHECK(tx.Command({"CLIENT", "NO-EVICT", "OFF"}).str == "OK");
}

TEST_CASE("maxmemory-clients disconnects the biggest client, never a NO-EVICT one",
          "[client-memory][hostile]") {
  TestServer server;
  rockcache::testing::Client admin(server.port());
  CHECK(admin.Command({"CONFIG", "SET", "maxmemory-clients", "10%"}).str == "OK");
  CHECK(admin.Command({"CONFIG", "GET", "maxmemory-clients"}).elements.at(1).str == "10%");
  CHECK(admin.Command({"CONFIG", "SET", "maxmemory-clients", "8mb"}).str == "OK");
  CHECK(admin.Command({"CLIENT", "NO-EVICT", "ON"}).str == "OK");
  rockcache::testing::Client small(server.port());
  CHECK(small.Command({"SET", "k", "v"}).str == "OK");
  const std::string value(1000, 'x');

  // An ordinary client queueing past the limit is disconnected; the others stay.
  RawConnection hog(server.port());
  std::string request = Resp({"MULTI"});
  for (int i = 0; i < 12000; ++i) request += Resp({"SET", "h:" + std::to_string(i), value});
  hog.Send(request);
  std::string received;
  CHECK(hog.WaitClosed(&received, 20000));
  CHECK(small.Command({"GET", "k"}).str == "v");
  CHECK(admin.Command({"PING"}).str == "PONG");
  const auto stats = InfoFields(InfoText(admin, "stats"));
  CHECK(std::stoll(stats.at("evicted_clients")) >= 1);

  // A NO-EVICT client may pass the limit by itself and is never chosen (others may be, as in
  // Redis, while the sum stays over it).
  CHECK(admin.Command({"MULTI"}).str == "OK");
  for (int i = 0; i < 12000; ++i) admin.Append({"SET", "a:" + std::to_string(i), value});
  for (int i = 0; i < 12000; ++i) {
    rockcache::testing::Reply reply;
    REQUIRE(admin.GetReply(&reply));
    REQUIRE(reply.str == "QUEUED");
  }
  CHECK(admin.Command({"DISCARD"}).str == "OK");
  rockcache::testing::Client later(server.port());
  CHECK(later.Command({"GET", "k"}).str == "v");
}

}  // namespace client_control_test
