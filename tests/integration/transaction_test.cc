// MULTI / EXEC / DISCARD / WATCH / UNWATCH over real sockets: Redis 7.0's replies and errors,
// WATCH races, optimistic-locking counters, atomicity for other clients and across kill -9.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using namespace rockcache::testing;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace transaction_test {

namespace {

const std::string kExecAbort = "err:EXECABORT Transaction discarded because of previous errors.";

}  // namespace

TEST_CASE("MULTI queues, EXEC runs in order with per-command errors", "[transaction]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"MULTI"}) == "status:OK");
  CHECK(Run(c, {"INCR", "a"}) == "status:QUEUED");
  CHECK(Run(c, {"SET", "s", "x"}) == "status:QUEUED");
  CHECK(Run(c, {"INCR", "s"}) == "status:QUEUED");
  CHECK(Run(c, {"GET", "a"}) == "status:QUEUED");
  CHECK(Run(c, {"PING"}) == "status:QUEUED");
  CHECK(Run(c, {"EXEC"}) ==
        "[int:1, status:OK, err:ERR value is not an integer or out of range, bulk:1, "
        "status:PONG]");
  CHECK(Run(c, {"GET", "s"}) == "bulk:x");
  // Empty transaction.
  CHECK(Run(c, {"MULTI"}) == "status:OK");
  CHECK(Run(c, {"EXEC"}) == "[]");
  // Reads see the transaction's own earlier writes.
  CHECK(Run(c, {"MULTI"}) == "status:OK");
  CHECK(Run(c, {"RPUSH", "l", "a", "b"}) == "status:QUEUED");
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "status:QUEUED");
  CHECK(Run(c, {"HSET", "h", "f", "v"}) == "status:QUEUED");
  CHECK(Run(c, {"EXPIRE", "h", "100"}) == "status:QUEUED");
  CHECK(Run(c, {"HGETALL", "h"}) == "status:QUEUED");
  CHECK(Run(c, {"DEL", "a"}) == "status:QUEUED");
  CHECK(Run(c, {"EXISTS", "a"}) == "status:QUEUED");
  CHECK(Run(c, {"EXEC"}) ==
        "[int:2, [bulk:a, bulk:b], int:1, int:1, [bulk:f, bulk:v], int:1, int:0]");
  CHECK(Run(c, {"TTL", "h"}) == "int:100");
}

TEST_CASE("transaction errors are Redis's", "[transaction]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"EXEC"}) == "err:ERR EXEC without MULTI");
  CHECK(Run(c, {"DISCARD"}) == "err:ERR DISCARD without MULTI");
  CHECK(Run(c, {"MULTI"}) == "status:OK");
  CHECK(Run(c, {"MULTI"}) == "err:ERR MULTI calls can not be nested");
  CHECK(Run(c, {"WATCH", "x"}) == "err:ERR WATCH inside MULTI is not allowed");
  CHECK(Run(c, {"SET", "a", "1"}) == "status:QUEUED");
  // Neither nested MULTI nor WATCH inside MULTI aborts the transaction.
  CHECK(Run(c, {"EXEC"}) == "[status:OK]");

  SECTION("unknown command while queuing") {
    CHECK(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"SET", "a", "2"}) == "status:QUEUED");
    CHECK(Run(c, {"FOO", "bar"}) ==
          "err:ERR unknown command 'FOO', with args beginning with: 'bar' ");
    CHECK(Run(c, {"EXEC"}) == kExecAbort);
    CHECK(Run(c, {"GET", "a"}) == "bulk:1");
  }
  SECTION("arity error while queuing") {
    CHECK(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"SET", "a"}) == "err:ERR wrong number of arguments for 'set' command");
    CHECK(Run(c, {"SET", "a", "3"}) == "status:QUEUED");
    CHECK(Run(c, {"EXEC"}) == kExecAbort);
    CHECK(Run(c, {"GET", "a"}) == "bulk:1");
    CHECK(Run(c, {"EXEC"}) == "err:ERR EXEC without MULTI");
  }
  SECTION("a command Redis refuses in a transaction") {
    CHECK(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"SHUTDOWN"}) == "err:ERR Command not allowed inside a transaction");
    CHECK(Run(c, {"EXEC"}) == kExecAbort);
    CHECK(Run(c, {"PING"}) == "status:PONG");
  }
  SECTION("DISCARD drops the queue") {
    CHECK(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"SET", "a", "4"}) == "status:QUEUED");
    CHECK(Run(c, {"DISCARD"}) == "status:OK");
    CHECK(Run(c, {"GET", "a"}) == "bulk:1");
    CHECK(Run(c, {"DISCARD"}) == "err:ERR DISCARD without MULTI");
  }
  SECTION("WATCH arity") {
    CHECK(Run(c, {"WATCH"}) == "err:ERR wrong number of arguments for 'watch' command");
    CHECK(Run(c, {"UNWATCH"}) == "status:OK");
  }
  SECTION("connection commands queued run at EXEC") {
    CHECK(Run(c, {"MULTI"}) == "status:OK");
    CHECK(Run(c, {"CLIENT", "SETNAME", "txn"}) == "status:QUEUED");
    CHECK(Run(c, {"CLIENT", "GETNAME"}) == "status:QUEUED");
    CHECK(Run(c, {"ECHO", "hi"}) == "status:QUEUED");
    CHECK(Run(c, {"EXEC"}) == "[status:OK, bulk:txn, bulk:hi]");
  }
}

