// RESTORE's and DUMP's errors ([dump]) equal redis-server 7.0's byte for byte, and hostile
// payloads (truncated, flipped, with the checksum fixed so the parser sees them) never crash the
// server nor grow it. The errors are skipped when redis-server is missing.
#include <sys/types.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/dump_samples.h"
#include "tests/support/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::RespPeer;
using rockcache::testing::TestServer;
using rockcache::testing::differential::BulkPayload;
using rockcache::testing::differential::Command;
using rockcache::testing::differential::Differ;
using rockcache::testing::differential::Rng;
using rockcache::testing::dump::Bulk;
using rockcache::testing::dump::Fill;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace restore_errors_test {

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

long ResidentKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

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

}  // namespace restore_errors_test
