// Scripts as users meet them ([scripting]): atomic read-modify-write under concurrency (declared
// and undeclared keys), SCRIPT KILL rolling back a writing script while other keys stay served,
// kill -9 during a writing script, scripts inside MULTI, blocked clients served by a script's
// push, and the bounds (memory, recursion).
#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using namespace rockcache::testing;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace scripting_test {

namespace {

// Reads, then writes back one more: loses updates unless the script is atomic.
constexpr const char* kIncrDeclared =
    "local v = tonumber(redis.call('get', KEYS[1]) or '0') "
    "redis.call('set', KEYS[1], tostring(v + 1)) return v + 1";
// The same on a key the script does not declare (ARGV[1]).
constexpr const char* kIncrUndeclared =
    "local v = tonumber(redis.call('get', ARGV[1]) or '0') "
    "redis.call('set', ARGV[1], tostring(v + 1)) return v + 1";
// Writes, then spins until killed.
constexpr const char* kWriteThenSpin =
    "redis.call('set', KEYS[1], 'written') redis.call('rpush', KEYS[2], 'x') "
    "local i = 0 while true do i = i + 1 end";

// Starts `body` on a new connection in a thread and returns once it is running (SCRIPT KILL
// answers OK only while a script runs, so the caller kills with KillWhenRunning).
std::string KillWhenRunning(int port) {
  Client killer(port);
  for (int i = 0; i < 500; ++i) {
    Reply r = killer.Command({"SCRIPT", "KILL"});
    if (!r.is_error()) return r.str;
    SleepMs(10);
  }
  return "never running";
}

// A client thread whose command may not return by itself (a script that spins until killed).
// If the test fails before Join(), the destructor kills the server (the thread's command then
// fails) and joins, so a failed REQUIRE leaves neither a joinable thread nor a server spinning.
class ClientThread {
 public:
  ClientThread(TestServer& server, std::function<void()> body)
      : server_(server), thread_(std::move(body)) {}
  ~ClientThread() {
    if (!thread_.joinable()) return;
    server_.Kill9();
    thread_.join();
  }
  ClientThread(const ClientThread&) = delete;
  ClientThread& operator=(const ClientThread&) = delete;
  void Join() { thread_.join(); }