TEST_CASE("MULTI/EXEC in one pipeline", "[transaction]") {
  TestServer server;
  RawConnection raw(server.port());
  std::string request = Resp({"SET", "k", "0"}) + Resp({"MULTI"}) + Resp({"INCR", "k"}) +
                        Resp({"INCR", "k"}) + Resp({"NOPE"}) + Resp({"EXEC"}) + Resp({"MULTI"}) +
                        Resp({"INCR", "k"}) + Resp({"GET", "k"}) + Resp({"EXEC"}) +
                        Resp({"GET", "k"});
  raw.Send(request);
  const std::string expected =
      "+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n"
      "-ERR unknown command 'NOPE', with args beginning with: \r\n"
      "-EXECABORT Transaction discarded because of previous errors.\r\n"
      "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n$1\r\n1\r\n$1\r\n1\r\n";
  CHECK(raw.ReadExactly(expected.size()) == expected);
}

TEST_CASE("WATCH aborts EXEC after another client's write, not after reads", "[transaction]") {
  TestServer server;
  Client a(server.port());
  Client b(server.port());
  CHECK(Run(a, {"SET", "k", "1"}) == "status:OK");

  SECTION("untouched: EXEC runs") {
    CHECK(Run(a, {"WATCH", "k", "other"}) == "status:OK");
    CHECK(Run(b, {"GET", "k"}) == "bulk:1");
    CHECK(Run(b, {"EXISTS", "k", "other"}) == "int:1");
    CHECK(Run(b, {"SET", "unrelated", "x"}) == "status:OK");
    CHECK(Run(a, {"MULTI"}) == "status:OK");
    CHECK(Run(a, {"SET", "k", "2"}) == "status:QUEUED");
    CHECK(Run(a, {"EXEC"}) == "[status:OK]");
  }
  std::vector<std::vector<std::string>> writes = {
      {"SET", "k", "9"},     {"DEL", "k"},
      {"UNLINK", "k"},       {"INCR", "k"},
      {"EXPIRE", "k", "50"}, {"RENAME", "k", "k2"},
      {"APPEND", "k", "z"},  {"FLUSHALL"},
      {"FLUSHDB"},           {"MSET", "x", "1", "k", "2"}};
  for (const auto& write : writes) {
    DYNAMIC_SECTION("touched by " << write[0]) {
      CHECK(Run(a, {"WATCH", "k"}) == "status:OK");
      CHECK(Run(b, write).rfind("err", 0) != 0);
      CHECK(Run(a, {"MULTI"}) == "status:OK");
      CHECK(Run(a, {"SET", "k", "mine"}) == "status:QUEUED");
      CHECK(Run(a, {"EXEC"}) == "nil");
      CHECK(Run(a, {"GET", "k"}) != "bulk:mine");
      // EXEC unwatched: the next transaction runs.
      CHECK(Run(a, {"MULTI"}) == "status:OK");
      CHECK(Run(a, {"SET", "k", "mine"}) == "status:QUEUED");
      CHECK(Run(a, {"EXEC"}) == "[status:OK]");
    }
  }
  SECTION("RENAME onto the watched key") {
    CHECK(Run(b, {"SET", "src", "s"}) == "status:OK");
    CHECK(Run(a, {"WATCH", "k"}) == "status:OK");
    CHECK(Run(b, {"RENAME", "src", "k"}) == "status:OK");
    CHECK(Run(a, {"MULTI"}) == "status:OK");
    CHECK(Run(a, {"GET", "k"}) == "status:QUEUED");
    CHECK(Run(a, {"EXEC"}) == "nil");
  }
  SECTION("its own write after WATCH aborts too (as Redis)") {
    CHECK(Run(a, {"WATCH", "k"}) == "status:OK");
    CHECK(Run(a, {"SET", "k", "self"}) == "status:OK");
    CHECK(Run(a, {"MULTI"}) == "status:OK");
    CHECK(Run(a, {"GET", "k"}) == "status:QUEUED");
    CHECK(Run(a, {"EXEC"}) == "nil");
  }
  SECTION("UNWATCH and DISCARD forget the watches") {
    CHECK(Run(a, {"WATCH", "k"}) == "status:OK");
    CHECK(Run(a, {"UNWATCH"}) == "status:OK");
    CHECK(Run(b, {"SET", "k", "9"}) == "status:OK");
    CHECK(Run(a, {"MULTI"}) == "status:OK");
    CHECK(Run(a, {"GET", "k"}) == "status:QUEUED");
    CHECK(Run(a, {"EXEC"}) == "[bulk:9]");
    CHECK(Run(a, {"WATCH", "k"}) == "status:OK");
    CHECK(Run(a, {"MULTI"}) == "status:OK");
    CHECK(Run(a, {"DISCARD"}) == "status:OK");
    CHECK(Run(b, {"SET", "k", "10"}) == "status:OK");
    CHECK(Run(a, {"MULTI"}) == "status:OK");
    CHECK(Run(a, {"GET", "k"}) == "status:QUEUED");
    CHECK(Run(a, {"EXEC"}) == "[bulk:10]");
  }
  SECTION("a failed write does not touch") {
    CHECK(Run(b, {"SET", "str", "x"}) == "status:OK");
    CHECK(Run(a, {"WATCH", "str"}) == "status:OK");
    CHECK(Run(b, {"LPUSH", "str", "y"}).rfind("err:WRONGTYPE", 0) == 0);
    CHECK(Run(a, {"MULTI"}) == "status:OK");
    CHECK(Run(a, {"GET", "str"}) == "status:QUEUED");
    CHECK(Run(a, {"EXEC"}) == "[bulk:x]");
  }
}

