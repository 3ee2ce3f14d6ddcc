// Observability from outside: INFO commandstats / errorstats / stats / pool / latencystats add up,
// SLOWLOG records slow commands with their stage breakdown, and LATENCY HISTOGRAM has Redis 7's
// shape (the Prometheus endpoint: metrics_http_test.cc).

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cache_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::NowMs;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::SubFields;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace observability_test {

namespace {

// ---- INFO helpers ----------------------------------------------------------------------------

std::map<std::string, std::string> Info(Client& c, const std::string& section) {
  return InfoFields(InfoText(c, section));
}

uint64_t U(const std::string& s) {
  INFO("number '" << s << "'");
  REQUIRE(!s.empty());
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  REQUIRE(*end == '\0');
  return v;
}

double D(const std::string& s) {
  INFO("number '" << s << "'");
  REQUIRE(!s.empty());
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  REQUIRE(*end == '\0');
  return v;
}

// cmdstat_<cmd> as a map; empty when the command has no line.
std::map<std::string, std::string> CmdStat(Client& c, const std::string& cmd) {
  auto fields = Info(c, "commandstats");
  auto it = fields.find("cmdstat_" + cmd);
  if (it == fields.end()) return {};
  return SubFields(it->second);
}

}  // namespace

TEST_CASE("INFO commandstats, errorstats and stats add up", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  uint64_t processed_before = U(Info(admin, "stats")["total_commands_processed"]);

  const int kSets = 37, kHits = 15, kMisses = 8;
  for (int i = 0; i < kSets; ++i) {
    REQUIRE(Run(c, {"SET", "k" + std::to_string(i % 20), "v"}) == "status:OK");
  }
  for (int i = 0; i < kHits; ++i) CHECK(Run(c, {"GET", "k" + std::to_string(i)}) == "bulk:v");
  for (int i = 0; i < kMisses; ++i) CHECK(Run(c, {"GET", "none" + std::to_string(i)}) == "nil");
  // One failed call (runs, replies an error), one rejected call (arity), one WRONGTYPE.
  CHECK(Run(c, {"INCR", "k0"}) == "err:ERR value is not an integer or out of range");
  CHECK(Run(c, {"GET"}) == "err:ERR wrong number of arguments for 'get' command");
  CHECK(Run(c, {"HGET", "k1", "f"}).rfind("err:WRONGTYPE", 0) == 0);
  const int kSent = kSets + kHits + kMisses + 3;

  auto set = CmdStat(admin, "set");
  auto get = CmdStat(admin, "get");
  auto incr = CmdStat(admin, "incr");
  auto hget = CmdStat(admin, "hget");
  REQUIRE(!set.empty());
  REQUIRE(!get.empty());
  REQUIRE(!incr.empty());
  REQUIRE(!hget.empty());
  CHECK(U(set["calls"]) == kSets);
  CHECK(U(set["failed_calls"]) == 0);
  CHECK(U(set["rejected_calls"]) == 0);
  CHECK(U(set["rtc_calls"]) == 0);
  CHECK(U(get["calls"]) == kHits + kMisses);
  CHECK(U(get["rejected_calls"]) == 1);
  CHECK(U(get["failed_calls"]) == 0);
  // The SETs were written through; the misses are filled from RocksDB's memory in the network
  // thread (rtc-storage-read-max-bytes), so every GET is answered there.
  CHECK(U(get["rtc_calls"]) == kHits + kMisses);
  CHECK(U(incr["calls"]) == 1);
  CHECK(U(incr["failed_calls"]) == 1);
  CHECK(U(hget["calls"]) == 1);
  CHECK(U(hget["failed_calls"]) == 1);
  for (auto* stat : {&set, &get}) {
    uint64_t calls = U((*stat)["calls"]), usec = U((*stat)["usec"]);
    double per_call = D((*stat)["usec_per_call"]);
    CHECK(std::abs(per_call - static_cast<double>(usec) / static_cast<double>(calls)) < 1.0);
  }

  auto errors = Info(admin, "errorstats");
  CHECK(errors["errorstat_ERR"] == "count=2");
  CHECK(errors["errorstat_WRONGTYPE"] == "count=1");
  CHECK(errors.size() == 2);

  auto stats = Info(admin, "stats");
  CHECK(U(stats["keyspace_hits"]) == kHits);
  CHECK(U(stats["keyspace_misses"]) == kMisses);
  CHECK(U(stats["keyspace_hits"]) + U(stats["keyspace_misses"]) == kHits + kMisses);
  CHECK(U(stats["total_error_replies"]) == 3);
  uint64_t processed = U(stats["total_commands_processed"]);
  CHECK(processed >= processed_before + kSent);
  CHECK(processed <= processed_before + kSent + 10);  // plus the INFO calls above

  // CONFIG RESETSTAT zeroes all of it.
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  auto after = Info(admin, "commandstats");
  CHECK(after.count("cmdstat_set") == 0);
  CHECK(after.count("cmdstat_get") == 0);
  CHECK(after.count("cmdstat_incr") == 0);
  CHECK(Info(admin, "errorstats").empty());
  stats = Info(admin, "stats");
  CHECK(U(stats["keyspace_hits"]) == 0);
  CHECK(U(stats["keyspace_misses"]) == 0);
  CHECK(U(stats["total_error_replies"]) == 0);
  // As in Redis, CONFIG RESETSTAT counts itself (after the reset), then the three INFOs.
  CHECK(U(stats["total_commands_processed"]) <= 4);
  CHECK(Info(admin, "latencystats").count("latency_percentiles_usec_get") == 0);
  // And counting starts again from zero.
  CHECK(Run(c, {"GET", "k1"}) == "bulk:v");
  CHECK(U(CmdStat(admin, "get")["calls"]) == 1);
}

TEST_CASE("INFO pool stage lines add up", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  const int n = 2000;
  for (int i = 0; i < n; ++i) c.Append({"SET", "s" + std::to_string(i % 100), std::to_string(i)});
  for (int i = 0; i < n; ++i) {
    Reply r;
    REQUIRE(c.GetReply(&r));
    REQUIRE(Describe(r) == "status:OK");
  }
  for (int i = 0; i < 200; ++i) REQUIRE(Run(c, {"SET", "one", "v"}) == "status:OK");

  auto pool = Info(admin, "pool");
  std::map<std::string, std::map<std::string, std::string>> stages;
  for (const char* stage : {"before_queue", "queue_wait", "execute", "hand_back", "total"}) {
    std::string key = std::string("stage_") + stage + "_usec";
    INFO("field " << key);
    REQUIRE(pool.count(key) == 1);
    stages[stage] = SubFields(pool[key]);
    for (const char* part : {"p50", "p99", "p99.9", "count", "sum"}) {
      INFO("part " << part);
      REQUIRE(stages[stage].count(part) == 1);
    }
  }
  uint64_t total_count = U(stages["total"]["count"]);
  CHECK(total_count >= n + 200);
  double total_p999 = D(stages["total"]["p99.9"]);
  double stage_sum = 0;
  for (const char* stage : {"before_queue", "queue_wait", "execute", "hand_back"}) {
    INFO("stage " << stage);
    auto& s = stages[stage];
    CHECK(U(s["count"]) > 0);
    CHECK(U(s["count"]) <= total_count);
    CHECK(D(s["p50"]) <= D(s["p99"]));
    CHECK(D(s["p99"]) <= D(s["p99.9"]));
    CHECK(D(s["p50"]) <= total_p999);
    stage_sum += D(s["sum"]);
  }
  // SETs all went through the pool: every stage saw each of them.
  CHECK(U(stages["before_queue"]["count"]) >= n + 200);
  CHECK(U(stages["hand_back"]["count"]) >= n + 200);
  CHECK(D(stages["total"]["p50"]) <= D(stages["total"]["p99"]));
  CHECK(D(stages["total"]["p99"]) <= total_p999);
  CHECK(D(stages["total"]["sum"]) > 0);
  CHECK(stage_sum <= D(stages["total"]["sum"]) * 1.01 + 1.0);
  CHECK(D(stages["execute"]["sum"]) > 0);
  CHECK(U(pool["pool_tasks_run"]) > 0);
  CHECK(U(pool["pool_wakeups_spin"]) + U(pool["pool_wakeups_yield"]) +
            U(pool["pool_wakeups_block"]) >
        0);
}

TEST_CASE("INFO latencystats has ordered percentiles", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
  for (int i = 0; i < 300; ++i) REQUIRE(Run(c, {"GET", i % 3 ? "k" : "nokey"}) != "");
  auto lat = Info(admin, "latencystats");
  REQUIRE(lat.count("latency_percentiles_usec_get") == 1);
  REQUIRE(lat.count("latency_percentiles_usec_set") == 1);
  for (const char* cmd : {"get", "set"}) {
    auto p = SubFields(lat[std::string("latency_percentiles_usec_") + cmd]);
    INFO("command " << cmd << ": " << lat[std::string("latency_percentiles_usec_") + cmd]);
    REQUIRE(p.size() == 3);
    double p50 = D(p["p50"]), p99 = D(p["p99"]), p999 = D(p["p99.9"]);
    CHECK(p50 > 0);
    CHECK(p50 <= p99);
    CHECK(p99 <= p999);
    CHECK(p999 < 10e6);
  }
  CHECK(lat.count("latency_percentiles_usec_hgetall") == 0);
}

namespace {

struct SlowEntry {
  int64_t id = 0, time = 0, duration = 0;
  std::vector<std::string> args;
  std::string addr, name;
  std::vector<std::pair<std::string, int64_t>> stages;
  std::vector<std::pair<std::string, int64_t>> pool;  // level, slices, slices_queue_wait
};

std::vector<SlowEntry> SlowlogGet(Client& c, const std::string& count = "-1") {
  Reply r = c.Command({"SLOWLOG", "GET", count});
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  std::vector<SlowEntry> entries;
  for (const auto& e : r.elements) {
    INFO("entry " << Describe(e));
    REQUIRE(e.type == REDIS_REPLY_ARRAY);
    REQUIRE(e.elements.size() == 8);
    REQUIRE(e.elements[0].type == REDIS_REPLY_INTEGER);
    REQUIRE(e.elements[1].type == REDIS_REPLY_INTEGER);
    REQUIRE(e.elements[2].type == REDIS_REPLY_INTEGER);
    REQUIRE(e.elements[3].type == REDIS_REPLY_ARRAY);
    REQUIRE(e.elements[4].type == REDIS_REPLY_STRING);
    REQUIRE(e.elements[5].type == REDIS_REPLY_STRING);
    REQUIRE(e.elements[6].type == REDIS_REPLY_ARRAY);
    SlowEntry s;
    s.id = e.elements[0].integer;
    s.time = e.elements[1].integer;
    s.duration = e.elements[2].integer;
    for (const auto& a : e.elements[3].elements) {
      REQUIRE(a.type == REDIS_REPLY_STRING);
      s.args.push_back(a.str);
    }
    s.addr = e.elements[4].str;
    s.name = e.elements[5].str;
    const auto& st = e.elements[6].elements;
    REQUIRE(st.size() % 2 == 0);
    for (size_t i = 0; i < st.size(); i += 2) {
      REQUIRE(st[i].type == REDIS_REPLY_STRING);
      REQUIRE(st[i + 1].type == REDIS_REPLY_INTEGER);
      s.stages.emplace_back(st[i].str, st[i + 1].integer);
    }
    REQUIRE(e.elements[7].type == REDIS_REPLY_ARRAY);
    const auto& pv = e.elements[7].elements;
    REQUIRE(pv.size() == 6);
    for (size_t i = 0; i < pv.size(); i += 2) {
      REQUIRE(pv[i].type == REDIS_REPLY_STRING);
      REQUIRE(pv[i + 1].type == REDIS_REPLY_INTEGER);
      s.pool.emplace_back(pv[i].str, pv[i + 1].integer);
    }
    entries.push_back(std::move(s));
  }
  return entries;
}

int64_t Stage(const SlowEntry& e, const std::string& name) {
  for (const auto& [n, v] : e.stages) {
    if (n == name) return v;
  }
  return -1;
}

}  // namespace

TEST_CASE("SLOWLOG records slow commands with their stages", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "20000"}) == "status:OK");
  REQUIRE(Run(admin, {"SLOWLOG", "RESET"}) == "status:OK");
  REQUIRE(Run(c, {"CLIENT", "SETNAME", "sleeper"}) == "status:OK");

  int64_t before_s = NowMs() / 1000;
  REQUIRE(Run(c, {"debug", "sleep", "0.05"}) == "status:OK");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:1");
  auto entries = SlowlogGet(admin);
  REQUIRE(entries.size() == 1);
  const SlowEntry& e = entries[0];
  CHECK(e.args == std::vector<std::string>{"debug", "sleep", "0.05"});
  CHECK(e.duration >= 50000);
  CHECK(e.duration < 5000000);
  CHECK(e.time >= before_s - 1);
  CHECK(e.time <= NowMs() / 1000 + 1);
  CHECK(e.addr.rfind("127.0.0.1:", 0) == 0);
  CHECK(e.name == "sleeper");
  std::vector<std::string> names;
  for (const auto& [n, v] : e.stages) names.push_back(n);
  CHECK(names ==
        std::vector<std::string>{"before_queue", "queue_wait", "execute", "hand_back", "total"});
  CHECK(Stage(e, "execute") >= 50000);
  CHECK(Stage(e, "total") == e.duration);
  int64_t parts = Stage(e, "before_queue") + Stage(e, "queue_wait") + Stage(e, "execute") +
                  Stage(e, "hand_back");
  CHECK(parts <= Stage(e, "total"));
  for (const auto& [n, v] : e.stages) CHECK(v >= 0);
  // The pool's view: one slice (nothing is resumable yet), its queue wait is the stage's.
  REQUIRE(e.pool.size() == 3);
  CHECK(e.pool[0] == std::make_pair(std::string("level"), int64_t{0}));
  CHECK(e.pool[1] == std::make_pair(std::string("slices"), int64_t{1}));
  CHECK(e.pool[2].first == "slices_queue_wait");
  CHECK(e.pool[2].second == Stage(e, "queue_wait"));

  // Arguments are kept as sent, not lower-cased; ids grow; newest first.
  REQUIRE(Run(c, {"DEBUG", "SLEEP", "0.03"}) == "status:OK");
  entries = SlowlogGet(admin);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].args == std::vector<std::string>{"DEBUG", "SLEEP", "0.03"});
  CHECK(entries[0].id > entries[1].id);
  CHECK(entries[0].duration >= 30000);
  CHECK(SlowlogGet(admin, "1").size() == 1);

  REQUIRE(Run(admin, {"SLOWLOG", "RESET"}) == "status:OK");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:0");
  CHECK(SlowlogGet(admin).empty());

  // Commands under the threshold are not logged (1 s, so a loaded machine's slow SET is not
  // mistaken for a logging bug).
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "1000000"}) == "status:OK");
  for (int i = 0; i < 200; ++i) {
    REQUIRE(Run(c, {"SET", "k", std::to_string(i)}) == "status:OK");
    REQUIRE(Run(c, {"GET", "k"}) == "bulk:" + std::to_string(i));
  }
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:0");

  // A negative threshold logs nothing.
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "-1"}) == "status:OK");
  REQUIRE(Run(c, {"DEBUG", "SLEEP", "0.03"}) == "status:OK");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:0");

  // slowlog-max-len bounds the log; 0 logs everything; in-loop commands have two stages.
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-max-len", "5"}) == "status:OK");
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-log-slower-than", "0"}) == "status:OK");
  for (int i = 0; i < 20; ++i) REQUIRE(Run(c, {"PING", "p" + std::to_string(i)}) != "");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:5");
  entries = SlowlogGet(admin);
  REQUIRE(entries.size() == 5);
  for (size_t i = 1; i < entries.size(); ++i) CHECK(entries[i - 1].id > entries[i].id);
  bool saw_ping = false;
  for (const auto& entry : entries) {
    if (!entry.args.empty() && entry.args[0] == "PING") {
      saw_ping = true;
      std::vector<std::string> stage_names;
      for (const auto& [n, v] : entry.stages) stage_names.push_back(n);
      CHECK(stage_names == std::vector<std::string>{"execute", "total"});
      CHECK(Stage(entry, "execute") <= Stage(entry, "total"));
    }
  }
  CHECK(saw_ping);
  REQUIRE(Run(admin, {"CONFIG", "SET", "slowlog-max-len", "2"}) == "status:OK");
  CHECK(Run(admin, {"SLOWLOG", "LEN"}) == "int:2");
}