 private:
  TestServer& server_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("Scripts: concurrent read-modify-write loses no update, declared or not",
          "[scripting][concurrency]") {
  TestServer server({"--pool-threads", "4"});
  Client setup(server.port());
  const std::string sha_declared = Str(setup.Command({"SCRIPT", "LOAD", kIncrDeclared}));
  const std::string sha_undeclared = Str(setup.Command({"SCRIPT", "LOAD", kIncrUndeclared}));
  CHECK(Str(setup.Command({"INFO", "memory"})).find("number_of_cached_scripts:2\r\n") !=
        std::string::npos);
  constexpr int kClients = 16;
  constexpr int kCalls = 150;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      Client client(server.port());
      for (int i = 0; i < kCalls; ++i) {
        Reply r = (c % 2 == 0)
                      ? client.Command({"EVALSHA", sha_declared, "1", "counter:declared"})
                      : client.Command({"EVALSHA", sha_undeclared, "0", "counter:undeclared"});
        if (r.type != REDIS_REPLY_INTEGER) errors.fetch_add(1);
        // Some plain writes on the same keys in between: scripts stay atomic against them too.
        if (i % 10 == 0) client.Command({"INCRBY", "counter:plain", "1"});
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors.load() == 0);
  CHECK(Str(setup.Command({"GET", "counter:declared"})) == std::to_string(kClients / 2 * kCalls));
  CHECK(Str(setup.Command({"GET", "counter:undeclared"})) == std::to_string(kClients / 2 * kCalls));
  CHECK(Str(setup.Command({"GET", "counter:plain"})) == std::to_string(kClients * kCalls / 10));
}

TEST_CASE("Scripts: SCRIPT KILL stops a writing script and keeps none of it", "[scripting][kill]") {
  TestServer server({"--pool-threads", "2"});
  Client client(server.port());
  client.Command({"SET", "other", "free"});
  Reply script_reply;
  ClientThread runner(server, [&] {
    Client runner_client(server.port(), 30000);
    script_reply = runner_client.Command({"EVAL", kWriteThenSpin, "2", "k", "l"});
  });
  CHECK(KillWhenRunning(server.port()) == "OK");
  runner.Join();
  REQUIRE(script_reply.is_error());
  CHECK(script_reply.str.find("Script killed by user with SCRIPT KILL") != std::string::npos);
  // Rolled back: neither write is visible, through the cache or storage.
  CHECK(Run(client, {"GET", "k"}) == "nil");
  CHECK(Run(client, {"LLEN", "l"}) == "int:0");
  CHECK(Run(client, {"SCRIPT", "KILL"}) == "err:NOTBUSY No scripts in execution right now.");
  CHECK(Run(client, {"GET", "other"}) == "bulk:free");
}

TEST_CASE("Scripts: clients on other keys are served while a script spins", "[scripting][kill]") {
  TestServer server({"--pool-threads", "2", "--busy-reply-threshold", "300"});
  Client client(server.port());
  client.Command({"SET", "other", "v"});
  ClientThread runner(server, [&] {
    Client runner_client(server.port(), 30000);
    runner_client.Command({"EVAL", kWriteThenSpin, "2", "k", "l"});
  });
  // Wait until it runs, then use other keys: reads (cache and storage) and writes.
  SleepMs(500);
  for (int i = 0; i < 50; ++i) {
    CHECK(Run(client, {"GET", "other"}) == "bulk:v");
    CHECK(Run(client, {"INCR", "n"}) == "int:" + std::to_string(i + 1));
    CHECK(Run(client, {"PING"}) == "status:PONG");
  }
  // Past busy-reply-threshold, a command that needs the script's keys gets -BUSY (as Redis)
  // instead of waiting on a worker; the others are still served.
  SleepMs(300);
  CHECK(Run(client, {"GET", "k"}) ==
        "err:BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
        "NOSAVE.");
  CHECK(Run(client, {"RPUSH", "l", "y"}).rfind("err:BUSY", 0) == 0);
  CHECK(Run(client, {"FLUSHALL"}).rfind("err:BUSY", 0) == 0);
  CHECK(Run(client, {"GET", "other"}) == "bulk:v");
  CHECK(KillWhenRunning(server.port()) == "OK");
  runner.Join();
  CHECK(Run(client, {"GET", "k"}) == "nil");
  CHECK(Run(client, {"RPUSH", "l", "y"}) == "int:1");
}

TEST_CASE("Functions: FUNCTION STATS and KILL answer while the only worker runs a function",
          "[scripting][kill]") {
  // As Redis's allow-busy: they run in the network thread, not behind the script on the pool.
  TestServer server({"--pool-threads", "1"});
  Client client(server.port());
  REQUIRE(Run(client, {"FUNCTION", "LOAD",
                       "#!lua name=spinlib\nredis.register_function('spin', function() "
                       "local i = 0 while true do i = i + 1 end end)"}) == "bulk:spinlib");
  CHECK(Run(client, {"FUNCTION", "STATS"}) ==
        "[bulk:running_script, nil, bulk:engines, [bulk:LUA, [bulk:libraries_count, int:1, "
        "bulk:functions_count, int:1]]]");
  Reply script_reply;
  ClientThread runner(server, [&] {
    Client runner_client(server.port(), 30000);
    script_reply = runner_client.Command({"FCALL", "spin", "0"});
  });
  Reply running;
  for (int i = 0; i < 500; ++i) {
    running = client.Command({"FUNCTION", "STATS"});
    if (running.elements.size() == 4 && !running.elements[1].is_nil()) break;
    SleepMs(10);
  }
  REQUIRE(running.elements.size() == 4);
  const Reply& script = running.elements[1];
  REQUIRE(script.elements.size() == 6);
  CHECK(Describe(script.elements[0]) == "bulk:name");
  CHECK(Describe(script.elements[1]) == "bulk:spin");
  CHECK(Describe(script.elements[2]) == "bulk:command");
  CHECK(Describe(script.elements[3]) == "[bulk:FCALL, bulk:spin, bulk:0]");
  CHECK(Describe(script.elements[4]) == "bulk:duration_ms");
  CHECK(script.elements[5].integer >= 0);
  CHECK(Run(client, {"FUNCTION", "KILL"}) == "status:OK");
  runner.Join();
  CHECK(script_reply.is_error());
  CHECK(Run(client, {"FUNCTION", "KILL"}) == "err:NOTBUSY No scripts in execution right now.");
  CHECK(client.Command({"FUNCTION", "STATS"}).elements[1].is_nil());
}

TEST_CASE("Scripts: kill -9 during a writing script keeps none of its writes",
          "[scripting][durability]") {
  TestServer server;
  Client client(server.port());
  client.Command({"SET", "before", "1"});
  ClientThread runner(server, [&] {
    Client runner_client(server.port(), 5000);
    Reply r;
    runner_client.TryCommand({"EVAL", kWriteThenSpin, "2", "k", "l"}, &r);
  });
  SleepMs(500);  // the script has written (into its uncommitted batch) and spins
  server.Kill9();
  runner.Join();
  server.Restart();
  Client after(server.port());
  CHECK(Run(after, {"GET", "before"}) == "bulk:1");
  CHECK(Run(after, {"GET", "k"}) == "nil");
  CHECK(Run(after, {"EXISTS", "l"}) == "int:0");
}

TEST_CASE("Scripts: inside MULTI, with undeclared keys, in order with the transaction",
          "[scripting][transaction]") {
  TestServer server;
  Client client(server.port());
  CHECK(Run(client, {"MULTI"}) == "status:OK");
  CHECK(Run(client, {"SET", "a", "1"}) == "status:QUEUED");
  CHECK(Run(client, {"EVAL", "return redis.call('incr', 'a')", "0"}) == "status:QUEUED");
  CHECK(Run(client, {"EVAL", "return redis.call('get', KEYS[1])", "1", "a"}) == "status:QUEUED");
  CHECK(Run(client, {"EXEC"}) == "[status:OK, int:2, bulk:2]");
}

TEST_CASE("Scripts: a push from a script serves a blocked client after the script",
          "[scripting][blocking]") {
  TestServer server;
  Reply popped;
  ClientThread waiter(server, [&] {
    Client blocked(server.port(), 20000);
    popped = blocked.Command({"BLPOP", "q", "10"});
  });
  SleepMs(300);
  Client client(server.port());
  CHECK(Run(client, {"EVAL",
                     "redis.call('rpush', KEYS[1], 'one', 'two') return redis.call('llen', "
                     "KEYS[1])",
                     "1", "q"}) == "int:2");
  waiter.Join();
  CHECK(Describe(popped) == "[bulk:q, bulk:one]");
  CHECK(Run(client, {"LRANGE", "q", "0", "-1"}) == "[bulk:two]");
}

TEST_CASE("Scripts: memory and recursion are bounded, and the server goes on",
          "[scripting][hostile]") {
  TestServer server({"--lua-maxmemory", "8mb"});
  Client client(server.port());
  Reply r = client.Command(
      {"EVAL", "local t = {} for i = 1, 100000000 do t[i] = string.rep('x', 100) .. i end", "0"});
  REQUIRE(r.is_error());
  CHECK(r.str.find("memory") != std::string::npos);
  r = client.Command({"EVAL", "local function f(n) return f(n + 1) + 1 end return f(1)", "0"});
  REQUIRE(r.is_error());
  CHECK(r.str.find("stack overflow") != std::string::npos);
  CHECK(Run(client, {"EVAL", "return 'still here'", "0"}) == "bulk:still here");
  CHECK(Run(client, {"SET", "k", "v"}) == "status:OK");
}

TEST_CASE("Functions: libraries survive kill -9 and restart, deletions too",
          "[scripting][functions][durability]") {
  TestServer server;
  Client client(server.port());
  const std::string counter_lib =
      "#!lua name=counters\n"
      "redis.register_function('bump', function(keys, args)\n"
      "  local v = tonumber(redis.call('get', keys[1]) or '0')\n"
      "  redis.call('set', keys[1], tostring(v + 1)) return v + 1 end)";
  CHECK(Run(client, {"FUNCTION", "LOAD", counter_lib}) == "bulk:counters");
  CHECK(Run(client, {"FUNCTION", "LOAD",
                     "#!lua name=gone\nredis.register_function('bye', function() return 1 end)"}) ==
        "bulk:gone");
  CHECK(Run(client, {"FUNCTION", "DELETE", "gone"}) == "status:OK");
  // FCALL is atomic like EVAL: concurrent read-modify-writes lose nothing.
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      Client c(server.port());
      for (int i = 0; i < 100; ++i) c.Command({"FCALL", "bump", "1", "fc"});
    });
  }
  for (auto& t : threads) t.join();
  CHECK(Run(client, {"GET", "fc"}) == "bulk:800");
  server.Kill9();
  server.Restart();
  Client after(server.port());
  CHECK(Run(after, {"FCALL", "bump", "1", "fc"}) == "int:801");
  CHECK(Run(after, {"FCALL", "bye", "0"}) == "err:ERR Function not found");
  CHECK(Run(after, {"FUNCTION", "STATS"}) ==
        "[bulk:running_script, nil, bulk:engines, [bulk:LUA, [bulk:libraries_count, int:1, "
        "bulk:functions_count, int:1]]]");
  CHECK(Run(after, {"FUNCTION", "FLUSH"}) == "status:OK");
  after.Command({"FLUSHALL"});
  server.Restart();
  Client flushed(server.port());
  CHECK(Run(flushed, {"FUNCTION", "LIST"}) == "[]");
}