TEST_CASE("WATCH of a key that expires before EXEC aborts it", "[transaction]") {
  TestServer server;
  Client a(server.port());
  CHECK(Run(a, {"SET", "k", "1", "PX", "100"}) == "status:OK");
  CHECK(Run(a, {"WATCH", "k"}) == "status:OK");
  SleepMs(250);  // not a timing assertion: the key is gone whenever EXEC runs after this
  CHECK(Run(a, {"MULTI"}) == "status:OK");
  CHECK(Run(a, {"SET", "k", "2"}) == "status:QUEUED");
  CHECK(Run(a, {"EXEC"}) == "nil");
  // A key already absent when watched does not abort when it stays absent.
  CHECK(Run(a, {"WATCH", "never"}) == "status:OK");
  CHECK(Run(a, {"MULTI"}) == "status:OK");
  CHECK(Run(a, {"GET", "never"}) == "status:QUEUED");
  CHECK(Run(a, {"EXEC"}) == "[nil]");
}

TEST_CASE("closing a watching connection forgets its watches", "[transaction]") {
  TestServer server;
  Client b(server.port());
  for (int i = 0; i < 20; ++i) {
    Client a(server.port());
    CHECK(Run(a, {"WATCH", "k" + std::to_string(i), "shared"}) == "status:OK");
  }
  // The watchers are gone: writes find nobody to mark (checked indirectly: a new watcher works).
  Client a(server.port());
  CHECK(Run(a, {"WATCH", "shared"}) == "status:OK");
  CHECK(Run(a, {"MULTI"}) == "status:OK");
  CHECK(Run(a, {"SET", "shared", "1"}) == "status:QUEUED");
  CHECK(Run(a, {"EXEC"}) == "[status:OK]");
  CHECK(Run(b, {"GET", "shared"}) == "bulk:1");
}

