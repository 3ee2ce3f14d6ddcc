// Redis 7 functions: libraries of named Lua functions (FUNCTION LOAD, FCALL), kept in RocksDB
// as server records (storage/store.h), so they survive a restart and kill -9 as Redis keeps
// them in its RDB/AOF. The registry here is the server's view; each worker's Lua state runs
// the libraries' code again after a change (script_vm.h, generation()). Any thread; a mutex
// guards the maps (never held across Lua or storage).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/mutex.h"
#include "config/status.h"

namespace rockcache::server::scripting {

struct FunctionInfo {
  std::string name;
  std::optional<std::string> description;
  std::vector<std::string> flags;  // as given: no-writes, allow-oom, allow-stale, ...
  bool no_writes = false;
};

struct LibraryInfo {
  std::string name;
  std::string code;  // as loaded, shebang included
  std::vector<FunctionInfo> functions;
};

// The first line of a library, "#!lua name=<library>": its name, and the offset of the code after
// the shebang (the newline kept, so error lines count from the shebang as Redis's do). Errors as
// Redis: "Missing library metadata", "Invalid library metadata", "Library names can only...".
Status ParseLibraryHeader(std::string_view code, std::string* name, size_t* body_offset);

// The flags of an EVAL script's optional first line, "#!lua flags=no-writes,allow-oom,...".
struct ScriptShebang {
  bool present = false;    // the script starts with "#!"
  bool no_writes = false;  // flags=no-writes
};
// Parses a script's shebang, if any; *body_offset is where the Lua code starts (the newline kept,
// so error lines count from the shebang as Redis's do; 0 without one). Errors as Redis:
// "Unexpected engine in script shebang: ...", "Unknown lua shebang option: ...", "Unexpected flag
// in script shebang: ...".
Status ParseScriptShebang(std::string_view body, ScriptShebang* shebang, size_t* body_offset);

class FunctionRegistry {
 public:
  // Adds `library` (REPLACE: replaces the one of that name). Errors as Redis: "Library 'x'
  // already exists", "Function x already exists".
  Status Add(LibraryInfo library, bool replace);
  Status Delete(std::string_view name);  // "Library not found"
  void Flush();
  // Replaces every library by `libraries` at once (a replica that follows its primary's): a
  // reader sees the old set or the new one. A library whose function another one of the set
  // already defines is skipped; returns the names of the skipped ones.
  std::vector<std::string> ReplaceAll(std::vector<LibraryInfo> libraries);
  // The library and row of function `name`, or nullopt.
  std::optional<FunctionInfo> Find(std::string_view name) const;
  std::vector<LibraryInfo> List() const;
  size_t library_count() const;
  size_t function_count() const;
  // Moves on every change (a worker's Lua state reloads the libraries then).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  mutable Mutex mu_;
  std::map<std::string, LibraryInfo> libraries_ GUARDED_BY(mu_);
  std::map<std::string, std::string> function_lib_ GUARDED_BY(mu_);  // function -> library
  std::atomic<uint64_t> generation_{0};
};

// The server record a library is stored under.
std::string LibraryRecordName(std::string_view library);
inline constexpr std::string_view kLibraryRecordPrefix = "function-library:";

}  // namespace rockcache::server::scripting
