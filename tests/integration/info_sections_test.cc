// INFO against redis-server 7.0 ([info][differential]): for each way of asking (no argument,
// default, all, everything, several section names, unknown names), rockcache prints the same
// Redis sections in the same order (its own sections, Pool, Cache, Cache-Shards and RocksDB,
// come after them), and every field Redis prints in a section is printed by rockcache too.
// Fields whose values are state both servers share (errorstats, keyspace, error counts) are
// compared by value.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/differential_peer.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::ReferenceRedis;
using rockcache::testing::Reply;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace info_sections_test {

namespace {

const std::set<std::string> kRockcacheSections = {"Pool", "Cache", "Cache-Shards", "RocksDB"};

struct Info {
  std::vector<std::string> titles;                                   // in order
  std::map<std::string, std::map<std::string, std::string>> fields;  // title -> name -> value
};

Info Parse(const std::string& text) {
  Info info;
  std::istringstream in(text);
  std::string line, title;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line.rfind("# ", 0) == 0) {
      title = line.substr(2);
      info.titles.push_back(title);
      info.fields[title];
      continue;
    }
    const size_t colon = line.find(':');
    if (colon != std::string::npos)
      info.fields[title][line.substr(0, colon)] = line.substr(colon + 1);
  }
  return info;
}

Info InfoOf(Client& c, const std::vector<std::string>& sections) {
  std::vector<std::string> cmd = {"INFO"};
  cmd.insert(cmd.end(), sections.begin(), sections.end());
  Reply r = c.Command(cmd);
  REQUIRE(r.type == REDIS_REPLY_STRING);
  return Parse(r.str);
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

// Fields whose values depend only on the commands both servers ran.
const std::set<std::string> kSameValueSections = {"Errorstats", "Keyspace", "Cluster", "Modules"};
const std::set<std::string> kSameValueFields = {
    "role",         "connected_slaves",    "master_failover_state",  "cluster_enabled",
    "loading",      "async_loading",       "rdb_bgsave_in_progress", "aof_rewrite_in_progress",
    "redis_mode",   "total_error_replies", "connected_clients",      "blocked_clients",
    "redis_version"};
// Not compared: master_repl_offset is RocksDB's sequence number here, which every write
// advances, with or without replicas (Redis's stays 0 until a replica attaches).

}  // namespace

TEST_CASE("INFO prints Redis 7.0's sections and fields, for every way of choosing them",
          "[info][differential]") {
  const std::string binary = ReferenceRedis::Binary();
  if (binary.empty()) {
    WARN("redis-server not installed: differential test skipped");
    return;
  }
  ReferenceRedis reference(binary);
  TestServer server;
  Client ours(server.port());
  Client theirs(reference.port());
  // The same commands on both, errors included (errorstats, keyspace).
  const std::vector<std::vector<std::string>> commands = {
      {"SET", "a", "1"}, {"SET", "s", "text"},    {"INCR", "s"},         {"LPUSH", "s", "x"},
      {"GET", "a"},      {"HSET", "h", "f", "v"}, {"SELECT", "2"},       {"SET", "b", "2"},
      {"SELECT", "0"},   {"NOSUCHCOMMAND"},       {"GET", "a", "extra"}, {"INCR", "s"}};
  for (const auto& cmd : commands) {
    Reply a = ours.Command(cmd);
    Reply b = theirs.Command(cmd);
    INFO(Join(cmd));
    REQUIRE(a.type == b.type);
  }
  const std::vector<std::vector<std::string>> requests = {
      {},
      {"default"},
      {"all"},
      {"everything"},
      {"server", "clients"},
      {"clients", "server"},
      {"SERVER"},
      {"commandstats", "default"},
      {"errorstats"},
      {"keyspace", "cpu", "cluster"},
      {"replication"},
      {"modules"},
      {"persistence"},
      {"memory", "stats"},
      {"latencystats"},
      {"nosuchsection"},
      {"server", "server"},
  };
  for (const auto& request : requests) {
    INFO("INFO " << Join(request));
    const Info mine = InfoOf(ours, request);
    const Info reference_info = InfoOf(theirs, request);
    std::vector<std::string> redis_titles;
    bool own_seen = false, own_before_redis = false;
    for (const auto& title : mine.titles) {
      if (kRockcacheSections.count(title)) {
        own_seen = true;
      } else {
        redis_titles.push_back(title);
        if (own_seen) own_before_redis = true;
      }
    }
    CHECK(Join(redis_titles) == Join(reference_info.titles));
    CHECK_FALSE(own_before_redis);
    for (const auto& title : reference_info.titles) {
      const auto& theirs_fields = reference_info.fields.at(title);
      if (mine.fields.count(title) == 0) continue;  // reported by the titles' check
      const auto& mine_fields = mine.fields.at(title);
      for (const auto& [name, value] : theirs_fields) {
        INFO("section " << title << ", field " << name);
        // Per-command lines name the commands each server has run: INFO's own calls are the
        // same on both, so the names are too.
        const auto it = mine_fields.find(name);
        CHECK(it != mine_fields.end());
        if (it == mine_fields.end()) continue;
        if (kSameValueSections.count(title) || kSameValueFields.count(name)) {
          CHECK(it->second == value);
        }
      }
    }
  }
}

