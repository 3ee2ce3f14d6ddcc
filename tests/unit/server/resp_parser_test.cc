#include "server/protocol/resp_parser.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

using rockcache::server::RespParser;
using Commands = std::vector<std::vector<std::string>>;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace resp_parser_test {

namespace {

// Feeds `input` in the given chunk sizes, the way a connection would: unconsumed bytes stay
// buffered, consumed ones are dropped.
struct Feed {
  Commands commands;
  bool error = false;
  std::string error_text;
};

Feed Run(const std::string& input, const std::vector<size_t>& cuts, uint64_t max_bulk = 1 << 20) {
  RespParser parser(max_bulk);
  Feed feed;
  std::string buffer;
  size_t offset = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(input.size());
  for (size_t end : ends) {
    buffer.append(input, offset, end - offset);
    offset = end;
    while (!buffer.empty()) {
      size_t consumed = 0;
      std::vector<std::string> args;
      auto result = parser.Parse(buffer.data(), buffer.size(), &consumed, &args);
      REQUIRE(consumed <= buffer.size());
      buffer.erase(0, consumed);
      if (result == RespParser::Result::kCommand) {
        feed.commands.push_back(args);
      } else if (result == RespParser::Result::kError) {
        feed.error = true;
        feed.error_text = parser.error();
        return feed;
      } else {
        REQUIRE(buffer.empty());  // kNeedMore consumes everything it was given
        break;
      }
    }
  }
  return feed;
}

std::string Multibulk(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

}  // namespace

TEST_CASE("parses one multibulk command", "[parser]") {
  auto feed = Run(Multibulk({"SET", "key", "value"}), {});
  REQUIRE_FALSE(feed.error);
  REQUIRE(feed.commands == Commands{{"SET", "key", "value"}});
}

TEST_CASE("pipelined buffer parses the same at every split point", "[parser]") {
  const Commands expected = {{"SET", "k", std::string("bin\0\r\nary", 9)},
                             {"GET", "k"},
                             {"PING"},
                             {"ECHO", ""},
                             {"MSET", "a", "1", "b", "22"}};
  std::string input;
  for (const auto& c : expected) input += Multibulk(c);
  input += "PING inline\r\n";
  input += "set \"quoted key\" v\n";
  Commands all = expected;
  all.push_back({"PING", "inline"});
  all.push_back({"set", "quoted key", "v"});
  for (size_t cut = 0; cut <= input.size(); ++cut) {
    INFO("cut at " << cut);
    auto feed = Run(input, {cut});
    REQUIRE_FALSE(feed.error);
    REQUIRE(feed.commands == all);
  }
  // Two cuts, and byte by byte.
  for (size_t a = 0; a < input.size(); a += 3) {
    for (size_t b = a; b < input.size(); b += 5) {
      auto feed = Run(input, {a, b});
      REQUIRE(feed.commands == all);
    }
  }
  std::vector<size_t> every;
  for (size_t i = 1; i < input.size(); ++i) every.push_back(i);
  REQUIRE(Run(input, every).commands == all);
}

TEST_CASE("random chunking of a large pipeline", "[parser]") {
  std::mt19937 rng(42);
  Commands expected;
  std::string input;
  for (int i = 0; i < 2000; ++i) {
    std::string value(rng() % 300, static_cast<char>('a' + i % 26));
    expected.push_back({"SET", "key:" + std::to_string(i), value});
    input += Multibulk(expected.back());
  }
  std::vector<size_t> cuts;
  size_t pos = 0;
  while (true) {
    pos += 1 + rng() % 700;
    if (pos >= input.size()) break;
    cuts.push_back(pos);
  }
  auto feed = Run(input, cuts);
  REQUIRE_FALSE(feed.error);
  REQUIRE(feed.commands == expected);
}

TEST_CASE("empty multibulk and empty inline lines are skipped", "[parser]") {
  auto feed = Run("*0\r\n\r\n*-1\r\nPING\r\n", {});
  REQUIRE_FALSE(feed.error);
  REQUIRE(feed.commands == Commands{{"PING"}});
}

TEST_CASE("malformed input gives Redis's protocol errors", "[parser]") {
  CHECK(Run("*abc\r\n", {}).error_text == "Protocol error: invalid multibulk length");
  CHECK(Run("*3000000000\r\n", {}).error_text == "Protocol error: invalid multibulk length");
  CHECK(Run("*1\r\nx\r\n", {}).error_text == "Protocol error: expected '$', got 'x'");
  CHECK(Run("*1\r\n$-5\r\n", {}).error_text == "Protocol error: invalid bulk length");
  CHECK(Run("*1\r\n$abc\r\n", {}).error_text == "Protocol error: invalid bulk length");
  CHECK(Run("set \"a\r\n", {}).error_text == "Protocol error: unbalanced quotes in request");
}

TEST_CASE("oversize input is refused", "[parser]") {
  // Bulk longer than proto-max-bulk-len.
  auto feed = Run("*1\r\n$2000\r\n", {}, /*max_bulk=*/1000);
  CHECK(feed.error_text == "Protocol error: invalid bulk length");
  // Inline request without newline beyond 64 KB.
  std::string big(RespParser::kMaxInlineSize + 10, 'a');
  CHECK(Run(big, {1000, 40000}).error_text == "Protocol error: too big inline request");
  // Multibulk count line without newline beyond 64 KB.
  std::string count = "*" + std::string(RespParser::kMaxInlineSize + 10, '1');
  CHECK(Run(count, {}).error_text == "Protocol error: too big mbulk count string");
}

TEST_CASE("a large bulk arriving in small pieces is kept, not rescanned", "[parser]") {
  std::string value(3 * 1024 * 1024, 'v');
  std::string input = Multibulk({"SET", "big", value});
  std::vector<size_t> cuts;
  for (size_t i = 4096; i < input.size(); i += 4096) cuts.push_back(i);
  auto feed = Run(input, cuts, /*max_bulk=*/8 << 20);
  REQUIRE_FALSE(feed.error);
  REQUIRE(feed.commands.size() == 1);
  CHECK(feed.commands[0][2] == value);
}

TEST_CASE("the parser is reusable after a command and reports in_command", "[parser]") {
  RespParser parser;
  std::vector<std::string> args;
  size_t consumed = 0;
  std::string part = "*2\r\n$3\r\nGET";
  CHECK(parser.Parse(part.data(), part.size(), &consumed, &args) == RespParser::Result::kNeedMore);
  CHECK(consumed == part.size());
  CHECK(parser.in_command());
  std::string rest = "\r\n$1\r\nk\r\n";
  REQUIRE(parser.Parse(rest.data(), rest.size(), &consumed, &args) == RespParser::Result::kCommand);
  CHECK(args == std::vector<std::string>{"GET", "k"});
  CHECK_FALSE(parser.in_command());
}

TEST_CASE("unauthenticated clients get Redis's limits", "[resp]") {
  RespParser parser;
  parser.set_unauthenticated(true);
  std::vector<std::string> args;
  size_t consumed = 0;
  std::string big_count = "*11\r\n";
  CHECK(parser.Parse(big_count.data(), big_count.size(), &consumed, &args) ==
        RespParser::Result::kError);
  CHECK(parser.error() == "Protocol error: unauthenticated multibulk length");
  std::string big_bulk = "*2\r\n$3\r\nSET\r\n$16385\r\n";
  CHECK(parser.Parse(big_bulk.data(), big_bulk.size(), &consumed, &args) ==
        RespParser::Result::kError);
  CHECK(parser.error() == "Protocol error: unauthenticated bulk length");
  // proto-max-bulk-len is checked first, as in Redis.
  std::string huge = "*1\r\n$600000000\r\n";
  CHECK(parser.Parse(huge.data(), huge.size(), &consumed, &args) == RespParser::Result::kError);
  CHECK(parser.error() == "Protocol error: invalid bulk length");
  // At the limits: fine.
  std::string ok = "*2\r\n$4\r\nAUTH\r\n$16384\r\n" + std::string(16384, 'p') + "\r\n";
  CHECK(parser.Parse(ok.data(), ok.size(), &consumed, &args) == RespParser::Result::kCommand);
  parser.set_unauthenticated(false);
  std::string many = "*2000000000\r\n";
  CHECK(parser.Parse(many.data(), many.size(), &consumed, &args) == RespParser::Result::kNeedMore);
}

TEST_CASE("held_bytes counts the command in progress, per argument too", "[resp]") {
  RespParser parser;
  std::vector<std::string> args;
  size_t consumed = 0;
  std::string header = "*2000000000\r\n";
  REQUIRE(parser.Parse(header.data(), header.size(), &consumed, &args) ==
          RespParser::Result::kNeedMore);
  CHECK(parser.held_bytes() == 0);  // the declared count costs nothing up front
  std::string empties;
  for (int i = 0; i < 1000; ++i) empties += "$0\r\n\r\n";
  REQUIRE(parser.Parse(empties.data(), empties.size(), &consumed, &args) ==
          RespParser::Result::kNeedMore);
  CHECK(parser.held_bytes() == 1000 * RespParser::kArgOverhead);
  std::string partial = "$10\r\nabcd";
  REQUIRE(parser.Parse(partial.data(), partial.size(), &consumed, &args) ==
          RespParser::Result::kNeedMore);
  CHECK(parser.held_bytes() == 1001 * RespParser::kArgOverhead + 4);
  RespParser fresh;
  std::string cmd = "*1\r\n$4\r\nPING\r\n";
  REQUIRE(fresh.Parse(cmd.data(), cmd.size(), &consumed, &args) == RespParser::Result::kCommand);
  CHECK(fresh.held_bytes() == 0);
}

// A whole buffer goes through Parse's one-pass path for every complete command (ParseWhole);
// byte by byte, through the state machine alone. Both must read the same commands and fail
// with the same error, for well-formed input and for input that is slightly off.
TEST_CASE("whole-buffer and byte-by-byte parsing agree", "[parser]") {
  std::mt19937 rng(7);
  auto random_arg = [&rng]() {
    std::string arg(rng() % 4 == 0 ? rng() % 70000 : rng() % 20, '\0');
    for (auto& c : arg) c = static_cast<char>(rng() % 256);
    return arg;
  };
  const std::vector<std::string> quirks = {
      "*2\n$3\nGET\r\n$1\nk\r\n",            // LF-only headers
      "*02\r\n$003\r\nGET\r\n$01\r\nk\r\n",  // leading zeros
      "*1\r\n$3\r\r\nGET\r\n",               // a stray CR
      "*1\r\n$-1\r\n",                       // a negative bulk
      "*1\r\n:3\r\nGET\r\n",                 // not a bulk
      "*-3\r\n",                             // a negative count: skipped
      "*0\r\n",                              // an empty command: skipped
      "*1\r\n$1234567890123456789\r\n",      // past the one-pass path's digits
      "*x\r\n",                              // not a number
      "*\r\n",                               // no digits
      "PING\r\n",                            // inline
  };
  for (int round = 0; round < 300; ++round) {
    std::string input;
    const int commands = 1 + static_cast<int>(rng() % 6);
    for (int c = 0; c < commands; ++c) {
      if (rng() % 5 == 0) {
        input += quirks[rng() % quirks.size()];
        continue;
      }
      std::vector<std::string> args(1 + rng() % 5);
      for (auto& a : args) a = random_arg();
      input += Multibulk(args);
    }
    INFO("round " << round);
    const Feed whole = Run(input, {}, /*max_bulk=*/1 << 20);
    std::vector<size_t> every;
    for (size_t i = 1; i < input.size(); ++i) every.push_back(i);
    const Feed bytes = Run(input, every, /*max_bulk=*/1 << 20);
    REQUIRE(whole.error == bytes.error);
    REQUIRE(whole.error_text == bytes.error_text);
    REQUIRE(whole.commands == bytes.commands);
  }
  // A limit the one-pass path leaves to the state machine: the same error either way.
  const std::string big = Multibulk({"SET", "k", std::string(2000, 'v')});
  CHECK(Run(big, {}, /*max_bulk=*/1000).error_text == "Protocol error: invalid bulk length");
}

}  // namespace resp_parser_test
