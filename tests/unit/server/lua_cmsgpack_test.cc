// server/scripting: the cmsgpack Lua library (lua_cmsgpack.h). Expected bytes come from the
// MessagePack spec, written as hex.
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "tests/unit/server/lua_libs.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace lua_cmsgpack_test {

using rockcache::server::scripting::testing::Contains;
using rockcache::server::scripting::testing::Lua;

TEST_CASE("cmsgpack: globals and metadata", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("type(cmsgpack.pack)") == "function");
  CHECK(lua.Str("type(cmsgpack.unpack)") == "function");
  CHECK(lua.Str("type(cmsgpack.unpack_one)") == "function");
  CHECK(lua.Str("type(cmsgpack.unpack_limit)") == "function");
  CHECK(lua.Str("cmsgpack._NAME") == "cmsgpack");
  CHECK(lua.Str("cmsgpack._VERSION") == "lua-cmsgpack 0.4.0");
}

TEST_CASE("cmsgpack: integers take the smallest encoding", "[lua-libs]") {
  Lua lua;
  const std::pair<const char*, const char*> cases[] = {
      {"0", "00"},
      {"1", "01"},
      {"127", "7f"},
      {"128", "cc80"},
      {"255", "ccff"},
      {"256", "cd0100"},
      {"65535", "cdffff"},
      {"65536", "ce00010000"},
      {"2^32-1", "ceffffffff"},
      {"2^32", "cf0000000100000000"},
      {"2^53", "cf0020000000000000"},
      {"-1", "ff"},
      {"-32", "e0"},
      {"-33", "d0df"},
      {"-128", "d080"},
      {"-129", "d1ff7f"},
      {"-32768", "d18000"},
      {"-32769", "d2ffff7fff"},
      {"-2^31", "d280000000"},
      {"-2^31-1", "d3ffffffff7fffffff"},
      {"-2^63", "d38000000000000000"},
      {"-0", "00"},
  };
  for (const auto& [expr, hex] : cases) {
    INFO(expr);
    CHECK(lua.Str(std::string("ph(") + expr + ")") == hex);
  }
}

TEST_CASE("cmsgpack: floats are float32 when exact, else float64", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("ph(1.5)") == "ca3fc00000");
  CHECK(lua.Str("ph(-0.25)") == "cabe800000");
  CHECK(lua.Str("ph(0.1)") == "cb3fb999999999999a");
  CHECK(lua.Str("ph(2^63)") == "ca5f000000");  // integral but beyond int64: a float
  CHECK(lua.Str("ph(2^64 + 2^20)") == "cb43f0000000000100");
  CHECK(lua.Str("ph(1/0)") == "ca7f800000");
  CHECK(lua.Str("ph(-1/0)") == "caff800000");
  CHECK(lua.Str("ph(1e300)") == "cb7e37e43c8800759c");
  CHECK(lua.Str("ph(0/0):sub(1, 2)") == "cb");  // NaN is never exact as float32
  CHECK(lua.True("cmsgpack.unpack(cmsgpack.pack(0/0)) ~= cmsgpack.unpack(cmsgpack.pack(0/0))"));
}

TEST_CASE("cmsgpack: nil, booleans, and types MessagePack lacks", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("ph(nil)") == "c0");
  CHECK(lua.Str("ph(true)") == "c3");
  CHECK(lua.Str("ph(false)") == "c2");
  CHECK(lua.Str("ph(print)") == "c0");
  CHECK(lua.Str("ph(coroutine.create(function() end))") == "c0");
  CHECK(lua.Str("ph({f = print})") == "81a166c0");
}

TEST_CASE("cmsgpack: strings by length", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("ph('')") == "a0");
  CHECK(lua.Str("ph('abc')") == "a3616263");
  CHECK(lua.Str("ph('a\\0b')") == "a3610062");  // raw bytes, NUL included
  CHECK(lua.Str("ph(string.rep('x', 31)):sub(1, 4)") == "bf78");
  CHECK(lua.Str("ph(string.rep('x', 32)):sub(1, 6)") == "d92078");
  CHECK(lua.Str("ph(string.rep('x', 255)):sub(1, 6)") == "d9ff78");
  CHECK(lua.Str("ph(string.rep('x', 256)):sub(1, 8)") == "da010078");
  CHECK(lua.Str("ph(string.rep('x', 65535)):sub(1, 8)") == "daffff78");
  CHECK(lua.Str("ph(string.rep('x', 65536)):sub(1, 12)") == "db0001000078");
  CHECK(lua.Str("#cmsgpack.pack(string.rep('x', 65536))") == "65541");
}