TEST_CASE("INFO's key fields are present with sensible values", "[info]") {
  TestServer server;
  Client c(server.port());
  const auto text = c.Command({"INFO", "everything"}).str;
  const Info info = Parse(text);
  const std::map<std::string, std::vector<std::string>> key_fields = {
      {"Server",
       {"redis_version", "redis_mode", "os", "arch_bits", "process_id", "run_id", "tcp_port",
        "uptime_in_seconds", "hz", "executable", "rockcache_version"}},
      {"Clients", {"connected_clients", "maxclients", "blocked_clients", "tracking_clients"}},
      {"Memory",
       {"used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak", "maxmemory",
        "maxmemory_policy", "mem_allocator", "total_system_memory"}},
      {"Persistence",
       {"loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_save_time",
        "rdb_last_bgsave_status", "aof_enabled"}},
      {"Stats",
       {"total_connections_received", "total_commands_processed", "keyspace_hits",
        "keyspace_misses", "total_error_replies", "evicted_keys", "expired_keys"}},
      {"Replication", {"role", "connected_slaves", "master_replid", "master_repl_offset"}},
      {"CPU", {"used_cpu_sys", "used_cpu_user", "used_cpu_sys_children"}},
      {"Cluster", {"cluster_enabled"}},
  };
  for (const auto& [title, names] : key_fields) {
    INFO("section " << title);
    REQUIRE(info.fields.count(title) == 1);
    for (const auto& name : names) {
      INFO("field " << name);
      CHECK(info.fields.at(title).count(name) == 1);
    }
  }
  for (const char* title : {"Modules", "Commandstats", "Errorstats", "Latencystats", "Keyspace",
                            "Pool", "Cache", "Cache-Shards", "RocksDB"}) {
    INFO("section " << title);
    CHECK(info.fields.count(title) == 1);
  }
  const auto& server_fields = info.fields.at("Server");
  CHECK(server_fields.at("redis_version") == "7.0.15");
  CHECK(server_fields.at("run_id").size() == 40);
  CHECK(server_fields.at("tcp_port") == std::to_string(server.port()));
  CHECK(info.fields.at("Replication").at("role") == "master");
  CHECK(info.fields.at("Replication").at("master_replid").size() == 40);
  CHECK(info.fields.at("Cluster").at("cluster_enabled") == "0");
  CHECK(info.fields.at("Persistence").at("aof_enabled") == "1");
  CHECK(info.fields.at("Persistence").at("rdb_last_bgsave_status") == "ok");
  CHECK(std::stoull(info.fields.at("Memory").at("used_memory")) > 0);
  CHECK(std::stod(info.fields.at("CPU").at("used_cpu_user")) > 0);
  // run_id stays the same for the life of the process.
  CHECK(Parse(c.Command({"INFO", "server"}).str).fields.at("Server").at("run_id") ==
        server_fields.at("run_id"));
  // Errors counted per prefix, as Redis's errorstats.
  c.Command({"SET", "s", "x"});
  c.Command({"INCR", "s"});
  c.Command({"LPUSH", "s", "x"});
  c.Command({"LPUSH", "s", "y"});
  const Info errors = Parse(c.Command({"INFO", "errorstats"}).str);
  CHECK(errors.titles == std::vector<std::string>{"Errorstats"});
  CHECK(errors.fields.at("Errorstats").at("errorstat_ERR") == "count=1");
  CHECK(errors.fields.at("Errorstats").at("errorstat_WRONGTYPE") == "count=2");
}

}  // namespace info_sections_test
