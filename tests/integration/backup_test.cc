// Backups ([backup]): BGSAVE / SAVE write a RocksDB checkpoint under `dir`; a server started on
// the checkpoint's directory serves the data as of the save. LASTSAVE and INFO persistence.
//
// Catch2 assertions are not thread-safe: writer threads only record what was acknowledged.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Describe;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::MakeTempDir;
using rockcache::testing::NowMs;
using rockcache::testing::Reply;
using rockcache::testing::Run;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace backup_test {

namespace {

std::map<std::string, std::string> Persistence(Client& c) {
  return InfoFields(InfoText(c, "persistence"));
}

// Waits until no save runs; returns the persistence fields then.
std::map<std::string, std::string> WaitSaved(Client& c) {
  for (int i = 0; i < 500; ++i) {
    auto fields = Persistence(c);
    if (fields["rdb_bgsave_in_progress"] == "0") return fields;
    SleepMs(20);
  }
  FAIL("BGSAVE still in progress after 10 s");
  return {};
}

// The checkpoint-* directories under `dir`.
std::vector<std::string> CheckpointDirs(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("checkpoint-", 0) == 0) found.push_back(name);
  }
  return found;
}

std::string WriterKey(int t, int i) { return "w:" + std::to_string(t) + ":" + std::to_string(i); }

}  // namespace

