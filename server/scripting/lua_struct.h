// struct: the binary packing library Redis gives its Lua scripts, for a Lua 5.1 state.
//
// Behaves as Roberto Ierusalimschy's struct library (v0.2, as Redis bundles it, with Redis's
// later bounds fixes), written anew for rockcache:
//   struct.pack(fmt, v1, ...)   -> a string holding the values laid out as fmt says
//   struct.unpack(fmt, s[, i])  -> the values read from s starting at byte i (1-based, default
//                                  1), then the position just after the last byte read
//   struct.size(fmt)            -> the size in bytes of a string packed with fmt
// Format options:
//   >  <      big / little endian from here on (native, little on x86-64, by default)
//   ![n]      align to at most n bytes (a power of 2; default 8) from here on; 1 at start
//   x         one byte of padding (zero when packing, skipped when unpacking)
//   b B       signed / unsigned char       h H   short (2 bytes)
//   l L       long (8 bytes)               T     size_t (8 bytes)
//   i[n] I[n] signed / unsigned integer of n bytes (default 4), 0 <= n <= 32
//   f d       float / double (IEEE 754, in the current byte order)
//   s         zero-terminated string       c[n]  n chars (default 1); c0 packs the whole
//             string, and unpacks as many bytes as the number unpacked just before it
//   ' '       ignored
// Integers are read through 64 bits: an integer wider than 8 bytes packs its value in the low
// 8 bytes and zeros above (as struct does, even for negative numbers), and unpacks from its low
// 8 bytes. Numbers are converted towards zero; out of the 64-bit range they saturate.
//
// Bounds: a count or size in a format above INT_MAX raises "integral size overflow" (Redis's fix
// for CVE-2020-14147), an integer size above 32 raises an error, and unpack checks every read
// against the string's length, so no format makes unpack read past the string or pack allocate
// more than its arguments justify. Errors are raised with lua_error (a C++ throw in this build);
// nothing the library holds leaks when it does. Thread-safety: none of its own; a lua_State is
// used by one thread at a time.
#pragma once

#include <lua.hpp>

namespace rockcache::server::scripting {

// Creates the `struct` table (pack, unpack, size), stores it as the global `struct` (and in
// package.loaded, as luaL_register does), and leaves it on the stack: returns 1. Usable as a
// lua_CFunction. Raises a Lua error only when out of memory, so call it under a protected call
// unless the state's allocator cannot fail.
int OpenStruct(lua_State* L);

}  // namespace rockcache::server::scripting
