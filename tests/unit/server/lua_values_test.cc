// RESP <-> Lua conversions of scripts (server/scripting/lua_values.h), both directions, as Redis
// documents them.
#include "server/scripting/lua_values.h"

#include <catch2/catch.hpp>
#include <climits>
#include <string>

#include "server/protocol/reply.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::server::scripting::lua_values_test {
namespace {

// A state with the standard libraries; closed on destruction.
struct State {
  State() : L(luaL_newstate()) { luaL_openlibs(L); }
  ~State() { lua_close(L); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  lua_State* L;
};

// The reply of the value of Lua expression `expression`.
// `client`: the protocol the reply is written in; `script_resp3`: the script called
// redis.setresp(3).
std::string ReplyOf(const std::string& expression, Protocol client = Protocol::kResp2,
                    bool script_resp3 = false) {
  State state;
  REQUIRE(luaL_dostring(state.L, ("return " + expression).c_str()) == 0);
  std::string out;
  ReplyProtocolScope scope(client);
  AppendLuaReply(state.L, -1, &out, script_resp3);
  return out;
}

// Pushes the Lua value of `reply` and describes it with Lua code evaluated on it (as `v`).
std::string Describe(const std::string& reply, const std::string& describe) {
  State state;
  const char* pos = reply.data();
  PushReply(state.L, &pos, reply.data() + reply.size());
  CHECK(pos == reply.data() + reply.size());
  lua_setglobal(state.L, "v");
  REQUIRE(luaL_dostring(state.L, ("return " + describe).c_str()) == 0);
  const char* text = lua_tostring(state.L, -1);
  return text != nullptr ? text : "(not a string)";
}

TEST_CASE("Lua values become Redis replies", "[scripting][lua-values]") {
  CHECK(ReplyOf("42") == ":42\r\n");
  CHECK(ReplyOf("3.99") == ":3\r\n");
  CHECK(ReplyOf("-3.7") == ":-3\r\n");
  CHECK(ReplyOf("1/0") == ":-9223372036854775808\r\n");
  CHECK(ReplyOf("'text'") == "$4\r\ntext\r\n");
  CHECK(ReplyOf("true") == ":1\r\n");
  CHECK(ReplyOf("false") == "$-1\r\n");
  CHECK(ReplyOf("nil") == "$-1\r\n");
  CHECK(ReplyOf("{1, 'a', {2}, nil, 5}") == "*3\r\n:1\r\n$1\r\na\r\n*1\r\n:2\r\n");
  CHECK(ReplyOf("{err='ERR bad\\r\\nthing'}") == "-ERR bad  thing\r\n");
  CHECK(ReplyOf("{ok='FINE'}") == "+FINE\r\n");
  CHECK(ReplyOf("{a=1}") == "*0\r\n");
  CHECK(ReplyOf("print") == "$-1\r\n");
  CHECK(LuaNumberToInteger(0.0 / 0.0) == LLONG_MIN);
}

TEST_CASE("A self-referencing table is refused, not followed forever", "[scripting][lua-values]") {
  State state;
  REQUIRE(luaL_dostring(state.L, "local t = {} t[1] = t return t") == 0);
  lua_pushcfunction(state.L, [](lua_State* L) -> int {
    std::string out;
    AppendLuaReply(L, 1, &out, false);
    return 0;
  });
  lua_insert(state.L, -2);
  CHECK(lua_pcall(state.L, 1, 0, 0) != 0);
  CHECK(std::string(lua_tostring(state.L, -1)).find("reached lua stack limit") !=
        std::string::npos);
}

TEST_CASE("Redis replies become Lua values", "[scripting][lua-values]") {
  CHECK(Describe(":42\r\n", "type(v) .. v") == "number42");
  CHECK(Describe("$3\r\nabc\r\n", "type(v) .. v") == "stringabc");
  CHECK(Describe("$-1\r\n", "tostring(v)") == "false");
  CHECK(Describe("*-1\r\n", "tostring(v)") == "false");
  CHECK(Describe("+OK\r\n", "v.ok") == "OK");
  CHECK(Describe("-ERR no\r\n", "v.err") == "ERR no");
  CHECK(Describe("*2\r\n$1\r\na\r\n*1\r\n:7\r\n", "v[1] .. v[2][1] .. #v") == "a72");
  CHECK(Describe("$4\r\na\r\nb\r\n", "v") == "a\r\nb");  // binary-safe
}

TEST_CASE("RESP3 replies become Lua values (redis.setresp(3))", "[scripting][lua-values]") {
  CHECK(Describe("_\r\n", "tostring(v)") == "nil");
  CHECK(Describe("#t\r\n", "tostring(v)") == "true");
  CHECK(Describe("#f\r\n", "tostring(v)") == "false");
  CHECK(Describe(",2.5\r\n", "tostring(v.double)") == "2.5");
  CHECK(Describe("(123456789012345678901\r\n", "v.big_number") == "123456789012345678901");
  CHECK(Describe("%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n$1\r\nx\r\n", "v.map.a .. v.map.b") == "1x");
  CHECK(Describe("~2\r\n$1\r\na\r\n$1\r\nb\r\n", "tostring(v.set.a and v.set.b)") == "true");
  CHECK(Describe("=8\r\ntxt:abcd\r\n", "v.verbatim_string.format .. v.verbatim_string.string") ==
        "txtabcd");
  CHECK(Describe(">2\r\n$1\r\na\r\n:1\r\n", "v[1] .. v[2]") == "a1");
}

TEST_CASE("Lua tables become typed replies in the client's protocol", "[scripting][lua-values]") {
  // RESP2 clients: doubles as bulks, maps flattened, sets as arrays.
  CHECK(ReplyOf("{double=1.5}") == "$3\r\n1.5\r\n");
  CHECK(ReplyOf("{map={a=1}}") == "*2\r\n$1\r\na\r\n:1\r\n");
  CHECK(ReplyOf("{set={a=true}}") == "*1\r\n$1\r\na\r\n");
  CHECK(ReplyOf("{big_number='12345678901234567890'}") == "$20\r\n12345678901234567890\r\n");
  // RESP3 clients.
  CHECK(ReplyOf("{double=1.5}", Protocol::kResp3) == ",1.5\r\n");
  CHECK(ReplyOf("{map={a=1}}", Protocol::kResp3) == "%1\r\n$1\r\na\r\n:1\r\n");
  CHECK(ReplyOf("{set={a=true}}", Protocol::kResp3) == "~1\r\n$1\r\na\r\n");
  CHECK(ReplyOf("{verbatim_string={format='txt', string='hi'}}", Protocol::kResp3) ==
        "=6\r\ntxt:hi\r\n");
  // Booleans: a RESP2 script's false is a null of the client's protocol; a RESP3 script's stay
  // booleans.
  CHECK(ReplyOf("false", Protocol::kResp3) == "_\r\n");
  CHECK(ReplyOf("true", Protocol::kResp3) == ":1\r\n");
  CHECK(ReplyOf("true", Protocol::kResp3, true) == "#t\r\n");
  CHECK(ReplyOf("false", Protocol::kResp3, true) == "#f\r\n");
  CHECK(ReplyOf("false", Protocol::kResp2, true) == ":0\r\n");
}

}  // namespace
}  // namespace rockcache::server::scripting::lua_values_test
