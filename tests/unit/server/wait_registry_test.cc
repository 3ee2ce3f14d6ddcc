#include "server/blocking/wait_registry.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "server/blocking/timeout.h"

using rockcache::server::ClientInfo;
using rockcache::server::ParseBlockTimeout;
using rockcache::server::Waiter;
using rockcache::server::WaitRegistry;
using rockcache::server::WaitState;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace wait_registry_test {

namespace {

std::shared_ptr<Waiter> MakeWaiter(uint64_t id, std::vector<std::string> keys) {
  auto info = std::make_shared<ClientInfo>();
  info->id = id;
  auto waiter = std::make_shared<Waiter>(id, 0, info);
  waiter->keys = std::move(keys);
  return waiter;
}

int64_t Ms(const std::string& arg) {
  int64_t ms = -1;
  return ParseBlockTimeout(arg, &ms).empty() ? ms : -1;
}

}  // namespace

TEST_CASE("blocking timeouts parse as Redis 7.0 parses them", "[blocking]") {
  CHECK(Ms("0") == 0);
  CHECK(Ms("1") == 1000);
  CHECK(Ms("0.5") == 500);
  CHECK(Ms("0.0001") == 1);  // rounded up: not "forever"
  CHECK(Ms("-0") == 0);
  CHECK(Ms("1e3") == 1000000);
  int64_t ms = 0;
  CHECK(ParseBlockTimeout("x", &ms) == rockcache::server::kTimeoutNotFloat);
  CHECK(ParseBlockTimeout("", &ms) == rockcache::server::kTimeoutNotFloat);
  CHECK(ParseBlockTimeout(" 1", &ms) == rockcache::server::kTimeoutNotFloat);
  CHECK(ParseBlockTimeout("1 ", &ms) == rockcache::server::kTimeoutNotFloat);
  CHECK(ParseBlockTimeout("nan", &ms) == rockcache::server::kTimeoutNotFloat);
  CHECK(ParseBlockTimeout("1e5000", &ms) == rockcache::server::kTimeoutNotFloat);
  CHECK(ParseBlockTimeout("-1", &ms) == rockcache::server::kTimeoutNegative);
  CHECK(ParseBlockTimeout("inf", &ms) == rockcache::server::kTimeoutNegative);
  CHECK(ParseBlockTimeout("9223372036854775807", &ms) == rockcache::server::kTimeoutNegative);
}

TEST_CASE("a waiter is queued per key in order and finished exactly once", "[blocking]") {
  WaitRegistry registry;
  CHECK_FALSE(registry.any());
  auto a = MakeWaiter(1, {"k1", "k2"});
  auto b = MakeWaiter(2, {"k2"});
  REQUIRE(registry.Add(a));
  REQUIRE(registry.Add(b));
  CHECK(registry.any());
  CHECK(registry.waiting() == 2);
  CHECK(a->info->blocked.load());
  auto on_k2 = registry.WaitersOn(0, "k2");
  REQUIRE(on_k2.size() == 2);
  CHECK(on_k2[0] == a);
  CHECK(on_k2[1] == b);
  CHECK(registry.FindByClient(2) == b);
  CHECK_FALSE(registry.HasWaiters(1, "k1"));  // another database

  CHECK(registry.Finish(a.get(), WaitState::kServed));
  CHECK_FALSE(registry.Finish(a.get(), WaitState::kTimedOut));  // one winner
  CHECK_FALSE(registry.TimeOut(a.get()));
  CHECK(a->state.load() == WaitState::kServed);
  CHECK_FALSE(a->info->blocked.load());
  CHECK_FALSE(registry.HasWaiters(0, "k1"));
  CHECK(registry.WaitersOn(0, "k2").size() == 1);

  registry.Abandon(b.get());
  CHECK(b->state.load() == WaitState::kGone);
  CHECK_FALSE(registry.any());
  CHECK(registry.FindByClient(2) == nullptr);
}

TEST_CASE("a wait that expires or is abandoned before its command ran never queues", "[blocking]") {
  WaitRegistry registry;
  auto expired = MakeWaiter(1, {"k"});
  CHECK_FALSE(registry.TimeOut(expired.get()));  // pending: the command answers itself
  CHECK(expired->state.load() == WaitState::kExpired);
  CHECK_FALSE(registry.Add(expired));
  auto gone = MakeWaiter(2, {"k"});
  registry.Abandon(gone.get());
  CHECK_FALSE(registry.Add(gone));
  CHECK_FALSE(registry.any());
  CHECK_FALSE(registry.HasWaiters(0, "k"));
}

TEST_CASE("racing finishers: exactly one wins each waiter", "[blocking]") {
  WaitRegistry registry;
  constexpr int kWaiters = 2000;
  std::vector<std::shared_ptr<Waiter>> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.push_back(MakeWaiter(static_cast<uint64_t>(i + 1), {"k"}));
    REQUIRE(registry.Add(waiters.back()));
  }
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  const WaitState kinds[] = {WaitState::kServed, WaitState::kTimedOut, WaitState::kUnblocked,
                             WaitState::kGone};
  for (WaitState to : kinds) {
    threads.emplace_back([&, to] {
      for (auto& w : waiters) {
        if (registry.Finish(w.get(), to)) wins.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wins.load() == kWaiters);
  CHECK(registry.waiting() == 0);
  CHECK_FALSE(registry.HasWaiters(0, "k"));
}

}  // namespace wait_registry_test
