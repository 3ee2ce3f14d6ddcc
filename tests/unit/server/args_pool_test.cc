// server/protocol/args_pool: finished commands' argument vectors come back to the parser with
// their strings' memory, within the pool's bounds.
#include "server/protocol/args_pool.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "server/protocol/resp_parser.h"

using rockcache::server::ArgsPool;
using rockcache::server::RespParser;
using Args = ArgsPool::Args;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace args_pool_test {

namespace {

std::string Command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// Parses one whole command into *argv, as NetLoop::ProcessInput does.
void ParseInto(RespParser* parser, const std::string& input, Args* argv) {
  size_t consumed = 0;
  REQUIRE(parser->Parse(input.data(), input.size(), &consumed, argv) ==
          RespParser::Result::kCommand);
  REQUIRE(consumed == input.size());
}

}  // namespace

TEST_CASE("a pipelined command is parsed into a finished command's strings", "[args-pool]") {
  ArgsPool pool;
  RespParser parser;
  Args argv;
  const std::string field(40, 'f');  // longer than a string holds inline
  // As NetLoop does for a pipeline of commands handed to the pool: each command takes its vector
  // with it and leaves one from the pool; the replies come back and give their vectors back.
  std::vector<Args> in_flight;
  for (int i = 0; i < 6; ++i) {
    ParseInto(&parser, Command({"HSET", "h", field, "v"}), &argv);
    in_flight.push_back(std::move(argv));
    argv = pool.Take();
  }
  std::vector<const char*> fields;
  for (Args& done : in_flight) {
    CHECK(done[2] == field);
    fields.push_back(done[2].data());
    pool.Keep(std::move(done));
  }
  CHECK(pool.size() == 6);
  // The next commands fill those vectors: the long argument lands in memory already held.
  std::vector<const char*> reused;
  for (int i = 0; i < 6; ++i) {
    ParseInto(&parser, Command({"HSET", "h2", std::string(40, 'g'), "w"}), &argv);
    CHECK(argv == Args{"HSET", "h2", std::string(40, 'g'), "w"});
    reused.push_back(argv[2].data());
    in_flight[static_cast<size_t>(i)] = std::move(argv);
    argv = pool.Take();
  }
  // The parser fills the vector it was handed two commands before (it keeps one and swaps), so
  // the first two are new, and every one after them is a kept one.
  int from_pool = 0;
  for (const char* p : reused)
    from_pool += std::find(fields.begin(), fields.end(), p) != fields.end();
  CHECK(from_pool == 4);
  // A shorter command in a kept vector holds exactly its own arguments.
  pool.Keep(Args{"SET", "k", "v", "extra"});
  Args shorter = pool.Take();
  ParseInto(&parser, Command({"GET", "k"}), &shorter);
  ParseInto(&parser, Command({"GET", "k2"}), &shorter);
  CHECK(shorter == Args{"GET", "k2"});
}

TEST_CASE("the pool keeps only bounded vectors, and at most kMaxVectors", "[args-pool]") {
  ArgsPool pool;
  CHECK(pool.Take().empty());
  pool.Keep(Args());  // nothing to reuse
  CHECK(pool.size() == 0);
  pool.Keep(Args{std::string(ArgsPool::kMaxBytes + 1, 'x')});  // too many bytes
  CHECK(pool.size() == 0);
  Args many(ArgsPool::kMaxArgs + 1, "a");  // too many arguments
  pool.Keep(std::move(many));
  CHECK(pool.size() == 0);
  for (size_t i = 0; i < ArgsPool::kMaxVectors + 10; ++i) pool.Keep(Args{"GET", "k"});
  CHECK(pool.size() == ArgsPool::kMaxVectors);
  Args kept = pool.Take();
  CHECK(kept == Args{"GET", "k"});
  CHECK(pool.size() == ArgsPool::kMaxVectors - 1);
}

}  // namespace args_pool_test
