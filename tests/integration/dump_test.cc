// DUMP / RESTORE / MIGRATE ([dump]): payloads move both ways between rockcache and a real
// redis-server 7.0 for every type and encoding size class (compared by data, and by bytes where
// Redis's layout is deterministic), RESTORE's errors equal redis-server's byte for byte, hostile
// payloads (truncated, flipped, with the checksum fixed so the parser sees them) never crash the
// server nor grow it, MIGRATE reaches redis-server and a second rockcache, and a RESTORE
// acknowledged before kill -9 is there after the restart. Skipped when redis-server is missing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::RespPeer;
using rockcache::testing::TestServer;
using rockcache::testing::differential::BulkPayload;
using rockcache::testing::differential::Command;
using rockcache::testing::differential::Differ;
using rockcache::testing::differential::Rng;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace dump_test {

namespace {

// CRC-64/Jones, as Redis's DUMP footer (written here: the test binary links no server code).
uint64_t Crc64(std::string_view data) {
  uint64_t crc = 0;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 1) ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ULL : crc >> 1;
  }
  return crc;
}

// `body` (an RDB object) with a valid version-10 footer.
std::string WithFooter(std::string_view body) {
  std::string payload(body);
  payload.push_back(10);
  payload.push_back(0);
  const uint64_t crc = Crc64(payload);
  for (int i = 0; i < 8; ++i) payload.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return payload;
}

std::string Bulk(const std::string& raw) {
  return raw.rfind("$-1", 0) == 0 ? std::string("(nil)") : BulkPayload(raw);
}

// The elements of a flat array reply of bulks ("*n\r\n$..\r\n...").
std::vector<std::string> Elements(const std::string& raw) {
  std::vector<std::string> out;
  size_t pos = raw.find("\r\n");
  if (raw.empty() || raw[0] != '*' || pos == std::string::npos) return out;
  pos += 2;
  while (pos < raw.size()) {
    if (raw[pos] != '$') return out;
    const size_t nl = raw.find("\r\n", pos);
    const size_t len = std::stoul(raw.substr(pos + 1, nl - pos - 1));
    out.push_back(raw.substr(nl + 2, len));
    pos = nl + 2 + len + 2;
  }
  return out;
}

// A canonical text of the key's data (sorted where Redis's order is a hash table's).
std::string Snapshot(RespPeer& peer, const std::string& key) {
  const std::string type = peer.Call({"TYPE", key});
  std::string out = type;
  if (type == "+string\r\n") return out + peer.Call({"GET", key});
  if (type == "+list\r\n") return out + peer.Call({"LRANGE", key, "0", "-1"});
  if (type == "+zset\r\n") {
    // Scores as numbers: rockcache prints them as Redis 7.2 does (shortest form), 7.0 as %.17g.
    auto flat = Elements(peer.Call({"ZRANGE", key, "0", "-1", "WITHSCORES"}));
    for (size_t i = 0; i + 1 < flat.size(); i += 2) {
      char score[64];
      std::snprintf(score, sizeof score, "%.17g", std::strtod(flat[i + 1].c_str(), nullptr));
      out += flat[i] + "=" + score + "\n";
    }
    return out;
  }
  if (type == "+stream\r\n") {
    // Entries, then the stream's figures, groups, PELs (delivery times and counts) and
    // consumers (seen times), with the radix tree's sizes (how Redis happens to store the
    // entries) masked.
    std::string full = peer.Call({"XINFO", "STREAM", key, "FULL"});
    for (const char* field : {"radix-tree-keys\r\n:", "radix-tree-nodes\r\n:"}) {
      const size_t at = full.find(field);
      if (at == std::string::npos) continue;
      const size_t from = at + std::strlen(field);
      full.replace(from, full.find("\r\n", from) - from, "?");
    }
    return out + peer.Call({"XRANGE", key, "-", "+"}) + full;
  }
  if (type == "+set\r\n") {
    auto members = Elements(peer.Call({"SMEMBERS", key}));
    std::sort(members.begin(), members.end());
    for (const auto& m : members) out += m + "\n";
    return out;
  }
  if (type == "+hash\r\n") {
    auto flat = Elements(peer.Call({"HGETALL", key}));
    std::vector<std::string> pairs;
    for (size_t i = 0; i + 1 < flat.size(); i += 2) pairs.push_back(flat[i] + "=" + flat[i + 1]);
    std::sort(pairs.begin(), pairs.end());
    for (const auto& p : pairs) out += p + "\n";
    return out;
  }
  return out;
}