TEST_CASE("two clients racing WATCH/EXEC: exactly one wins each round", "[transaction]") {
  TestServer server;
  Client a(server.port());
  Client b(server.port());
  int a_wins = 0, b_wins = 0;
  for (int round = 0; round < 100; ++round) {
    const std::string key = "race" + std::to_string(round);
    CHECK(Run(a, {"WATCH", key}) == "status:OK");
    CHECK(Run(b, {"WATCH", key}) == "status:OK");
    CHECK(Run(a, {"MULTI"}) == "status:OK");
    CHECK(Run(b, {"MULTI"}) == "status:OK");
    CHECK(Run(a, {"SET", key, "a"}) == "status:QUEUED");
    CHECK(Run(b, {"SET", key, "b"}) == "status:QUEUED");
    // Both EXECs in flight at once.
    a.Append({"EXEC"});
    b.Append({"EXEC"});
    Reply ra, rb;
    REQUIRE(a.GetReply(&ra));
    REQUIRE(b.GetReply(&rb));
    const bool a_won = !ra.is_nil();
    const bool b_won = !rb.is_nil();
    CHECK(a_won != b_won);
    a_wins += a_won;
    b_wins += b_won;
    CHECK(Run(a, {"GET", key}) == (a_won ? "bulk:a" : "bulk:b"));
  }
  CHECK(a_wins + b_wins == 100);
}

TEST_CASE("N clients increment one counter with optimistic transactions", "[transaction]") {
  TestServer server({"--net-threads", "2"});
  constexpr int kClients = 8;
  constexpr int kIncrementsEach = 150;
  std::atomic<int> execs{0}, aborts{0};
  std::vector<std::string> errors(kClients);
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      // No Catch assertion on this thread (Catch is not thread-safe): errors are collected.
      Client c(server.port());
      Reply r;
      auto run = [&](const std::vector<std::string>& args) {
        if (!c.TryCommand(args, &r)) errors[t] = "I/O error";
        return errors[t].empty();
      };
      for (int done = 0; done < kIncrementsEach;) {
        if (!run({"WATCH", "counter"}) || !run({"GET", "counter"})) return;
        long long n = r.is_nil() ? 0 : std::stoll(r.str);
        if (!run({"MULTI"}) || !run({"SET", "counter", std::to_string(n + 1)}) || !run({"EXEC"})) {
          return;
        }
        if (r.is_nil()) {
          ++aborts;
          continue;
        }
        if (Describe(r) != "[status:OK]") {
          errors[t] = Describe(r);
          return;
        }
        ++execs;
        ++done;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& e : errors) CHECK(e.empty());
  Client c(server.port());
  const std::string final_value = Run(c, {"GET", "counter"});
  std::printf("optimistic counter: final=%s successful EXECs=%d aborted EXECs=%d\n",
              final_value.c_str(), execs.load(), aborts.load());
  CHECK(execs.load() == kClients * kIncrementsEach);
  CHECK(final_value == "bulk:" + std::to_string(execs.load()));
}

