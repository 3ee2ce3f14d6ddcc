// struct for Lua 5.1: see lua_struct.h for the behaviour and the format options.
#include "server/scripting/lua_struct.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

namespace rockcache::server::scripting {

namespace {

// The widest i[n]/I[n].
constexpr int kMaxIntSize = 32;
// The alignment '!' sets without a number: that of a double (and at least an int's).
constexpr int kDefaultMaxAlign = alignof(double) > sizeof(int) ? alignof(double) : sizeof(int);

constexpr bool kNativeLittle = [] {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return false;
#else
  return true;
#endif
}();

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsPowerOf2(size_t x) { return x > 0 && (x & (x - 1)) == 0; }

// The byte order and alignment in force while walking a format.
struct Options {
  bool little = kNativeLittle;
  size_t align = 1;
};

// Reads the decimal number at *fmt (advancing past it), or returns `def` when there is none.
// Raises "integral size overflow" above INT_MAX.
size_t ReadNumber(lua_State* L, const char** fmt, int def) {
  if (!IsDigit(**fmt)) return static_cast<size_t>(def);
  int n = 0;
  do {
    int digit = *(*fmt)++ - '0';
    if (n > (INT_MAX - digit) / 10) luaL_error(L, "integral size overflow");
    n = n * 10 + digit;
  } while (IsDigit(**fmt));
  return static_cast<size_t>(n);
}

// The size of option `opt` (reading its count from *fmt), 0 for options that take no room.
size_t OptionSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'b':
    case 'B':
      return sizeof(char);
    case 'h':
    case 'H':
      return sizeof(short);
    case 'l':
    case 'L':
      return sizeof(long);
    case 'T':
      return sizeof(size_t);
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'x':
      return 1;
    case 'c':
      return ReadNumber(L, fmt, 1);
    case 'i':
    case 'I': {
      size_t n = ReadNumber(L, fmt, sizeof(int));
      if (n > static_cast<size_t>(kMaxIntSize)) {
        luaL_error(L, "integral size %d is larger than limit of %d", static_cast<int>(n),
                   kMaxIntSize);
      }
      return n;
    }
    default:
      return 0;
  }
}

// Padding bytes that put an item of `size` bytes at `pos` on its alignment: min(size, align),
// computed as struct computes it (for the odd integer sizes too).
size_t PaddingFor(size_t pos, const Options& o, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > o.align) size = o.align;
  return (size - (pos & (size - 1))) & (size - 1);
}

// The options that only change state: ' ', '>', '<', '!n'; anything else is an error.
void ControlOption(lua_State* L, char opt, const char** fmt, Options* o) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      o->little = false;
      return;
    case '<':
      o->little = true;
      return;
    case '!': {
      size_t a = ReadNumber(L, fmt, kDefaultMaxAlign);
      if (!IsPowerOf2(a)) luaL_error(L, "alignment %d is not a power of 2", static_cast<int>(a));
      o->align = a;
      return;
    }
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
  }
}

bool IsIntegerOption(char opt) {
  switch (opt) {
    case 'b':
    case 'B':
    case 'h':
    case 'H':
    case 'l':
    case 'L':
    case 'T':
    case 'i':
    case 'I':
      return true;
    default:
      return false;
  }
}

// A Lua number as the 64 bits an integer option stores: negative numbers in two's complement,
// fractions cut towards zero, out-of-range values saturated, NaN as 0.
uint64_t ToBits(double n) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr double kTwo64 = 18446744073709551616.0;
  if (std::isnan(n)) return 0;
  if (n < 0) {
    if (n < -kTwo63) return uint64_t{1} << 63;
    return static_cast<uint64_t>(static_cast<int64_t>(n));
  }
  if (n >= kTwo64) return UINT64_MAX;
  return static_cast<uint64_t>(n);
}

// Appends `size` bytes of `v` in the given order; bytes beyond the 8th are zero.
void PutBytes(std::string* out, uint64_t v, size_t size, bool little) {
  size_t start = out->size();
  out->append(size, '\0');
  for (size_t i = 0; i < size && i < 8; i++) {
    char byte = static_cast<char>((v >> (8 * i)) & 0xff);
    (*out)[little ? start + i : start + size - 1 - i] = byte;
  }
}

// The integer of `size` bytes at `p`, through its low 8 bytes; signed ones sign-extended.
double GetInteger(const char* p, size_t size, bool little, bool is_signed) {
  uint64_t v = 0;
  size_t used = size < 8 ? size : 8;
  for (size_t i = 0; i < used; i++) {  // i: byte significance
    uint8_t byte = static_cast<uint8_t>(little ? p[i] : p[size - 1 - i]);
    v |= static_cast<uint64_t>(byte) << (8 * i);
  }
  if (!is_signed) return static_cast<double>(v);
  if (size == 0) return 0;
  if (size < 8) {
    uint64_t sign = uint64_t{1} << (8 * size - 1);
    if (v & sign) v |= ~(sign - 1);  // extend the sign bit upwards
  }
  return static_cast<double>(static_cast<int64_t>(v));
}

// `size` raw bytes, reversed unless the requested order is the machine's.
void PutRaw(std::string* out, const void* data, size_t size, bool little) {
  const char* p = static_cast<const char*>(data);
  if (little == kNativeLittle) {
    out->append(p, size);
  } else {
    for (size_t i = size; i > 0; i--) out->push_back(p[i - 1]);
  }
}

