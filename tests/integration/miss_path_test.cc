// The miss path with data bigger than the cache, seen from a client: a sweep of cold reads (or a
// full SCAN) leaves the hot set cached (the cache's segmented LRU, cache/shard.h), and pipelines
// that mix reads and writes of cold keys — whose reads a worker reads ahead in one MultiGet
// (server/group_commit.cc, ReadAheadMisses) — reply exactly what one-by-one execution replies.
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::CacheVerify;
using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoNumber;
using rockcache::testing::Reply;
using rockcache::testing::RtcCalls;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace miss_path_test {

namespace {

std::string Key(const char* prefix, int i) { return prefix + std::to_string(i); }

// Sends `commands` as one pipeline and returns the replies described.
std::vector<std::string> Pipeline(Client& c,
                                  const std::vector<std::vector<std::string>>& commands) {
  for (const auto& args : commands) c.Append(args);
  std::vector<std::string> out;
  for (size_t i = 0; i < commands.size(); ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    out.push_back(Describe(r));
  }
  return out;
}

// GETs every key of `keys` in pipelines of 100.
void ReadAll(Client& c, const std::vector<std::string>& keys) {
  for (size_t i = 0; i < keys.size(); i += 100) {
    std::vector<std::vector<std::string>> batch;
    for (size_t j = i; j < std::min(keys.size(), i + 100); ++j) batch.push_back({"GET", keys[j]});
    for (const auto& reply : Pipeline(c, batch)) REQUIRE(reply.rfind("bulk:", 0) == 0);
  }
}

// How many of `keys`, each read once (one command at a time), were cache hits.
uint64_t HitsReading(Client& c, const std::vector<std::string>& keys) {
  const uint64_t before = InfoNumber(c, "cache", "cache_hits");
  for (const auto& key : keys) REQUIRE(Run(c, {"GET", key}).rfind("bulk:", 0) == 0);
  return InfoNumber(c, "cache", "cache_hits") - before;
}

TEST_CASE("A sweep of cold reads and a full SCAN leave the hot set cached", "[miss-path][cache]") {
  // 2 MB of cache: about 7,000 entries of a 100-byte value; the cold keys are four times that.
  TestServer server({"--cache-maxmemory", "2mb"});
  Client c(server.port());
  const std::string value(100, 'v');
  std::vector<std::string> hot, cold;
  for (int i = 0; i < 300; ++i) hot.push_back(Key("hot:", i));
  for (int i = 0; i < 30000; ++i) cold.push_back(Key("cold:", i));
  for (const auto* keys : {&hot, &cold}) {
    for (size_t i = 0; i < keys->size(); i += 500) {
      std::vector<std::vector<std::string>> batch;
      for (size_t j = i; j < std::min(keys->size(), i + 500); ++j) {
        batch.push_back({"SET", (*keys)[j], value});
      }
      for (const auto& reply : Pipeline(c, batch)) REQUIRE(reply == "status:OK");
    }
  }
  // The hot set is read a few times: after the first read each read is a hit.
  for (int round = 0; round < 3; ++round) ReadAll(c, hot);
  REQUIRE(HitsReading(c, hot) == hot.size());

  SECTION("a uniform sweep of GETs over four times the cache") {
    ReadAll(c, cold);
    // The sweep really went through the cache: most cold keys missed and were filled.
    CHECK(InfoNumber(c, "cache", "cache_evictions") > cold.size() / 2);
    CHECK(HitsReading(c, hot) == hot.size());
  }
  SECTION("a full SCAN, then the sweep") {
    std::string cursor = "0";
    size_t seen = 0;
    do {
      Reply r = c.Command({"SCAN", cursor, "COUNT", "1000"});
      REQUIRE(r.elements.size() == 2);
      cursor = r.elements[0].str;
      seen += r.elements[1].elements.size();
    } while (cursor != "0");
    CHECK(seen == hot.size() + cold.size());
    CHECK(HitsReading(c, hot) == hot.size());
    ReadAll(c, cold);
    CHECK(HitsReading(c, hot) == hot.size());
  }
  CHECK(CacheVerify(c).mismatches == 0);
}

TEST_CASE("Pipelines mixing reads and writes of cold keys reply as one by one",
          "[miss-path][pipeline]") {
  // A cache far smaller than the keys, so most reads miss and go to a worker in groups whose
  // reads are read ahead; a write of a key inside the same pipeline must be seen by the reads
  // after it and not by the ones before it.
  TestServer server({"--cache-maxmemory", "256kb"});
  Client c(server.port());
  constexpr int kKeys = 3000;
  std::map<std::string, std::string> model;
  {
    std::vector<std::vector<std::string>> load;
    for (int i = 0; i < kKeys; ++i) {
      const std::string key = Key("k:", i);
      model[key] = "initial-" + std::to_string(i) + std::string(200, 'x');
      load.push_back({"SET", key, model[key]});
    }
    for (const auto& reply : Pipeline(c, load)) REQUIRE(reply == "status:OK");
  }
  std::mt19937 random(11);
  for (int round = 0; round < 150; ++round) {
    std::vector<std::vector<std::string>> batch;
    std::vector<std::string> expected;
    for (int n = 0; n < 48; ++n) {
      // Keys from a small window, so one pipeline often reads, writes and reads one key again.
      const std::string key = Key("k:", static_cast<int>((round * 37 + random() % 24) % kKeys));
      switch (random() % 6) {
        case 0: {
          const std::string v = "set-" + std::to_string(round) + "-" + std::to_string(n);
          batch.push_back({"SET", key, v});
          expected.push_back("status:OK");
          model[key] = v;
          break;
        }
        case 1:
          batch.push_back({"DEL", key});
          expected.push_back(model.count(key) ? "int:1" : "int:0");
          model.erase(key);
          break;
        case 2:
          batch.push_back({"STRLEN", key});
          expected.push_back("int:" +
                             std::to_string(model.count(key) ? model[key].size() : size_t{0}));
          break;
        default:
          batch.push_back({"GET", key});
          expected.push_back(model.count(key) ? "bulk:" + model[key] : "nil");
          break;
      }
    }
    const std::vector<std::string> replies = Pipeline(c, batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      INFO("round " << round << " command " << i << ": " << batch[i][0] << " " << batch[i][1]);
      REQUIRE(replies[i] == expected[i]);
    }
  }
  CHECK(CacheVerify(c).mismatches == 0);
}

TEST_CASE("Cache hits behind a miss in a pipeline are answered in the network thread, in order",
          "[miss-path][pipeline][cache]") {
  // No reads of RocksDB's memory in the network thread: a key the cache does not hold always
  // goes to a worker.
  TestServer server({"--rtc-storage-read-max-bytes", "0"});
  Client c(server.port());
  for (int i = 0; i < 10; ++i) REQUIRE(Run(c, {"SET", Key("hot:", i), Key("v", i)}) == "status:OK");
  REQUIRE(Run(c, {"SET", "cold:a", "A"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "cold:b", "B"}) == "status:OK");
  // Empty the cache (the keys stay in RocksDB), then cache the hot keys again.
  REQUIRE(Run(c, {"CONFIG", "SET", "cache-maxmemory", "0"}) == "status:OK");
  REQUIRE(Run(c, {"CONFIG", "SET", "cache-maxmemory", "64mb"}) == "status:OK");
  for (int i = 0; i < 10; ++i) REQUIRE(Run(c, {"GET", Key("hot:", i)}) == "bulk:" + Key("v", i));

  // A miss first, then ten hits: the hits are answered by the network thread.
  std::vector<std::vector<std::string>> batch = {{"GET", "cold:a"}};
  std::vector<std::string> expected = {"bulk:A"};
  for (int i = 0; i < 10; ++i) {
    batch.push_back({"GET", Key("hot:", i)});
    expected.push_back("bulk:" + Key("v", i));
  }
  batch.push_back({"GET", "cold:none"});
  expected.push_back("nil");
  uint64_t rtc_before = RtcCalls(c, "get");
  CHECK(Pipeline(c, batch) == expected);
  CHECK(RtcCalls(c, "get") - rtc_before == 10);

  // Behind a write of the same pipeline a read of the written key goes to the worker and sees
  // the write, although the cache held the key's old value when the pipeline was parsed; a read
  // of another key is still answered by the network thread.
  rtc_before = RtcCalls(c, "get");
  CHECK(Pipeline(c, {{"GET", "cold:b"},
                     {"GET", "hot:1"},
                     {"SET", "hot:1", "new"},
                     {"GET", "hot:1"},
                     {"GET", "hot:2"}}) ==
        std::vector<std::string>{"bulk:B", "bulk:v1", "status:OK", "bulk:new", "bulk:v2"});
  CHECK(RtcCalls(c, "get") - rtc_before == 2);  // hot:1 before the SET, and hot:2
  // Behind a write whose keys are not known up front (a script may write any key) every read
  // goes to the worker.
  rtc_before = RtcCalls(c, "get");
  CHECK(Pipeline(c, {{"GET", "cold:b"},
                     {"EVAL", "redis.call('set', 'hot:3', 'script') return 1", "0"},
                     {"GET", "hot:3"},
                     {"GET", "hot:4"}}) ==
        std::vector<std::string>{"bulk:B", "int:1", "bulk:script", "bulk:v4"});
  CHECK(RtcCalls(c, "get") - rtc_before == 1);  // cold:b, cached by now, before the script
  CHECK(CacheVerify(c).mismatches == 0);
}

}  // namespace

}  // namespace miss_path_test
