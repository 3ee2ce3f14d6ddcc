// List commands with Redis 7 semantics and error texts (replies checked against redis-server
// 7.0): LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX, LSET, LREM, LTRIM, LINSERT,
// LPOS, RPOPLPUSH, LMOVE; WRONGTYPE; negative indexes; an emptied list disappears.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::kNotInteger;
using rockcache::testing::kSyntax;
using rockcache::testing::kWrongType;
using rockcache::testing::RawConnection;
using rockcache::testing::Reply;
using rockcache::testing::Resp;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace list_test {

namespace {

const char kMustBePositive[] = "err:ERR value is out of range, must be positive";

std::string RawReply(RawConnection& conn, const std::vector<std::string>& args,
                     const std::string& expected) {
  conn.Send(Resp(args));
  return conn.ReadExactly(expected.size());
}

}  // namespace

TEST_CASE("LPUSH, RPUSH, LPUSHX, RPUSHX, LLEN, LRANGE", "[list]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"LPUSHX", "l", "a"}) == "int:0");
  CHECK(Run(c, {"RPUSHX", "l", "a"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "l"}) == "int:0");
  CHECK(Run(c, {"LPUSH", "l", "a", "b", "c"}) == "int:3");  // c b a
  CHECK(Run(c, {"RPUSH", "l", "d", "e"}) == "int:5");       // c b a d e
  CHECK(Run(c, {"LPUSHX", "l", "x"}) == "int:6");
  CHECK(Run(c, {"RPUSHX", "l", "y", "z"}) == "int:8");
  CHECK(Run(c, {"TYPE", "l"}) == "status:list");
  CHECK(Run(c, {"LLEN", "l"}) == "int:8");
  CHECK(Run(c, {"LLEN", "nokey"}) == "int:0");
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) ==
        "[bulk:x, bulk:c, bulk:b, bulk:a, bulk:d, bulk:e, bulk:y, bulk:z]");
  CHECK(Run(c, {"LRANGE", "l", "1", "2"}) == "[bulk:c, bulk:b]");
  CHECK(Run(c, {"LRANGE", "l", "-3", "-2"}) == "[bulk:e, bulk:y]");
  CHECK(Run(c, {"LRANGE", "l", "-100", "1"}) == "[bulk:x, bulk:c]");
  CHECK(Run(c, {"LRANGE", "l", "6", "100"}) == "[bulk:y, bulk:z]");
  CHECK(Run(c, {"LRANGE", "l", "5", "2"}) == "[]");
  CHECK(Run(c, {"LRANGE", "l", "8", "10"}) == "[]");
  CHECK(Run(c, {"LRANGE", "l", "-1", "-2"}) == "[]");
  CHECK(Run(c, {"LRANGE", "nokey", "0", "-1"}) == "[]");
  CHECK(Run(c, {"LRANGE", "l", "a", "1"}) == kNotInteger);
  CHECK(Run(c, {"LRANGE", "nokey", "0", "b"}) == kNotInteger);
  CHECK(Run(c, {"LPUSH", "l"}) == "err:ERR wrong number of arguments for 'lpush' command");
  CHECK(Run(c, {"RPUSHX", "l"}) == "err:ERR wrong number of arguments for 'rpushx' command");
  CHECK(Run(c, {"LRANGE", "l", "0"}) == "err:ERR wrong number of arguments for 'lrange' command");
  // Binary and empty elements.
  std::string bin("\0\r\n", 3);
  CHECK(Run(c, {"RPUSH", "b", "", bin}) == "int:2");
  Reply r = c.Command({"LRANGE", "b", "0", "-1"});
  REQUIRE(r.elements.size() == 2);
  CHECK(r.elements[0].str.empty());
  CHECK(r.elements[1].str == bin);
}

