// storage/data_dir: which entries of an old-layout directory move into dir/db, resuming a
// migration cut at any point, refusing an ambiguous directory, start-up recovery of a cut swap,
// and the directory lock.
#include "storage/data_dir.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/support/store_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace data_dir_test {

namespace fs = std::filesystem;
using testing::TempDir;

namespace {

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir))
    out.insert(entry.path().filename().string());
  return out;
}

void Touch(const std::string& path, const std::string& text = "x") { std::ofstream(path) << text; }

// What an older release's data directory held: RocksDB's entries at the root, a BGSAVE
// checkpoint, and a file of the operator's.
const std::vector<std::string> kRocksFiles = {
    "CURRENT",        "IDENTITY",   "LOG",        "LOG.old.1795806261123", "MANIFEST-000005",
    "OPTIONS-000007", "000012.sst", "000013.log", "000014.blob",           "000015.dbtmp"};
const std::set<std::string> kMoved = {
    "CURRENT",         "IDENTITY",       "LOG",        "LOG.old.1795806261123",
    "MANIFEST-000005", "OPTIONS-000007", "000012.sst", "000013.log",
    "000014.blob",     "000015.dbtmp",   "archive"};

void MakeOldLayout(const std::string& dir) {
  for (const auto& name : kRocksFiles) Touch(dir + "/" + name, name);
  Touch(dir + "/LOCK", "");
  fs::create_directory(dir + "/archive");
  Touch(dir + "/archive/000010.log");
  fs::create_directory(dir + "/checkpoint-1795806261123");
  Touch(dir + "/checkpoint-1795806261123/CURRENT");
  Touch(dir + "/notes.txt");
}

void CheckMigrated(const std::string& dir) {
  CHECK(Names(dir) == std::set<std::string>{"LOCK", "db", "checkpoint-1795806261123", "notes.txt"});
  CHECK(Names(dir + "/db") == kMoved);
  CHECK(Names(dir + "/db/archive") == std::set<std::string>{"000010.log"});
  std::ifstream current(dir + "/db/CURRENT");
  std::string text;
  current >> text;
  CHECK(text == "CURRENT");
}

}  // namespace

TEST_CASE("an old layout moves into dir/db, RocksDB's entries only", "[storage][data-dir]") {
  TempDir dir;
  MakeOldLayout(dir.path());
  std::string notes;
  REQUIRE(data_dir::Prepare(dir.path(), &notes).ok());
  CheckMigrated(dir.path());
  CHECK(notes.find("moved the database at the root of") != std::string::npos);
  // Prepared again: nothing to do.
  notes.clear();
  REQUIRE(data_dir::Prepare(dir.path(), &notes).ok());
  CHECK(notes.empty());
  CheckMigrated(dir.path());
}

TEST_CASE("a migration cut at any point is finished by the next start", "[storage][data-dir]") {
  // Every prefix of the moves done (in the order of kRocksFiles, then archive), and the moves
  // done with the final rename not.
  for (size_t done = 0; done <= kRocksFiles.size() + 1; ++done) {
    TempDir dir;
    MakeOldLayout(dir.path());
    const std::string migrating = dir.path() + "/db.migrating";
    fs::create_directory(migrating);
    std::vector<std::string> order = kRocksFiles;
    order.push_back("archive");
    for (size_t i = 0; i < done; ++i) {
      fs::rename(dir.path() + "/" + order[i], migrating + "/" + order[i]);
    }
    INFO("moved before the cut: " << done);
    REQUIRE(data_dir::Prepare(dir.path()).ok());
    CheckMigrated(dir.path());
  }
}

TEST_CASE("a directory with both layouts is refused untouched", "[storage][data-dir]") {
  TempDir dir;
  MakeOldLayout(dir.path());
  fs::create_directory(dir.path() + "/db");
  Touch(dir.path() + "/db/CURRENT");
  const std::set<std::string> before = Names(dir.path());
  Status s = data_dir::Prepare(dir.path());
  CHECK(s.IsInvalidArgument());
  CHECK(Names(dir.path()) == before);
}