TEST_CASE("Scripts and transactions: their writes reach the cache at their commit, not before",
          "[scripting][transaction][cache]") {
  TestServer server;
  Client client(server.port());
  // A hit or a miss of the cache, by the counters a GET moves.
  auto cached_get = [&client](const std::string& key) {
    const uint64_t hits = InfoNumber(client, "cache", "cache_hits");
    const uint64_t misses = InfoNumber(client, "cache", "cache_misses");
    const std::string value = Run(client, {"GET", key});
    const bool hit = InfoNumber(client, "cache", "cache_hits") == hits + 1 &&
                     InfoNumber(client, "cache", "cache_misses") == misses;
    return value + (hit ? " (hit)" : " (miss)");
  };
  REQUIRE(Run(client, {"SET", "k", "old"}) == "status:OK");  // written through: cached
  REQUIRE(cached_get("k") == "bulk:old (hit)");

  SECTION("while a script that wrote runs, others read the committed value from the cache") {
    // Writes, then runs for ARGV[1] microseconds.
    const char* write_then_run =
        "redis.call('set', KEYS[1], 'new') local t0 = redis.call('time') "
        "repeat local t = redis.call('time') "
        "until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) >= tonumber(ARGV[1]) return 1";
    std::atomic<bool> done{false};
    std::string script_reply;
    ClientThread runner(server, [&] {
      Client runner_client(server.port(), 30000);
      script_reply = Run(runner_client, {"EVAL", write_then_run, "1", "k", "1500000"});
      done = true;
    });
    SleepMs(500);
    CHECK(Run(client, {"GET", "k"}) == "bulk:old");
    CHECK_FALSE(done.load());  // answered while the script ran, not after it
    runner.Join();
    CHECK(script_reply == "int:1");
    CHECK(cached_get("k") == "bulk:new (hit)");  // published at the commit
  }
  SECTION("a script's read-modify-write of a cached counter leaves it cached, TTL and all") {
    REQUIRE(Run(client, {"SET", "n", "5"}) == "status:OK");
    const char* incr_expire =
        "local v = redis.call('incr', KEYS[1]) redis.call('expire', KEYS[1], 60) return v";
    CHECK(Run(client, {"EVAL", incr_expire, "1", "n"}) == "int:6");
    CHECK(cached_get("n") == "bulk:6 (hit)");
    CHECK(Run(client, {"TTL", "n"}) == "int:60");
    CHECK(Run(client, {"EVAL", incr_expire, "1", "n"}) == "int:7");
    CHECK(cached_get("n") == "bulk:7 (hit)");
  }
  SECTION("a transaction: the same, and a DEL leaves the cache at the commit") {
    Client other(server.port());
    REQUIRE(Run(client, {"MULTI"}) == "status:OK");
    REQUIRE(Run(client, {"SET", "k", "new"}) == "status:QUEUED");
    REQUIRE(Run(client, {"DEBUG", "SLEEP", "1"}) == "status:QUEUED");
    client.Append({"EXEC"});
    SleepMs(400);
    CHECK(Run(other, {"GET", "k"}) == "bulk:old");  // while EXEC sleeps
    Reply exec;
    REQUIRE(client.GetReply(&exec));
    CHECK(Describe(exec) == "[status:OK, status:OK]");
    CHECK(cached_get("k") == "bulk:new (hit)");
    REQUIRE(Run(client, {"MULTI"}) == "status:OK");
    REQUIRE(Run(client, {"DEL", "k"}) == "status:QUEUED");
    REQUIRE(Run(client, {"EXEC"}) == "[int:1]");
    CHECK(Run(client, {"GET", "k"}) == "nil");
  }
  SECTION("a script that fails after writing keeps its writes, in the cache too (as Redis)") {
    CHECK(Run(client,
              {"EVAL", "redis.call('set', KEYS[1], 'new') return redis.call('nosuch')", "1", "k"})
              .rfind("err:ERR Unknown Redis command called from script", 0) == 0);
    CHECK(cached_get("k") == "bulk:new (hit)");
  }
  Reply verify = client.Command({"DEBUG", "CACHE-VERIFY"});
  CHECK(verify.str.find("mismatches:0") != std::string::npos);
}

