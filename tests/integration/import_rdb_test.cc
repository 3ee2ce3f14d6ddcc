// `rockcache-server --import-rdb` ([dump][import]) loads an RDB file a real redis-server 7.0
// SAVEd (every type, TTLs, databases, function libraries) key by key, and refuses a truncated
// or corrupted copy. Skipped when redis-server is missing.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/dump_samples.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::RespPeer;
using rockcache::testing::TestServer;
using rockcache::testing::differential::Command;
using rockcache::testing::differential::Rng;
using rockcache::testing::dump::Elements;
using rockcache::testing::dump::Fill;
using rockcache::testing::dump::Snapshot;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace import_rdb_test {

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

}  // namespace import_rdb_test