TEST_CASE("no client observes part of a transaction", "[transaction]") {
  TestServer server({"--net-threads", "2"});
  Client setup(server.port());
  CHECK(Run(setup, {"MSET", "x", "0", "y", "0"}) == "status:OK");
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, reads{0}, failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      // No Catch assertion on this thread (Catch is not thread-safe).
      Client c(server.port());
      Reply r;
      auto run = [&](const std::vector<std::string>& args) {
        if (!c.TryCommand(args, &r)) ++failures;
        return r;
      };
      while (!stop) {
        if (t == 0) {
          // Single-key reads (answered from the cache when it holds them): y is read after x and
          // the writer sets x then y in one transaction, so y >= x.
          Reply x = run({"GET", "x"});
          Reply y = run({"GET", "y"});
          if (x.type != REDIS_REPLY_STRING || y.type != REDIS_REPLY_STRING) {
            ++failures;
            return;
          }
          if (std::stoll(y.str) < std::stoll(x.str)) ++torn;
        } else {
          Reply m;
          if (t == 1) {
            m = run({"MGET", "x", "y"});
          } else {
            run({"MULTI"});
            run({"GET", "x"});
            run({"GET", "y"});
            m = run({"EXEC"});
          }
          if (m.elements.size() != 2) {
            ++failures;
            return;
          }
          if (m.elements[0].str != m.elements[1].str) ++torn;
        }
        ++reads;
      }
    });
  }
  Client w(server.port());
  for (int i = 1; i <= 1500; ++i) {
    const std::string v = std::to_string(i);
    w.Command({"MULTI"});
    w.Command({"SET", "x", v});
    w.Command({"SET", "y", v});
    CHECK(Run(w, {"EXEC"}) == "[status:OK, status:OK]");
  }
  stop = true;
  for (auto& r : readers) r.join();
  INFO("reads: " << reads.load());
  CHECK(failures.load() == 0);
  CHECK(torn.load() == 0);
}

TEST_CASE("kill -9 during big transactions keeps each all or nothing",
          "[transaction][durability]") {
  // Small memtables: they flush to SST files while transactions run, so a transaction's write
  // that reached a memtable before its commit would survive the crash.
  TestServer server({"--rocksdb-write-buffer-size", "1mb"});
  constexpr int kKeys = 200;   // keys per transaction
  constexpr int kCrashes = 4;  // kill -9 / restart cycles, each on its own keys
  const std::string big(512, 'v');
  for (int crash = 0; crash < kCrashes; ++crash) {
    const std::string prefix = "t" + std::to_string(crash) + ":";
    std::atomic<int> acked{0};
    std::atomic<bool> stop{false};
    std::string error;
    std::thread writer([&] {
      Client c(server.port());
      for (int round = 1; !stop; ++round) {
        // Each transaction writes round into every key of the set, a list push, a hash field and
        // a counter; after a crash all of them must hold the same round.
        c.Append({"MULTI"});
        for (int k = 0; k < kKeys; ++k) {
          c.Append({"SET", prefix + std::to_string(k), std::to_string(round) + ":" + big});
          // Reads back a write of the transaction now and then: each forces its pending writes
          // into the memtables (not the WAL), so a crash can land between such steps.
          if (k % 10 == 9) c.Append({"STRLEN", prefix + std::to_string(k)});
        }
        c.Append({"RPUSH", prefix + "list", std::to_string(round)});
        c.Append({"LRANGE", prefix + "list", "-1", "-1"});
        c.Append({"HSET", prefix + "hash", "round", std::to_string(round)});
        c.Append({"INCR", prefix + "count"});
        c.Append({"GET", prefix + "count"});
        c.Append({"EXEC"});
        Reply r;
        for (int i = 0; i < kKeys + kKeys / 10 + 7; ++i) {
          if (!c.GetReply(&r)) return;  // the server died
        }
        if (r.type != REDIS_REPLY_ARRAY) {
          error = Describe(r);
          return;
        }
        // The transaction read its own writes: LRANGE saw the push, GET the increment.
        const std::string last = Describe(r.elements[r.elements.size() - 1]);
        const std::string pushed = Describe(r.elements[r.elements.size() - 4]);
        if (last != "bulk:" + std::to_string(round) ||
            pushed != "[bulk:" + std::to_string(round) + "]") {
          error = "read-back: " + pushed + " " + last;
          return;
        }
        acked = round;
      }
    });
    while (acked.load() < 20 && error.empty()) SleepMs(10);
    SleepMs(150 + 100 * crash);
    server.Kill9();
    stop = true;
    writer.join();
    CHECK(error.empty());
    const int acked_rounds = acked.load();

    server.Restart();
    Client c(server.port(), 30000);
    Reply count = c.Command({"GET", prefix + "count"});
    REQUIRE(!count.is_nil());
    const long long rounds = std::stoll(count.str);
    std::printf("kill -9 #%d: %d transactions acknowledged, %lld found after restart\n", crash,
                acked_rounds, rounds);
    CHECK(rounds >= acked_rounds);      // every acknowledged transaction is there
    CHECK(rounds <= acked_rounds + 1);  // at most the one in flight
    CHECK(Run(c, {"LLEN", prefix + "list"}) == "int:" + std::to_string(rounds));
    CHECK(Run(c, {"HGET", prefix + "hash", "round"}) == "bulk:" + std::to_string(rounds));
    int mismatched = 0;
    for (int k = 0; k < kKeys; ++k) {
      Reply v = c.Command({"GET", prefix + std::to_string(k)});
      if (v.is_nil() || v.str != std::to_string(rounds) + ":" + big) ++mismatched;
    }
    CHECK(mismatched == 0);
  }
}

