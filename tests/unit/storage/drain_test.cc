// Pops and range reads cost the same whatever the key's deletion history (issue 10 item 4).
// No timing: RocksDB's PerfContext counts the tombstones and hidden entries each operation
// stepped over (storage/perf_counters.h); draining a 100,000-element key one pop at a time, the
// count per pop must stay bounded by a small constant instead of growing with the pops before.
//
// ROCKCACHE_DRAIN_N overrides the size; ROCKCACHE_DRAIN_REPORT=1 prints the per-pop figures at
// the start, middle and end of each drain; ROCKCACHE_DRAIN_BULK=k pops k at a time between
// those windows (to take figures on code where single pops are quadratic).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "storage/perf_counters.h"
#include "tests/support/store_fixture.h"

namespace rockcache::storage {
namespace {

using testing::Ok;
using testing::StoreFixture;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

std::string Member(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "member:%08llu", static_cast<unsigned long long>(i));
  return buf;
}

// Fills in batches of 1000 through `add(first, last)`.
void Fill(uint64_t n, const std::function<void(uint64_t, uint64_t)>& add) {
  for (uint64_t i = 0; i < n; i += 1000) add(i, std::min(n, i + 1000));
}

struct Window {
  uint64_t max = 0;
  uint64_t sum = 0;
  uint64_t ops = 0;
};

// Runs `op` (one pop or read) until it reports the key empty, measuring each call's skipped
// entries; `bulk`, when given, advances between the measured windows. Returns the worst count.
uint64_t Drain(const char* name, uint64_t n, const std::function<bool()>& op,
               const std::function<void(uint64_t)>& bulk = nullptr) {
  const uint64_t kWindow = 100;
  const uint64_t bulk_size = EnvOr("ROCKCACHE_DRAIN_BULK", 0);
  Window start, mid, end;
  uint64_t worst = 0;
  PerfScope perf;
  for (uint64_t done = 0; done < n;) {
    bool measured =
        done < kWindow || (done >= n / 2 && done < n / 2 + kWindow) || done + kWindow >= n;
    if (!measured && bulk && bulk_size > 0) {
      uint64_t target = done < n / 2 ? n / 2 : n - kWindow;
      uint64_t k = std::min(bulk_size, target - done);
      bulk(k);
      done += k;
      continue;
    }
    perf.Reset();
    bool more = op();
    uint64_t skipped = perf.Read().Skipped();
    worst = std::max(worst, skipped);
    Window* w = done < kWindow ? &start : done < n / 2 + kWindow && done >= n / 2 ? &mid : &end;
    if (measured) {
      w->max = std::max(w->max, skipped);
      w->sum += skipped;
      ++w->ops;
    }
    ++done;
    if (!more) break;
  }
  if (EnvOr("ROCKCACHE_DRAIN_REPORT", 0)) {
    auto avg = [](const Window& w) { return w.ops ? double(w.sum) / double(w.ops) : 0.0; };
    std::printf(
        "%-28s n=%llu skipped/op max(avg): start %llu (%.1f)  middle %llu (%.1f)  end %llu "
        "(%.1f)\n",
        name, static_cast<unsigned long long>(n), static_cast<unsigned long long>(start.max),
        avg(start), static_cast<unsigned long long>(mid.max), avg(mid),
        static_cast<unsigned long long>(end.max), avg(end));
  }
  return worst;
}

// Per op, whatever was popped before: a handful of entries (the tombstone of the previous pop).
constexpr uint64_t kBound = 16;
// SPOP picks among a window of 16 live members with a front bias (storage/store_set.cc); the
// tombstones of members picked out of that window stay inside it until the front passes them:
// about 30 on average (55 with a window of 32), independent of the set's size and history.
constexpr uint64_t kSPopBound = 192;

struct DrainFixture : StoreFixture {
  uint64_t n = EnvOr("ROCKCACHE_DRAIN_N", 100000);

