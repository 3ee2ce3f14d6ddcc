#include "server/scripting/lua_values.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/protocol/reply.h"

namespace rockcache::server::scripting {
namespace {

// The line at *pos (up to CRLF), advancing past the CRLF.
std::string_view Line(const char** pos, const char* end) {
  const char* start = *pos;
  const char* p = start;
  while (p + 1 < end && !(p[0] == '\r' && p[1] == '\n')) ++p;
  *pos = p + 2 <= end ? p + 2 : end;
  return std::string_view(start, static_cast<size_t>(p - start));
}

long long ParseLength(std::string_view text) {
  return std::strtoll(std::string(text).c_str(), nullptr, 10);
}

// Error and status texts are single lines in RESP: a script's newlines become spaces, as Redis.
std::string OneLine(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return line;
}

void AppendValue(lua_State* L, int index, std::string* out, int depth);

void AppendTable(lua_State* L, int index, std::string* out, int depth) {
  if (depth > kMaxReplyDepth) {
    luaL_error(L, "reached lua stack limit");
    return;
  }
  luaL_checkstack(L, 4, "reply too deep");
  lua_pushstring(L, "err");
  lua_rawget(L, index);
  if (lua_type(L, -1) == LUA_TSTRING) {
    size_t len = 0;
    const char* text = lua_tolstring(L, -1, &len);
    AppendError(out, std::string_view(text, len));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  lua_pushstring(L, "ok");
  lua_rawget(L, index);
  if (lua_type(L, -1) == LUA_TSTRING) {
    size_t len = 0;
    const char* text = lua_tolstring(L, -1, &len);
    AppendSimple(out, OneLine(std::string_view(text, len)));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  // An array: t[1], t[2]... up to the first nil. The header is written once the count is known.
  std::string elements;
  int64_t count = 0;
  for (int i = 1;; ++i) {
    lua_rawgeti(L, index, i);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    AppendValue(L, lua_gettop(L), &elements, depth + 1);
    lua_pop(L, 1);
    ++count;
  }
  AppendArrayHeader(out, count);
  out->append(elements);
}

void AppendValue(lua_State* L, int index, std::string* out, int depth) {
  switch (lua_type(L, index)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* text = lua_tolstring(L, index, &len);
      AppendBulk(out, std::string_view(text, len));
      return;
    }
    case LUA_TNUMBER:
      AppendInteger(out, LuaNumberToInteger(lua_tonumber(L, index)));
      return;
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, index)) {
        AppendInteger(out, 1);
      } else {
        out->append("$-1\r\n");
      }
      return;
    case LUA_TTABLE:
      AppendTable(L, index, out, depth);
      return;
    default:
      out->append("$-1\r\n");
  }
}

}  // namespace

long long LuaNumberToInteger(lua_Number n) {
  if (std::isnan(n) || n >= 9223372036854775808.0 || n < -9223372036854775808.0) return INT64_MIN;
  return static_cast<long long>(n);
}

void PushReply(lua_State* L, const char** pos, const char* end) {
  luaL_checkstack(L, 4, "reply too deep");
  if (*pos >= end) {
    lua_pushboolean(L, 0);
    return;
  }
  const char type = **pos;
  ++*pos;
  const std::string_view line = Line(pos, end);
  switch (type) {
    case '+':
    case '-':
      lua_createtable(L, 0, 1);
      lua_pushstring(L, type == '+' ? "ok" : "err");
      lua_pushlstring(L, line.data(), line.size());
      lua_rawset(L, -3);
      return;
    case ':':
      lua_pushnumber(L, static_cast<lua_Number>(ParseLength(line)));
      return;
    case '$': {
      const long long len = ParseLength(line);
      if (len < 0) {
        lua_pushboolean(L, 0);
        return;
      }
      const size_t available = static_cast<size_t>(end - *pos);
      const size_t take =
          static_cast<size_t>(len) < available ? static_cast<size_t>(len) : available;
      lua_pushlstring(L, *pos, take);
      *pos += take;
      *pos = end - *pos >= 2 ? *pos + 2 : end;  // the CRLF
      return;
    }
    case '*': {
      const long long count = ParseLength(line);
      if (count < 0) {
        lua_pushboolean(L, 0);
        return;
      }
      lua_createtable(L, static_cast<int>(count < 1 << 20 ? count : 1 << 20), 0);
      for (long long i = 0; i < count; ++i) {
        PushReply(L, pos, end);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
    }
    default:
      lua_pushboolean(L, 0);
  }
}

void AppendLuaReply(lua_State* L, int index, std::string* out) {
  if (index < 0) index = lua_gettop(L) + index + 1;
  AppendValue(L, index, out, 0);
}

}  // namespace rockcache::server::scripting
