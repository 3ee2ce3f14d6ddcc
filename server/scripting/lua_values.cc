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

void AppendValue(lua_State* L, int index, std::string* out, int depth, bool resp3);

// The value of t[field] pushed on the stack when it has type `type`; false (nothing pushed)
// otherwise.
bool PushField(lua_State* L, int index, const char* field, int type) {
  lua_pushstring(L, field);
  lua_rawget(L, index);
  if (lua_type(L, -1) == type) return true;
  lua_pop(L, 1);
  return false;
}

// A {map=...} or {set=...} table's reply (the table at the top of the stack): every key (and
// its value) in lua_next order, as Redis.
void AppendPairs(lua_State* L, std::string* out, int depth, bool resp3, bool map) {
  const int table = lua_gettop(L);
  std::string elements;
  int64_t count = 0;
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    AppendValue(L, lua_gettop(L) - 1, &elements, depth + 1, resp3);  // the key
    if (map) AppendValue(L, lua_gettop(L), &elements, depth + 1, resp3);
    lua_pop(L, 1);
    ++count;
  }
  if (map) {
    AppendMapHeader(out, count);
  } else {
    AppendSetHeader(out, count);
  }
  out->append(elements);
}

void AppendTable(lua_State* L, int index, std::string* out, int depth, bool resp3) {
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
  if (PushField(L, index, "double", LUA_TNUMBER)) {
    AppendDouble(out, lua_tonumber(L, -1));
    lua_pop(L, 1);
    return;
  }
  if (PushField(L, index, "big_number", LUA_TSTRING)) {
    size_t len = 0;
    const char* text = lua_tolstring(L, -1, &len);
    AppendBulk(out, std::string_view(text, len));  // Redis 7.0 sends big numbers as bulks
    lua_pop(L, 1);
    return;
  }
  if (PushField(L, index, "map", LUA_TTABLE) || PushField(L, index, "set", LUA_TTABLE)) {
    lua_pushstring(L, "map");
    lua_rawget(L, index);
    const bool map = lua_rawequal(L, -1, -2) != 0;
    lua_pop(L, 1);
    AppendPairs(L, out, depth, resp3, map);
    lua_pop(L, 1);
    return;
  }
  if (PushField(L, index, "verbatim_string", LUA_TTABLE)) {
    if (PushField(L, lua_gettop(L), "string", LUA_TSTRING)) {
      size_t len = 0;
      const char* text = lua_tolstring(L, -1, &len);
      AppendVerbatim(out, std::string_view(text, len));
      lua_pop(L, 1);
    } else {
      AppendNull(out);
    }
    lua_pop(L, 1);
    return;
  }
  // An array: t[1], t[2]... up to the first nil. The header is written once the count is known.
  std::string elements;
  int64_t count = 0;
  for (int i = 1;; ++i) {
    lua_rawgeti(L, index, i);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    AppendValue(L, lua_gettop(L), &elements, depth + 1, resp3);
    lua_pop(L, 1);
    ++count;
  }
  AppendArrayHeader(out, count);
  out->append(elements);
}

void AppendValue(lua_State* L, int index, std::string* out, int depth, bool resp3) {
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
      if (resp3) {
        AppendBool(out, lua_toboolean(L, index) != 0);
      } else if (lua_toboolean(L, index)) {
        AppendInteger(out, 1);
      } else {
        AppendNull(out);
      }
      return;
    case LUA_TTABLE:
      AppendTable(L, index, out, depth, resp3);
      return;
    default:
      AppendNull(out);
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
    case '*':
    case '>': {
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
    // RESP3 (a script that called redis.setresp(3)).
    case '_':
      lua_pushnil(L);
      return;
    case '#':
      lua_pushboolean(L, !line.empty() && line[0] == 't');
      return;
    case ',':
      lua_createtable(L, 0, 1);
      lua_pushstring(L, "double");
      lua_pushnumber(L, std::strtod(std::string(line).c_str(), nullptr));
      lua_rawset(L, -3);
      return;
    case '(':
      lua_createtable(L, 0, 1);
      lua_pushstring(L, "big_number");
      lua_pushlstring(L, line.data(), line.size());
      lua_rawset(L, -3);
      return;
    case '=': {  // verbatim: "fmt:text"
      const long long len = ParseLength(line);
      const size_t available = static_cast<size_t>(end - *pos);
      const size_t take = len < 0                                ? 0
                          : static_cast<size_t>(len) < available ? static_cast<size_t>(len)
                                                                 : available;
      std::string_view text(*pos, take);
      *pos += take;
      *pos = end - *pos >= 2 ? *pos + 2 : end;
      lua_createtable(L, 0, 1);
      lua_pushstring(L, "verbatim_string");
      lua_createtable(L, 0, 2);
      lua_pushstring(L, "format");
      lua_pushlstring(L, text.data(), text.size() >= 3 ? 3 : text.size());
      lua_rawset(L, -3);
      lua_pushstring(L, "string");
      if (text.size() >= 4) text.remove_prefix(4);
      lua_pushlstring(L, text.data(), text.size());
      lua_rawset(L, -3);
      lua_rawset(L, -3);
      return;
    }
    case '%':
    case '~': {
      const long long count = ParseLength(line);
      lua_createtable(L, 0, 1);
      lua_pushstring(L, type == '%' ? "map" : "set");
      lua_createtable(L, 0, static_cast<int>(count > 0 && count < 1 << 20 ? count : 0));
      for (long long i = 0; i < count && *pos < end; ++i) {
        PushReply(L, pos, end);  // the key, or the member
        if (type == '%') {
          PushReply(L, pos, end);
        } else {
          lua_pushboolean(L, 1);
        }
        if (lua_isnil(L, -2)) {
          lua_pop(L, 2);  // a nil key cannot be stored
        } else {
          lua_rawset(L, -3);
        }
      }
      lua_rawset(L, -3);
      return;
    }
    default:
      lua_pushboolean(L, 0);
  }
}

void AppendLuaReply(lua_State* L, int index, std::string* out, bool script_resp3) {
  if (index < 0) index = lua_gettop(L) + index + 1;
  AppendValue(L, index, out, 0, script_resp3);
}

}  // namespace rockcache::server::scripting