  void FillZSet(const std::string& key) {
    Fill(n, [&](uint64_t a, uint64_t b) {
      std::vector<std::string> names;
      for (uint64_t i = a; i < b; ++i) names.push_back(Member(i));
      std::vector<std::pair<double, std::string_view>> pairs;
      for (uint64_t i = a; i < b; ++i) pairs.emplace_back(double(i), names[i - a]);
      Ok(store->ZAdd(key, pairs, ZAddOptions()));
    });
  }
  template <typename Add>
  void FillMembers(Add add) {
    Fill(n, [&](uint64_t a, uint64_t b) {
      std::vector<std::string> names;
      for (uint64_t i = a; i < b; ++i) names.push_back(Member(i));
      std::vector<std::string_view> views(names.begin(), names.end());
      add(views);
    });
  }
};

TEST_CASE_METHOD(DrainFixture, "ZPOPMIN / ZPOPMAX drain: bounded work per pop",
                 "[storage][drain]") {
  FillZSet("z");
  uint64_t expect = 0;
  uint64_t worst = Drain(
      "ZPOPMIN", n,
      [&] {
        auto r = Ok(store->ZPopMin("z", 1));
        REQUIRE(r.size() == 1);
        REQUIRE(r[0].member == Member(expect));
        ++expect;
        return expect < n;
      },
      [&](uint64_t k) {
        REQUIRE(Ok(store->ZPopMin("z", k)).size() == k);
        expect += k;
      });
  CHECK(worst <= kBound);
  CHECK(Ok(store->ZCard("z")) == 0);

  FillZSet("z2");
  uint64_t left = n;
  worst = Drain(
      "ZPOPMAX", n,
      [&] {
        auto r = Ok(store->ZPopMax("z2", 1));
        REQUIRE(r.size() == 1);
        REQUIRE(r[0].member == Member(--left));
        return left > 0;
      },
      [&](uint64_t k) {
        REQUIRE(Ok(store->ZPopMax("z2", k)).size() == k);
        left -= k;
      });
  CHECK(worst <= kBound);
}

TEST_CASE_METHOD(DrainFixture, "ZRANGE 0 0 then ZREM, as a queue: bounded work",
                 "[storage][drain]") {
  FillZSet("z");
  ZRangeSpec first;
  first.start = 0;
  first.stop = 0;
  uint64_t expect = 0;
  uint64_t worst = Drain(
      "ZRANGE 0 0 + ZREM", n,
      [&] {
        auto r = Ok(store->ZRange("z", first));
        REQUIRE(r.size() == 1);
        REQUIRE(r[0].member == Member(expect++));
        REQUIRE(Ok(store->ZRem("z", {r[0].member})) == 1);
        return expect < n;
      },
      [&](uint64_t k) {
        REQUIRE(Ok(store->ZRemRangeByRank("z", 0, int64_t(k) - 1)) == int64_t(k));
        expect += k;
      });
  CHECK(worst <= kBound);
}

TEST_CASE_METHOD(DrainFixture, "SPOP drain: bounded work per pop, every member once",
                 "[storage][drain]") {
  FillMembers([&](const std::vector<std::string_view>& m) { Ok(store->SAdd("s", m)); });
  std::vector<bool> seen(n, false);
  uint64_t popped = 0;
  uint64_t worst = Drain(
      "SPOP", n,
      [&] {
        auto r = Ok(store->SPop("s", 1));
        REQUIRE(r.size() == 1);
        uint64_t i = std::strtoull(r[0].c_str() + 7, nullptr, 10);
        REQUIRE(i < n);
        REQUIRE_FALSE(seen[i]);
        seen[i] = true;
        return ++popped < n;
      },
      [&](uint64_t k) {
        for (const auto& m : Ok(store->SPop("s", k))) {
          seen[std::strtoull(m.c_str() + 7, nullptr, 10)] = true;
        }
        popped += k;
      });
  CHECK(worst <= kSPopBound);
  CHECK(Ok(store->SCard("s")) == 0);
}

TEST_CASE_METHOD(DrainFixture, "LPOP / RPOP drain with LINDEX: bounded work", "[storage][drain]") {
  FillMembers([&](const std::vector<std::string_view>& m) { Ok(store->RPush("l", m)); });
  uint64_t expect = 0;
  uint64_t worst = Drain(
      "LPOP + LINDEX 0", n,
      [&] {
        auto r = Ok(store->LPop("l", 1));
        REQUIRE(r.has_value());
        REQUIRE((*r)[0] == Member(expect++));
        if (expect < n) REQUIRE(Ok(store->LIndex("l", 0)) == Member(expect));
        return expect < n;
      },
      [&](uint64_t k) {
        REQUIRE(Ok(store->LPop("l", k))->size() == k);
        expect += k;
      });
  CHECK(worst <= kBound);

  FillMembers([&](const std::vector<std::string_view>& m) { Ok(store->RPush("r", m)); });
  uint64_t left = n;
  worst = Drain(
      "RPOP + LRANGE -1 -1", n,
      [&] {
        auto r = Ok(store->RPop("r", 1));
        REQUIRE((*r)[0] == Member(--left));
        if (left > 0) REQUIRE(Ok(store->LRange("r", -1, -1))[0] == Member(left - 1));
        return left > 0;
      },
      [&](uint64_t k) {
        REQUIRE(Ok(store->RPop("r", k))->size() == k);
        left -= k;
      });
  CHECK(worst <= kBound);
}

TEST_CASE_METHOD(DrainFixture, "SSCAN / HSCAN from 0 after deleting the first members",
                 "[storage][drain]") {
  FillMembers([&](const std::vector<std::string_view>& m) { Ok(store->SAdd("s", m)); });
  uint64_t expect = 0;
  uint64_t worst = Drain("SSCAN 0 COUNT 1 + SREM", n, [&] {
    auto r = Ok(store->SScan("s", 0, "", 1));
    REQUIRE(r.keys.size() == 1);
    REQUIRE(r.keys[0] == Member(expect++));
    REQUIRE(Ok(store->SRem("s", {r.keys[0]})) == 1);
    return expect < n;
  });
  CHECK(worst <= kBound);

  FillMembers([&](const std::vector<std::string_view>& m) {
    std::vector<std::pair<std::string_view, std::string_view>> fv;
    for (auto f : m) fv.emplace_back(f, "v");
    Ok(store->HSet("h", fv));
  });
  expect = 0;
  worst = Drain("HSCAN 0 COUNT 1 + HDEL", n, [&] {
    auto r = Ok(store->HScan("h", 0, "", 1));
    REQUIRE(r.items.size() == 1);
    REQUIRE(r.items[0].first == Member(expect++));
    REQUIRE(Ok(store->HDel("h", {r.items[0].first})) == 1);
    return expect < n;
  });
  CHECK(worst <= kBound);
}

TEST_CASE_METHOD(DrainFixture, "SCAN and KEYS after FLUSHALL do not walk the old keys",
                 "[storage][drain]") {
  FillMembers([&](const std::vector<std::string_view>& m) {
    std::vector<std::pair<std::string_view, std::string_view>> kv;
    for (auto k : m) kv.emplace_back(k, "v");
    REQUIRE(store->MSet(kv).ok());
  });
  REQUIRE(store->FlushAll().ok());
  REQUIRE(store->MSet({{"a", "1"}, {"b", "2"}}).ok());
  PerfScope perf;
  auto r = Ok(store->Scan(0, "", 10, std::nullopt));
  CHECK(r.keys == std::vector<std::string>{"a", "b"});
  CHECK(Ok(store->Keys("*")).size() == 2);
  CHECK(perf.Read().Skipped() <= kBound);
}

}  // namespace
}  // namespace rockcache::storage