TEST_CASE("cmsgpack: arrays and maps", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("ph({})") == "90");
  CHECK(lua.Str("ph({1, 2, 3})") == "93010203");
  CHECK(lua.Str("ph({1, {2, 'a'}, true})") == "93019202a161c3");
  CHECK(lua.Str("ph({a = 1})") == "81a16101");
  CHECK(lua.Str("ph({[2] = 7})") == "810207");  // keys not 1..n: a map
  CHECK(lua.Str("ph({[1.5] = 7})") == "81ca3fc0000007");
  CHECK(lua.Str("ph({[0] = 7})") == "810007");
  CHECK(lua.Str("ph({[-1] = 7})") == "81ff07");
  CHECK(lua.Str("ph({[true] = false})") == "81c3c2");
  CHECK(lua.Str("ph({[1] = 1, [3] = 3}):sub(1, 2)") == "82");  // a hole: a map
  CHECK(lua.Str("ph({1, 2, nil, 4}):sub(1, 2)") == "83");
  lua.Run("function seq(n) local t = {} for i = 1, n do t[i] = i % 100 end return t end");
  lua.Run("function map(n) local t = {} for i = 1, n do t['k' .. i] = i end return t end");
  CHECK(lua.Str("ph(seq(15)):sub(1, 4)") == "9f01");
  CHECK(lua.Str("ph(seq(16)):sub(1, 8)") == "dc001001");
  CHECK(lua.Str("ph(seq(65535)):sub(1, 8)") == "dcffff01");
  CHECK(lua.Str("ph(seq(65536)):sub(1, 12)") == "dd0001000001");
  CHECK(lua.Str("ph(map(15)):sub(1, 2)") == "8f");
  CHECK(lua.Str("ph(map(16)):sub(1, 6)") == "de0010");
  CHECK(lua.Str("ph(map(65536)):sub(1, 10)") == "df00010000");
}

TEST_CASE("cmsgpack: several arguments pack back to back", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("ph(1, 2, 3)") == "010203");
  CHECK(lua.Str("ph(nil, 'a', {})") == "c0a16190");
  CHECK(lua.True("select('#', cmsgpack.unpack(cmsgpack.pack(1, nil, 'x', {1}))) == 4"));
  CHECK(lua.True("deq({cmsgpack.unpack(cmsgpack.pack(1, 'x', {1}))}, {1, 'x', {1}})"));
  CHECK(Contains(lua.Error("cmsgpack.pack()"), "MessagePack pack needs input."));
}

TEST_CASE("cmsgpack: tables nest 16 deep, deeper ones and cycles pack as nil", "[lua-libs]") {
  Lua lua;
  lua.Run("function chain(n) local t = {} for i = 2, n do t = {t} end return t end");
  std::string seventeen;  // 16 one-element arrays, then the 17th table as nil
  for (int i = 0; i < 16; i++) seventeen += "91";
  CHECK(lua.Str("ph(chain(16))") == seventeen.substr(2) + "90");
  CHECK(lua.Str("ph(chain(17))") == seventeen + "c0");
  CHECK(lua.Str("ph(chain(40))") == seventeen + "c0");
  CHECK(lua.Str("(function() local t = {} t[1] = t return ph(t) end)()") == seventeen + "c0");
  // A value's own level counts: the same chain one level down inside a map.
  CHECK(lua.Str("ph({k = chain(16)})") == "81a16b" + seventeen.substr(2) + "c0");
}