struct Sample {
  std::string key;
  bool deterministic;  // Redis's payload bytes depend only on the data (no hash-table order)
};

// Writes one key of every type and size class through `write`, the same commands for any
// server, and returns them.
std::vector<Sample> Fill(const std::function<void(const Command&)>& write, Rng& rng) {
  std::vector<Sample> keys;
  auto add = [&](const std::string& key, bool deterministic) {
    keys.push_back({key, deterministic});
  };
  write({"SET", "str:small", "hello"});
  add("str:small", true);
  write({"SET", "str:int", "12345"});
  add("str:int", true);
  write({"SET", "str:int64", "-9223372036854775808"});
  add("str:int64", true);
  write({"SET", "str:notint", "007"});
  add("str:notint", true);
  std::string compressible;
  for (int i = 0; i < 3000; ++i) compressible += "abc" + std::to_string(i % 17);
  write({"SET", "str:lzf", compressible});
  add("str:lzf", true);
  std::string random(5000, '\0');
  for (auto& c : random) c = static_cast<char>(rng.Int(0, 255));
  write({"SET", "str:binary", random});
  add("str:binary", true);
  write({"PFADD", "hll", "a", "b", "c", "d"});
  add("hll", true);
  write({"RPUSH", "list:small", "a", "1", "-5", "hello world", "9999999999"});
  add("list:small", true);
  Command big_list = {"RPUSH", "list:big"};
  for (int i = 0; i < 5000; ++i) {
    big_list.push_back(i % 3 ? std::to_string(rng.Int(-100000, 100000))
                             : "element:" + std::to_string(i));
  }
  write(big_list);
  add("list:big", true);
  write({"RPUSH", "list:long", std::string(20000, 'x'), "y", std::string(9000, 'z')});
  add("list:long", true);
  write({"SADD", "set:intset", "1", "-7", "70000", "5000000000"});
  add("set:intset", true);
  write({"SADD", "set:small", "x", "y", "z"});
  add("set:small", false);
  Command big_set = {"SADD", "set:bigint"};
  for (int i = 0; i < 700; ++i) big_set.push_back(std::to_string(i * 3));
  write(big_set);
  add("set:bigint", false);
  write({"HSET", "hash:small", "f1", "v1", "f2", "2", "f3", "-300"});
  add("hash:small", true);
  write({"HSET", "hash:longvalue", "f", std::string(100, 'v'), "g", "1"});
  add("hash:longvalue", false);
  Command big_hash = {"HSET", "hash:big"};
  for (int i = 0; i < 1000; ++i) {
    big_hash.push_back("field:" + std::to_string(i));
    big_hash.push_back(std::to_string(rng.Int(0, 1000000)));
  }
  write(big_hash);
  add("hash:big", false);
  write({"ZADD", "zset:small", "1", "a", "2.5", "b", "-3", "c", "1e100", "d", "-inf", "e"});
  add("zset:small", true);
  Command big_zset = {"ZADD", "zset:big"};
  for (int i = 0; i < 500; ++i) {
    big_zset.push_back(std::to_string(rng.Int(-1000, 1000)) + "." + std::to_string(rng.Int(0, 99)));
    big_zset.push_back("member:" + std::to_string(i));
  }
  write(big_zset);
  add("zset:big", true);
  write({"ZADD", "zset:longmember", "1", std::string(100, 'm'), "2", "n"});
  add("zset:longmember", true);
  write(
      {"GEOADD", "geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"});
  add("geo", true);
  write({"XADD", "stream:small", "1-1", "f", "v", "g", "1"});
  write({"XADD", "stream:small", "1-2", "f", "w", "g", "2"});
  write({"XADD", "stream:small", "2-0", "other", "z"});
  add("stream:small", true);
  for (int i = 1; i <= 1200; ++i) {
    if (i % 50 == 0) {
      write({"XADD", "stream:big", std::to_string(i) + "-0", "kind", "rare", "payload",
             std::string(static_cast<size_t>(rng.Int(0, 300)), 'p')});
    } else {
      write({"XADD", "stream:big", std::to_string(i) + "-" + std::to_string(i % 4), "kind",
             "common", "n", std::to_string(i)});
    }
  }
  add("stream:big", true);
  // Consumer groups: pending entries spread over consumers, an acknowledged one, a claimed one,
  // a consumer with nothing pending, a deleted entry, a group with entries-read set.
  for (int i = 1; i <= 8; ++i) {
    write({"XADD", "stream:groups", std::to_string(i) + "-1", "n", std::to_string(i)});
  }
  write({"XGROUP", "CREATE", "stream:groups", "fill-g1", "0"});
  write({"XREADGROUP", "GROUP", "fill-g1", "c1", "COUNT", "3", "STREAMS", "stream:groups", ">"});
  write({"XREADGROUP", "GROUP", "fill-g1", "c2", "COUNT", "2", "STREAMS", "stream:groups", ">"});
  write({"XACK", "stream:groups", "fill-g1", "2-1"});
  write({"XCLAIM", "stream:groups", "fill-g1", "c3", "0", "4-1"});
  write({"XGROUP", "CREATE", "stream:groups", "fill-g2", "$"});
  write({"XGROUP", "CREATECONSUMER", "stream:groups", "fill-g2", "idle"});
  write({"XGROUP", "CREATE", "stream:groups", "fill-g0", "3-1", "ENTRIESREAD", "3"});
  write({"XDEL", "stream:groups", "7-1"});
  add("stream:groups", true);
  // A stream emptied by XTRIM that keeps a group and its pending entries.
  write({"XADD", "stream:drained", "5-5", "f", "v"});
  write({"XGROUP", "CREATE", "stream:drained", "fill-g", "0"});
  write({"XREADGROUP", "GROUP", "fill-g", "c", "STREAMS", "stream:drained", ">"});
  write({"XTRIM", "stream:drained", "MAXLEN", "0"});
  add("stream:drained", true);
  return keys;
}

}  // namespace

