// Conversions between replies and Lua values, as Redis documents them for scripts
// (https://redis.io/docs/interact/programmability/lua-api/, "Data type conversion"):
//   reply -> Lua: integer -> number; bulk string -> string; null bulk / null array -> false;
//                 array -> table (nested); status -> {ok=s}; error -> {err=s}. RESP3 (a script
//                 that called redis.setresp(3)): null -> nil, map -> {map={k=v...}}, set ->
//                 {set={m=true...}}, double -> {double=n}, boolean -> boolean, verbatim ->
//                 {verbatim_string={format=f, string=s}}, big number -> {big_number=s}.
//   Lua -> reply: number -> integer (truncated); string -> bulk; true -> 1 and false -> null
//                 (a RESP2 script) or booleans (RESP3); nil -> null; a table with a string `err`
//                 field -> error, with `ok` -> status, `double` -> double, `map` -> map, `set` ->
//                 set, `big_number` -> big number (as a bulk), `verbatim_string` -> verbatim;
//                 any other table -> array of t[1], t[2], ... up to the first nil (nested).
//                 The reply's own form follows the thread's reply protocol (reply.h): a map is a
//                 flat array for a RESP2 client.
// Pure functions over a lua_State the caller owns; any thread that owns it.
#pragma once

#include <lua.hpp>
#include <string>

namespace rockcache::server::scripting {

// Tables nested deeper than this in a script's reply are refused (a Lua error), so a
// self-referencing table cannot recurse without end.
constexpr int kMaxReplyDepth = 512;

// Pushes the Lua value of the one reply (RESP2 or RESP3) at the start of [*pos, end) and advances
// *pos past it. REQUIRES: the bytes hold one whole reply (a command's reply, as Call appends it).
void PushReply(lua_State* L, const char** pos, const char* end);

// Appends the reply of the Lua value at `index`, in the thread's reply protocol; `script_resp3`:
// the script called redis.setresp(3) (booleans stay booleans). Raises a Lua error for a reply
// nested deeper than kMaxReplyDepth.
void AppendLuaReply(lua_State* L, int index, std::string* out, bool script_resp3);

// The integer a script's number becomes: truncated toward zero; NaN and values out of the
// 64-bit range become INT64_MIN, as the x86 conversion Redis relies on.
long long LuaNumberToInteger(lua_Number n);

}  // namespace rockcache::server::scripting
