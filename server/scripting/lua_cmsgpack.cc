// cmsgpack for Lua 5.1: see lua_cmsgpack.h for the behaviour. MessagePack reference:
// https://github.com/msgpack/msgpack/blob/master/spec.md
#include "server/scripting/lua_cmsgpack.h"

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

namespace rockcache::server::scripting {

namespace {

// Tables nested this deep pack as nil (lua-cmsgpack's LUACMSGPACK_MAX_NESTING).
constexpr int kMaxNesting = 16;

constexpr const char* kMissingBytes = "Missing bytes in input.";
constexpr const char* kBadFormat = "Bad data format in input.";

// ---------------------------------------------------------------------------------------------
// Encoding

// Appends MessagePack encodings to a string. The value to encode is always on top of the Lua
// stack; Encode pops it.
class Encoder {
 public:
  explicit Encoder(lua_State* L) : L_(L) {}

  // Encodes the value on top of the stack (a table at `level` == kMaxNesting as nil), pops it.
  void Encode(int level) {
    int type = lua_type(L_, -1);
    if (type == LUA_TTABLE && level >= kMaxNesting) type = LUA_TNIL;
    switch (type) {
      case LUA_TSTRING: {
        size_t len = 0;
        const char* s = lua_tolstring(L_, -1, &len);
        String(s, len);
        break;
      }
      case LUA_TBOOLEAN:
        Byte(lua_toboolean(L_, -1) ? 0xc3 : 0xc2);
        break;
      case LUA_TNUMBER:
        Number(lua_tonumber(L_, -1));
        break;
      case LUA_TTABLE:
        Table(level);
        break;
      default:  // nil, and the types MessagePack cannot carry
        Byte(0xc0);
        break;
    }
    lua_pop(L_, 1);
  }

  std::string& out() { return out_; }
  // True once the output passed kMaxPackedBytes; the caller raises the error.
  bool too_big() const { return too_big_; }

 private:
  void Byte(uint8_t b) { Append(reinterpret_cast<const char*>(&b), 1); }

  void Append(const char* data, size_t n) {
    if (too_big_) return;
    if (n > kMaxPackedBytes - out_.size()) {
      too_big_ = true;
      return;
    }
    out_.append(data, n);
  }

  // A type byte followed by `width` bytes of `v`, big-endian.
  void Tagged(uint8_t tag, uint64_t v, int width) {
    char buf[9];
    buf[0] = static_cast<char>(tag);
    for (int i = 0; i < width; i++) {
      buf[1 + i] = static_cast<char>((v >> (8 * (width - 1 - i))) & 0xff);
    }
    Append(buf, 1 + width);
  }

  void Integer(int64_t n) {
    if (n >= 0) {
      uint64_t u = static_cast<uint64_t>(n);
      if (u <= 0x7f) {
        Byte(static_cast<uint8_t>(u));  // positive fixint
      } else if (u <= 0xff) {
        Tagged(0xcc, u, 1);
      } else if (u <= 0xffff) {
        Tagged(0xcd, u, 2);
      } else if (u <= 0xffffffffu) {
        Tagged(0xce, u, 4);
      } else {
        Tagged(0xcf, u, 8);
      }
    } else {
      uint64_t bits = static_cast<uint64_t>(n);  // two's complement
      if (n >= -32) {
        Byte(static_cast<uint8_t>(bits & 0xff));  // negative fixint: 0xe0..0xff
      } else if (n >= INT8_MIN) {
        Tagged(0xd0, bits, 1);
      } else if (n >= INT16_MIN) {
        Tagged(0xd1, bits, 2);
      } else if (n >= INT32_MIN) {
        Tagged(0xd2, bits, 4);
      } else {
        Tagged(0xd3, bits, 8);
      }
    }
  }

  void Float(double d) {
    // float32 when converting there and back is exact (infinities included; NaN never is).
    if (!std::isnan(d) && (std::isinf(d) || std::fabs(d) <= FLT_MAX)) {
      float f = static_cast<float>(d);
      if (static_cast<double>(f) == d) {
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof(bits));
        Tagged(0xca, bits, 4);
        return;
      }
    }
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    Tagged(0xcb, bits, 8);
  }

  void Number(double n) {
    // 2^63 is exact as a double; [-2^63, 2^63) is what converts to int64_t without overflow.
    constexpr double kTwo63 = 9223372036854775808.0;
    if (std::isfinite(n) && n >= -kTwo63 && n < kTwo63 && std::trunc(n) == n) {
      Integer(static_cast<int64_t>(n));
    } else {
      Float(n);
    }
  }

  void String(const char* s, size_t len) {
    if (len < 32) {
      Byte(static_cast<uint8_t>(0xa0 | len));
    } else if (len <= 0xff) {
      Tagged(0xd9, len, 1);
    } else if (len <= 0xffff) {
      Tagged(0xda, len, 2);
    } else {
      Tagged(0xdb, len, 4);  // a Lua string past 4 GiB is over kMaxPackedBytes anyway
    }
    Append(s, len);
  }