TEST_CASE("DUMP round trip rockcache -> redis-server -> rockcache for every type", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  Rng rng(45);
  auto keys = Fill([&](const Command& c) { REQUIRE(ours.Call(c)[0] != '-'); }, rng);
  int byte_identical = 0;
  for (const auto& sample : keys) {
    INFO("key " << sample.key);
    const std::string mine = Bulk(ours.Call({"DUMP", sample.key}));
    REQUIRE(theirs.Call({"RESTORE", sample.key, "0", mine}) == "+OK\r\n");
    const std::string back = Bulk(theirs.Call({"DUMP", sample.key}));
    if (sample.deterministic) {
      CHECK(back == mine);
      byte_identical += back == mine;
    }
    REQUIRE(ours.Call({"RESTORE", sample.key + ":back", "0", back}) == "+OK\r\n");
    const std::string original = Snapshot(ours, sample.key);
    CHECK(Snapshot(theirs, sample.key) == original);
    CHECK(Snapshot(ours, sample.key + ":back") == original);
    CHECK(ours.Call({"OBJECT", "ENCODING", sample.key + ":back"}) ==
          theirs.Call({"OBJECT", "ENCODING", sample.key}));
  }
  std::printf("dump round trip: %zu keys, %d byte-identical payloads\n", keys.size(),
              byte_identical);
}