TEST_CASE("kill -9 while a transaction that read back its writes runs keeps none of it",
          "[transaction][durability]") {
  // The transaction writes, reads those writes back (INCR, LRANGE, GET, APPEND), then sleeps in
  // the middle of EXEC (DEBUG SLEEP) while another client's writes fill and flush the 1 MB
  // memtables to SST files; then kill -9. Nothing of the transaction may be found afterwards.
  // The fill writes must run while the EXEC sleeps on a worker: two workers (with the one a
  // 2-core machine gets by default they wait for the EXEC, as they would in Redis).
  TestServer server({"--rocksdb-write-buffer-size", "1mb", "--pool-threads", "2"});
  const std::string fill(64 * 1024, 'f');
  for (int round = 0; round < 3; ++round) {
    const std::string p = "r" + std::to_string(round) + ":";
    Client tx(server.port());
    const std::vector<std::vector<std::string>> queued = {
        {"SET", p + "a", "1"},          {"INCR", p + "a"},    {"LPUSH", p + "l", "x"},
        {"LRANGE", p + "l", "0", "-1"}, {"GET", p + "a"},     {"APPEND", p + "a", "z"},
        {"HSET", p + "h", "f", "v"},    {"HGETALL", p + "h"}, {"DEBUG", "SLEEP", "30"},
        {"SET", p + "b", "2"}};
    tx.Append({"MULTI"});
    for (const auto& cmd : queued) tx.Append(cmd);
    tx.Append({"EXEC"});
    Reply r;
    for (size_t i = 0; i < queued.size() + 1; ++i) {
      REQUIRE(tx.GetReply(&r));
      REQUIRE(!r.is_error());
    }
    SleepMs(500);  // the EXEC is now in DEBUG SLEEP, its first writes done
    Client c(server.port(), 30000);
    const std::string sst_before = InfoFields(InfoText(c, "rocksdb"))["rocksdb_total_sst_size"];
    int i = 0;
    const long long deadline = NowMs() + 15000;
    // At least 4 MB, then until a flush has written a new SST file.
    while (NowMs() < deadline) {
      REQUIRE(Run(c, {"SET", p + "fill:" + std::to_string(i++), fill}) == "status:OK");
      if (i >= 64 && i % 16 == 0 &&
          InfoFields(InfoText(c, "rocksdb"))["rocksdb_total_sst_size"] != sst_before) {
        break;
      }
    }
    INFO("fill writes: " << i);
    REQUIRE(InfoFields(InfoText(c, "rocksdb"))["rocksdb_total_sst_size"] != sst_before);
    server.Kill9();
    server.Restart();
    Client after(server.port(), 30000);
    CHECK(Run(after, {"EXISTS", p + "a", p + "l", p + "h", p + "b"}) == "int:0");
    CHECK(Run(after, {"EXISTS", p + "fill:0"}) == "int:1");  // acknowledged: kept
  }
}