TEST_CASE("LPOP and RPOP with and without count", "[list]") {
  TestServer server;
  Client c(server.port());
  RawConnection raw(server.port());
  CHECK(RawReply(raw, {"LPOP", "l"}, "$-1\r\n") == "$-1\r\n");
  CHECK(RawReply(raw, {"RPOP", "l", "1"}, "*-1\r\n") == "*-1\r\n");  // a null array
  CHECK(RawReply(raw, {"LPOP", "l", "0"}, "*-1\r\n") == "*-1\r\n");
  CHECK(Run(c, {"RPUSH", "l", "a", "b", "c", "d", "e", "f"}) == "int:6");
  CHECK(Run(c, {"LPOP", "l"}) == "bulk:a");
  CHECK(Run(c, {"RPOP", "l"}) == "bulk:f");
  CHECK(Run(c, {"LPOP", "l", "2"}) == "[bulk:b, bulk:c]");
  CHECK(Run(c, {"RPOP", "l", "1"}) == "[bulk:e]");
  CHECK(RawReply(raw, {"LPOP", "l", "0"}, "*0\r\n") == "*0\r\n");
  CHECK(Run(c, {"LPOP", "l", "-1"}) == kMustBePositive);
  CHECK(Run(c, {"LPOP", "l", "abc"}) == kMustBePositive);
  CHECK(Run(c, {"RPOP", "nokey", "-1"}) == kMustBePositive);
  CHECK(Run(c, {"LPOP", "l", "1", "2"}) == "err:ERR wrong number of arguments for 'lpop' command");
  CHECK(Run(c, {"LPOP"}) == "err:ERR wrong number of arguments for 'lpop' command");
  CHECK(Run(c, {"LLEN", "l"}) == "int:1");
  CHECK(Run(c, {"RPOP", "l", "10"}) == "[bulk:d]");  // more than there is
  CHECK(Run(c, {"EXISTS", "l"}) == "int:0");
  CHECK(Run(c, {"RPUSH", "l", "x"}) == "int:1");
  CHECK(Run(c, {"RPOP", "l"}) == "bulk:x");
  CHECK(Run(c, {"EXISTS", "l"}) == "int:0");
  CHECK(Run(c, {"TYPE", "l"}) == "status:none");
}

TEST_CASE("LINDEX, LSET, LREM, LTRIM, LINSERT", "[list]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"RPUSH", "l", "a", "b", "a", "c", "a", "b"}) == "int:6");
  CHECK(Run(c, {"LINDEX", "l", "0"}) == "bulk:a");
  CHECK(Run(c, {"LINDEX", "l", "3"}) == "bulk:c");
  CHECK(Run(c, {"LINDEX", "l", "-1"}) == "bulk:b");
  CHECK(Run(c, {"LINDEX", "l", "-6"}) == "bulk:a");
  CHECK(Run(c, {"LINDEX", "l", "6"}) == "nil");
  CHECK(Run(c, {"LINDEX", "l", "-7"}) == "nil");
  CHECK(Run(c, {"LINDEX", "nokey", "0"}) == "nil");
  CHECK(Run(c, {"LINDEX", "l", "x"}) == kNotInteger);
  CHECK(Run(c, {"LINDEX", "nokey", "x"}) == "nil");  // the key is looked up first, as Redis

  CHECK(Run(c, {"LSET", "l", "1", "B"}) == "status:OK");
  CHECK(Run(c, {"LSET", "l", "-1", "Z"}) == "status:OK");
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:a, bulk:B, bulk:a, bulk:c, bulk:a, bulk:Z]");
  CHECK(Run(c, {"LSET", "l", "6", "x"}) == "err:ERR index out of range");
  CHECK(Run(c, {"LSET", "l", "-7", "x"}) == "err:ERR index out of range");
  CHECK(Run(c, {"LSET", "nokey", "0", "x"}) == "err:ERR no such key");
  CHECK(Run(c, {"LSET", "nokey", "x", "x"}) == "err:ERR no such key");
  CHECK(Run(c, {"LSET", "l", "x", "x"}) == kNotInteger);

  CHECK(Run(c, {"LREM", "l", "1", "a"}) == "int:1");  // first from the head
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:B, bulk:a, bulk:c, bulk:a, bulk:Z]");
  CHECK(Run(c, {"LREM", "l", "-1", "a"}) == "int:1");  // first from the tail
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:B, bulk:a, bulk:c, bulk:Z]");
  CHECK(Run(c, {"RPUSH", "l", "a", "a"}) == "int:6");
  CHECK(Run(c, {"LREM", "l", "0", "a"}) == "int:3");  // all
  CHECK(Run(c, {"LREM", "l", "0", "zz"}) == "int:0");
  CHECK(Run(c, {"LREM", "nokey", "0", "a"}) == "int:0");
  CHECK(Run(c, {"LREM", "l", "x", "a"}) == kNotInteger);
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:B, bulk:c, bulk:Z]");

  CHECK(Run(c, {"LINSERT", "l", "BEFORE", "c", "b"}) == "int:4");
  CHECK(Run(c, {"LINSERT", "l", "after", "Z", "end"}) == "int:5");
  CHECK(Run(c, {"LINSERT", "l", "AFTER", "zz", "x"}) == "int:-1");
  CHECK(Run(c, {"LINSERT", "nokey", "AFTER", "a", "x"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "nokey"}) == "int:0");
  CHECK(Run(c, {"LINSERT", "l", "MIDDLE", "c", "x"}) == kSyntax);
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:B, bulk:b, bulk:c, bulk:Z, bulk:end]");

  CHECK(Run(c, {"LTRIM", "l", "1", "-2"}) == "status:OK");
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:b, bulk:c, bulk:Z]");
  CHECK(Run(c, {"LTRIM", "l", "-2", "100"}) == "status:OK");
  CHECK(Run(c, {"LRANGE", "l", "0", "-1"}) == "[bulk:c, bulk:Z]");
  CHECK(Run(c, {"LTRIM", "nokey", "0", "1"}) == "status:OK");
  CHECK(Run(c, {"LTRIM", "l", "a", "1"}) == kNotInteger);
  CHECK(Run(c, {"LTRIM", "l", "1", "0"}) == "status:OK");  // an empty range deletes the list
  CHECK(Run(c, {"EXISTS", "l"}) == "int:0");
  // The extreme indexes (a dispatcher-fuzz finding: an overflow under UBSan, `make asan`).
  const std::string min = "-9223372036854775808";
  const std::string max = "9223372036854775807";
  CHECK(Run(c, {"LTRIM", "nokey", min, min}) == "status:OK");
  CHECK(Run(c, {"RPUSH", "l", "a", "b", "c"}) == "int:3");
  CHECK(Run(c, {"LTRIM", "l", min, max}) == "status:OK");
  CHECK(Run(c, {"LRANGE", "l", min, max}) == "[bulk:a, bulk:b, bulk:c]");
  CHECK(Run(c, {"LTRIM", "l", min, min}) == "status:OK");
  CHECK(Run(c, {"EXISTS", "l"}) == "int:0");

  // LREM removing the last elements deletes the key too.
  CHECK(Run(c, {"RPUSH", "r", "x", "x"}) == "int:2");
  CHECK(Run(c, {"LREM", "r", "0", "x"}) == "int:2");
  CHECK(Run(c, {"EXISTS", "r"}) == "int:0");
}