TEST_CASE("Scripts: the commands a script calls count in INFO commandstats, as Redis's",
          "[scripting][observability]") {
  TestServer server;
  Client client(server.port());
  CHECK(Run(client, {"EVAL",
                     "redis.call('set', KEYS[1], '1') redis.call('incr', KEYS[1]) "
                     "return redis.pcall('hget', KEYS[1], 'f')",
                     "1", "k"})
            .rfind("err:WRONGTYPE", 0) == 0);
  const std::string stats = Str(client.Command({"INFO", "commandstats"}));
  CHECK(stats.find("cmdstat_set:calls=1,") != std::string::npos);
  CHECK(stats.find("cmdstat_incr:calls=1,") != std::string::npos);
  CHECK(stats.find("cmdstat_eval:calls=1,") != std::string::npos);
  const size_t hget = stats.find("cmdstat_hget:calls=1,");
  REQUIRE(hget != std::string::npos);
  CHECK(stats.find("failed_calls=1", hget) < stats.find("\r\n", hget));
}

TEST_CASE("Scripts: a script's write aborts a WATCHing transaction, and races EXEC atomically",
          "[scripting][transaction]") {
  TestServer server;
  Client watcher(server.port());
  Client other(server.port());
  CHECK(Run(watcher, {"WATCH", "w"}) == "status:OK");
  CHECK(Run(other, {"EVAL", "return redis.call('set', KEYS[1], 'changed')", "1", "w"}) ==
        "status:OK");
  CHECK(Run(watcher, {"MULTI"}) == "status:OK");
  CHECK(Run(watcher, {"SET", "w", "mine"}) == "status:QUEUED");
  CHECK(Run(watcher, {"EXEC"}) == "nil");
  CHECK(Run(watcher, {"GET", "w"}) == "bulk:changed");
  // Scripts and transactions moving one unit between two keys never show a total other than 100.
  CHECK(Run(watcher, {"MSET", "a", "100", "b", "0"}) == "status:OK");
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread mover([&] {
    Client c(server.port());
    for (int i = 0; i < 300; ++i) {
      c.Command({"EVAL", "redis.call('decr', KEYS[1]) redis.call('incr', KEYS[2]) return 1", "2",
                 "a", "b"});
      c.Command({"MULTI"});
      c.Command({"INCR", "a"});
      c.Command({"DECR", "b"});
      c.Command({"EXEC"});
    }
    stop = true;
  });
  Client reader(server.port());
  int reads = 0;
  while (!stop.load()) {
    Reply r = reader.Command({"EVAL",
                              "return tonumber(redis.call('get', KEYS[1])) + "
                              "tonumber(redis.call('get', KEYS[2]))",
                              "2", "a", "b"});
    if (r.type != REDIS_REPLY_INTEGER || r.integer != 100) bad.fetch_add(1);
    Reply m = reader.Command({"MGET", "a", "b"});
    if (m.elements.size() == 2 &&
        std::stoll(m.elements[0].str) + std::stoll(m.elements[1].str) != 100) {
      bad.fetch_add(1);
    }
    ++reads;
  }
  mover.join();
  CHECK(bad.load() == 0);
  CHECK(reads > 0);
}

