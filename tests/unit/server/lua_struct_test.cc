// server/scripting: the struct Lua library (lua_struct.h). Expected bytes come from the struct
// format rules, written as hex.
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "tests/unit/server/lua_libs.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace lua_struct_test {

using rockcache::server::scripting::testing::Contains;
using rockcache::server::scripting::testing::Lua;

TEST_CASE("struct: globals", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("type(struct.pack)") == "function");
  CHECK(lua.Str("type(struct.unpack)") == "function");
  CHECK(lua.Str("type(struct.size)") == "function");
  CHECK(lua.True("package.loaded.struct == struct"));
}

TEST_CASE("struct: pack writes each format letter", "[lua-libs]") {
  Lua lua;
  const std::pair<const char*, const char*> cases[] = {
      {"'>b', -1", "ff"},
      {"'>b', 127", "7f"},
      {"'>B', 255", "ff"},
      {"'>B', 256", "00"},  // truncated to the width
      {"'>h', -2", "fffe"},
      {"'<h', -2", "feff"},
      {"'>H', 0x1234", "1234"},
      {"'<H', 0x1234", "3412"},
      {"'>l', -1", "ffffffffffffffff"},
      {"'<L', 1", "0100000000000000"},
      {"'>T', 258", "0000000000000102"},
      {"'>i', 1", "00000001"},
      {"'<i', 1", "01000000"},
      {"'>I', 2^32-1", "ffffffff"},
      {"'>i2', 0x0102", "0102"},
      {"'<i2', 0x0102", "0201"},
      {"'>I3', 0x010203", "010203"},
      {"'<I3', 0x010203", "030201"},
      {"'>i8', -2", "fffffffffffffffe"},
      {"'>i16', -1", "0000000000000000ffffffffffffffff"},  // upper bytes zero, as struct
      {"'<I16', 1", "01000000000000000000000000000000"},
      {"'>i0', 5", ""},
      {"'>i', 1.9", "00000001"},  // towards zero
      {"'>i', -1.9", "ffffffff"},
      {"'>f', 1.5", "3fc00000"},
      {"'<f', 1.5", "0000c03f"},
      {"'>d', 1.5", "3ff8000000000000"},
      {"'<d', -2", "00000000000000c0"},
      {"'s', 'ab'", "616200"},
      {"'s', ''", "00"},
      {"'c', 'xyz'", "78"},
      {"'c2', 'abc'", "6162"},
      {"'c0', 'abc'", "616263"},
      {"'x'", "00"},
      {"'bxb', 1, 2", "010002"},
      {"' > b  h ', 1, 2", "010002"},
      {"'>b<h>h', 1, 2, 3", "0102000003"},
  };
  for (const auto& [args, hex] : cases) {
    INFO(args);
    CHECK(lua.Str(std::string("sh(") + args + ")") == hex);
  }
  CHECK(Contains(lua.Error("struct.pack('c5', 'abc')"), "string too short"));
  CHECK(Contains(lua.Error("struct.pack('i', 'x')"), "number expected"));
  CHECK(Contains(lua.Error("struct.pack('i')"), "number expected"));
  CHECK(Contains(lua.Error("struct.pack('s')"), "string expected"));
  // An error after pack has buffered bytes: the buffer is freed as the error unwinds (the
  // C++ build of Lua throws; `make asan` would report a leak otherwise).
  CHECK(Contains(lua.Error("struct.pack('c40 i', string.rep('a', 40), 'x')"), "number expected"));
  CHECK(Contains(lua.Error("struct.pack('z', 1)"), "invalid format option 'z'"));
}

TEST_CASE("struct: alignment with '!'", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("sh('<b i', 1, 2)") == "0102000000");  // no '!': packed
  CHECK(lua.Str("sh('<!4 b i', 1, 2)") == "0100000002000000");
  CHECK(lua.Str("sh('<!2 b i', 1, 2)") == "010002000000");
  CHECK(lua.Str("sh('<! b h b i b d', 1, 2, 3, 4, 5, 0)") ==
        "01000200"
        "03000000"
        "04000000"
        "05000000"
        "0000000000000000");
  CHECK(lua.Str("sh('<!8 b c3', 1, 'abc')") == "01616263");  // chars never align
  CHECK(lua.Str("sh('<!8 b x', 1)") == "0100");
  CHECK(Contains(lua.Error("struct.pack('!3 b', 1)"), "alignment 3 is not a power of 2"));
  CHECK(Contains(lua.Error("struct.pack('!0 b', 1)"), "alignment 0 is not a power of 2"));
}

