// The Lua state of the tests of the cmsgpack and struct libraries (lua_cmsgpack_test.cc,
// lua_struct_test.cc): a fresh state with both libraries and a prelude of Lua helpers, and
// C++ helpers to run chunks and read values or errors.
#pragma once

#include <catch2/catch.hpp>
#include <lua.hpp>
#include <memory>
#include <string>

#include "server/scripting/lua_cmsgpack.h"
#include "server/scripting/lua_struct.h"

namespace rockcache::server::scripting::testing {

// Lua helpers every test state has: hex/unhex, a deep equality, and packing round trips.
inline constexpr const char* kPrelude = R"lua(
function hex(s)
  return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end
function unhex(h)
  return (h:gsub('%x%x', function(x) return string.char(tonumber(x, 16)) end))
end
function deq(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= 'table' then return a == b end
  for k, v in pairs(a) do if not deq(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
function rt(v) return deq(v, cmsgpack.unpack(cmsgpack.pack(v))) end
function ph(...) return hex(cmsgpack.pack(...)) end
function sh(fmt, ...) return hex(struct.pack(fmt, ...)) end
)lua";

class Lua {
 public:
  Lua() : state_(luaL_newstate(), lua_close) {
    REQUIRE(state_ != nullptr);
    luaL_openlibs(L());
    REQUIRE(lua_cpcall(L(), OpenBoth, nullptr) == 0);
    REQUIRE(lua_gettop(L()) == 0);
    REQUIRE(Run(kPrelude).empty());
  }

  lua_State* L() { return state_.get(); }

  // Runs a chunk; returns "" on success, else the error message.
  std::string Run(const std::string& code) {
    lua_settop(L(), 0);
    if (luaL_dostring(L(), code.c_str()) == 0) return "";
    const char* msg = lua_tostring(L(), -1);
    std::string err = msg != nullptr ? msg : "(non-string error)";
    return err.empty() ? "(empty error)" : err;
  }

  // The value of a Lua expression as a string (raw bytes; tostring for non-strings).
  std::string Str(const std::string& expr) {
    std::string err = Run("return tostring(" + expr + ")");
    INFO(expr << ": " << err);
    REQUIRE(err.empty());
    size_t len = 0;
    const char* s = lua_tolstring(L(), -1, &len);
    return std::string(s, len);
  }

  bool True(const std::string& expr) { return Str(expr) == "true"; }

  // The error a chunk raises ("" when it raises none).
  std::string Error(const std::string& code) { return Run(code); }

 private:
  static int OpenBoth(lua_State* L) {
    scripting::OpenCmsgpack(L);
    scripting::OpenStruct(L);
    return 0;
  }

  std::unique_ptr<lua_State, void (*)(lua_State*)> state_;
};

inline bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace rockcache::server::scripting::testing
