// cmsgpack: the MessagePack library Redis gives its Lua scripts, for a Lua 5.1 state.
//
// Behaves as lua-cmsgpack 0.4.0 (the version Redis 7.0 bundles), written anew for rockcache:
//   cmsgpack.pack(v1, v2, ...)            -> the encodings of v1, v2, ... concatenated
//   cmsgpack.unpack(s)                    -> every value encoded in s
//   cmsgpack.unpack_one(s[, offset])      -> next_offset, value
//   cmsgpack.unpack_limit(s, n[, offset]) -> next_offset, up to n values
// Offsets are 0-based byte offsets into s; next_offset is -1 once s is used up. (As in
// lua-cmsgpack, unpack_limit(s, 0) with no offset behaves as unpack(s): all values, no offset.)
//
// Encoding: integral numbers in [-2^63, 2^63) take the smallest integer form (fixint, uint8..64,
// negative fixint, int8..64); other numbers are float32 when that is exact, else float64;
// strings are str (fixstr/str8/16/32, raw bytes); booleans and nil as themselves; a table whose
// keys are exactly 1..n is an array, any other table a map. Tables nested deeper than 16 levels
// (cycles included) pack as nil; functions, userdata and threads pack as nil. Packed output is
// capped at kMaxPackedBytes (an error beyond it), so a table referring to itself many times
// cannot run the server out of memory.
// Decoding: every MessagePack type except bin and ext (those, and the unused byte 0xc1, raise
// "Bad data format in input."); truncated input raises "Missing bytes in input.". Lengths read
// from the input are checked against the bytes left before anything is allocated, and every
// element consumes at least one input byte, so work and memory are linear in the input. Nesting
// depth is bounded by the Lua C stack limit (LUAI_MAXCSTACK): deeper input raises a Lua error.
// Integers decode to Lua numbers (doubles): beyond 2^53 they lose precision, and uint64 values
// at or above 2^63 decode as positive numbers (lua-cmsgpack on 64-bit makes them negative).
//
// Errors are raised with lua_error, which in the C++ build of Lua throws; the library holds no
// resource that a throw would leak. Thread-safety: none of its own; a lua_State is used by one
// thread at a time.
#pragma once

#include <cstddef>
#include <lua.hpp>

namespace rockcache::server::scripting {

// The largest string cmsgpack.pack returns (512 MiB, Redis's default proto-max-bulk-len).
inline constexpr size_t kMaxPackedBytes = size_t{64} << 20;

// Creates the `cmsgpack` table (pack, unpack, unpack_one, unpack_limit, and the _NAME, _VERSION,
// _COPYRIGHT, _DESCRIPTION fields lua-cmsgpack has), stores it as the global `cmsgpack`, and
// leaves it on the stack: returns 1. Usable as a lua_CFunction (lua_pushcfunction + lua_call).
// Raises a Lua error only when out of memory, so call it under a protected call (lua_pcall or
// lua_cpcall) unless the state's allocator cannot fail.
int OpenCmsgpack(lua_State* L);

}  // namespace rockcache::server::scripting