TEST_CASE("struct: unpack reads each format letter and returns the next position", "[lua-libs]") {
  Lua lua;
  CHECK(lua.True("deq({struct.unpack('>b', unhex('ff'))}, {-1, 2})"));
  CHECK(lua.True("deq({struct.unpack('>B', unhex('ff'))}, {255, 2})"));
  CHECK(lua.True("deq({struct.unpack('>h', unhex('fffe'))}, {-2, 3})"));
  CHECK(lua.True("deq({struct.unpack('<H', unhex('3412'))}, {0x1234, 3})"));
  CHECK(lua.True("deq({struct.unpack('>l', unhex('fffffffffffffffe'))}, {-2, 9})"));
  CHECK(lua.True("deq({struct.unpack('>L', unhex('0000000100000000'))}, {2^32, 9})"));
  CHECK(lua.True("deq({struct.unpack('<T', unhex('0201000000000000'))}, {258, 9})"));
  CHECK(lua.True("deq({struct.unpack('>i', unhex('80000000'))}, {-2^31, 5})"));
  CHECK(lua.True("deq({struct.unpack('>I', unhex('80000000'))}, {2^31, 5})"));
  CHECK(lua.True("deq({struct.unpack('>i3', unhex('fffffe'))}, {-2, 4})"));
  CHECK(lua.True("deq({struct.unpack('<I3', unhex('030201'))}, {0x010203, 4})"));
  CHECK(
      lua.True("deq({struct.unpack('>i16', unhex('0000000000000000ffffffffffffffff'))}, "
               "{-1, 17})"));
  CHECK(
      lua.True("deq({struct.unpack('>I16', unhex('ff000000000000000000000000000005'))}, "
               "{5, 17})"));
  CHECK(lua.True("deq({struct.unpack('i0', 'abc')}, {0, 1})"));
  CHECK(lua.True("deq({struct.unpack('>f', unhex('3fc00000'))}, {1.5, 5})"));
  CHECK(lua.True("deq({struct.unpack('<d', unhex('00000000000000c0'))}, {-2, 9})"));
  CHECK(lua.True("deq({struct.unpack('s', 'ab\\0cd')}, {'ab', 4})"));
  CHECK(lua.True("deq({struct.unpack('c2', 'abc')}, {'ab', 3})"));
  CHECK(lua.True("deq({struct.unpack('c', 'abc')}, {'a', 2})"));
  CHECK(lua.True("deq({struct.unpack('b c0', '\\3abcde')}, {'abc', 5})"));
  CHECK(lua.True("deq({struct.unpack('xb', '\\1\\2')}, {2, 3})"));
  CHECK(lua.True("deq({struct.unpack('<!4 b i', unhex('0100000002000000'))}, {1, 2, 9})"));
  CHECK(lua.True("deq({struct.unpack('b', '\\1\\2\\3', 2)}, {2, 3})"));
  CHECK(lua.True("deq({struct.unpack('', 'abc', 9)}, {9})"));
}

TEST_CASE("struct: round trips in both byte orders", "[lua-libs]") {
  Lua lua;
  const char* code = R"lua(
    local ok = true
    for _, e in ipairs({'<', '>', '='}) do
      if e == '=' then e = '' end
      for _, c in ipairs({
          {'b', -128}, {'b', 127}, {'B', 0}, {'B', 255}, {'h', -32768}, {'h', 32767},
          {'H', 65535}, {'l', -2^53}, {'l', 2^53}, {'L', 2^53}, {'T', 12345}, {'i', -2^31},
          {'i', 2^31-1}, {'I', 2^32-1}, {'i1', -1}, {'i2', -300}, {'i3', -70000},
          {'I5', 2^40-1}, {'i7', -2^50}, {'i8', -2^62}, {'I8', 2^63}, {'f', 0.5}, {'f', -3},
          {'d', 0.1}, {'d', -1e300}, {'s', 'text'}, {'c3', 'abc'}}) do
        local s = struct.pack(e .. c[1], c[2])
        local v, nextpos = struct.unpack(e .. c[1], s)
        if v ~= c[2] or nextpos ~= #s + 1 then ok = false; print(e, c[1], v, nextpos) end
      end
    end
    return ok
  )lua";
  REQUIRE(lua.Run(std::string("ok = (function() ") + code + " end)()").empty());
  CHECK(lua.True("ok"));
  CHECK(
      lua.True("deq({struct.unpack('>!4 b h i d s c2', "
               "struct.pack('>!4 b h i d s c2', 1, 2, 3, 4.5, 'str', 'xy'))}, "
               "{1, 2, 3, 4.5, 'str', 'xy', 23})"));
}