TEST_CASE("LPOS with RANK, COUNT and MAXLEN", "[list]") {
  TestServer server;
  Client c(server.port());
  RawConnection raw(server.port());
  CHECK(Run(c, {"RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"}) == "int:8");
  CHECK(Run(c, {"LPOS", "l", "c"}) == "int:2");
  CHECK(Run(c, {"LPOS", "l", "zz"}) == "nil");
  CHECK(Run(c, {"LPOS", "l", "c", "RANK", "2"}) == "int:6");
  CHECK(Run(c, {"LPOS", "l", "c", "RANK", "-1"}) == "int:7");
  CHECK(Run(c, {"LPOS", "l", "c", "RANK", "-3"}) == "int:2");
  CHECK(Run(c, {"LPOS", "l", "c", "RANK", "4"}) == "nil");
  CHECK(Run(c, {"LPOS", "l", "c", "COUNT", "2"}) == "[int:2, int:6]");
  CHECK(Run(c, {"LPOS", "l", "c", "COUNT", "0"}) == "[int:2, int:6, int:7]");
  CHECK(Run(c, {"LPOS", "l", "c", "COUNT", "0", "RANK", "-1"}) == "[int:7, int:6, int:2]");
  CHECK(Run(c, {"LPOS", "l", "c", "RANK", "2", "COUNT", "10"}) == "[int:6, int:7]");
  CHECK(Run(c, {"LPOS", "l", "zz", "COUNT", "1"}) == "[]");
  CHECK(Run(c, {"LPOS", "l", "c", "COUNT", "0", "MAXLEN", "7"}) == "[int:2, int:6]");
  CHECK(Run(c, {"LPOS", "l", "c", "MAXLEN", "2"}) == "nil");
  CHECK(Run(c, {"LPOS", "l", "c", "RANK", "-1", "MAXLEN", "1"}) == "int:7");
  CHECK(RawReply(raw, {"LPOS", "nokey", "a"}, "$-1\r\n") == "$-1\r\n");
  CHECK(RawReply(raw, {"LPOS", "nokey", "a", "COUNT", "0"}, "*0\r\n") == "*0\r\n");

  CHECK(Run(c, {"LPOS", "l", "c", "RANK", "0"}) ==
        "err:ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
        "or use negative to start from the end of the list");
  CHECK(Run(c, {"LPOS", "l", "c", "RANK", "x"}) == kNotInteger);
  CHECK(Run(c, {"LPOS", "l", "c", "COUNT", "-1"}) == "err:ERR COUNT can't be negative");
  CHECK(Run(c, {"LPOS", "l", "c", "COUNT", "x"}) == "err:ERR COUNT can't be negative");
  CHECK(Run(c, {"LPOS", "l", "c", "MAXLEN", "-1"}) == "err:ERR MAXLEN can't be negative");
  CHECK(Run(c, {"LPOS", "l", "c", "RANK"}) == kSyntax);
  CHECK(Run(c, {"LPOS", "l", "c", "FOO", "1"}) == kSyntax);
  CHECK(Run(c, {"LPOS", "nokey", "c", "RANK", "0"}) ==
        "err:ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
        "or use negative to start from the end of the list");
  CHECK(Run(c, {"LPOS", "l"}) == "err:ERR wrong number of arguments for 'lpos' command");
}

