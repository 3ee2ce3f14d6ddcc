// Many concurrent clients: a shared counter must count every INCR, each client reads its own
// writes, and no reader ever sees a value older than the last acknowledged write.
//
// Catch2 assertions are not thread-safe: worker threads record problems, the main thread checks.
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

TEST_CASE("200 concurrent clients: shared counter and own keys", "[concurrency]") {
  // Two workers (a 2-core machine's default is one): groups of different loops run at once.
  TestServer server({"--pool-threads", "2"});
  const int kClients = 200;
  const int kIncrs = 200;
  const int kOwnKeys = 20;

  std::vector<std::string> errors(kClients);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      std::string& err = errors[t];
      Client c(server.port(), 30000);
      ready++;
      while (!go) std::this_thread::yield();
      if (!c.connected()) {
        err = "connect failed";
        return;
      }
      Reply r;
      for (int i = 0; i < kIncrs; ++i) {
        if (!c.TryCommand({"INCR", "counter"}, &r) || r.type != REDIS_REPLY_INTEGER) {
          err = "INCR " + std::to_string(i) + ": " + Describe(r);
          return;
        }
        if (i % (kIncrs / kOwnKeys) == 0) {
          int k = i / (kIncrs / kOwnKeys);
          std::string key = "own:" + std::to_string(t) + ":" + std::to_string(k);
          std::string value = "value-" + std::to_string(t) + "-" + std::to_string(k);
          if (!c.TryCommand({"SET", key, value}, &r) || Describe(r) != "status:OK") {
            err = "SET " + key + ": " + Describe(r);
            return;
          }
          if (!c.TryCommand({"GET", key}, &r) || Describe(r) != "bulk:" + value) {
            err = "GET " + key + " right after SET: " + Describe(r);
            return;
          }
        }
      }
      // All own keys at the end, in one MGET.
      std::vector<std::string> mget = {"MGET"};
      for (int k = 0; k < kOwnKeys; ++k) {
        mget.push_back("own:" + std::to_string(t) + ":" + std::to_string(k));
      }
      if (!c.TryCommand(mget, &r) || r.type != REDIS_REPLY_ARRAY || r.elements.size() != kOwnKeys) {
        err = "MGET: " + Describe(r);
        return;
      }
      for (int k = 0; k < kOwnKeys; ++k) {
        std::string want = "bulk:value-" + std::to_string(t) + "-" + std::to_string(k);
        if (Describe(r.elements[k]) != want) {
          err = "MGET element " + std::to_string(k) + ": " + Describe(r.elements[k]);
          return;
        }
      }
    });
  }
  while (ready < kClients) std::this_thread::yield();
  go = true;
  for (auto& th : threads) th.join();

  int failed = 0;
  for (int t = 0; t < kClients; ++t) {
    if (!errors[t].empty() && ++failed <= 5) FAIL_CHECK("client " << t << ": " << errors[t]);
  }
  CHECK(failed == 0);
  Client c(server.port());
  CHECK(Run(c, {"GET", "counter"}) == "bulk:" + std::to_string(kClients * kIncrs));
  CHECK(Run(c, {"DBSIZE"}) == "int:" + std::to_string(1 + kClients * kOwnKeys));
  CHECK(Run(c, {"GET", "own:199:19"}) == "bulk:value-199-19");
}

TEST_CASE("readers never see a value older than the last acknowledged write", "[concurrency]") {
  // Two workers (a 2-core machine's default is one): groups of different loops run at once.
  TestServer server({"--pool-threads", "2"});
  const int kKeys = 4;
  const int kReadersPerKey = 3;
  // acked[k] = the highest value whose SET on key k was acknowledged.
  std::vector<std::atomic<long long>> acked(kKeys);
  for (auto& a : acked) a = -1;
  std::atomic<bool> stop{false};
  std::vector<std::string> errors(kKeys * (1 + kReadersPerKey));
  std::vector<long long> reads(kKeys * kReadersPerKey, 0);
  std::vector<std::thread> threads;

  for (int k = 0; k < kKeys; ++k) {
    threads.emplace_back([&, k] {  // the one writer of key k
      Client c(server.port(), 30000);
      Reply r;
      for (long long v = 0; !stop; ++v) {
        if (!c.TryCommand({"SET", "coh:" + std::to_string(k), std::to_string(v)}, &r) ||
            Describe(r) != "status:OK") {
          errors[k] = "SET: " + Describe(r);
          return;
        }
        acked[k] = v;
      }
    });
    for (int j = 0; j < kReadersPerKey; ++j) {
      int slot = k * kReadersPerKey + j;
      threads.emplace_back([&, k, slot] {
        Client c(server.port(), 30000);
        Reply r;
        while (!stop) {
          long long before = acked[k];
          if (!c.TryCommand({"GET", "coh:" + std::to_string(k)}, &r)) {
            errors[kKeys + slot] = "GET failed";
            return;
          }
          if (before < 0) continue;
          if (r.type != REDIS_REPLY_STRING || std::stoll(r.str) < before) {
            errors[kKeys + slot] =
                "read " + Describe(r) + " after " + std::to_string(before) + " was acknowledged";
            return;
          }
          reads[slot]++;
        }
      });
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop = true;
  for (auto& th : threads) th.join();

  for (size_t i = 0; i < errors.size(); ++i) {
    INFO("thread " << i);
    CHECK(errors[i].empty());
  }
  long long total_reads = 0;
  for (long long n : reads) total_reads += n;
  CHECK(total_reads > 100);  // the readers really ran concurrently with the writers
  Client c(server.port());
  for (int k = 0; k < kKeys; ++k) {
    CHECK(Run(c, {"GET", "coh:" + std::to_string(k)}) == "bulk:" + std::to_string(acked[k]));
  }
}
