// Scripting against redis-server ([scripting][differential]): a corpus of EVAL / EVALSHA / SCRIPT
// commands runs on rockcache and on a reference redis-server, and every reply must be the same
// bytes — conversions both ways, redis.* helpers, error texts and positions, the sandbox, keys
// and arguments, commands refused from scripts. Skipped (with a warning) without redis-server.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/differential.h"
#include "tests/support/differential_peer.h"
#include "tests/support/test_server.h"

using rockcache::testing::ReferenceRedis;
using rockcache::testing::TestServer;

using namespace rockcache::testing::differential;  // NOLINT

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace scripting_differential_test {

namespace {

Command Eval(const std::string& body, std::vector<std::string> keys = {},
             std::vector<std::string> args = {}) {
  Command cmd{"EVAL", body, std::to_string(keys.size())};
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

std::vector<Command> Corpus() {
  return {
      {"FLUSHALL"},
      // Lua -> reply.
      Eval("return 1"),
      Eval("return -3.7"),
      Eval("return 3.99"),
      Eval("return 1e20"),
      Eval("return 1/0"),
      Eval("return 'text'"),
      Eval("return ''"),
      Eval("return true"),
      Eval("return false"),
      Eval("return nil"),
      Eval("return {1, 2, {3, 'x'}, nil, 5}"),
      Eval("return {1, {err='E x'}, redis.status_reply('S'), 2.5, false, true}"),
      Eval("return {1, 2, 3, 'x', {}, {a=1}}"),
      Eval("return {false, 1}"),
      Eval("return redis.error_reply('foo bar')"),
      Eval("return redis.error_reply('-MY error')"),
      Eval("return redis.status_reply('FINE')"),
      Eval("return {err='custom error'}"),
      Eval("return {ok='fine'}"),
      Eval("return {ok='a\\r\\nb'}"),
      Eval("local t = {} for i = 1, 100 do t[i] = i * i end return t"),
      // reply -> Lua.
      Eval("return redis.call('set', KEYS[1], 'v')", {"k"}),
      Eval("local r = redis.call('set', KEYS[1], 'x') return type(r) .. r.ok", {"k"}),
      Eval("return redis.call('get', KEYS[1])", {"k"}),
      Eval("return redis.call('get', 'absent') == false"),
      Eval("return type(redis.call('get', 'absent'))"),
      Eval("return redis.call('hset', KEYS[1], 'f', 'v', 'g', 'w')", {"h"}),
      Eval("return redis.call('hgetall', KEYS[1])", {"h"}),
      Eval("return redis.call('hgetall', 'nokey')"),
      Eval("return redis.call('rpush', KEYS[1], 'a', 'b', 'c')", {"l"}),
      Eval("return redis.call('lrange', KEYS[1], 0, -1)", {"l"}),
      Eval("return #redis.call('lrange', KEYS[1], 0, -1)", {"l"}),
      Eval("return redis.call('zadd', KEYS[1], 1.5, 'm', 2, 'n')", {"z"}),
      Eval("return redis.call('zscore', KEYS[1], 'm')", {"z"}),
      Eval("return redis.call('zrange', KEYS[1], 0, -1, 'withscores')", {"z"}),
      Eval("return redis.call('mget', KEYS[1], KEYS[2])", {"k", "nx"}),
      Eval("return redis.call('type', KEYS[1])", {"l"}),
      Eval("return redis.call('incrby', KEYS[1], 5)", {"n"}),
      Eval("return redis.call('incrbyfloat', KEYS[1], 0.5)", {"n"}),
      Eval("return redis.call('echo', 1.5)"),
      Eval("return redis.call('echo', 10)"),
      Eval("return redis.call('ping')"),
      Eval("return redis.call('exists', KEYS[1], KEYS[2])", {"k", "nx"}),
      Eval("return redis.call('del', KEYS[1])", {"l"}),
      Eval("return redis.call('lpop', KEYS[1])", {"l"}),
      // Errors: redis.call raises, redis.pcall returns them.
      Eval("return redis.call('incr', KEYS[1])", {"h"}),
      Eval("return redis.pcall('incr', KEYS[1])", {"h"}),
      Eval("local r = redis.pcall('incr', KEYS[1]) return r.err", {"h"}),
      Eval("return redis.call('nosuch')"),
      Eval("return redis.pcall('nosuch')"),
      Eval("return redis.call()"),
      Eval("return redis.call('set', {})"),
      Eval("return redis.call('get')"),
      Eval("return redis.call('blpop', 'l', 0)"),
      Eval("return redis.call('multi')"),
      Eval("return redis.call('subscribe', 'c')"),
      Eval("return redis.call('eval', 'return 1', 0)"),
      Eval("error('boom')"),
      Eval("error({err='MY custom'})"),
      Eval("local x = nil\nreturn x.field"),
      Eval("\n\nreturn redis.call('incr', KEYS[1])", {"h"}),
      Eval("return x x"),
      Eval("return x"),
      Eval("x = 1"),
      Eval("string.x = 1"),
      Eval("redis.call = nil"),
      Eval("rawset(_G, 'y', 1)"),
      Eval("return type(os)"),
      Eval("return type(io)"),
      Eval("return type(loadfile)"),
      Eval("return type(dofile)"),
      Eval("return type(print)"),
      Eval("return type(require)"),
      // Keys, arguments and the helpers.
      Eval("return KEYS", {"a", "b"}),
      Eval("return ARGV", {}, {"x", "y"}),
      Eval("return #KEYS + #ARGV", {"a"}, {"b", "c"}),
      Eval("return redis.sha1hex('')"),
      Eval("return redis.sha1hex('abc')"),
      Eval("return redis.sha1hex()"),
      Eval("return redis.REDIS_VERSION"),
      Eval("return redis.REDIS_VERSION_NUM"),
      Eval("return redis.setresp(2)"),
      Eval("return redis.setresp(4)"),
      Eval("return redis.log(redis.LOG_NOTICE, 'hello', 'world')"),
      Eval("return redis.log()"),
      Eval("return redis.replicate_commands()"),
      Eval("return redis.set_repl(redis.REPL_ALL)"),
      Eval("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}"),
      // The libraries.
      Eval("return cjson.encode({1, 2, 'x'})"),
      Eval("return cjson.decode('[1,2,{\"a\":3}]')[3].a"),
      Eval("return cjson.decode('{\"k\":\"v\"}').k"),
      Eval("return bit.band(0xff, 0x0f)"),
      Eval("return bit.bxor(5, 3)"),
      Eval("return bit.tohex(65535)"),
      Eval("return cmsgpack.pack({1, 2, 'x', {a=1}})"),
      Eval("return cmsgpack.unpack(cmsgpack.pack({1, 'a', {2, 3}}))"),
      Eval("return {cmsgpack.unpack(cmsgpack.pack(1, -200, 70000, 'str'))}"),
      Eval("return struct.pack('>I2i4', 258, -2)"),
      Eval("return {struct.unpack('>I2', string.char(1, 2))}"),
      Eval("return struct.size('>I2i4d')"),
      Eval("return string.format('%05.1f|%s', 3.14159, 'x')"),
      Eval("return table.concat({1, 2, 3}, ',')"),
      Eval("return string.rep('ab', 3)"),
      Eval("return tostring(math.floor(7.9))"),
      // Numbers passed to redis.call are sent as Lua's tostring writes them.
      Eval("return redis.call('echo', 60)"),
      Eval("return {redis.call('echo', -7), redis.call('echo', 0), redis.call('echo', -0.0)}"),
      Eval("return {redis.call('echo', 3.0), redis.call('echo', 0.5), redis.call('echo', -2.25)}"),
      Eval("return {redis.call('echo', 99999999999999), redis.call('echo', -99999999999999)}"),
      Eval("return {redis.call('echo', 1e14), redis.call('echo', -1e14)}"),
      Eval(
          "return {redis.call('echo', 2^53), redis.call('echo', 1e17), redis.call('echo', 1e300)}"),
      Eval("return {redis.call('echo', 0.1), redis.call('echo', 1/3), redis.call('echo', -1e-7)}"),
      Eval("return {redis.call('echo', 1/0), redis.call('echo', -1/0), redis.call('echo', 0/0)}"),
      Eval("return select('#', 1, 2, 3)"),
      Eval("return loadstring('return 7')()"),
      Eval("return pcall(error, 'e')"),
      Eval("return coroutine.wrap(function() return redis.call('ping') end)()"),
      // Argument checks of EVAL itself.
      {"EVAL", "return 1", "-1"},
      {"EVAL", "return 1", "2", "a"},
      {"EVAL", "return 1", "abc"},
      {"EVALSHA", "0000000000000000000000000000000000000000", "0"},
      {"EVALSHA", "short", "0"},
      // The script cache.
      {"SCRIPT", "LOAD", "return 'loaded'"},
      {"EVALSHA", "ea61bdd8f15c297bcc1f3b4e8ee37ed3ebcd5c7e", "0"},
      {"EVALSHA", "EA61BDD8F15C297BCC1F3B4E8EE37ED3EBCD5C7E", "0"},
      {"SCRIPT", "EXISTS", "ea61bdd8f15c297bcc1f3b4e8ee37ed3ebcd5c7e", "ffff"},
      {"SCRIPT", "LOAD", "return x x"},
      Eval("return 'cached by eval'"),
      {"SCRIPT", "EXISTS", "4f2e3e2d0ee83c5a8e1bc6e5b7f4a4ee1ae7fb86"},
      {"SCRIPT", "KILL"},
      {"SCRIPT", "FLUSH", "BOGUS"},
      {"SCRIPT", "FLUSH"},
      {"SCRIPT", "EXISTS", "ea61bdd8f15c297bcc1f3b4e8ee37ed3ebcd5c7e"},
      {"SCRIPT", "NOSUCH"},
      // Shebangs and their flags.
      Eval("#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')"),
      Eval("#!lua flags=no-writes\nreturn redis.call('get', 'a')"),
      Eval("#!lua\nreturn 1"),
      Eval("#!lua flags=\nreturn 1"),
      Eval("#!lua flags=bogus\nreturn 1"),
      Eval("#!lua name=x\nreturn 1"),
      Eval("#!js\nreturn 1"),
      Eval("#!luax\nreturn 5"),
      Eval("#!lua flags=no-writes,allow-oom\nreturn 2"),
      Eval("#!lua  flags=allow-stale,no-writes\nreturn 5"),
      Eval("#!lua\nreturn x x"),
      Eval("#!lua\nerror('e')"),
      Eval("#!lua\nreturn redis.call('get', 'undeclared')"),
      {"EVAL_RO", "#!lua\nreturn 1", "0"},
      {"EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"},
      {"SCRIPT", "LOAD", "#!js\nreturn 1"},
      {"SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 1"},
      // Read-only scripts.
      {"EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k"},
      {"EVAL_RO", "return redis.call('set', KEYS[1], 'v')", "1", "k"},
      {"GET", "k"},
  };
}

}  // namespace

TEST_CASE("Differential: scripts reply as redis-server's do, byte for byte",
          "[scripting][differential]") {
  const std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: differential test skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  const int protocol = GENERATE(2, 3);  // the same table under RESP2 and RESP3
  Differ d(server.port(), reference.port(), protocol);
  const std::vector<Command> corpus = Corpus();
  for (const Command& cmd : corpus) d.Both("scripts", cmd);
  const auto& stats = d.stats("scripts");
  std::printf("differential RESP%d: scripts %d commands (%d errors), %d mismatches\n", protocol,
              stats.commands, stats.errors, stats.mismatches);
  CHECK(stats.commands == static_cast<int>(corpus.size()));
  CHECK(stats.mismatches == 0);
}

namespace {

const char* kLibrary =
    "#!lua name=mylib\n"
    "redis.register_function('incr_by', function(keys, args)\n"
    "  return redis.call('incrby', keys[1], args[1]) end)\n"
    "redis.register_function{function_name='echo_ro', callback=function(keys, args)\n"
    "  return {keys[1], args[1]} end, flags={'no-writes'}, description='echoes'}\n"
    "redis.register_function('fails', function(keys, args) error('inner') end)\n"
    "redis.register_function('writes_anyway', function(keys, args)\n"
    "  return redis.call('set', keys[1], 'x') end)\n";

std::vector<Command> FunctionCorpus() {
  auto load = [](const std::string& code) { return Command{"FUNCTION", "LOAD", code}; };
  const std::string body = "\nredis.register_function('zz', function() return 1 end)";
  return {
      {"FUNCTION", "FLUSH"},
      load(kLibrary),
      {"FCALL", "incr_by", "1", "counter", "5"},
      {"FCALL", "incr_by", "1", "counter", "5"},
      {"FCALL", "echo_ro", "1", "k", "v"},
      {"FCALL_RO", "echo_ro", "1", "k", "v"},
      {"FCALL_RO", "incr_by", "1", "counter", "1"},
      {"FCALL", "fails", "0"},
      {"FCALL", "nosuch", "0"},
      {"FCALL", "incr_by", "3", "a"},
      {"FCALL", "incr_by", "-1"},
      {"FCALL", "incr_by", "x"},
      load(kLibrary),
      load("return 1"),
      load("#!lua"),
      load("#!lua" + body),
      load("#!js name=a" + body),
      load("#!lua name=b foo=bar" + body),
      load("#!lua name=b-c" + body),
      load("#!lua name=" + body),
      load("#!lua name=x name=y" + body),
      load("#!lua name=e\n"),
      load("#!lua name=e\nredis.call('ping')"),
      load("#!lua name=e\nredis.register_function('incr_by', function() return 1 end)"),
      load("#!lua name=e\nlocal x x"),
      load("#!lua name=e\nredis.register_function('a', 1)"),
      load("#!lua name=e\nredis.register_function{function_name='a', callback=function() end, "
           "flags={'bogus'}}"),
      load("#!lua name=e\nerror('boom')"),
      load("#!lua name=e\nredis.register_function('a-b', function() return 1 end)"),
      load("#!lua name=e\nredis.register_function('a', function() end)\n"
           "redis.register_function('a', function() end)"),
      {"FUNCTION", "STATS"},
      {"FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"},
      {"FUNCTION", "LIST", "BOGUS"},
      {"FUNCTION", "DELETE", "nosuch"},
      {"FUNCTION", "DELETE", "mylib"},
      {"FCALL", "incr_by", "1", "counter", "5"},
      load("#!lua name=single\nredis.register_function{function_name='only', "
           "callback=function() return 1 end, description='one'}"),
      {"FUNCTION", "LIST"},
      {"FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "sing*"},
      load("#!lua name=single\nredis.register_function('only', function() return 2 end)"),
      {"FUNCTION", "LOAD", "REPLACE",
       "#!lua name=single\nredis.register_function('only', function() return 2 end)"},
      {"FCALL", "only", "0"},
      {"FUNCTION", "DUMP"},
      {"FUNCTION", "RESTORE", "junk"},
      {"FUNCTION", "RESTORE", "junk", "BOGUS"},
      {"FUNCTION", "KILL"},
      {"FUNCTION", "FLUSH", "BOGUS"},
      {"FUNCTION", "FLUSH"},
      {"FUNCTION", "LIST"},
  };
}

}  // namespace

TEST_CASE("Differential: functions reply as redis-server's do, byte for byte",
          "[scripting][differential][functions]") {
  const std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: differential test skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  const int protocol = GENERATE(2, 3);  // the same table under RESP2 and RESP3
  Differ d(server.port(), reference.port(), protocol);
  const std::vector<Command> corpus = FunctionCorpus();
  for (const Command& cmd : corpus) d.Both("functions", cmd);
  const auto& stats = d.stats("functions");
  std::printf("differential RESP%d: functions %d commands (%d errors), %d mismatches\n", protocol,
              stats.commands, stats.errors, stats.mismatches);
  CHECK(stats.commands == static_cast<int>(corpus.size()));
  CHECK(stats.mismatches == 0);
}

TEST_CASE("FUNCTION DUMP / RESTORE move libraries between redis-server and rockcache",
          "[scripting][functions][dump]") {
  const std::string redis = ReferenceRedis::Binary();
  if (redis.empty()) {
    WARN("redis-server not installed: test skipped");
    return;
  }
  ReferenceRedis reference(redis);
  TestServer server;
  const int protocol = GENERATE(2, 3);  // the same table under RESP2 and RESP3
  Differ d(server.port(), reference.port(), protocol);
  // Long and repetitive: redis-server compresses it (LZF) in its payload.
  std::string code = "#!lua name=big\n";
  for (int i = 0; i < 40; ++i) {
    code += "redis.register_function('f" + std::to_string(i) +
            "', function(keys, args) return redis.call('incrby', keys[1], " + std::to_string(i) +
            ") end)\n";
  }
  REQUIRE(d.Theirs({"FUNCTION", "LOAD", code}) == "$3\r\nbig\r\n");
  // The payload is the bulk string of the DUMP reply.
  auto payload_of = [](const std::string& reply) {
    const size_t start = reply.find("\r\n") + 2;
    return reply.substr(start, reply.size() - start - 2);
  };
  const std::string from_redis = payload_of(d.Theirs({"FUNCTION", "DUMP"}));
  CHECK(d.Ours({"FUNCTION", "RESTORE", from_redis}) == "+OK\r\n");
  CHECK(d.Ours({"FCALL", "f7", "1", "n"}) == ":7\r\n");
  CHECK(d.Ours({"FUNCTION", "RESTORE", from_redis}) == "-ERR Library big already exists\r\n");
  CHECK(d.Ours({"FUNCTION", "RESTORE", from_redis, "REPLACE"}) == "+OK\r\n");
  // A corrupted payload is refused whole.
  std::string corrupt = from_redis;
  corrupt[corrupt.size() / 2] ^= 0x55;
  CHECK(d.Ours({"FUNCTION", "RESTORE", corrupt, "FLUSH"}) ==
        "-ERR DUMP payload version or checksum are wrong\r\n");
  CHECK(d.Ours({"FCALL", "f7", "1", "n"}) == ":14\r\n");
  // And back: rockcache's payload restores into redis-server.
  const std::string from_us = payload_of(d.Ours({"FUNCTION", "DUMP"}));
  CHECK(d.Theirs({"FUNCTION", "RESTORE", from_us, "FLUSH"}) == "+OK\r\n");
  CHECK(d.Theirs({"FCALL", "f39", "1", "m"}) == ":39\r\n");
}

}  // namespace scripting_differential_test