TEST_CASE("an EXEC aborted by WATCH runs none of its queued commands, CLIENT/SELECT/CONFIG too",
          "[transaction]") {
  TestServer server;
  Client c(server.port());
  Client other(server.port());
  const std::string samples = Run(c, {"CONFIG", "GET", "maxmemory-samples"});
  REQUIRE(Run(c, {"CLIENT", "SETNAME", "before"}) == "status:OK");
  REQUIRE(Run(c, {"WATCH", "w"}) == "status:OK");
  REQUIRE(Run(c, {"MULTI"}) == "status:OK");
  CHECK(Run(c, {"CLIENT", "SETNAME", "inside"}) == "status:QUEUED");
  CHECK(Run(c, {"SELECT", "3"}) == "status:QUEUED");
  CHECK(Run(c, {"SET", "a", "1"}) == "status:QUEUED");
  CHECK(Run(c, {"CONFIG", "SET", "maxmemory-samples", "9"}) == "status:QUEUED");
  CHECK(Run(other, {"SET", "w", "changed"}) == "status:OK");
  CHECK(Run(c, {"EXEC"}) == "nil");
  CHECK(Run(c, {"CLIENT", "GETNAME"}) == "bulk:before");
  CHECK(Run(c, {"CONFIG", "GET", "maxmemory-samples"}) == samples);
  CHECK(Run(c, {"SET", "z", "1"}) == "status:OK");  // still in database 0
  CHECK(Run(other, {"GET", "z"}) == "bulk:1");
  CHECK(Run(other, {"EXISTS", "a"}) == "int:0");

  // Not aborted: each reply in its place, SELECT moving the commands after it, and the commands
  // pipelined after EXEC run in the database the transaction left.
  REQUIRE(Run(c, {"WATCH", "w"}) == "status:OK");
  c.Append({"MULTI"});
  c.Append({"CLIENT", "SETNAME", "inside"});
  c.Append({"SET", "a", "0"});
  c.Append({"SELECT", "3"});
  c.Append({"SET", "a", "3"});
  c.Append({"CLIENT", "GETNAME"});
  c.Append({"GET", "a"});
  c.Append({"EXEC"});
  c.Append({"GET", "a"});
  c.Append({"CLIENT", "GETNAME"});
  Reply r;
  for (int i = 0; i < 7; ++i) REQUIRE(c.GetReply(&r));
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "[status:OK, status:OK, status:OK, status:OK, bulk:inside, bulk:3]");
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "bulk:3");
  REQUIRE(c.GetReply(&r));
  CHECK(Describe(r) == "bulk:inside");
  CHECK(Run(other, {"GET", "a"}) == "bulk:0");
}

TEST_CASE("CLIENT LIST shows a client in MULTI (flags=x, multi=<queued>)", "[transaction]") {
  TestServer server;
  Client a(server.port());
  Client b(server.port());
  CHECK(Run(a, {"CLIENT", "SETNAME", "txclient"}) == "status:OK");
  auto line_of_a = [&] {
    std::string list = b.Command({"CLIENT", "LIST"}).str;
    size_t at = list.find("name=txclient");
    REQUIRE(at != std::string::npos);
    size_t begin = list.rfind('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    return list.substr(begin, list.find('\n', at) - begin);
  };
  CHECK(line_of_a().find(" flags=N ") != std::string::npos);
  CHECK(line_of_a().find(" multi=-1 ") != std::string::npos);
  CHECK(Run(a, {"MULTI"}) == "status:OK");
  CHECK(Run(a, {"SET", "k", "v"}) == "status:QUEUED");
  CHECK(Run(a, {"GET", "k"}) == "status:QUEUED");
  CHECK(line_of_a().find(" flags=x ") != std::string::npos);
  CHECK(line_of_a().find(" multi=2 ") != std::string::npos);
  CHECK(Run(a, {"EXEC"}) == "[status:OK, bulk:v]");
  CHECK(line_of_a().find(" multi=-1 ") != std::string::npos);
}

}  // namespace transaction_test