TEST_CASE("BGSAVE during writes: a server on the checkpoint has every write acknowledged before it",
          "[backup]") {
  TestServer server;
  Client c(server.port());
  // One key of every type, a TTL and a second database: they must come back byte for byte.
  const std::vector<std::vector<std::string>> setup = {
      {"SET", "str", "hello"},
      {"SET", "ttl", "v", "EX", "10000"},
      {"HSET", "hash", "f1", "v1", "f2", "v2"},
      {"RPUSH", "list", "a", "b", "c"},
      {"SADD", "set", "x", "y"},
      {"ZADD", "zset", "1", "m1", "2.5", "m2"},
      {"XADD", "stream", "1-1", "f", "v"},
      {"XGROUP", "CREATE", "stream", "g", "0"},
  };
  for (const auto& cmd : setup) REQUIRE(!c.Command(cmd).is_error());
  REQUIRE(Run(c, {"SELECT", "3"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "in3", "three"}) == "status:OK");
  REQUIRE(Run(c, {"SELECT", "0"}) == "status:OK");
  const std::vector<std::string> typed = {"str", "ttl", "hash", "list", "set", "zset", "stream"};
  std::vector<std::string> dumps;
  for (const auto& key : typed) dumps.push_back(Describe(c.Command({"DUMP", key})));

  constexpr int kWriters = 4;
  std::atomic<bool> stop{false};
  std::vector<std::atomic<int>> acked(kWriters);  // writer t acknowledged keys 0..acked[t]-1
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    acked[t] = 0;
    writers.emplace_back([&, t] {
      Client w(server.port());
      Reply r;
      for (int i = 0; !stop.load(); ++i) {
        if (!w.TryCommand({"SET", WriterKey(t, i), "v" + std::to_string(i)}, &r) ||
            Describe(r) != "status:OK") {
          errors[t] = "SET " + WriterKey(t, i) + ": " + Describe(r);
          return;
        }
        acked[t].store(i + 1);
      }
    });
  }
  SleepMs(300);
  std::vector<int> before(kWriters);
  for (int t = 0; t < kWriters; ++t) before[t] = acked[t].load();
  const long long started = NowMs() / 1000;
  // Writes pipelined just ahead of BGSAVE on its own connection (one group commit with it).
  constexpr int kPipelined = 50;
  for (int i = 0; i < kPipelined; ++i) c.Append({"SET", "piped:" + std::to_string(i), "p"});
  c.Append({"BGSAVE"});
  for (int i = 0; i < kPipelined; ++i) {
    Reply reply;
    REQUIRE(c.GetReply(&reply));
    REQUIRE(Describe(reply) == "status:OK");
  }
  Reply bgsave;
  REQUIRE(c.GetReply(&bgsave));
  REQUIRE(Describe(bgsave) == "status:Background saving started");
  auto fields = WaitSaved(c);
  // Writes never stopped: each writer was acknowledged more writes since BGSAVE was sent (up
  // to 10 s on a loaded machine).
  auto all_advanced = [&] {
    for (int t = 0; t < kWriters; ++t) {
      if (acked[t].load() <= before[t] + 10) return false;
    }
    return true;
  };
  for (int i = 0; i < 500 && !all_advanced(); ++i) SleepMs(20);
  CHECK(all_advanced());
  stop = true;
  for (auto& w : writers) w.join();
  for (const auto& e : errors) CHECK(e.empty());

  CHECK(fields["rdb_last_bgsave_status"] == "ok");
  CHECK(fields["rdb_saves"] == "1");
  CHECK(fields["rdb_last_bgsave_time_sec"] != "-1");
  CHECK(fields["rdb_current_bgsave_time_sec"] == "-1");
  CHECK(std::atoll(fields["rdb_last_save_time"].c_str()) >= started);
  CHECK(c.Command({"LASTSAVE"}).integer >= started);
  const std::string path = fields["checkpoint_last_dir"];
  INFO("checkpoint: " << path);
  REQUIRE(path.rfind(server.dir() + "/db/checkpoint-", 0) == 0);
  REQUIRE(std::filesystem::is_directory(path));

  // Restore as README says: the checkpoint becomes the data directory of a server started on
  // it (TestServer runs the server with --dir <its dir>/db).
  const std::string restore_dir = MakeTempDir();
  std::filesystem::rename(path, restore_dir + "/db");
  TestServer restored({}, restore_dir);
  Client r(restored.port());
  for (size_t i = 0; i < typed.size(); ++i) {
    INFO("key " << typed[i]);
    CHECK(Describe(r.Command({"DUMP", typed[i]})) == dumps[i]);
  }
  CHECK(r.Command({"TTL", "ttl"}).integer > 9000);
  CHECK(Run(r, {"XINFO", "GROUPS", "stream"}).find("bulk:g") != std::string::npos);
  REQUIRE(Run(r, {"SELECT", "3"}) == "status:OK");
  CHECK(Run(r, {"GET", "in3"}) == "bulk:three");
  REQUIRE(Run(r, {"SELECT", "0"}) == "status:OK");
  // Every key acknowledged before BGSAVE is there, and each writer's keys form a prefix: the
  // checkpoint is one point in time.
  long long present_total = 0;
  for (int t = 0; t < kWriters; ++t) {
    const int written = acked[t].load();
    for (int i = 0; i < written; ++i) r.Append({"GET", WriterKey(t, i)});
    int present = 0, gaps = 0, lost = 0;
    for (int i = 0; i < written; ++i) {
      Reply reply;
      REQUIRE(r.GetReply(&reply));
      if (Describe(reply) == "bulk:v" + std::to_string(i)) {
        if (present != i) ++gaps;
        ++present;
      } else if (i < before[t]) {
        ++lost;
      }
    }
    INFO("writer " << t << ": acknowledged before BGSAVE " << before[t] << ", present " << present
                   << " of " << written);
    CHECK(lost == 0);
    CHECK(gaps == 0);
    CHECK(present >= before[t]);
    present_total += present;
  }
  for (int i = 0; i < kPipelined; ++i) r.Append({"GET", "piped:" + std::to_string(i)});
  int piped_present = 0;
  for (int i = 0; i < kPipelined; ++i) {
    Reply reply;
    REQUIRE(r.GetReply(&reply));
    piped_present += Describe(reply) == "bulk:p";
  }
  CHECK(piped_present == kPipelined);
  CHECK(r.Command({"DBSIZE"}).integer ==
        static_cast<long long>(typed.size()) + kPipelined + present_total);
  // The restored server writes on its own; the original is untouched by it.
  REQUIRE(Run(r, {"SET", "str", "changed"}) == "status:OK");
  CHECK(Run(c, {"GET", "str"}) == "bulk:hello");
}