TEST_CASE("cmsgpack: round trips at every size boundary", "[lua-libs]") {
  Lua lua;
  const char* values[] = {
      "0",
      "1",
      "127",
      "128",
      "255",
      "256",
      "65535",
      "65536",
      "2^32-1",
      "2^32",
      "2^53",
      "-1",
      "-32",
      "-33",
      "-128",
      "-129",
      "-32768",
      "-32769",
      "-2^31",
      "-2^31-1",
      "-2^53",
      "-2^63",
      "1.5",
      "-1.5",
      "0.1",
      "1e300",
      "-1e-300",
      "2^63",
      "1/0",
      "-1/0",
      "true",
      "false",
      "''",
      "'abc'",
      "string.rep('s', 31)",
      "string.rep('s', 32)",
      "string.rep('s', 255)",
      "string.rep('s', 256)",
      "string.rep('s', 65535)",
      "string.rep('s', 65536)",
      "string.rep('\\0\\255', 40000)",
      "{}",
      "{1, 2, 3}",
      "{1, 'two', {3, {4}}, true}",
      "{a = 1, b = {c = 'd'}, [5] = 5}",
      "{[1.5] = 'x', [-7] = 'y', [true] = {}}",
  };
  for (const char* v : values) {
    INFO(v);
    CHECK(lua.True(std::string("rt(") + v + ")"));
  }
  lua.Run("function seq(n) local t = {} for i = 1, n do t[i] = i * 3 end return t end");
  lua.Run("function map(n) local t = {} for i = 1, n do t['k' .. i] = {i} end return t end");
  for (int n : {15, 16, 17, 65535, 65536}) {
    INFO(n);
    CHECK(lua.True("rt(seq(" + std::to_string(n) + "))"));
    CHECK(lua.True("rt(map(" + std::to_string(n) + "))"));
  }
  CHECK(lua.True("cmsgpack.unpack(cmsgpack.pack(nil)) == nil"));
}

TEST_CASE("cmsgpack: decodes forms it never writes", "[lua-libs]") {
  Lua lua;
  CHECK(lua.True("cmsgpack.unpack(unhex('cb3ff8000000000000')) == 1.5"));  // float64 1.5
  CHECK(lua.True("cmsgpack.unpack(unhex('cc05')) == 5"));                  // uint8 of a fixint
  CHECK(lua.True("cmsgpack.unpack(unhex('d0ff')) == -1"));
  CHECK(lua.True("cmsgpack.unpack(unhex('d1fffe')) == -2"));
  CHECK(lua.True("cmsgpack.unpack(unhex('d2fffffffd')) == -3"));
  CHECK(lua.True("cmsgpack.unpack(unhex('d3fffffffffffffffc')) == -4"));
  CHECK(lua.True("cmsgpack.unpack(unhex('cfffffffffffffffff')) == 2^64"));
  CHECK(lua.True("cmsgpack.unpack(unhex('ce80000000')) == 2^31"));
  CHECK(lua.True("cmsgpack.unpack(unhex('d90161')) == 'a'"));
  CHECK(lua.True("cmsgpack.unpack(unhex('da000161')) == 'a'"));
  CHECK(lua.True("cmsgpack.unpack(unhex('db0000000161')) == 'a'"));
  CHECK(lua.True("deq(cmsgpack.unpack(unhex('dc00020102')), {1, 2})"));
  CHECK(lua.True("deq(cmsgpack.unpack(unhex('dd000000020102')), {1, 2})"));
  CHECK(lua.True("deq(cmsgpack.unpack(unhex('de0001a16101')), {a = 1})"));
  CHECK(lua.True("deq(cmsgpack.unpack(unhex('df00000001a16101')), {a = 1})"));
  CHECK(lua.True("deq(cmsgpack.unpack(unhex('92c0c3')), {nil, true})"));
  CHECK(lua.Str("select('#', cmsgpack.unpack(''))") == "0");
}

TEST_CASE("cmsgpack: unpack_one and unpack_limit walk a stream by offset", "[lua-libs]") {
  Lua lua;
  lua.Run("s = cmsgpack.pack(1, 'ab', 3)");  // 01 a26162 03: offsets 0, 1, 4
  CHECK(lua.True("deq({cmsgpack.unpack_one(s)}, {1, 1})"));
  CHECK(lua.True("deq({cmsgpack.unpack_one(s, 1)}, {4, 'ab'})"));
  CHECK(lua.True("deq({cmsgpack.unpack_one(s, 4)}, {-1, 3})"));
  CHECK(lua.True("deq({cmsgpack.unpack_one(s, 5)}, {-1})"));  // at the end: nothing left
  CHECK(lua.True("deq({cmsgpack.unpack_limit(s, 2)}, {4, 1, 'ab'})"));
  CHECK(lua.True("deq({cmsgpack.unpack_limit(s, 9, 1)}, {-1, 'ab', 3})"));
  CHECK(lua.True("deq({cmsgpack.unpack_limit(s, 0, 1)}, {1})"));
  CHECK(lua.True("deq({cmsgpack.unpack_limit(s, 0)}, {1, 'ab', 3})"));  // as unpack(s)
  CHECK(lua.True("deq({cmsgpack.unpack_one('')}, {-1})"));
  CHECK(Contains(lua.Error("cmsgpack.unpack_one(s, 6)"),
                 "Start offset 6 greater than input length 5."));
  CHECK(Contains(lua.Error("cmsgpack.unpack_one(s, -1)"), "Invalid request to unpack"));
  CHECK(Contains(lua.Error("cmsgpack.unpack_limit(s, -1)"), "Invalid request to unpack"));
  CHECK(Contains(lua.Error("cmsgpack.unpack_one(unhex('01a3'), 1)"), "Missing bytes in input."));
  CHECK_FALSE(lua.Error("cmsgpack.unpack_limit(s)").empty());
}