TEST_CASE("struct: size", "[lua-libs]") {
  Lua lua;
  CHECK(lua.Str("struct.size('')") == "0");
  CHECK(lua.Str("struct.size('b')") == "1");
  CHECK(lua.Str("struct.size('i')") == "4");
  CHECK(lua.Str("struct.size('bhlTfdi3x')") == "35");
  CHECK(lua.Str("struct.size('!bhld')") == "24");
  CHECK(lua.Str("struct.size('!4 b d')") == "12");
  CHECK(lua.Str("struct.size('c10')") == "10");
  CHECK(lua.Str("struct.size('i32')") == "32");
  CHECK(lua.Str("struct.size('c2147483647')") == "2147483647");
  CHECK(Contains(lua.Error("struct.size('s')"), "option 's' has no fixed size"));
  CHECK(Contains(lua.Error("struct.size('c0')"), "option 'c0' has no fixed size"));
  CHECK(Contains(lua.Error("struct.size('!6')"), "alignment 6 is not a power of 2"));
  CHECK(Contains(lua.Error("struct.size('?')"), "invalid format option '?'"));
  CHECK(lua.True("struct.size('bhi') == #struct.pack('bhi', 1, 2, 3)"));
}

TEST_CASE("struct: malicious formats and data raise errors", "[lua-libs]") {
  Lua lua;
  for (const char* fmt : {"i99999999999", "I2147483648", "c99999999999", "!99999999999",
                          "c"
                          "184467440737095516160"}) {
    INFO(fmt);
    std::string f = std::string("'") + fmt + "'";
    CHECK(Contains(lua.Error("struct.pack(" + f + ", 1)"), "integral size overflow"));
    CHECK(Contains(lua.Error("struct.unpack(" + f + ", 'abcd')"), "integral size overflow"));
    CHECK(Contains(lua.Error("struct.size(" + f + ")"), "integral size overflow"));
  }
  CHECK(Contains(lua.Error("struct.pack('i33', 1)"), "integral size 33 is larger than limit"));
  CHECK(Contains(lua.Error("struct.unpack('I2147483647', 'a')"), "is larger than limit"));
  CHECK(Contains(lua.Error("struct.pack('c2147483647', 'abc')"), "string too short"));
  CHECK(Contains(lua.Error("struct.unpack('c2147483647', 'abc')"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('i', 'abc')"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('d', 'abcdefg')"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('bbbb', 'abc')"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('b', 'abc', 0)"), "offset must be 1 or greater"));
  CHECK(Contains(lua.Error("struct.unpack('b', 'abc', -5)"), "offset must be 1 or greater"));
  CHECK(Contains(lua.Error("struct.unpack('b', 'abc', 5)"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('b', 'abc', 2^62)"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('!8 d', 'abcdefgh', 2)"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('s', 'abc')"), "unfinished string in data"));
  CHECK(Contains(lua.Error("struct.unpack('s', 'abc', 4)"), "unfinished string in data"));
  CHECK(Contains(lua.Error("struct.unpack('c0', 'abc')"), "format 'c0' needs a previous size"));
  CHECK(Contains(lua.Error("struct.unpack('c0', 'abc', 1)"), "needs a previous size"));
  CHECK(Contains(lua.Error("struct.unpack('b c0', '\\255abc')"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('B c0', '\\4abc')"), "data string too short"));
  CHECK(Contains(lua.Error("struct.unpack('z', 'abc')"), "invalid format option 'z'"));
  CHECK(Contains(lua.Error("struct.unpack('7', 'abc')"), "invalid format option '7'"));
  // More results than the Lua C stack holds: an error, not an overflow.
  CHECK(Contains(lua.Error("struct.unpack(string.rep('b', 100000), string.rep('a', 100000))"),
                 "too many results"));
  CHECK(
      lua.True("select('#', struct.unpack(string.rep('b', 1000), string.rep('a', 1000))) "
               "== 1001"));
}

}  // namespace lua_struct_test
