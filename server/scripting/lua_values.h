// Conversions between RESP2 replies and Lua values, as Redis documents them for scripts
// (https://redis.io/docs/interact/programmability/lua-api/, "Data type conversion"):
//   reply -> Lua: integer -> number; bulk string -> string; null bulk / null array -> false;
//                 array -> table (nested); status -> {ok=s}; error -> {err=s}.
//   Lua -> reply: number -> integer (truncated); string -> bulk; true -> 1; false / nil -> null
//                 bulk; a table with a string `err` field -> error, with `ok` -> status; any other
//                 table -> array of t[1], t[2], ... up to the first nil (nested); anything else
//                 -> null bulk.
// Pure functions over a lua_State the caller owns; any thread that owns it.
#pragma once

#include <lua.hpp>
#include <string>

namespace rockcache::server::scripting {

// Tables nested deeper than this in a script's reply are refused (a Lua error), so a
// self-referencing table cannot recurse without end.
constexpr int kMaxReplyDepth = 512;

// Pushes the Lua value of the one RESP2 reply at the start of [*pos, end) and advances *pos past
// it. REQUIRES: the bytes hold one whole reply (a command's reply, as Call appends it).
void PushReply(lua_State* L, const char** pos, const char* end);

// Appends the RESP2 reply of the Lua value at `index`. Raises a Lua error for a reply nested
// deeper than kMaxReplyDepth.
void AppendLuaReply(lua_State* L, int index, std::string* out);

// The integer a script's number becomes: truncated toward zero; NaN and values out of the
// 64-bit range become INT64_MIN, as the x86 conversion Redis relies on.
long long LuaNumberToInteger(lua_Number n);

}  // namespace rockcache::server::scripting