TEST_CASE("cmsgpack: truncated or malformed input raises lua-cmsgpack's errors", "[lua-libs]") {
  Lua lua;
  const char* missing[] = {
      "cc",
      "cd01",
      "ce010203",
      "cf01020304050607",
      "d0",
      "d1ff",
      "d2ffffff",
      "d3ffffffffffffff",
      "ca3fc000",
      "cb3ff8",
      "a2",
      "a161a1",
      "d9",
      "d90261",
      "da00",
      "da000261",
      "db000000",
      "db0000000261",
      "91",
      "9201",
      "dc00",
      "dc000201",
      "dd000000",
      "81",
      "81a161",
      "de0001a161",
      "df00000001",
      "93010203"
      "94",
  };
  for (const char* hex : missing) {
    INFO(hex);
    CHECK(Contains(lua.Error(std::string("cmsgpack.unpack(unhex('") + hex + "'))"),
                   "Missing bytes in input."));
  }
  const char* bad[] = {"c1",
                       "c40161",
                       "c5000161",
                       "c600000001",
                       "c7000100",
                       "d40100",
                       "d8010000000000000000000000000000000000",
                       "9101c1",
                       "8101c4"};
  for (const char* hex : bad) {
    INFO(hex);
    CHECK(Contains(lua.Error(std::string("cmsgpack.unpack(unhex('") + hex + "'))"),
                   "Bad data format in input."));
  }
  // A nil or NaN map key is Lua's own error, not a crash.
  CHECK(Contains(lua.Error("cmsgpack.unpack(unhex('81c001'))"), "table index is nil"));
  CHECK(Contains(lua.Error("cmsgpack.unpack(unhex('81cb7ff800000000000001'))"),
                 "table index is NaN"));
}

TEST_CASE("cmsgpack: hostile sizes and depths fail fast without allocating", "[lua-libs]") {
  Lua lua;
  // Counts and lengths near 2^32 with nothing behind them.
  for (const char* hex : {"dbffffffff", "ddffffffff", "dfffffffff", "dcffff", "deffff",
                          "dbfffffffe61", "ddffffffff01"}) {
    INFO(hex);
    CHECK(Contains(lua.Error(std::string("cmsgpack.unpack(unhex('") + hex + "'))"),
                   "Missing bytes in input."));
  }
  lua_gc(lua.L(), LUA_GCCOLLECT, 0);
  CHECK(lua_gc(lua.L(), LUA_GCCOUNT, 0) < 1024);  // KiB: nothing sized from the input stayed
  // Nesting beyond the Lua C stack limit, and more top-level values than it allows: errors.
  CHECK_FALSE(lua.Error("cmsgpack.unpack(string.rep('\\145', 100000))").empty());
  CHECK_FALSE(lua.Error("cmsgpack.unpack(string.rep('\\129\\1', 100000))").empty());
  CHECK(Contains(lua.Error("cmsgpack.unpack(string.rep('\\1', 100000))"), "too many"));
  // ... which unpack_limit reads in pieces.
  CHECK(lua.True("select('#', cmsgpack.unpack_limit(string.rep('\\1', 100000), 100)) == 101"));
  // Depth that fits: 1000 nested arrays decode.
  CHECK(lua.True("type(cmsgpack.unpack(string.rep('\\145', 1000) .. '\\1')) == 'table'"));
}

}  // namespace lua_cmsgpack_test