void GetRaw(void* dst, const char* src, size_t size, bool little) {
  char* d = static_cast<char*>(dst);
  for (size_t i = 0; i < size; i++) d[i] = little == kNativeLittle ? src[i] : src[size - 1 - i];
}

// Appends one item of pack's format to `out`. Raises Lua errors.
void PackItem(lua_State* L, char opt, size_t size, int* arg, std::string* out, Options* o,
              const char** fmt) {
  if (IsIntegerOption(opt)) {
    PutBytes(out, ToBits(luaL_checknumber(L, (*arg)++)), size, o->little);
    return;
  }
  switch (opt) {
    case 'x':
      out->push_back('\0');
      return;
    case 'f': {
      float f = static_cast<float>(luaL_checknumber(L, (*arg)++));
      PutRaw(out, &f, sizeof(f), o->little);
      return;
    }
    case 'd': {
      double d = luaL_checknumber(L, (*arg)++);
      PutRaw(out, &d, sizeof(d), o->little);
      return;
    }
    case 'c':
    case 's': {
      int index = (*arg)++;
      size_t len = 0;
      const char* s = luaL_checklstring(L, index, &len);
      if (size == 0) size = len;  // 'c0' and 's': the whole string
      luaL_argcheck(L, len >= size, index, "string too short");
      out->append(s, size);
      if (opt == 's') out->push_back('\0');
      return;
    }
    default:
      ControlOption(L, opt, fmt, o);
  }
}

int StructPack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  bool out_of_memory = false;
  {
    std::string out;
    try {
      Options o;
      int arg = 2;
      while (*fmt != '\0') {
        char opt = *fmt++;
        size_t size = OptionSize(L, opt, &fmt);
        out.append(PaddingFor(out.size(), o, opt, size), '\0');
        PackItem(L, opt, size, &arg, &out, &o, &fmt);
      }
      lua_pushlstring(L, out.data(), out.size());
    } catch (const std::bad_alloc&) {
      // std::string's allocation failed; Lua's own errors are not bad_alloc and pass through.
      out_of_memory = true;
    }
  }  // the buffer is freed before the error is raised
  if (out_of_memory) return luaL_error(L, "not enough memory");
  return 1;
}

int StructUnpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len = 0;
  const char* data = luaL_checklstring(L, 2, &len);
  lua_Integer start = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, start > 0, 3, "offset must be 1 or greater");
  size_t pos = static_cast<size_t>(start) - 1;
  lua_settop(L, 2);  // results from index 3 on
  int results = 0;
  Options o;
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptionSize(L, opt, &fmt);
    size_t pad = PaddingFor(pos, o, opt, size);
    // pos may start anywhere the caller said; compare without overflowing.
    luaL_argcheck(L, pos <= len && pad <= len - pos && size <= len - pos - pad, 2,
                  "data string too short");
    pos += pad;
    luaL_checkstack(L, 2, "too many results");  // the item and the final position
    if (IsIntegerOption(opt)) {
      lua_pushnumber(L, GetInteger(data + pos, size, o.little, opt >= 'a' && opt <= 'z'));
      results++;
    } else {
      switch (opt) {
        case 'x':
          break;
        case 'f': {
          float f;
          GetRaw(&f, data + pos, sizeof(f), o.little);
          lua_pushnumber(L, f);
          results++;
          break;
        }
        case 'd': {
          double d;
          GetRaw(&d, data + pos, sizeof(d), o.little);
          lua_pushnumber(L, d);
          results++;
          break;
        }
        case 'c': {
          if (size == 0) {  // the length is the number unpacked just before
            if (results == 0 || !lua_isnumber(L, -1)) {
              luaL_error(L, "format 'c0' needs a previous size");
            }
            double n = lua_tonumber(L, -1);
            lua_pop(L, 1);
            results--;
            luaL_argcheck(L, n >= 0 && n <= static_cast<double>(len - pos), 2,
                          "data string too short");
            size = static_cast<size_t>(n);
          }
          lua_pushlstring(L, data + pos, size);
          results++;
          break;
        }
        case 's': {
          const void* end = std::memchr(data + pos, '\0', len - pos);
          if (end == nullptr) luaL_error(L, "unfinished string in data");
          size_t n = static_cast<size_t>(static_cast<const char*>(end) - (data + pos));
          lua_pushlstring(L, data + pos, n);
          results++;
          size = n + 1;
          break;
        }
        default:
          ControlOption(L, opt, &fmt, &o);
      }
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return results + 1;
}

int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t pos = 0;
  Options o;
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptionSize(L, opt, &fmt);
    size_t pad = PaddingFor(pos, o, opt, size);
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    // As struct does, letters and digits that are no option count for nothing here.
    if (!IsAlnum(opt)) ControlOption(L, opt, &fmt, &o);
    if (pad + size > SIZE_MAX - pos) luaL_error(L, "format size overflow");
    pos += pad + size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int OpenStruct(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", StructPack},
      {"unpack", StructUnpack},
      {"size", Size},
      {nullptr, nullptr},
  };
  luaL_register(L, "struct", kFunctions);
  return 1;
}

}  // namespace rockcache::server::scripting