// Scripts that arrive together (a pipeline, several clients in one pass of a network loop)
// share one group-commit segment and one RocksDB write; each must still be all-or-nothing.
TEST_CASE("Scripts: many scripts sharing a commit are each all-or-nothing across kill -9",
          "[scripting][durability]") {
  TestServer server({"--pool-threads", "2"});
  Client setup(server.port());
  // Three writes per script: two counters and a list that must agree.
  const std::string sha = Str(
      setup.Command({"SCRIPT", "LOAD",
                     "local a = redis.call('incr', KEYS[1]) local b = redis.call('incr', KEYS[2]) "
                     "redis.call('rpush', KEYS[3], a) return a * 1000000 + b"}));
  constexpr int kPairs = 40;
  constexpr int kClients = 12;
  constexpr int kPipeline = 8;
  std::vector<std::atomic<int64_t>> acked(kPairs);
  std::atomic<bool> mismatch{false};
  std::atomic<int64_t> total{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      Client client(server.port(), 5000);
      for (int round = 0;; ++round) {
        int pairs[kPipeline];
        for (int p = 0; p < kPipeline; ++p) {
          pairs[p] = (c * 7 + round * 3 + p * 5) % kPairs;
          const std::string n = std::to_string(pairs[p]);
          client.Append({"EVALSHA", sha, "3", "a:" + n, "b:" + n, "l:" + n});
        }
        for (int p = 0; p < kPipeline; ++p) {
          Reply r;
          if (!client.GetReply(&r) || r.type != REDIS_REPLY_INTEGER) return;  // killed
          const int64_t a = r.integer / 1000000;
          if (a != r.integer % 1000000) mismatch = true;
          int64_t seen = acked[static_cast<size_t>(pairs[p])].load();
          while (seen < a && !acked[static_cast<size_t>(pairs[p])].compare_exchange_weak(seen, a)) {
          }
          total.fetch_add(1);
        }
      }
    });
  }
  while (total.load() < 3000) SleepMs(20);
  server.Kill9();
  for (auto& t : threads) t.join();
  CHECK_FALSE(mismatch.load());
  server.Restart();
  Client after(server.port());
  for (int p = 0; p < kPairs; ++p) {
    const std::string n = std::to_string(p);
    const Reply a = after.Command({"GET", "a:" + n});
    const Reply b = after.Command({"GET", "b:" + n});
    const Reply len = after.Command({"LLEN", "l:" + n});
    const std::string a_value = a.is_nil() ? "0" : a.str;
    INFO("pair " << p);
    CHECK(a_value == (b.is_nil() ? "0" : b.str));
    CHECK(std::to_string(len.integer) == a_value);
    // Every acknowledged script survived (the WAL write happened before its reply).
    CHECK(std::stoll(a_value) >= acked[static_cast<size_t>(p)].load());
  }
}