TEST_CASE("start-up puts back the database of a swap that did not commit", "[storage][data-dir]") {
  TempDir dir;
  fs::create_directories(dir.path() + "/replaced");
  Touch(dir.path() + "/replaced/CURRENT", "old");
  fs::create_directories(dir.path() + "/sync");
  Touch(dir.path() + "/sync/CURRENT", "new");
  fs::create_directories(dir.path() + "/sync-checkpoint-3.tmp");
  fs::create_directories(dir.path() + "/sync-checkpoint-4");
  Touch(dir.path() + "/LOCK", "");
  REQUIRE(data_dir::Prepare(dir.path()).ok());
  CHECK(Names(dir.path()) == std::set<std::string>{"LOCK", "db"});
  std::ifstream current(dir.path() + "/db/CURRENT");
  std::string text;
  current >> text;
  CHECK(text == "old");
  // Cut after the second rename (dir/db is the received copy, its replication state not yet
  // written): the copy is dropped and the old database put back.
  fs::rename(dir.path() + "/db", dir.path() + "/replaced");
  fs::create_directories(dir.path() + "/db");
  Touch(dir.path() + "/db/CURRENT", "new");
  Touch(dir.path() + "/db/000012.sst", "new");
  REQUIRE(data_dir::Prepare(dir.path()).ok());
  CHECK(Names(dir.path()) == std::set<std::string>{"LOCK", "db"});
  CHECK(Names(dir.path() + "/db") == std::set<std::string>{"CURRENT"});
  std::ifstream again(dir.path() + "/db/CURRENT");
  again >> text;
  CHECK(text == "old");
  // Cut while removing the old database of a committed swap: the rest of it is removed.
  fs::create_directories(dir.path() + "/discarded");
  Touch(dir.path() + "/discarded/000007.sst", "older");
  REQUIRE(data_dir::Prepare(dir.path()).ok());
  CHECK(Names(dir.path()) == std::set<std::string>{"LOCK", "db"});
}

TEST_CASE("the staging paths are inside dir", "[storage][data-dir]") {
  CHECK(data_dir::DatabasePath("/data") == "/data/db");
  CHECK(data_dir::DatabasePath("/data//") == "/data/db");
  CHECK(data_dir::ReceivedSyncPath("/data/") == "/data/sync");
  CHECK(data_dir::ReplacedPath("rel") == "rel/replaced");
  CHECK(data_dir::DiscardedPath("rel/") == "rel/discarded");
  CHECK(data_dir::SyncCheckpointPath("/data", 7) == "/data/sync-checkpoint-7");
  CHECK(data_dir::DatabasePath("/") == "/db");
}

TEST_CASE("a store opens an old-layout directory with its data", "[storage][data-dir]") {
  TempDir dir;
  Options o;
  o.dir = dir.path();
  o.write_buffer_bytes = 4 << 20;
  o.block_cache_bytes = 8 << 20;
  {
    auto store = testing::Ok(Store::Open(o));
    REQUIRE(store->Set("k", "v", SetOptions()).ok());
    REQUIRE(store->HSet("h", {{"f", "v"}}, nullptr).ok());
    REQUIRE(store->Close().ok());
  }
  // Back to the layout before dir/db.
  const std::string db = data_dir::DatabasePath(dir.path());
  for (const auto& name : Names(db)) fs::rename(db + "/" + name, dir.path() + "/" + name);
  fs::remove(db);
  REQUIRE(fs::exists(dir.path() + "/CURRENT"));
  auto store = testing::Ok(Store::Open(o));
  CHECK(store->OpenNotes().find("moved the database") != std::string::npos);
  CHECK(*store->Get("k") == std::optional<std::string>("v"));
  CHECK(*store->HGet("h", "f") == std::optional<std::string>("v"));
  CHECK(fs::exists(db + "/CURRENT"));
  CHECK(!fs::exists(dir.path() + "/CURRENT"));
}

}  // namespace data_dir_test