TEST_CASE("redis-server's DUMP payloads RESTORE into rockcache with the same data", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  TestServer server;
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  Rng rng(7);
  auto keys = Fill([&](const Command& c) { REQUIRE(theirs.Call(c)[0] != '-'); }, rng);
  // Encodings Redis keeps after shrinking, and a stream with deleted entries and groups.
  theirs.Call({"XDEL", "stream:big", "100-0", "101-1", "1200-0"});
  theirs.Call({"XGROUP", "CREATE", "stream:big", "g1", "0"});
  theirs.Call({"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "5", "STREAMS", "stream:big", ">"});
  theirs.Call({"HDEL", "hash:longvalue", "f"});
  for (const auto& sample : keys) {
    INFO("key " << sample.key);
    const std::string payload = Bulk(theirs.Call({"DUMP", sample.key}));
    REQUIRE(ours.Call({"RESTORE", sample.key, "0", payload}) == "+OK\r\n");
    CHECK(Snapshot(ours, sample.key) == Snapshot(theirs, sample.key));
  }
  // TTLs travel: RESTORE with a TTL and with ABSTTL.
  const std::string payload = Bulk(theirs.Call({"DUMP", "str:small"}));
  REQUIRE(ours.Call({"RESTORE", "ttl:key", "100000", payload}) == "+OK\r\n");
  const std::string pttl = ours.Call({"PTTL", "ttl:key"});
  const long long left = std::stoll(pttl.substr(1));
  CHECK(left > 90000);
  CHECK(left <= 100000);
}

TEST_CASE("A restored stream's groups serve XREADGROUP, XACK, XPENDING, XCLAIM as Redis's",
          "[dump][group]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  TestServer server;
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  // Built on redis-server (delivery times and counts, seen times, entries-read), moved whole.
  for (int i = 1; i <= 12; ++i) {
    theirs.Call({"XADD", "s", std::to_string(i) + "-0", "n", std::to_string(i)});
  }
  theirs.Call({"XGROUP", "CREATE", "s", "g1", "0"});
  theirs.Call({"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "4", "STREAMS", "s", ">"});
  theirs.Call({"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "s", ">"});
  theirs.Call({"XACK", "s", "g1", "2-0", "6-0"});
  theirs.Call({"XCLAIM", "s", "g1", "carol", "0", "3-0", "RETRYCOUNT", "5"});
  theirs.Call({"XGROUP", "CREATE", "s", "g2", "5-0", "ENTRIESREAD", "5"});
  theirs.Call({"XREADGROUP", "GROUP", "g2", "dave", "COUNT", "2", "STREAMS", "s", ">"});
  theirs.Call({"XDEL", "s", "12-0"});
  const std::string payload = Bulk(theirs.Call({"DUMP", "s"}));
  REQUIRE(ours.Call({"RESTORE", "s", "0", payload}) == "+OK\r\n");
  Differ d(server.port(), reference.port());
  // Replies with idle times (XPENDING's extended form, XCLAIM / XAUTOCLAIM of whole entries
  // report none) are compared where they do not carry them.
  const std::vector<Command> commands = {
      {"XINFO", "GROUPS", "s"},
      {"XPENDING", "s", "g1"},
      {"XPENDING", "s", "g2"},
      {"XLEN", "s"},
      {"XACK", "s", "g1", "1-0", "5-0", "99-0"},
      {"XPENDING", "s", "g1"},
      {"XREADGROUP", "GROUP", "g1", "erin", "COUNT", "3", "STREAMS", "s", ">"},
      {"XREADGROUP", "GROUP", "g1", "alice", "STREAMS", "s", "0"},
      {"XREADGROUP", "GROUP", "g1", "carol", "STREAMS", "s", "0"},
      {"XCLAIM", "s", "g1", "bob", "0", "3-0", "4-0", "JUSTID"},
      {"XAUTOCLAIM", "s", "g1", "frank", "0", "0-0", "COUNT", "2", "JUSTID"},
      {"XPENDING", "s", "g1"},
      {"XINFO", "GROUPS", "s"},
      {"XGROUP", "DELCONSUMER", "s", "g1", "bob"},
      {"XGROUP", "CREATECONSUMER", "s", "g2", "dave"},
      {"XGROUP", "CREATECONSUMER", "s", "g2", "zed"},
      {"XACK", "s", "g2", "6-0", "7-0"},
      {"XPENDING", "s", "g2"},
      {"XREADGROUP", "GROUP", "g2", "dave", "STREAMS", "s", ">"},
      {"XGROUP", "DESTROY", "s", "g1"},
      {"XINFO", "GROUPS", "s"},
      {"XADD", "s", "20-0", "n", "20"},
      {"XINFO", "GROUPS", "s"},
  };
  for (const auto& cmd : commands) d.Both("restored-groups", cmd);
  std::printf("restored stream groups: %d commands, %d mismatches\n",
              d.stats("restored-groups").commands, d.stats("restored-groups").mismatches);
  CHECK(d.stats("restored-groups").mismatches == 0);
  // A restored PEL survives a restart (it is in RocksDB, not only in a cache).
  REQUIRE(ours.Call({"RESTORE", "s2", "0", payload}) == "+OK\r\n");
  const std::string pending = ours.Call({"XPENDING", "s2", "g1"});
  server.Restart();
  RespPeer again(server.port());
  CHECK(again.Call({"XPENDING", "s2", "g1"}) == pending);
}

TEST_CASE("A highly compressed redis-server payload (2M list elements) restores whole", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  if (std::getenv("ROCKCACHE_SANITIZER") != nullptr) {
    WARN("skipped under a sanitizer: a 2M-element RESTORE takes minutes there (8.6 s without)");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  // RESTORE and DUMP of 2M elements take 4-9 s alone, over 30 s beside other tests on 2 cores.
  ours.set_timeout_s(180);
  theirs.set_timeout_s(180);
  const Command push = [] {
    Command c = {"RPUSH", "ones"};
    for (int i = 0; i < 20000; ++i) c.push_back("1");
    return c;
  }();
  for (int i = 0; i < 100; ++i) REQUIRE(theirs.Call(push)[0] == ':');
  const std::string payload = Bulk(theirs.Call({"DUMP", "ones"}));
  CHECK(payload.size() < 100000);  // about 27 elements per payload byte
  REQUIRE(ours.Call({"RESTORE", "ones", "0", payload}) == "+OK\r\n");
  CHECK(ours.Call({"LLEN", "ones"}) == ":2000000\r\n");
  CHECK(Bulk(ours.Call({"DUMP", "ones"})) == payload);
}

TEST_CASE("RESTORE and DUMP errors equal redis-server's byte for byte", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  TestServer server;
  Differ d(server.port(), reference.port());
  d.Both("dump", {"SET", "s", "value"});
  d.Both("dump", {"RPUSH", "l", "a", "b"});
  const std::string payload = BulkPayload(d.Theirs({"DUMP", "s"}));
  const std::string list_payload = BulkPayload(d.Theirs({"DUMP", "l"}));
  std::string bad_version = payload;
  bad_version[bad_version.size() - 10] = 11;
  std::string bad_crc = payload;
  bad_crc.back() ^= 1;
  const std::vector<Command> cases = {
      {"DUMP", "missing"},
      {"RESTORE", "s", "0", payload},
      {"RESTORE", "n1", "0", "garbage"},
      {"RESTORE", "n1", "0", ""},
      {"RESTORE", "n1", "0", bad_version},
      {"RESTORE", "n1", "0", bad_crc},
      {"RESTORE", "n1", "-1", payload},
      {"RESTORE", "n1", "abc", payload},
      {"RESTORE", "n1", "0", payload, "FOO"},
      {"RESTORE", "n1", "0", payload, "IDLETIME", "-1"},
      {"RESTORE", "n1", "0", payload, "IDLETIME", "x"},
      {"RESTORE", "n1", "0", payload, "FREQ", "256"},
      {"RESTORE", "n1", "0", payload, "FREQ", "5", "IDLETIME", "5"},
      {"RESTORE", "n1", "0", payload, "IDLETIME"},
      {"RESTORE", "n1", "0", WithFooter(std::string("\x07\x00", 2))},
      {"RESTORE", "n1", "0", WithFooter(std::string("\x02\x00", 2))},
      {"RESTORE", "n1", "0", WithFooter(std::string("\x2a", 1))},
      {"RESTORE", "n1", "0", payload},
      {"GET", "n1"},
      {"RESTORE", "n1", "0", payload},
      {"RESTORE", "n1", "0", list_payload, "REPLACE"},
      {"TYPE", "n1"},
      {"LRANGE", "n1", "0", "-1"},
      {"RESTORE", "n2", "1", payload, "ABSTTL"},
      {"EXISTS", "n2"},
      {"RESTORE", "n1", "1", payload, "ABSTTL", "REPLACE"},
      {"EXISTS", "n1"},
      {"RESTORE", "n3", "0", payload, "REPLACE", "ABSTTL", "IDLETIME", "10"},
      {"GET", "n3"},
      {"RESTORE", "n4", "0", payload, "FREQ", "100"},
      {"TTL", "n4"},
      {"RESTORE", "n5", "5000000000000", payload, "ABSTTL"},
      {"EXPIRETIME", "n5"},
      {"DUMP", "s", "extra"},
      {"RESTORE", "n6", "0"},
      {"MIGRATE", "127.0.0.1", "1", "s", "0", "100", "KEYS", "s"},
      {"MIGRATE", "127.0.0.1", "1", "", "0", "100", "KEYS", "missing1", "missing2"},
      {"MIGRATE", "127.0.0.1", "1", "s", "x", "100"},
      {"MIGRATE", "127.0.0.1", "1", "s", "0", "100"},
      {"MIGRATE", "127.0.0.1", "port", "s", "0", "100", "COPY"},
      {"MIGRATE", "name.invalid", "1", "s", "0", "100", "REPLACE"},
      {"MIGRATE", "127.0.0.1", "1", "s", "0", "100", "AUTH"},
      {"MIGRATE", "127.0.0.1", "1", "s", "0", "100", "BOGUS"},
  };
  for (const auto& c : cases) d.Both("dump", c);
  std::printf("dump differential: %d commands, %d mismatches\n", d.stats("dump").commands,
              d.stats("dump").mismatches);
  CHECK(d.stats("dump").mismatches == 0);
}

namespace {

long ResidentKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

TEST_CASE("Hostile RESTORE payloads get an error, never a crash or a memory spike", "[dump]") {
  TestServer server;
  RespPeer peer(server.port());
  Rng rng(99);
  auto keys = Fill([&](const Command& c) { REQUIRE(peer.Call(c)[0] != '-'); }, rng);
  std::vector<std::string> bodies;
  for (const auto& sample : keys) {
    const std::string payload = Bulk(peer.Call({"DUMP", sample.key}));
    bodies.push_back(payload.substr(0, payload.size() - 10));
  }
  // Lying lengths: a set of 2^40 members, a 4 GiB string, an LZF string stating 500 MiB.
  bodies.push_back(std::string("\x02\x81\x00\x00\x01\x00\x00\x00\x00\x00", 10));
  bodies.push_back(
      std::string("\x00\x80\xff\xff\xff\xff"
                  "abc",
                  9));
  bodies.push_back(std::string("\x00\xc3\x03\x80\x1f\x40\x00\x00\x00\x61\xe0\xff", 12));
  const long rss_before = ResidentKb(server.pid());
  int errors = 0, accepted = 0;
  for (const auto& body : bodies) {
    std::vector<std::string> damaged;
    const size_t step = std::max<size_t>(1, body.size() / 300);
    for (size_t cut = 0; cut < body.size(); cut += step) damaged.push_back(body.substr(0, cut));
    for (int round = 0; round < 60; ++round) {
      std::string changed = body;
      for (int f = 0; f < 1 + round % 3; ++f) {
        changed[static_cast<size_t>(rng.Int(0, static_cast<int>(changed.size()) - 1))] ^=
            static_cast<char>(rng.Int(1, 255));
      }
      damaged.push_back(changed);
    }
    for (const auto& d : damaged) {
      const std::string reply = peer.Call({"RESTORE", "hostile", "0", WithFooter(d), "REPLACE"});
      if (reply[0] == '-') {
        ++errors;
        CHECK(reply == "-ERR Bad data format\r\n");
      } else {
        ++accepted;
        CHECK(reply == "+OK\r\n");
      }
    }
  }
  CHECK(peer.Call({"PING"}) == "+PONG\r\n");
  const long rss_after = ResidentKb(server.pid());
  std::printf("hostile payloads: %d refused, %d accepted (still valid), RSS %ld -> %ld kB\n",
              errors, accepted, rss_before, rss_after);
  CHECK(errors > 1000);
  CHECK(rss_after - rss_before < 256 * 1024);
}

TEST_CASE("MIGRATE moves keys to redis-server and to another rockcache", "[dump]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  TestServer server;
  TestServer target({"--requirepass", "secret"});
  RespPeer ours(server.port());
  RespPeer theirs(reference.port());
  RespPeer other(target.port());
  REQUIRE(other.Call({"AUTH", "secret"}) == "+OK\r\n");
  const std::string rport = std::to_string(reference.port());
  const std::string tport = std::to_string(target.port());
  Rng rng(3);
  auto keys = Fill([&](const Command& c) { REQUIRE(ours.Call(c)[0] != '-'); }, rng);
  std::map<std::string, std::string> before;
  for (const auto& s : keys) before[s.key] = Snapshot(ours, s.key);

  // One key, COPY: stays here.
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "str:small", "0", "5000", "COPY"}) == "+OK\r\n");
  CHECK(ours.Call({"EXISTS", "str:small"}) == ":1\r\n");
  CHECK(Snapshot(theirs, "str:small") == before["str:small"]);
  // Again without REPLACE: the target's BUSYKEY, nothing deleted.
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "str:small", "0", "5000"}) ==
        "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n");
  CHECK(ours.Call({"EXISTS", "str:small"}) == ":1\r\n");
  // REPLACE: moved.
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "str:small", "0", "5000", "REPLACE"}) ==
        "+OK\r\n");
  CHECK(ours.Call({"EXISTS", "str:small"}) == ":0\r\n");
  // KEYS, into database 3 of redis-server, a missing key among them, a TTL kept.
  ours.Call({"PEXPIRE", "hash:big", "100000"});
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "", "3", "5000", "KEYS", "list:big", "nokey",
                   "hash:big", "stream:big"}) == "+OK\r\n");
  theirs.Call({"SELECT", "3"});
  for (const char* k : {"list:big", "hash:big", "stream:big"}) {
    CHECK(Snapshot(theirs, k) == before[k]);
    CHECK(ours.Call({"EXISTS", k}) == ":0\r\n");
  }
  const long long ttl = std::stoll(theirs.Call({"PTTL", "hash:big"}).substr(1));
  CHECK(ttl > 90000);
  // NOKEY when none of the keys is here.
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", rport, "", "0", "5000", "KEYS", "nokey", "list:big"}) ==
        "+NOKEY\r\n");
  // To a second rockcache that wants a password: AUTH and AUTH2.
  CHECK(ours.Call(
            {"MIGRATE", "127.0.0.1", tport, "", "0", "5000", "KEYS", "zset:big", "set:bigint"}) ==
        "-ERR Target instance replied with error: NOAUTH Authentication required.\r\n");
  CHECK(ours.Call({"EXISTS", "zset:big"}) == ":1\r\n");
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", tport, "", "0", "5000", "AUTH", "secret", "KEYS",
                   "zset:big", "set:bigint"}) == "+OK\r\n");
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", tport, "geo", "0", "5000", "AUTH2", "default",
                   "secret"}) == "+OK\r\n");
  for (const char* k : {"zset:big", "set:bigint", "geo"}) {
    CHECK(Snapshot(other, k) == before[k]);
    CHECK(ours.Call({"EXISTS", k}) == ":0\r\n");
  }
  // Nothing listening: IOERR, keys kept.
  const std::string closed = std::to_string(rockcache::testing::FreePort());
  CHECK(ours.Call({"MIGRATE", "127.0.0.1", closed, "zset:small", "0", "500"}) ==
        "-IOERR error or timeout writing to target instance\r\n");
  CHECK(ours.Call({"EXISTS", "zset:small"}) == ":1\r\n");
}

