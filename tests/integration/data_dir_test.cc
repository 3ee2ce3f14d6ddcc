// The data directory (storage/data_dir.h): a full sync stages everything inside `dir` (nothing
// appears beside it, so `dir` may be a mount point); a `dir` of the layout before dir/db
// (RocksDB's files at its root) opens with its data, also after a migration cut short; a swap
// cut between its renames is rolled back at start-up and sync leftovers are removed; a second
// server on the same `dir` is refused.
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/support/replication_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Count;
using rockcache::testing::FreePort;
using rockcache::testing::Run;
using rockcache::testing::RunShell;
using rockcache::testing::ServerBinary;
using rockcache::testing::SleepMs;
using rockcache::testing::TestServer;
using rockcache::testing::replication::WaitCaughtUp;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace data_dir_test {

namespace fs = std::filesystem;

namespace {

// The names in `dir` (not recursive).
std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir))
    out.insert(entry.path().filename().string());
  return out;
}

// Records every entry created, moved in or out, or removed in one directory (inotify), so that
// even a short-lived one is seen.
class DirWatch {
 public:
  explicit DirWatch(const std::string& dir) : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    REQUIRE(fd_ >= 0);
    REQUIRE(inotify_add_watch(fd_, dir.c_str(),
                              IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE) >= 0);
  }
  ~DirWatch() { close(fd_); }
  DirWatch(const DirWatch&) = delete;
  DirWatch& operator=(const DirWatch&) = delete;

  // The names of the entries touched since the watch started.
  std::set<std::string> Touched() {
    alignas(inotify_event) char buf[8192];
    while (true) {
      const ssize_t n = read(fd_, buf, sizeof(buf));
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buf + at);
        if (event->len > 0) touched_.insert(event->name);
        if (event->mask & IN_Q_OVERFLOW) touched_.insert("<inotify queue overflow>");
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
    return touched_;
  }

 private:
  int fd_;
  std::set<std::string> touched_;
};

// Makes `dir` unwritable for the test's lifetime where permissions bind (not for root, who
// writes anyway: the inotify watch is the check then).
class ReadOnlyDir {
 public:
  explicit ReadOnlyDir(std::string dir) : dir_(std::move(dir)) {
    if (geteuid() != 0) REQUIRE(chmod(dir_.c_str(), 0555) == 0);
  }
  ~ReadOnlyDir() { chmod(dir_.c_str(), 0755); }
  ReadOnlyDir(const ReadOnlyDir&) = delete;
  ReadOnlyDir& operator=(const ReadOnlyDir&) = delete;

 private:
  std::string dir_;
};

void Load(Client& c, int n, const std::string& prefix) {
  for (int i = 0; i < n; ++i) {
    c.Append({"SET", prefix + std::to_string(i), "value-" + std::to_string(i)});
  }
  rockcache::testing::Reply r;
  for (int i = 0; i < n; ++i) REQUIRE(c.GetReply(&r));
  REQUIRE(Run(c, {"HSET", "hash", "f", "v"}) == "int:1");
  REQUIRE(Run(c, {"SELECT", "3"}) == "status:OK");
  REQUIRE(Run(c, {"SET", "in-db3", "three"}) == "status:OK");
  REQUIRE(Run(c, {"SELECT", "0"}) == "status:OK");
}

void CheckLoaded(Client& c, int n, const std::string& prefix) {
  CHECK(Run(c, {"GET", prefix + "0"}) == "bulk:value-0");
  CHECK(Run(c, {"GET", prefix + std::to_string(n - 1)}) == "bulk:value-" + std::to_string(n - 1));
  CHECK(Run(c, {"HGET", "hash", "f"}) == "bulk:v");
  CHECK(Run(c, {"DBSIZE"}) == "int:" + std::to_string(n + 1));
  REQUIRE(Run(c, {"SELECT", "3"}) == "status:OK");
  CHECK(Run(c, {"GET", "in-db3"}) == "bulk:three");
  REQUIRE(Run(c, {"SELECT", "0"}) == "status:OK");
}

// Turns the data directory `dir` (this release's layout, server stopped) into the layout before
// dir/db: every entry of dir/db moved up to the root, dir/db removed.
void ToOldLayout(const std::string& dir) {
  const std::string db = dir + "/db";
  REQUIRE(fs::exists(db + "/CURRENT"));
  for (const auto& name : Names(db)) fs::rename(db + "/" + name, dir + "/" + name);
  fs::remove(db);
  REQUIRE(fs::exists(dir + "/CURRENT"));
}

// Waits until `dir` holds exactly `want` (a sender removes its checkpoint just after sending).
bool WaitNames(const std::string& dir, const std::set<std::string>& want) {
  for (int i = 0; i < 200 && Names(dir) != want; ++i) SleepMs(25);
  return Names(dir) == want;
}

}  // namespace