TEST_CASE("RPOPLPUSH and LMOVE", "[list]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"RPOPLPUSH", "src", "dst"}) == "nil");
  CHECK(Run(c, {"LMOVE", "src", "dst", "LEFT", "RIGHT"}) == "nil");
  CHECK(Run(c, {"EXISTS", "dst"}) == "int:0");
  CHECK(Run(c, {"RPUSH", "src", "a", "b", "c"}) == "int:3");
  CHECK(Run(c, {"RPOPLPUSH", "src", "dst"}) == "bulk:c");
  CHECK(Run(c, {"LMOVE", "src", "dst", "LEFT", "RIGHT"}) == "bulk:a");
  CHECK(Run(c, {"LRANGE", "dst", "0", "-1"}) == "[bulk:c, bulk:a]");
  CHECK(Run(c, {"LMOVE", "dst", "dst", "left", "right"}) == "bulk:c");  // rotation
  CHECK(Run(c, {"LRANGE", "dst", "0", "-1"}) == "[bulk:a, bulk:c]");
  CHECK(Run(c, {"RPOPLPUSH", "dst", "dst"}) == "bulk:c");
  CHECK(Run(c, {"LRANGE", "dst", "0", "-1"}) == "[bulk:c, bulk:a]");
  CHECK(Run(c, {"LMOVE", "src", "dst", "RIGHT", "LEFT"}) == "bulk:b");
  CHECK(Run(c, {"EXISTS", "src"}) == "int:0");  // the source emptied
  CHECK(Run(c, {"LRANGE", "dst", "0", "-1"}) == "[bulk:b, bulk:c, bulk:a]");
  CHECK(Run(c, {"LMOVE", "dst", "src", "UP", "LEFT"}) == kSyntax);
  CHECK(Run(c, {"LMOVE", "dst", "src", "LEFT", "DOWN"}) == kSyntax);
  CHECK(Run(c, {"LMOVE", "dst", "src", "LEFT"}) ==
        "err:ERR wrong number of arguments for 'lmove' command");
  // WRONGTYPE on either side; nothing moves.
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  CHECK(Run(c, {"RPOPLPUSH", "dst", "s"}) == kWrongType);
  CHECK(Run(c, {"LMOVE", "s", "dst", "LEFT", "LEFT"}) == kWrongType);
  CHECK(Run(c, {"RPOPLPUSH", "nokey", "s"}) == "nil");  // an absent source wins, as Redis
  CHECK(Run(c, {"LLEN", "dst"}) == "int:3");
}

TEST_CASE("list commands against a string key reply WRONGTYPE", "[list]") {
  TestServer server;
  Client c(server.port());
  CHECK(Run(c, {"SET", "s", "v"}) == "status:OK");
  const std::vector<std::vector<std::string>> commands = {
      {"LPUSH", "s", "a"},
      {"RPUSH", "s", "a"},
      {"LPUSHX", "s", "a"},
      {"RPUSHX", "s", "a"},
      {"LPOP", "s"},
      {"RPOP", "s", "2"},
      {"LPOP", "s", "0"},
      {"LLEN", "s"},
      {"LRANGE", "s", "0", "-1"},
      {"LINDEX", "s", "0"},
      {"LINDEX", "s", "x"},
      {"LSET", "s", "0", "a"},
      {"LSET", "s", "x", "a"},
      {"LREM", "s", "0", "a"},
      {"LTRIM", "s", "0", "1"},
      {"LINSERT", "s", "BEFORE", "a", "b"},
      {"LPOS", "s", "a"},
      {"LPOS", "s", "a", "COUNT", "0"},
      {"RPOPLPUSH", "s", "d"},
      {"LMOVE", "s", "d", "LEFT", "LEFT"},
  };
  for (const auto& cmd : commands) {
    INFO(cmd[0]);
    CHECK(Run(c, cmd) == kWrongType);
  }
  CHECK(Run(c, {"GET", "s"}) == "bulk:v");
  CHECK(Run(c, {"EXISTS", "d"}) == "int:0");
}

