// The Lua state allocator (server/scripting/lua_memory.h): blocks keep their bytes, the cap holds,
// a real state gives back all it held.
#include "server/scripting/lua_memory.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <lua.hpp>
#include <random>
#include <vector>

// This file's own namespace (unity builds: see lua_values_test.cc).
namespace rockcache::server::scripting::lua_memory_test {
namespace {

struct Block {
  void* ptr;
  size_t size;
  unsigned char fill;
};

bool Holds(const Block& b) {
  const auto* bytes = static_cast<const unsigned char*>(b.ptr);
  for (size_t i = 0; i < b.size; ++i) {
    if (bytes[i] != b.fill) return false;
  }
  return true;
}

TEST_CASE("LuaMemory keeps every block's bytes across allocations, resizes and frees",
          "[lua-memory]") {
  LuaMemory memory(0);
  std::mt19937 rng(7);
  std::vector<Block> blocks;
  size_t expected_used = 0;
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(rng() % 3);
    // Sizes on both sides of the small-block limit, and across classes.
    const size_t size = 1 + rng() % (rng() % 4 == 0 ? 2048 : 64);
    if (op == 0 || blocks.empty()) {
      void* p = LuaMemory::Allocate(&memory, nullptr, 0, size);
      REQUIRE(p != nullptr);
      Block b{p, size, static_cast<unsigned char>(rng())};
      std::memset(p, b.fill, size);
      blocks.push_back(b);
      expected_used += size;
    } else {
      const size_t i = rng() % blocks.size();
      Block& b = blocks[i];
      REQUIRE(Holds(b));
      if (op == 1) {
        void* p = LuaMemory::Allocate(&memory, b.ptr, b.size, size);
        REQUIRE(p != nullptr);
        expected_used = expected_used - b.size + size;
        b.ptr = p;
        const size_t kept = b.size < size ? b.size : size;
        b.size = kept;
        REQUIRE(Holds(b));  // what the block held is still there
        b.size = size;
        std::memset(p, b.fill, size);
      } else {
        REQUIRE(LuaMemory::Allocate(&memory, b.ptr, b.size, 0) == nullptr);
        expected_used -= b.size;
        blocks[i] = blocks.back();
        blocks.pop_back();
      }
    }
    REQUIRE(memory.used() == expected_used);
  }
  for (const Block& b : blocks) {
    REQUIRE(Holds(b));  // no block was handed out twice
    LuaMemory::Allocate(&memory, b.ptr, b.size, 0);
  }
  REQUIRE(memory.used() == 0);
}

TEST_CASE("LuaMemory reuses a freed small block and refuses to grow past its cap", "[lua-memory]") {
  LuaMemory memory(1000);
  void* a = LuaMemory::Allocate(&memory, nullptr, 0, 40);
  LuaMemory::Allocate(&memory, a, 40, 0);
  void* b = LuaMemory::Allocate(&memory, nullptr, 0, 36);  // the same 48-byte class
  if (LuaMemory::kPooled) REQUIRE(b == a);
  REQUIRE(LuaMemory::Allocate(&memory, nullptr, 0, 965) == nullptr);  // 36 + 965 > 1000
  REQUIRE(LuaMemory::Allocate(&memory, b, 36, 2000) == nullptr);
  REQUIRE(memory.used() == 36);
  void* c = LuaMemory::Allocate(&memory, nullptr, 0, 964);
  REQUIRE(c != nullptr);
  REQUIRE(memory.used() == 1000);
  LuaMemory::Allocate(&memory, c, 964, 0);
  LuaMemory::Allocate(&memory, b, 36, 0);
  REQUIRE(memory.used() == 0);
}

TEST_CASE("A Lua state runs on LuaMemory and gives back everything it held at close",
          "[lua-memory]") {
  LuaMemory memory(0);
  lua_State* L = lua_newstate(LuaMemory::Allocate, &memory);
  REQUIRE(L != nullptr);
  luaL_openlibs(L);
  REQUIRE(luaL_dostring(L,
                        "local t = {} for i = 1, 5000 do t[i] = string.rep('x', i % 700) "
                        ".. i end local s = table.concat(t) return #s") == 0);
  REQUIRE(lua_tointeger(L, -1) > 5000);
  REQUIRE(memory.used() > 0);
  lua_close(L);
  REQUIRE(memory.used() == 0);
}

}  // namespace
}  // namespace rockcache::server::scripting::lua_memory_test