TEST_CASE("a full sync stages everything inside dir and nothing beside it",
          "[replication][data-dir]") {
  // TestServer runs each server with --dir <its temporary dir>/db: the temporary directory is
  // the parent of `dir`, standing for what lies outside a mount point.
  TestServer primary;
  Client p(primary.port());
  Load(p, 20000, "key:");
  TestServer replica;
  Client r(replica.port());
  REQUIRE(Run(r, {"SET", "replaced-by-the-sync", "x"}) == "status:OK");
  const std::string primary_dir = primary.dir() + "/db", replica_dir = replica.dir() + "/db";
  const std::set<std::string> layout = {"LOCK", "db"};
  CHECK(Names(primary_dir) == layout);
  CHECK(Names(replica_dir) == layout);
  const std::set<std::string> primary_parent = Names(primary.dir());
  const std::set<std::string> replica_parent = Names(replica.dir());
  CHECK(primary_parent == std::set<std::string>{"db"});
  CHECK(replica_parent == std::set<std::string>{"db"});

  {
    DirWatch primary_watch(primary.dir()), replica_watch(replica.dir());
    ReadOnlyDir primary_ro(primary.dir()), replica_ro(replica.dir());
    REQUIRE(Run(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}) == "status:OK");
    REQUIRE(WaitCaughtUp(p, r, primary, replica, 60000));
    CHECK(Count(replica.Log(), "full sync loaded") == 1);
    CheckLoaded(r, 20000, "key:");
    CHECK(Run(r, {"EXISTS", "replaced-by-the-sync"}) == "int:0");
    // A write after the sync arrives incrementally.
    REQUIRE(Run(p, {"SET", "after", "1"}) == "status:OK");
    REQUIRE(WaitCaughtUp(p, r, primary, replica));
    CHECK(Run(r, {"GET", "after"}) == "bulk:1");

    // Nothing was created beside either `dir`, not even for a moment.
    CHECK(primary_watch.Touched() == std::set<std::string>{});
    CHECK(replica_watch.Touched() == std::set<std::string>{});
  }
  CHECK(Names(primary.dir()) == primary_parent);
  CHECK(Names(replica.dir()) == replica_parent);
  // The staged entries inside `dir` are gone once the sync is done.
  CHECK(WaitNames(primary_dir, layout));
  CHECK(WaitNames(replica_dir, layout));

  // A second full sync (the replica asks for one on a new primary link after a restart with no
  // usable position: its state is removed by REPLICAOF NO ONE + writes of its own) works again.
  REQUIRE(Run(r, {"REPLICAOF", "NO", "ONE"}) == "status:OK");
  REQUIRE(Run(r, {"SET", "own", "1"}) == "status:OK");
  {
    DirWatch primary_watch(primary.dir()), replica_watch(replica.dir());
    REQUIRE(Run(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}) == "status:OK");
    REQUIRE(WaitCaughtUp(p, r, primary, replica, 60000));
    CHECK(Run(r, {"EXISTS", "own"}) == "int:0");
    CHECK(Run(r, {"GET", "after"}) == "bulk:1");
    CHECK(primary_watch.Touched() == std::set<std::string>{});
    CHECK(replica_watch.Touched() == std::set<std::string>{});
  }
  CHECK(Count(replica.Log(), "full sync loaded") == 2);
  CHECK(WaitNames(primary_dir, layout));
  CHECK(WaitNames(replica_dir, layout));
}

TEST_CASE("a replica killed at any point of a full sync recovers at start-up",
          "[replication][data-dir]") {
  TestServer primary;
  Client p(primary.port());
  Load(p, 100000, "key:");
  TestServer replica({"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  const std::string dir = replica.dir() + "/db";
  // kill -9 at different moments: receiving (start-up removes dir/sync), swapping before the
  // commit point (start-up puts dir/replaced back), or after the sync. On this machine the
  // first kills land in the first two; whichever they hit, the replica ends up caught up.
  for (int delay_ms : {20, 80, 200, 400, 700}) {
    INFO("killed after " << delay_ms << " ms");
    SleepMs(delay_ms);
    replica.Kill9();
    replica.Restart();
    Client r(replica.port());
    CHECK(Run(r, {"PING"}) == "status:PONG");
  }
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica, 60000));
  CheckLoaded(r, 100000, "key:");
  CHECK(WaitNames(dir, {"LOCK", "db"}));
  CHECK(Names(replica.dir()) == std::set<std::string>{"db"});
}