TEST_CASE("a long list keeps its order through pushes and pops at both ends", "[list]") {
  TestServer server;
  Client c(server.port());
  std::vector<std::string> left = {"LPUSH", "l"}, right = {"RPUSH", "l"};
  for (int i = 0; i < 500; ++i) {
    left.push_back("L" + std::to_string(i));
    right.push_back("R" + std::to_string(i));
  }
  CHECK(Run(c, right) == "int:500");
  CHECK(Run(c, left) == "int:1000");
  CHECK(Run(c, {"LINDEX", "l", "0"}) == "bulk:L499");
  CHECK(Run(c, {"LINDEX", "l", "499"}) == "bulk:L0");
  CHECK(Run(c, {"LINDEX", "l", "500"}) == "bulk:R0");
  CHECK(Run(c, {"LINDEX", "l", "-1"}) == "bulk:R499");
  CHECK(Run(c, {"LRANGE", "l", "498", "501"}) == "[bulk:L1, bulk:L0, bulk:R0, bulk:R1]");
  Reply popped = c.Command({"LPOP", "l", "600"});
  REQUIRE(popped.elements.size() == 600);
  CHECK(popped.elements[599].str == "R99");
  CHECK(Run(c, {"LLEN", "l"}) == "int:400");
  CHECK(Run(c, {"LINDEX", "l", "0"}) == "bulk:R100");
  CHECK(Run(c, {"LPUSH", "l", "head"}) == "int:401");
  CHECK(Run(c, {"LRANGE", "l", "0", "1"}) == "[bulk:head, bulk:R100]");
  CHECK(Run(c, {"LPOS", "l", "R499"}) == "int:400");
}

// The reply bytes of LRANGE, byte for byte, built here by hand: elements of sizes 0, 1, around
// the size up to which a bulk is written in one piece (server/protocol/reply.cc), 1000, 5000, and
// binary bytes (NUL, CR, LF, bytes >= 0x80); and a list long and big enough for the read to take
// several calls and steps (over 1024 elements, over 64 KiB of reply).
TEST_CASE("LRANGE replies the exact bytes of every element", "[list]") {
  TestServer server;
  Client c(server.port());
  auto element = [](size_t i) {
    std::string e;
    if (i % 97 == 0) return std::string(5000, static_cast<char>('a' + i % 26));
    size_t size = i % 13 == 0 ? 0 : (i % 11 == 0 ? 1000 : i % 120);
    for (size_t k = 0; k < size; ++k) e.push_back(static_cast<char>((i * 31 + k * 7) % 256));
    return e;
  };
  std::vector<std::string> elements = {"",
                                       "x",
                                       std::string(86, 'p'),
                                       std::string(87, 'q'),
                                       std::string(88, 'r'),
                                       std::string(89, 's'),
                                       std::string(90, 't'),
                                       std::string(91, 'u'),
                                       std::string(99, 'v'),
                                       std::string(100, 'w'),
                                       std::string(1000, 'y'),
                                       std::string("\0\r\n\x80\xff$*-1\r\n", 12)};
  for (size_t i = 0; elements.size() < 3000; ++i) elements.push_back(element(i));
  for (size_t at = 0; at < elements.size(); at += 500) {
    std::vector<std::string> push = {"RPUSH", "l"};
    for (size_t i = at; i < std::min(elements.size(), at + 500); ++i) push.push_back(elements[i]);
    REQUIRE(Run(c, push) == "int:" + std::to_string(std::min(elements.size(), at + 500)));
  }
  auto expected = [&](size_t begin, size_t end) {
    std::string bytes = "*" + std::to_string(end - begin) + "\r\n";
    for (size_t i = begin; i < end; ++i) {
      bytes += "$" + std::to_string(elements[i].size()) + "\r\n" + elements[i] + "\r\n";
    }
    return bytes;
  };
  RawConnection raw(server.port());
  const std::vector<std::vector<std::string>> ranges = {
      {"0", "11"}, {"0", "-1"}, {"5", "1500"}, {"-1200", "-2"}, {"2999", "5000"}, {"11", "11"}};
  const std::vector<std::pair<size_t, size_t>> spans = {{0, 12},      {0, 3000},    {5, 1501},
                                                        {1800, 2999}, {2999, 3000}, {11, 12}};
  for (size_t r = 0; r < ranges.size(); ++r) {
    INFO("LRANGE l " << ranges[r][0] << " " << ranges[r][1]);
    std::string want = expected(spans[r].first, spans[r].second);
    CHECK(RawReply(raw, {"LRANGE", "l", ranges[r][0], ranges[r][1]}, want) == want);
  }
}

}  // namespace list_test
