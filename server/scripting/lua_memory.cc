#include "server/scripting/lua_memory.h"

#include <cstdlib>
#include <cstring>

namespace rockcache::server::scripting {

LuaMemory::~LuaMemory() {
  for (char* chunk : chunks_) std::free(chunk);
}

void* LuaMemory::Take(size_t size) {
  const size_t cls = ClassOf(size);
  if (FreeBlock* block = free_[cls]) {
    free_[cls] = block->next;
    return block;
  }
  const size_t bytes = (cls + 1) * kGrain;
  if (static_cast<size_t>(bump_end_ - bump_) < bytes) {
    // The rest of the old chunk (less than one block of this class) is left unused.
    auto* chunk = static_cast<char*>(std::malloc(kChunkBytes));
    if (chunk == nullptr) return nullptr;
    chunks_.push_back(chunk);
    bump_ = chunk;
    bump_end_ = chunk + kChunkBytes;
  }
  void* block = bump_;
  bump_ += bytes;
  return block;
}

void LuaMemory::Give(void* block, size_t size) {
  const size_t cls = ClassOf(size);
  auto* free_block = static_cast<FreeBlock*>(block);
  free_block->next = free_[cls];
  free_[cls] = free_block;
}

void* LuaMemory::Allocate(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* memory = static_cast<LuaMemory*>(ud);
  if (ptr == nullptr) old_size = 0;
  if (new_size == 0) {
    if (ptr != nullptr) {
      if (old_size <= kSmallMax) {
        memory->Give(ptr, old_size == 0 ? 1 : old_size);
      } else {
        std::free(ptr);
      }
    }
    memory->used_ -= old_size;
    return nullptr;
  }
  if (new_size > old_size && memory->cap_ != 0 &&
      memory->used_ - old_size + new_size > memory->cap_) {
    return nullptr;
  }
  void* grown = nullptr;
  const bool was_small = ptr != nullptr && old_size <= kSmallMax;
  if (ptr != nullptr && !was_small && new_size > kSmallMax) {
    grown = std::realloc(ptr, new_size);
  } else if (was_small && new_size <= kSmallMax &&
             ClassOf(new_size) == ClassOf(old_size == 0 ? 1 : old_size)) {
    grown = ptr;  // the block has room already
  } else {
    grown = new_size <= kSmallMax ? memory->Take(new_size) : std::malloc(new_size);
    if (grown != nullptr && ptr != nullptr) {
      std::memcpy(grown, ptr, old_size < new_size ? old_size : new_size);
      if (was_small) {
        memory->Give(ptr, old_size == 0 ? 1 : old_size);
      } else {
        std::free(ptr);
      }
    }
  }
  if (grown != nullptr) memory->used_ = memory->used_ - old_size + new_size;
  return grown;
}

}  // namespace rockcache::server::scripting