TEST_CASE("a dir of the layout before dir/db opens with its data", "[data-dir]") {
  TestServer server;
  const std::string dir = server.dir() + "/db";
  {
    Client c(server.port());
    Load(c, 5000, "key:");
    REQUIRE(Run(c, {"SAVE"}) == "status:OK");  // a checkpoint-<ms> directory in `dir`
  }
  REQUIRE(server.Stop() == 0);
  ToOldLayout(dir);
  std::string checkpoint;
  for (const auto& name : Names(dir)) {
    if (name.rfind("checkpoint-", 0) == 0) checkpoint = name;
  }
  REQUIRE(!checkpoint.empty());

  SECTION("a clean start") {}
  SECTION("a start after a migration cut short") {
    // What a kill -9 in the middle leaves: dir/db.migrating with some of the files, the others
    // (CURRENT among them, or not) still at the root.
    const std::string migrating = dir + "/db.migrating";
    fs::create_directory(migrating);
    int moved = 0;
    for (const auto& name : Names(dir)) {
      if (name == "LOCK" || name == "db.migrating" || name == checkpoint) continue;
      if (moved++ % 2 == 0) fs::rename(dir + "/" + name, migrating + "/" + name);
    }
    REQUIRE(moved > 2);
  }
  SECTION("a start after a migration cut just before its last rename") {
    const std::string migrating = dir + "/db.migrating";
    fs::create_directory(migrating);
    for (const auto& name : Names(dir)) {
      if (name == "LOCK" || name == "db.migrating" || name == checkpoint) continue;
      fs::rename(dir + "/" + name, migrating + "/" + name);
    }
  }

  server.Restart();
  Client c(server.port());
  CheckLoaded(c, 5000, "key:");
  CHECK(Count(server.Log(), "moved the database at the root of") == 1);
  // The database is in dir/db; BGSAVE's checkpoint stays where it was (beside it).
  CHECK(Names(dir) == std::set<std::string>{"LOCK", "db", checkpoint});
  CHECK(fs::exists(dir + "/db/CURRENT"));
  // Writes go on, and survive a restart (no second migration).
  REQUIRE(Run(c, {"SET", "new", "1"}) == "status:OK");
  server.Restart();
  Client again(server.port());
  CHECK(Run(again, {"GET", "new"}) == "bulk:1");
  CHECK(Run(again, {"GET", "key:4999"}) == "bulk:value-4999");
  CHECK(Count(server.Log(), "moved the database at the root of") == 1);
}

TEST_CASE("a dir holding both layouts is refused", "[data-dir]") {
  TestServer server;
  const std::string dir = server.dir() + "/db";
  {
    Client c(server.port());
    REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
  }
  REQUIRE(server.Stop() == 0);
  std::ofstream(dir + "/CURRENT") << "MANIFEST-000001\n";
  int rc = 0;
  const std::string out =
      RunShell("timeout 60 " + ServerBinary() + " --port " + std::to_string(FreePort()) +
                   " --bind 127.0.0.1 --metrics-port 0 --dir " + dir + " 2>&1",
               &rc);
  CHECK(rc != 0);
  CHECK(out.find("move the one that is not the data elsewhere") != std::string::npos);
  // Nothing was moved.
  CHECK(fs::exists(dir + "/db/CURRENT"));
  fs::remove(dir + "/CURRENT");
  server.Restart();
  Client c(server.port());
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");
}

TEST_CASE("start-up rolls back a swap that did not commit and removes sync leftovers",
          "[replication][data-dir]") {
  TestServer server;
  const std::string dir = server.dir() + "/db";
  {
    Client c(server.port());
    REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
  }
  REQUIRE(server.Stop() == 0);
  // A replica killed after moving its database to dir/replaced, before the received copy moved
  // in; and a primary killed while sending a checkpoint.
  fs::rename(dir + "/db", dir + "/replaced");
  fs::create_directories(dir + "/sync");
  std::ofstream(dir + "/sync/000009.sst") << "partial";
  fs::create_directories(dir + "/sync-checkpoint-4");
  std::ofstream(dir + "/sync-checkpoint-4/CURRENT") << "MANIFEST-000001\n";
  server.Restart();
  {
    Client c(server.port());
    CHECK(Run(c, {"GET", "k"}) == "bulk:v");
  }
  CHECK(Names(dir) == std::set<std::string>{"LOCK", "db"});

  // A replica killed after both renames, before the received copy's replication state was
  // written (the commit point): the copy is dropped, the old database put back. And one killed
  // while removing the old database after the commit: the rest is removed.
  REQUIRE(server.Stop() == 0);
  fs::rename(dir + "/db", dir + "/replaced");
  fs::create_directories(dir + "/db");
  std::ofstream(dir + "/db/CURRENT") << "MANIFEST-000001\n";
  fs::create_directories(dir + "/discarded");
  std::ofstream(dir + "/discarded/000007.sst") << "partial";
  server.Restart();
  Client c(server.port());
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");
  CHECK(Names(dir) == std::set<std::string>{"LOCK", "db"});
  CHECK(Count(server.Log(), "a full sync was cut before it committed") == 2);
}

TEST_CASE("a second server on the same dir is refused", "[data-dir]") {
  TestServer server;
  Client c(server.port());
  REQUIRE(Run(c, {"SET", "k", "v"}) == "status:OK");
  int rc = 0;
  const std::string out =
      RunShell("timeout 60 " + ServerBinary() + " --port " + std::to_string(FreePort()) +
                   " --bind 127.0.0.1 --metrics-port 0 --dir " + server.dir() + "/db 2>&1",
               &rc);
  CHECK(rc != 0);
  CHECK(out.find("is in use by another process") != std::string::npos);
  CHECK(Run(c, {"GET", "k"}) == "bulk:v");
}

}  // namespace data_dir_test