  // Header of an array (fix 0x90, 16-bit 0xdc, 32-bit 0xdd) or a map (0x80, 0xde, 0xdf).
  void Container(bool array, uint64_t n) {
    if (n <= 15) {
      Byte(static_cast<uint8_t>((array ? 0x90 : 0x80) | n));
    } else if (n <= 0xffff) {
      Tagged(array ? 0xdc : 0xde, n, 2);
    } else {
      Tagged(array ? 0xdd : 0xdf, n, 4);
    }
  }

  // Counts the table's keys; *is_array when they are exactly 1..count.
  uint64_t CountKeys(bool* is_array) {
    uint64_t count = 0;
    double max = 0;
    bool array = true;
    lua_pushnil(L_);
    while (lua_next(L_, -2) != 0) {
      lua_pop(L_, 1);  // the value; the key stays for lua_next
      if (array) {
        // lua-cmsgpack on Lua 5.1: a key must be a number that is an int, above zero.
        double k = lua_type(L_, -1) == LUA_TNUMBER ? lua_tonumber(L_, -1) : 0;
        if (k >= 1 && k <= INT_MAX && std::trunc(k) == k) {
          if (k > max) max = k;
        } else {
          array = false;
        }
      }
      count++;
    }
    *is_array = array && max == static_cast<double>(count);
    return count;
  }

  void Table(int level) {
    luaL_checkstack(L_, 3, "in cmsgpack.pack");
    bool is_array = false;
    uint64_t count = CountKeys(&is_array);
    Container(is_array, count);
    if (is_array) {
      // Keys are exactly 1..count, so the raw reads see every element and no metamethod runs.
      for (uint64_t i = 1; i <= count && !too_big_; i++) {
        lua_rawgeti(L_, -1, static_cast<int>(i));
        Encode(level + 1);
      }
      return;
    }
    lua_pushnil(L_);
    while (lua_next(L_, -2) != 0) {  // ... table key value
      if (too_big_) {
        lua_pop(L_, 2);
        break;
      }
      lua_pushvalue(L_, -2);  // ... table key value key
      Encode(level + 1);      // the key copy
      Encode(level + 1);      // the value
    }
  }

