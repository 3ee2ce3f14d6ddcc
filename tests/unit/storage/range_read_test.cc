// RangeRead (storage/range_read.h): a read in steps over one snapshot returns exactly what the
// unsliced read returns, ignores writes made between its steps, and walks no tombstones of a
// drained collection (PerfContext counts, storage/perf_counters.h; no timing).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "storage/perf_counters.h"
#include "tests/support/store_fixture.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::storage::range_read_test {
namespace {

using testing::Ok;
using testing::StoreFixture;

std::string Name(const char* prefix, int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s%06d", prefix, i);
  return buf;
}

// Every item of `query`, in steps of `step` entries; counts first when the total is unknown.
std::vector<RangeItem> ReadAll(Store& store, const RangeQuery& query, uint64_t step,
                               uint64_t* steps = nullptr) {
  auto read = Ok(store.OpenRangeRead(query));
  if (read->total() < 0) {
    uint64_t counted = 0;
    bool done = false;
    while (!done) REQUIRE(read->Next(step, nullptr, &counted, &done).ok());
    read->Restart();
  }
  std::vector<RangeItem> items;
  uint64_t emitted = 0, n = 0;
  bool done = false;
  while (!done) {
    REQUIRE(read->Next(step, &items, &emitted, &done).ok());
    ++n;
  }
  CHECK(emitted == items.size());
  if (read->total() >= 0) CHECK(items.size() == static_cast<uint64_t>(read->total()));
  if (steps) *steps = n;
  return items;
}

std::vector<std::string> Keys(const std::vector<RangeItem>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(item.key);
  return out;
}

TEST_CASE("range reads in steps equal the unsliced reads", "[storage][slicing]") {
  StoreFixture f;
  Store& s = *f.store;
  std::vector<std::string> names;
  for (int i = 0; i < 500; ++i) names.push_back(Name("m", i));
  std::vector<std::string_view> views(names.begin(), names.end());
  Ok(s.SAdd("set", views));
  Ok(s.RPush("list", views));
  std::vector<std::pair<double, std::string_view>> scored;
  for (int i = 0; i < 500; ++i) scored.emplace_back(i % 50, views[static_cast<size_t>(i)]);
  Ok(s.ZAdd("zset", scored, ZAddOptions{}));
  for (int i = 0; i < 500; i += 100) {
    std::vector<std::pair<std::string_view, std::string_view>> fv;
    for (int j = i; j < i + 100; ++j) fv.emplace_back(views[j], views[499 - j]);
    Ok(s.HSet("hash", fv));
  }

  for (uint64_t step : {1, 7, 128, 100000}) {
    RangeQuery q;
    q.kind = RangeQuery::Kind::kHash;
    q.key = "hash";
    auto items = ReadAll(s, q, step);
    auto expected = Ok(s.HGetAll("hash"));
    REQUIRE(items.size() == expected.size());
    for (size_t i = 0; i < items.size(); ++i) {
      CHECK(items[i].key == expected[i].first);
      CHECK(items[i].value == expected[i].second);
    }
    q.kind = RangeQuery::Kind::kSet;
    q.key = "set";
    CHECK(Keys(ReadAll(s, q, step)) == Ok(s.SMembers("set")));
    q.kind = RangeQuery::Kind::kList;
    q.key = "list";
    for (auto [start, stop] : std::vector<std::pair<int64_t, int64_t>>{
             {0, -1}, {10, 20}, {-30, -1}, {400, 1000}, {5, 2}, {-1000, 3}}) {
      q.start = start;
      q.stop = stop;
      CHECK(Keys(ReadAll(s, q, step)) == Ok(s.LRange("list", start, stop)));
    }
    q.kind = RangeQuery::Kind::kZSet;
    q.key = "zset";
    std::vector<ZRangeSpec> specs;
    for (bool rev : {false, true}) {
      ZRangeSpec rank;
      rank.reverse = rev;
      specs.push_back(rank);
      rank.start = 17;
      rank.stop = -40;
      specs.push_back(rank);
      ZRangeSpec score;
      score.by = ZRangeSpec::By::kScore;
      score.reverse = rev;
      REQUIRE(ParseScoreRange("(10", "20", &score.score).ok());
      specs.push_back(score);
      score.offset = 13;
      score.limit = 41;
      specs.push_back(score);
      ZRangeSpec lex;
      lex.by = ZRangeSpec::By::kLex;
      lex.reverse = rev;
      REQUIRE(ParseLexRange("[m000100", "(m000300", &lex.lex).ok());
      specs.push_back(lex);
    }
    for (const auto& spec : specs) {
      q.zrange = spec;
      auto items = ReadAll(s, q, step);
      auto expected = Ok(s.ZRange("zset", spec));
      REQUIRE(items.size() == expected.size());
      for (size_t i = 0; i < items.size(); ++i) {
        CHECK(items[i].key == expected[i].member);
        CHECK(items[i].score == expected[i].score);
      }
    }
    q.kind = RangeQuery::Kind::kKeys;
    for (const char* pattern : {"*", "l*", "*s*", "nothing*"}) {
      q.pattern = pattern;
      CHECK(Keys(ReadAll(s, q, step)) == Ok(s.Keys(pattern)));
    }
  }
  RangeQuery wrong;
  wrong.kind = RangeQuery::Kind::kHash;
  wrong.key = "list";
  CHECK(s.OpenRangeRead(wrong).status().IsWrongType());
  wrong.key = "absent";
  CHECK(ReadAll(s, wrong, 10).empty());
}

TEST_CASE("a range read ignores writes made between its steps", "[storage][slicing]") {
  StoreFixture f;
  Store& s = *f.store;
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back(Name("f", i));
  std::vector<std::string_view> views(names.begin(), names.end());
  Ok(s.RPush("list", views));
  std::vector<std::pair<std::string_view, std::string_view>> fv;
  for (auto v : views) fv.emplace_back(v, v);
  Ok(s.HSet("hash", fv));

  for (auto kind : {RangeQuery::Kind::kList, RangeQuery::Kind::kHash, RangeQuery::Kind::kKeys}) {
    RangeQuery q;
    q.kind = kind;
    q.key = kind == RangeQuery::Kind::kList ? "list" : "hash";
    q.pattern = "*";
    auto before = ReadAll(s, q, 100000);
    auto read = Ok(s.OpenRangeRead(q));
    int64_t total = read->total();
    if (total < 0) {
      uint64_t counted = 0;
      bool done = false;
      while (!done) REQUIRE(read->Next(10, nullptr, &counted, &done).ok());
      read->Restart();
    }
    std::vector<RangeItem> items;
    uint64_t emitted = 0;
    bool done = false;
    int round = 0;
    while (!done) {
      REQUIRE(read->Next(37, &items, &emitted, &done).ok());
      // Between steps: pops from the front, appends, deletes, new keys.
      std::string extra = Name("x", round++);
      Ok(s.LPop("list", 3));
      Ok(s.RPush("list", {extra}));
      Ok(s.HDel("hash", {views[static_cast<size_t>(round)]}));
      Ok(s.HSet("hash", {{extra, extra}}));
      Ok(s.Set(extra, "v", SetOptions{}));
    }
    REQUIRE(items.size() == before.size());
    for (size_t i = 0; i < items.size(); ++i) {
      CHECK(items[i].key == before[i].key);
      CHECK(items[i].value == before[i].value);
    }
  }
}

TEST_CASE("range reads of drained collections walk no tombstones", "[storage][slicing]") {
  StoreFixture f;
  Store& s = *f.store;
  constexpr int kN = 20000, kKeep = 200;
  std::vector<std::string> names;
  for (int i = 0; i < kN; ++i) names.push_back(Name("e", i));
  for (int i = 0; i < kN; i += 1000) {
    std::vector<std::string_view> views(names.begin() + i, names.begin() + i + 1000);
    std::vector<std::pair<double, std::string_view>> scored;
    std::vector<std::pair<std::string_view, std::string_view>> fv;
    for (int j = 0; j < 1000; ++j) {
      scored.emplace_back(i + j, views[static_cast<size_t>(j)]);
      fv.emplace_back(views[static_cast<size_t>(j)], "v");
    }
    Ok(s.RPush("list", views));
    Ok(s.ZAdd("zset", scored, ZAddOptions{}));
    Ok(s.HSet("hash", fv));
    Ok(s.SAdd("set", views));
  }
  // Drain all but the last kKeep from the front, as a queue would.
  for (int i = 0; i < kN - kKeep; i += kKeep) {
    Ok(s.LPop("list", kKeep));
    Ok(s.ZPopMin("zset", kKeep));
    std::vector<std::string_view> gone(names.begin() + i, names.begin() + i + kKeep);
    Ok(s.HDel("hash", gone));
    Ok(s.SRem("set", gone));
  }
  PerfScope perf;
  for (auto kind : {RangeQuery::Kind::kList, RangeQuery::Kind::kZSet, RangeQuery::Kind::kHash,
                    RangeQuery::Kind::kSet}) {
    RangeQuery q;
    q.kind = kind;
    q.key = kind == RangeQuery::Kind::kList   ? "list"
            : kind == RangeQuery::Kind::kZSet ? "zset"
            : kind == RangeQuery::Kind::kHash ? "hash"
                                              : "set";
    auto read = Ok(s.OpenRangeRead(q));
    INFO("kind " << static_cast<int>(kind) << " llen " << Ok(s.LLen("list")) << " zcard "
                 << Ok(s.ZCard("zset")) << " hlen " << Ok(s.HLen("hash")));
    REQUIRE(read->total() == kKeep);
    std::vector<RangeItem> items;
    uint64_t emitted = 0, worst = 0;
    bool done = false;
    while (!done) {
      perf.Reset();
      REQUIRE(read->Next(50, &items, &emitted, &done).ok());
      worst = std::max(worst, perf.Read().Skipped());
    }
    INFO("kind " << static_cast<int>(kind) << " worst skipped per step " << worst);
    CHECK(items.size() == static_cast<size_t>(kKeep));
    CHECK(items.front().key == names[kN - kKeep]);
    CHECK(worst <= 200);  // not ~20,000: the live-range bounds skip the drained front
  }
}

// The block cache usage INFO rocksdb reports.
uint64_t BlockCacheUsage(Store& store) {
  const std::string info = store.InfoRocksDb();
  const std::string name = "rocksdb_block_cache_usage:";
  const size_t at = info.find(name);
  REQUIRE(at != std::string::npos);
  return std::stoull(info.substr(at + name.size()));
}

TEST_CASE("a range read's later steps do not fill the block cache", "[storage][slicing]") {
  StoreFixture f;  // 8 MiB block cache
  Store& s = *f.store;
  // ~12 MiB of hash entries, in SST files (CompactAll flushes the memtable first).
  const std::string value(200, 'v');
  for (int batch = 0; batch < 60; ++batch) {
    std::vector<std::string> fields;
    for (int i = 0; i < 1000; ++i) fields.push_back(Name("f", batch * 1000 + i));
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (const auto& field : fields) pairs.emplace_back(field, value);
    Ok(s.HSet("h", pairs));
  }
  REQUIRE(s.CompactAll().ok());
  const uint64_t before = BlockCacheUsage(s);
  RangeQuery q;
  q.kind = RangeQuery::Kind::kHash;
  q.key = "h";
  auto read = Ok(s.OpenRangeRead(q));
  uint64_t emitted = 0, steps = 0;
  bool done = false;
  while (!done) {
    REQUIRE(read->Next(1000, nullptr, &emitted, &done).ok());
    ++steps;
  }
  CHECK(emitted == 60000);
  CHECK(steps >= 60);
  // The first step (1,000 entries, ~210 KB of blocks) may fill the cache; the other 59 do not.
  // Filling it with every step would leave it near its 8 MiB capacity.
  CHECK(BlockCacheUsage(s) < before + (1u << 20));
}

// The compaction filter drops the entries of a deleted version, ignoring snapshots as RocksDB's
// filters do, unless a snapshot older than the delete is open: a sliced HGETALL that began before
// the DEL still reads every field after a compaction, and the next compaction without it drops
// them.
TEST_CASE("a range read keeps a deleted key's entries through compactions", "[storage][slicing]") {
  StoreFixture f;
  Store& s = *f.store;
  std::vector<std::string> fields;
  for (int i = 0; i < 3000; ++i) fields.push_back(Name("f", i));
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (const auto& field : fields) pairs.emplace_back(field, "v");
  Ok(s.HSet("h", pairs));
  REQUIRE(s.CompactAll().ok());
  RangeQuery q;
  q.kind = RangeQuery::Kind::kHash;
  q.key = "h";
  auto read = Ok(s.OpenRangeRead(q));
  std::vector<RangeItem> items;
  uint64_t emitted = 0;
  bool done = false;
  REQUIRE(read->Next(100, &items, &emitted, &done).ok());
  REQUIRE(Ok(s.Del({"h"})) == 1);
  REQUIRE(s.CompactAll().ok());
  while (!done) REQUIRE(read->Next(100, &items, &emitted, &done).ok());
  REQUIRE(Keys(items) == fields);
  read.reset();
  REQUIRE(s.CompactAll().ok());
  CHECK(Ok(s.CountDataEntries()) == 0);
}

TEST_CASE("a range read's GetStrings and GetHashField read other keys on its snapshot",
          "[storage][slicing]") {
  StoreFixture f;
  Store& s = *f.store;
  Ok(s.RPush("list", {"a", "b"}));
  Ok(s.Set("w_a", "1", SetOptions{}));
  Ok(s.Set("w_b", "2", SetOptions{}));
  Ok(s.HSet("h_a", {{"f", "x"}, {"g", "y"}}));
  Ok(s.HSet("h_b", {{"g", "z"}}));
  Ok(s.SAdd("set", {"m"}));
  RangeQuery q;
  q.kind = RangeQuery::Kind::kList;
  q.key = "list";
  auto read = Ok(s.OpenRangeRead(q));

  // Writes after the open are not seen: changed, deleted, created, retyped keys.
  Ok(s.Set("w_a", "100", SetOptions{}));
  Ok(s.Del({"w_b"}));
  Ok(s.Set("w_c", "3", SetOptions{}));
  Ok(s.HSet("h_a", {{"f", "changed"}}));
  Ok(s.HSet("h_b", {{"f", "new"}}));
  Ok(s.Del({"set"}));
  Ok(s.Set("set", "now a string", SetOptions{}));

  std::vector<std::optional<std::string>> values;
  REQUIRE(read->GetStrings({"w_a", "w_b", "w_c", "h_a", "set", "nothing"}, &values).ok());
  REQUIRE(values.size() == 6);
  CHECK(values[0] == std::optional<std::string>("1"));
  CHECK(values[1] == std::optional<std::string>("2"));
  CHECK(!values[2]);
  CHECK(!values[3]);  // a hash: nullopt, as MGET
  CHECK(!values[4]);  // a set at the snapshot
  CHECK(!values[5]);
  REQUIRE(read->GetStrings({}, &values).ok());
  CHECK(values.empty());

  REQUIRE(read->GetHashField({"h_a", "h_b", "w_a", "nothing", "h_a"}, "f", &values).ok());
  REQUIRE(values.size() == 5);
  CHECK(values[0] == std::optional<std::string>("x"));
  CHECK(!values[1]);  // no field f at the snapshot
  CHECK(!values[2]);  // a string
  CHECK(!values[3]);
  CHECK(values[4] == std::optional<std::string>("x"));
  REQUIRE(read->GetHashField({"h_b"}, "g", &values).ok());
  CHECK(values[0] == std::optional<std::string>("z"));

  // The plain reads see the new state.
  CHECK(Ok(s.Get("w_a")) == std::optional<std::string>("100"));
  CHECK(Ok(s.HGet("h_a", "f")) == std::optional<std::string>("changed"));
}

}  // namespace
}  // namespace rockcache::storage::range_read_test
