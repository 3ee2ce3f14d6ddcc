// The key samples and snapshots of the DUMP / RESTORE / MIGRATE / --import-rdb tests
// ([dump]: dump_test.cc, restore_errors_test.cc, migrate_test.cc, import_rdb_test.cc): Fill writes
// one key of every type and encoding size class through any server, Snapshot gives a canonical
// text of a key's data to compare across servers, Bulk and Elements read raw replies.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"

namespace rockcache::testing::dump {

using differential::BulkPayload;
using differential::Command;
using differential::Rng;

inline std::string Bulk(const std::string& raw) {
  return raw.rfind("$-1", 0) == 0 ? std::string("(nil)") : BulkPayload(raw);
}

// The elements of a flat array reply of bulks ("*n\r\n$..\r\n...").
inline std::vector<std::string> Elements(const std::string& raw) {
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
inline std::string Snapshot(RespPeer& peer, const std::string& key) {
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
inline std::vector<Sample> Fill(const std::function<void(const Command&)>& write, Rng& rng) {
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

}  // namespace rockcache::testing::dump