TEST_CASE("SAVE, BGSAVE and LASTSAVE reply as Redis; INFO persistence follows them", "[backup]") {
  TestServer server;
  Client c(server.port());
  const long long start = NowMs() / 1000;
  // At start-up the data counts as saved, as Redis.
  const long long first = c.Command({"LASTSAVE"}).integer;
  CHECK(first >= start - 30);
  CHECK(first <= start + 1);
  CHECK(Run(c, {"BGSAVE", "foo"}) == "err:ERR syntax error");
  CHECK(Run(c, {"BGSAVE", "SCHEDULE", "x"}) == "err:ERR syntax error");
  CHECK(Run(c, {"SAVE", "x"}) == "err:ERR wrong number of arguments for 'save' command");
  CHECK(Run(c, {"LASTSAVE", "x"}) == "err:ERR wrong number of arguments for 'lastsave' command");

  auto fields = Persistence(c);
  CHECK(fields["rdb_saves"] == "0");
  CHECK(fields["rdb_bgsave_in_progress"] == "0");
  CHECK(fields["rdb_last_bgsave_status"] == "ok");
  CHECK(fields["rdb_last_bgsave_time_sec"] == "-1");
  CHECK(fields["aof_enabled"] == "1");
  REQUIRE(Run(c, {"SET", "a", "1"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "b", "2"}) == "status:OK");
  CHECK(Persistence(c)["rdb_changes_since_last_save"] == "2");

  SleepMs(1100);  // LASTSAVE has a resolution of one second
  CHECK(Run(c, {"SAVE"}) == "status:OK");
  fields = Persistence(c);
  CHECK(fields["rdb_saves"] == "1");
  CHECK(fields["rdb_changes_since_last_save"] == "0");
  CHECK(fields["rdb_last_bgsave_time_sec"] == "-1");  // SAVE is not a background save
  const long long second = c.Command({"LASTSAVE"}).integer;
  CHECK(second > first);
  CHECK(second == std::atoll(fields["rdb_last_save_time"].c_str()));
  CHECK(CheckpointDirs(server.dir() + "/db").size() == 1);

  // A second BGSAVE while one runs is refused with Redis's error; pipelined right behind the
  // first (which lasts at least 0.2 s: rdb-key-save-delay), it finds it running.
  REQUIRE(Run(c, {"DBSIZE"}).rfind("int:", 0) == 0);
  const long long keys = c.Command({"DBSIZE"}).integer;
  REQUIRE(keys > 0);
  REQUIRE(Run(c, {"CONFIG", "SET", "rdb-key-save-delay", std::to_string(200000 / keys + 1)}) ==
          "status:OK");
  bool refused = false;
  for (int attempt = 0; attempt < 5 && !refused; ++attempt) {
    c.Append({"BGSAVE"});
    c.Append({"BGSAVE", "SCHEDULE"});
    c.Append({"SAVE"});
    Reply started, again, save;
    REQUIRE(c.GetReply(&started));
    REQUIRE(c.GetReply(&again));
    REQUIRE(c.GetReply(&save));
    CHECK(Describe(started) == "status:Background saving started");
    if (again.is_error()) {
      refused = true;
      CHECK(Describe(again) == "err:ERR Background save already in progress");
    }
    if (save.is_error()) CHECK(Describe(save) == "err:ERR Background save already in progress");
    WaitSaved(c);
  }
  CHECK(refused);
  REQUIRE(Run(c, {"CONFIG", "SET", "rdb-key-save-delay", "0"}) == "status:OK");
  // checkpoint-keep 1 (the default): one checkpoint left however many saves ran.
  CHECK(CheckpointDirs(server.dir() + "/db").size() == 1);
  REQUIRE(Run(c, {"CONFIG", "SET", "checkpoint-keep", "3"}) == "status:OK");
  for (int i = 0; i < 4; ++i) REQUIRE(Run(c, {"SAVE"}) == "status:OK");
  CHECK(CheckpointDirs(server.dir() + "/db").size() == 3);
  // Inside MULTI, as Redis: "scheduled".
  REQUIRE(Run(c, {"MULTI"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "c", "3"}) == "status:QUEUED");
  REQUIRE(Run(c, {"BGSAVE"}) == "status:QUEUED");
  CHECK(Run(c, {"EXEC"}) == "[status:OK, status:Background saving scheduled]");
  WaitSaved(c);
  REQUIRE(Run(c, {"MULTI"}) == "status:OK");
  CHECK(Run(c, {"SAVE"}) == "err:ERR Command not allowed inside a transaction");
  REQUIRE(Run(c, {"DISCARD"}) == "status:OK");
  fields = Persistence(c);
  CHECK(fields["rdb_last_bgsave_status"] == "ok");
  CHECK(std::atoll(fields["rdb_saves"].c_str()) >= 7);
}

}  // namespace backup_test