TEST_CASE("Scripts: a killed script in a shared segment leaves the others' writes",
          "[scripting][kill]") {
  TestServer server({"--pool-threads", "2"});
  Client client(server.port());
  Reply replies[3];
  ClientThread runner(server, [&] {
    Client pipeline(server.port(), 30000);
    // One pipeline: the three scripts reach the worker together and share a segment.
    pipeline.Append({"EVAL", "return redis.call('set', KEYS[1], 'one')", "1", "s1"});
    pipeline.Append({"EVAL", kWriteThenSpin, "2", "k", "l"});
    pipeline.Append({"EVAL", "return redis.call('set', KEYS[1], 'three')", "1", "s3"});
    for (auto& r : replies) pipeline.GetReply(&r);
  });
  CHECK(KillWhenRunning(server.port()) == "OK");
  runner.Join();
  CHECK(Describe(replies[0]) == "status:OK");
  CHECK(replies[1].is_error());
  CHECK(replies[1].str.find("Script killed by user with SCRIPT KILL") != std::string::npos);
  CHECK(Describe(replies[2]) == "status:OK");
  CHECK(Run(client, {"GET", "s1"}) == "bulk:one");
  CHECK(Run(client, {"GET", "s3"}) == "bulk:three");
  CHECK(Run(client, {"GET", "k"}) == "nil");
  CHECK(Run(client, {"LLEN", "l"}) == "int:0");

  // A script of the pipeline that writes a key nobody declared runs alone, in its place: it
  // sees the script before it and not the one after.
  client.Append({"EVAL", "return redis.call('set', KEYS[1], '1')", "1", "x"});
  client.Append({"EVAL",
                 "local v = redis.call('get', 'x') redis.call('set', ARGV[1], v .. '+') "
                 "return redis.call('get', ARGV[1])",
                 "0", "undeclared"});
  client.Append({"EVAL", "return redis.call('set', KEYS[1], '2')", "1", "x"});
  Reply r[3];
  for (auto& reply : r) REQUIRE(client.GetReply(&reply));
  CHECK(Describe(r[0]) == "status:OK");
  CHECK(Describe(r[1]) == "bulk:1+");
  CHECK(Describe(r[2]) == "status:OK");
  CHECK(Run(client, {"GET", "undeclared"}) == "bulk:1+");
  CHECK(Run(client, {"GET", "x"}) == "bulk:2");
}

