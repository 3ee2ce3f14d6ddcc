// server/scripting/lua_memory — the allocator of one Lua state (lua_Alloc): counts the bytes the
// state holds, refuses to grow past a cap (Lua then raises "not enough memory"), and serves the
// small blocks Lua allocates by the dozen per script run (strings, tables, closures) from
// per-size free lists instead of malloc.
//
// Small blocks (<= kSmallMax bytes) are carved from kChunkBytes chunks and, once freed, kept on
// their size class's list for the state's next allocation of that class; chunks go back to
// malloc only when the LuaMemory is destroyed (after lua_close). So the memory a state holds
// from the system is at most its peak use (bounded by the cap), as with malloc's own caches.
// Larger blocks go to malloc/realloc/free.
//
// Under AddressSanitizer every block goes to malloc (kPooled false), so ASan keeps checking Lua's
// memory.
//
// Lua 5.1 passes every block's exact size when it frees or resizes it (its GC accounting needs
// it), which is what lets a block's class be found without a header.
//
// One state, one thread: not thread-safe.
#pragma once

#include <cstddef>
#include <vector>

namespace rockcache::server::scripting {

#if defined(__SANITIZE_ADDRESS__)
#define ROCKCACHE_LUA_MEMORY_POOLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ROCKCACHE_LUA_MEMORY_POOLED 0
#endif
#endif
#ifndef ROCKCACHE_LUA_MEMORY_POOLED
#define ROCKCACHE_LUA_MEMORY_POOLED 1
#endif

class LuaMemory {
 public:
  static constexpr bool kPooled = ROCKCACHE_LUA_MEMORY_POOLED != 0;
  static constexpr size_t kSmallMax = kPooled ? 512 : 0;
  static constexpr size_t kChunkBytes = 64 * 1024;

  explicit LuaMemory(size_t cap) : cap_(cap) {}
  ~LuaMemory();
  LuaMemory(const LuaMemory&) = delete;
  LuaMemory& operator=(const LuaMemory&) = delete;

  // lua_Alloc: `ud` is a LuaMemory*.
  static void* Allocate(void* ud, void* ptr, size_t old_size, size_t new_size);

  size_t used() const { return used_; }     // bytes Lua holds (what it asked for)
  void set_cap(size_t cap) { cap_ = cap; }  // 0: no cap

 private:
  static constexpr size_t kGrain = 16;
  static constexpr size_t kClasses = kSmallMax / kGrain + 1;
  static size_t ClassOf(size_t size) { return (size - 1) / kGrain; }

  void* Take(size_t size);
  void Give(void* block, size_t size);

  struct FreeBlock {
    FreeBlock* next;
  };
  size_t used_ = 0;
  size_t cap_;
  FreeBlock* free_[kClasses] = {};
  std::vector<char*> chunks_;
  char* bump_ = nullptr;  // the free part of the newest chunk
  char* bump_end_ = nullptr;
};

}  // namespace rockcache::server::scripting