  lua_State* L_;
  std::string out_;
  bool too_big_ = false;
};

int MsgPackPack(lua_State* L) {
  int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  luaL_checkstack(L, 1, "in cmsgpack.pack");
  bool too_big = false;
  bool out_of_memory = false;
  {
    Encoder encoder(L);
    try {
      for (int i = 1; i <= nargs && !encoder.too_big(); i++) {
        lua_pushvalue(L, i);
        encoder.Encode(0);
      }
      too_big = encoder.too_big();
      if (!too_big) lua_pushlstring(L, encoder.out().data(), encoder.out().size());
    } catch (const std::bad_alloc&) {
      // std::string's allocation failed: turn it into a Lua error below (Lua's own C++
      // exceptions are not bad_alloc and pass through).
      out_of_memory = true;
    }
  }  // the buffer is freed before any error is raised
  if (out_of_memory) return luaL_error(L, "not enough memory");
  if (too_big) {
    return luaL_error(L, "cmsgpack.pack: packed data is larger than %d bytes",
                      static_cast<int>(kMaxPackedBytes));
  }
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Decoding

// Reads MessagePack values from a byte range and pushes them as Lua values. Raises the Lua
// errors lua-cmsgpack raises; nothing it owns needs freeing when it does.
class Decoder {
 public:
  Decoder(lua_State* L, const uint8_t* p, size_t left) : L_(L), p_(p), left_(left) {}

  size_t left() const { return left_; }

  // Pushes the next value, consuming its bytes; raises "Missing bytes" at the end of input.
  void Decode() {
    Need(1);
    // One more slot per value; deep nesting or too many top-level values end here, before the
    // C stack could.
    luaL_checkstack(L_, 1,
                    "too many return values at once; use unpack_one or unpack_limit instead.");
    uint8_t tag = p_[0];
    if (tag <= 0x7f) {  // positive fixint
      lua_pushnumber(L_, tag);
      Skip(1);
      return;
    }
    if (tag >= 0xe0) {  // negative fixint
      lua_pushnumber(L_, static_cast<int>(tag) - 256);
      Skip(1);
      return;
    }
    switch (tag & 0xf0) {
      case 0x80:
        Skip(1);
        Map(tag & 0x0f);
        return;
      case 0x90:
        Skip(1);
        Array(tag & 0x0f);
        return;
      case 0xa0:
      case 0xb0:
        Skip(1);
        Str(tag & 0x1f);
        return;
      default:
        break;
    }
    switch (tag) {
      case 0xc0:
        Skip(1);
        lua_pushnil(L_);
        return;
      case 0xc2:
      case 0xc3:
        Skip(1);
        lua_pushboolean(L_, tag == 0xc3);
        return;
      case 0xca: {
        uint32_t bits = static_cast<uint32_t>(Field(4));
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        lua_pushnumber(L_, f);
        return;
      }
      case 0xcb: {
        uint64_t bits = Field(8);
        double d;
        std::memcpy(&d, &bits, sizeof(d));
        lua_pushnumber(L_, d);
        return;
      }
      case 0xcc:
        lua_pushnumber(L_, static_cast<double>(Field(1)));
        return;
      case 0xcd:
        lua_pushnumber(L_, static_cast<double>(Field(2)));
        return;
      case 0xce:
        lua_pushnumber(L_, static_cast<double>(Field(4)));
        return;
      case 0xcf:
        lua_pushnumber(L_, static_cast<double>(Field(8)));
        return;
      case 0xd0:
        lua_pushnumber(L_, static_cast<int8_t>(Field(1)));
        return;
      case 0xd1:
        lua_pushnumber(L_, static_cast<int16_t>(Field(2)));
        return;
      case 0xd2:
        lua_pushnumber(L_, static_cast<int32_t>(Field(4)));
        return;
      case 0xd3:
        lua_pushnumber(L_, static_cast<double>(static_cast<int64_t>(Field(8))));
        return;
      case 0xd9:
        Str(Field(1));
        return;
      case 0xda:
        Str(Field(2));
        return;
      case 0xdb:
        Str(Field(4));
        return;
      case 0xdc:
        Array(Field(2));
        return;
      case 0xdd:
        Array(Field(4));
        return;
      case 0xde:
        Map(Field(2));
        return;
      case 0xdf:
        Map(Field(4));
        return;
      default:  // 0xc1 (never used), bin 8/16/32, ext and fixext: lua-cmsgpack rejects them
        luaL_error(L_, "%s", kBadFormat);
    }
  }

 private:
  void Need(size_t n) {
    if (left_ < n) luaL_error(L_, "%s", kMissingBytes);
  }

  void Skip(size_t n) {
    p_ += n;
    left_ -= n;
  }

  // Consumes the type byte and a `width`-byte big-endian field after it; returns the field.
  uint64_t Field(size_t width) {
    Need(1 + width);
    uint64_t v = 0;
    for (size_t i = 1; i <= width; i++) v = (v << 8) | p_[i];
    Skip(1 + width);
    return v;
  }

  // A string of `len` bytes at the cursor (its header already consumed).
  void Str(uint64_t len) {
    Need(len);  // before lua_pushlstring allocates
    lua_pushlstring(L_, reinterpret_cast<const char*>(p_), len);
    Skip(len);
  }

  // No preallocation from `n`: each element must still be read from the input, which ends the
  // loop with "Missing bytes" long before a hostile count could cost anything.
  void Array(uint64_t n) {
    lua_newtable(L_);
    luaL_checkstack(L_, 2, "in cmsgpack.unpack");
    for (uint64_t i = 1; i <= n; i++) {
      lua_pushnumber(L_, static_cast<double>(i));
      Decode();
      lua_settable(L_, -3);
    }
  }

  void Map(uint64_t n) {
    lua_newtable(L_);
    luaL_checkstack(L_, 2, "in cmsgpack.unpack");
    for (uint64_t i = 0; i < n; i++) {
      Decode();              // key
      Decode();              // value
      lua_settable(L_, -3);  // a nil or NaN key raises Lua's own error, as in lua-cmsgpack
    }
  }

  lua_State* L_;
  const uint8_t* p_;
  size_t left_;
};

// Decodes from `offset` up to `limit` values (all when both are 0), pushing them after the
// string argument; unless decoding all, the next offset (-1 at the end) comes first.
int UnpackFull(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const bool decode_all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(limit));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (decode_all) limit = INT_MAX;
  lua_settop(L, 1);
  Decoder decoder(L, reinterpret_cast<const uint8_t*>(s) + offset, len - offset);
  int count = 0;
  while (decoder.left() > 0 && count < limit) {
    decoder.Decode();
    count++;
  }
  if (decode_all) return count;
  luaL_checkstack(L, 1, "in cmsgpack.unpack");
  size_t left = decoder.left();
  lua_pushinteger(L, left == 0 ? -1 : static_cast<lua_Integer>(len - left));
  lua_insert(L, 2);
  return count + 1;
}

int MsgPackUnpack(lua_State* L) { return UnpackFull(L, 0, 0); }

int UnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  return UnpackFull(L, 1, offset);
}

int UnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  return UnpackFull(L, limit, offset);
}

}  // namespace

int OpenCmsgpack(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", MsgPackPack},
      {"unpack", MsgPackUnpack},
      {"unpack_one", UnpackOne},
      {"unpack_limit", UnpackLimit},
  };
  luaL_checkstack(L, 2, "in OpenCmsgpack");
  lua_newtable(L);
  for (const luaL_Reg& f : kFunctions) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  // The metadata fields lua-cmsgpack sets, with its values, for scripts that look at them.
  lua_pushliteral(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushliteral(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");
  lua_pushvalue(L, -1);
  lua_setglobal(L, "cmsgpack");
  return 1;
}

}  // namespace rockcache::server::scripting