TEST_CASE("LATENCY HISTOGRAM has Redis 7's shape", "[metrics]") {
  TestServer server;
  Client c(server.port()), admin(server.port());
  REQUIRE(Run(admin, {"CONFIG", "RESETSTAT"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
  const int n = 50;
  for (int i = 0; i < n; ++i) REQUIRE(Run(c, {"GET", i % 2 ? "k" : "nokey"}) != "");

  Reply r = admin.Command({"LATENCY", "HISTOGRAM", "get"});
  INFO(Describe(r));
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  REQUIRE(r.elements.size() == 2);
  CHECK(Describe(r.elements[0]) == "bulk:get");
  const Reply& body = r.elements[1];
  REQUIRE(body.type == REDIS_REPLY_ARRAY);
  REQUIRE(body.elements.size() == 4);
  CHECK(Describe(body.elements[0]) == "bulk:calls");
  CHECK(Describe(body.elements[1]) == "int:" + std::to_string(n));
  CHECK(Describe(body.elements[2]) == "bulk:histogram_usec");
  const Reply& hist = body.elements[3];
  REQUIRE(hist.type == REDIS_REPLY_ARRAY);
  REQUIRE(!hist.elements.empty());
  REQUIRE(hist.elements.size() % 2 == 0);
  long long last_bucket = 0, last_count = 0;
  for (size_t i = 0; i < hist.elements.size(); i += 2) {
    REQUIRE(hist.elements[i].type == REDIS_REPLY_INTEGER);
    REQUIRE(hist.elements[i + 1].type == REDIS_REPLY_INTEGER);
    long long bucket = hist.elements[i].integer, count = hist.elements[i + 1].integer;
    CHECK(bucket > last_bucket);
    CHECK((bucket & (bucket - 1)) == 0);  // a power of two
    CHECK(count >= last_count);
    CHECK(count > 0);
    last_bucket = bucket;
    last_count = count;
  }
  CHECK(last_count == n);

  // Several commands, case-insensitive names, unknown names ignored.
  r = admin.Command({"LATENCY", "HISTOGRAM", "SET", "get", "nosuchcommand"});
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  REQUIRE(r.elements.size() == 4);
  std::set<std::string> names = {r.elements[0].str, r.elements[2].str};
  CHECK(names == std::set<std::string>{"get", "set"});
  r = admin.Command({"LATENCY", "HISTOGRAM", "hgetall"});
  CHECK(Describe(r) == "[]");
  // Without arguments: every command with calls, get among them.
  r = admin.Command({"LATENCY", "HISTOGRAM"});
  REQUIRE(r.type == REDIS_REPLY_ARRAY);
  bool has_get = false;
  for (size_t i = 0; i < r.elements.size(); i += 2) has_get |= r.elements[i].str == "get";
  CHECK(has_get);
}

}  // namespace observability_test