namespace rockcache::storage {
namespace {

TEST_CASE("The live-range hint survives a restart and inserts below it", "[storage][drain]") {
  testing::TempDir dir;
  Options o;
  o.dir = dir.path();
  auto store = Ok(Store::Open(o));
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back(Member(i));
  std::vector<std::pair<double, std::string_view>> pairs;
  for (int i = 0; i < 1000; ++i) pairs.emplace_back(double(i), names[i]);
  Ok(store->ZAdd("z", pairs, ZAddOptions()));
  std::vector<std::string_view> views(names.begin(), names.end());
  Ok(store->SAdd("s", views));
  REQUIRE(Ok(store->ZPopMin("z", 500)).size() == 500);
  REQUIRE(Ok(store->ZPopMax("z", 100)).size() == 100);
  REQUIRE(Ok(store->SPop("s", 300)).size() == 300);
  REQUIRE(store->Close().ok());
  store.reset();

  store = Ok(Store::Open(o));
  ZRangeSpec all;
  auto left = Ok(store->ZRange("z", all));
  REQUIRE(left.size() == 400);
  CHECK(left.front().member == Member(500));
  CHECK(left.back().member == Member(899));
  CHECK(Ok(store->SMembers("s")).size() == 700);
  // Inserts beyond both ends of the hint are seen.
  std::string low = "aaa", high = "zzz";
  Ok(store->ZAdd("z", {{-1.0, low}, {1e9, high}}, ZAddOptions()));
  Ok(store->SAdd("s", {std::string_view(low), std::string_view(high)}));
  CHECK(Ok(store->ZPopMin("z", 1))[0].member == low);
  CHECK(Ok(store->ZPopMax("z", 1))[0].member == high);
  auto members = Ok(store->SMembers("s"));
  CHECK(members.size() == 702);
  CHECK(members.front() == low);
  CHECK(members.back() == high);
  PerfScope perf;
  CHECK(Ok(store->ZPopMin("z", 1))[0].member == Member(500));
  CHECK(perf.Read().Skipped() <= kBound);
}

TEST_CASE_METHOD(DrainFixture, "A queue that gets items ahead of its head stays bounded",
                 "[storage][drain]") {
  const uint64_t m = std::min<uint64_t>(n, 20000);
  std::vector<std::string> names;
  for (uint64_t i = 0; i < m; ++i) names.push_back(Member(i));
  std::vector<std::pair<double, std::string_view>> pairs;
  std::vector<std::string_view> views;
  for (uint64_t i = 0; i < m; ++i) {
    pairs.emplace_back(double(i), names[i]);
    views.push_back(names[i]);
  }
  Ok(store->ZAdd("z", pairs, ZAddOptions()));
  Ok(store->SAdd("s", views));
  REQUIRE(Ok(store->ZPopMin("z", m / 2)).size() == m / 2);
  REQUIRE(Ok(store->SPop("s", m / 2)).size() == m / 2);
  PerfScope perf;
  uint64_t worst = 0, worst_set = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string urgent = "urgent:" + std::to_string(i);
    Ok(store->ZAdd("z", {{-1.0 - i, urgent}}, ZAddOptions()));
    perf.Reset();
    REQUIRE(Ok(store->ZPopMin("z", 1))[0].member == urgent);
    worst = std::max(worst, perf.Read().Skipped());
    char early[16];  // sorts before every member, in insertion order
    std::snprintf(early, sizeof(early), "a:%06d", i);
    Ok(store->SAdd("s", {std::string_view(early)}));
    perf.Reset();
    REQUIRE(Ok(store->SPop("s", 1)).size() == 1);
    worst_set = std::max(worst_set, perf.Read().Skipped());
  }
  CHECK(worst <= kBound);
  CHECK(worst_set <= kSPopBound);
}

TEST_CASE_METHOD(DrainFixture, "ZRANDMEMBER after a drain: bounded work, right scores",
                 "[storage][drain]") {
  FillZSet("z");
  REQUIRE(Ok(store->ZPopMin("z", n - 10)).size() == n - 10);
  PerfScope perf;
  for (int64_t count : {int64_t{1}, int64_t{5}, int64_t{-30}, int64_t{100}}) {
    perf.Reset();
    auto picked = Ok(store->ZRandMember("z", count));
    CHECK(perf.Read().Skipped() <= kBound);
    CHECK(picked.size() == static_cast<size_t>(count < 0 ? -count : std::min<int64_t>(count, 10)));
    for (const auto& item : picked) {
      REQUIRE(item.score >= double(n - 10));
      CHECK(item.member == Member(static_cast<uint64_t>(item.score)));
    }
  }
}

}  // namespace
}  // namespace rockcache::storage