TEST_CASE("A RESTORE acknowledged before kill -9 is there after the restart", "[dump]") {
  TestServer server;
  std::string list_payload, hash_payload;
  std::map<std::string, std::string> before;
  {
    RespPeer peer(server.port());
    Rng rng(11);
    Command list = {"RPUSH", "src:list"};
    for (int i = 0; i < 20000; ++i) list.push_back("item" + std::to_string(rng.Int(0, 1 << 20)));
    peer.Call(list);
    Command hash = {"HSET", "src:hash"};
    for (int i = 0; i < 3000; ++i) {
      hash.push_back("f" + std::to_string(i));
      hash.push_back(std::to_string(i));
    }
    peer.Call(hash);
    list_payload = Bulk(peer.Call({"DUMP", "src:list"}));
    hash_payload = Bulk(peer.Call({"DUMP", "src:hash"}));
    REQUIRE(peer.Call({"RESTORE", "r:list", "0", list_payload}) == "+OK\r\n");
    REQUIRE(peer.Call({"RESTORE", "r:hash", "0", hash_payload}) == "+OK\r\n");
    REQUIRE(peer.Call({"RESTORE", "r:hash", "0", list_payload, "REPLACE"}) == "+OK\r\n");
    before["r:list"] = Snapshot(peer, "src:list");
    before["r:hash"] = before["r:list"];
  }
  server.Kill9();
  server.Restart();
  RespPeer peer(server.port());
  for (const auto& [key, snapshot] : before) CHECK(Snapshot(peer, key) == snapshot);
  CHECK(peer.Call({"DBSIZE"}) == ":4\r\n");
}