// Scripts of clients that arrive together share a task and a commit; one that runs long is rolled
// back and run again alone, so it takes effect once and the quick ones do not wait for it.
TEST_CASE("Scripts: a long script beside quick ones takes effect once",
          "[scripting][concurrency]") {
  TestServer server({"--pool-threads", "2", "--script-group-max-usec", "200"});
  Client setup(server.port());
  const std::string slow = Str(
      setup.Command({"SCRIPT", "LOAD",
                     "redis.call('incr', KEYS[1]) local x = 0 for i = 1, 2000000 do x = x + i end "
                     "return redis.call('incr', KEYS[1])"}));
  const std::string quick = Str(setup.Command(
      {"SCRIPT", "LOAD", "redis.call('incr', KEYS[1]) return redis.call('incr', KEYS[1])"}));
  constexpr int kQuickClients = 8;
  constexpr int kQuickCalls = 300;
  constexpr int kSlowCalls = 8;
  std::atomic<int> errors{0};
  std::atomic<bool> slow_done{false};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    Client client(server.port(), 30000);
    for (int i = 0; i < kSlowCalls; ++i) {
      Reply r = client.Command({"EVALSHA", slow, "1", "slow"});
      if (r.type != REDIS_REPLY_INTEGER || r.integer != 2 * (i + 1)) errors.fetch_add(1);
    }
    slow_done = true;
  });
  for (int c = 0; c < kQuickClients; ++c) {
    threads.emplace_back([&, c] {
      Client client(server.port());
      const std::string key = "quick:" + std::to_string(c);
      for (int i = 0; i < kQuickCalls; ++i) {
        Reply r = client.Command({"EVALSHA", quick, "1", key});
        if (r.type != REDIS_REPLY_INTEGER || r.integer != 2 * (i + 1)) errors.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors.load() == 0);
  CHECK(Run(setup, {"GET", "slow"}) == "bulk:" + std::to_string(2 * kSlowCalls));
  for (int c = 0; c < kQuickClients; ++c) {
    CHECK(Run(setup, {"GET", "quick:" + std::to_string(c)}) ==
          "bulk:" + std::to_string(2 * kQuickCalls));
  }
}

}  // namespace scripting_test