TEST_CASE("--import-rdb loads an RDB file redis-server SAVEd, key by key", "[dump][import]") {
  std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) return;
  ReferenceRedis reference(redis);
  RespPeer theirs(reference.port());
  Rng rng(2024);
  auto keys = Fill([&](const Command& c) { REQUIRE(theirs.Call(c)[0] != '-'); }, rng);
  theirs.Call({"XGROUP", "CREATE", "stream:big", "g1", "0"});
  theirs.Call({"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "3", "STREAMS", "stream:big", ">"});
  theirs.Call({"PEXPIRE", "hash:big", "3600000"});
  theirs.Call({"EXPIRE", "str:small", "1"});  // expired by the time of the import
  theirs.Call({"SELECT", "2"});
  for (int i = 0; i < 2000; ++i) {
    theirs.Call({"SET", "db2:" + std::to_string(i), std::to_string(rng.Int(0, 1 << 30))});
  }
  theirs.Call({"SELECT", "0"});
  REQUIRE(theirs.Call({"FUNCTION", "LOAD",
                       "#!lua name=importlib\nredis.register_function('imp', function() return 7 "
                       "end)"}) == "$9\r\nimportlib\r\n");
  REQUIRE(theirs.Call({"SAVE"}) == "+OK\r\n");
  const auto dir_reply = Elements(theirs.Call({"CONFIG", "GET", "dir"}));
  REQUIRE(dir_reply.size() == 2);
  const std::string rdb_file = dir_reply[1] + "/dump.rdb";
  rockcache::testing::SleepMs(1100);

  const std::string dir = rockcache::testing::MakeTempDir();
  int exit_code = -1;
  const std::string log =
      rockcache::testing::RunShell(rockcache::testing::ServerBinary() + " --dir " + dir +
                                       "/db --import-rdb " + rdb_file + " 2>&1",
                                   &exit_code);
  INFO(log);
  REQUIRE(exit_code == 0);
  CHECK(log.find("import-rdb:") != std::string::npos);
  CHECK(log.find("1 already expired skipped") != std::string::npos);

  // A truncated copy stops at its first bad byte with an error that names it; a copy with a
  // byte changed inside a value fails its checksum. Either way the process exits 1.
  {
    std::ifstream in(rdb_file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() > 1000);
    const std::string cut_file = dir + ".cut.rdb", flipped_file = dir + ".flip.rdb";
    std::ofstream(cut_file, std::ios::binary) << bytes.substr(0, bytes.size() * 6 / 10);
    std::string flipped = bytes;
    const size_t at = flipped.find("element:");
    REQUIRE(at != std::string::npos);
    flipped[at] = 'E';  // still a valid value, so only the checksum can tell
    std::ofstream(flipped_file, std::ios::binary) << flipped;
    for (const auto& [file, message] :
         {std::pair<std::string, std::string>{cut_file, "corrupt at byte"},
          {flipped_file, "checksum mismatch"}}) {
      const std::string scratch = rockcache::testing::MakeTempDir();
      int code = 0;
      const std::string out =
          rockcache::testing::RunShell(rockcache::testing::ServerBinary() + " --dir " + scratch +
                                           "/db --import-rdb " + file + " 2>&1",
                                       &code);
      INFO(out);
      CHECK(code == 1);
      CHECK(out.find(message) != std::string::npos);
      rockcache::testing::RemoveTree(scratch);
    }
    std::remove(cut_file.c_str());
    std::remove(flipped_file.c_str());
  }

  TestServer server({}, dir);
  RespPeer ours(server.port());
  int checked = 0;
  for (const auto& sample : keys) {
    INFO("key " << sample.key);
    CHECK(Snapshot(ours, sample.key) == Snapshot(theirs, sample.key));
    ++checked;
  }
  CHECK(ours.Call({"EXISTS", "str:small"}) == ":0\r\n");
  const long long ttl = std::stoll(ours.Call({"PTTL", "hash:big"}).substr(1));
  CHECK(ttl > 3500000);
  ours.Call({"SELECT", "2"});
  theirs.Call({"SELECT", "2"});
  CHECK(ours.Call({"DBSIZE"}) == ":2000\r\n");
  for (int i = 0; i < 2000; i += 37) {
    const std::string key = "db2:" + std::to_string(i);
    CHECK(ours.Call({"GET", key}) == theirs.Call({"GET", key}));
    ++checked;
  }
  ours.Call({"SELECT", "0"});
  CHECK(ours.Call({"FCALL", "imp", "0"}) == ":7\r\n");
  std::printf("import-rdb: %d keys checked against redis-server\n", checked);
}

}  // namespace dump_test
