#include "server/scripting/script_vm.h"

#include <spdlog/spdlog.h>

#include <lua.hpp>
// Debian's lua-cjson and lua-bitop (C libraries; their headers assume lua.h came first).
extern "C" {
#include <lua-bitop.h>
#include <lua-cjson.h>
}

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "config/current_db.h"
#include "server/call.h"
#include "server/clock.h"
#include "server/metrics/info.h"
#include "server/protocol/reply.h"
#include "server/scripting/lua_cmsgpack.h"
#include "server/scripting/lua_memory.h"
#include "server/scripting/lua_struct.h"
#include "server/scripting/lua_values.h"
#include "server/scripting/script_unit.h"
#include "server/scripting/scripting.h"
#include "server/scripting/sha1.h"
#include "server/settings.h"
#include "storage/store.h"

namespace rockcache::server::scripting {
namespace {

// VM instructions between two checks of the kill flag: ~1-5 ms of a busy loop.
constexpr int kHookEvery = 100000;
// The error a script sharing a segment gets past script-group-max-usec (never seen by a client:
// the script is rolled back and runs again alone).
constexpr const char* kOverranError =
    "ERR the script ran long beside other scripts; running it again";
// The memory cap of a state no server configures (a network thread compiling for SCRIPT LOAD).
constexpr size_t kDefaultMemoryCap = 64u << 20;

// The run on this thread (redis.call and the hook find it here).
struct ActiveRun {
  const ScriptRun* run = nullptr;
  Scripting* scripting = nullptr;
  uint64_t kill_epoch = 0;
  bool killed = false;
  bool resp3 = false;  // redis.setresp(3): the commands it calls reply in RESP3
};
thread_local ActiveRun* tls_run = nullptr;

// POSIX's 48-bit generator (lrand48), which Redis's math.random uses.
thread_local uint64_t tls_rand_state = 0;
void SeedRandom(uint32_t seed) { tls_rand_state = (uint64_t{seed} << 16) | 0x330E; }
int32_t NextRandom() {
  tls_rand_state = (tls_rand_state * 0x5DEECE66DULL + 0xB) & ((1ULL << 48) - 1);
  return static_cast<int32_t>(tls_rand_state >> 17);
}

// Raises the error table {err = text}, as redis.call does with a failed command's reply.
[[noreturn]] void RaiseErrorTable(lua_State* L, std::string_view text) {
  lua_createtable(L, 0, 1);
  lua_pushstring(L, "err");
  lua_pushlstring(L, text.data(), text.size());
  lua_rawset(L, -3);
  lua_error(L);
  std::abort();  // lua_error does not return
}

// redis.call raises, redis.pcall returns the error table.
int ErrorOrRaise(lua_State* L, bool raise, std::string_view text) {
  if (raise) RaiseErrorTable(L, text);
  lua_createtable(L, 0, 1);
  lua_pushstring(L, "err");
  lua_pushlstring(L, text.data(), text.size());
  lua_rawset(L, -3);
  return 1;
}

// Redis's "noscript" commands: connection state, transactions, blocking commands, scripts.
bool AllowedFromScript(const CommandSpec& spec) {
  if ((spec.flags & kMayBlock) && (spec.flags & kBlockOption)) return true;  // XREAD...
  return (spec.flags & (kConnection | kTransaction | kMayBlock | kScript)) == 0;
}

// A number argument as Redis's Lua writes it: its LUA_NUMBER_FMT is "%.17g" (stock Lua's, and
// so lua_tolstring's, is "%.14g": 1e14 would be sent as "1e+14", 2^53 as "9.007199254741e+15").
// Integral values below 1e17 in magnitude have an integer's digits, written without sprintf.
void FormatNumber(lua_Number n, std::string* arg) {
  char buf[32];
  size_t len = 0;
  if (n > -1e17 && n < 1e17 && n == std::floor(n) && !(n == 0 && std::signbit(n))) {
    len = static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), static_cast<long long>(n)).ptr -
                              buf);
  } else {
    len = static_cast<size_t>(std::snprintf(buf, sizeof(buf), "%.17g", n));
  }
  arg->assign(buf, len);
}

// What one redis.call builds: its arguments, keys and reply. A worker's calls reuse one set (their
// strings keep their capacity: no allocation per call once warm); a call made while another is
// being served on the thread (not reachable today: a command never runs Lua) gets its own.
struct CallScratch {
  static constexpr size_t kKeepBytes = 64 * 1024;  // a bigger argument or reply is not kept
  Args argv;
  std::vector<std::string_view> keys;
  std::string reply;
  bool busy = false;

  void Release() {
    busy = false;
    if (reply.capacity() > kKeepBytes) std::string().swap(reply);
    for (std::string& arg : argv) {
      if (arg.capacity() > kKeepBytes) std::string().swap(arg);
    }
    if (argv.size() > 64) Args().swap(argv);
  }
};
thread_local CallScratch tls_call_scratch;

class ScratchLease {
 public:
  ScratchLease() : scratch_(tls_call_scratch.busy ? &own_ : &tls_call_scratch) {
    scratch_->busy = true;
  }
  ~ScratchLease() { scratch_->Release(); }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  CallScratch& operator*() const { return *scratch_; }

 private:
  CallScratch own_;
  CallScratch* scratch_;
};

// redis.call / redis.pcall with `argc` arguments on the stack, built in `scratch`.
int CallWithScratch(lua_State* L, bool raise, int argc, ActiveRun& active, CallScratch& scratch) {
  const ScriptRun& run = *active.run;
  Args& argv = scratch.argv;
  argv.resize(static_cast<size_t>(argc));
  for (int i = 1; i <= argc; ++i) {
    const int type = lua_type(L, i);
    if (type != LUA_TSTRING && type != LUA_TNUMBER) {
      return ErrorOrRaise(L, raise,
                          "ERR Lua redis lib command arguments must be strings or integers");
    }
    std::string& arg = argv[static_cast<size_t>(i - 1)];
    if (type == LUA_TNUMBER) {
      FormatNumber(lua_tonumber(L, i), &arg);
      continue;
    }
    size_t len = 0;
    const char* text = lua_tolstring(L, i, &len);
    arg.assign(text, len);
  }
  int command_id = -1;
  const CommandSpec* spec = FindCommand(argv[0], &command_id);
  if (spec == nullptr)
    return ErrorOrRaise(L, raise, "ERR Unknown Redis command called from script");
  if (!ArityOk(*spec, argv.size())) {
    return ErrorOrRaise(L, raise, "ERR Wrong number of args calling Redis command from script");
  }
  if (!AllowedFromScript(*spec)) {
    return ErrorOrRaise(L, raise, "ERR This Redis command is not allowed from script");
  }
  if (run.read_only && (spec->flags & kWrite)) {
    return ErrorOrRaise(L, raise, "ERR Write commands are not allowed from read-only scripts.");
  }
  std::vector<std::string_view>& keys = scratch.keys;
  keys.clear();
  AppendCommandKeys(*spec, argv, &keys);
  UnitKeys* unit = UnitKeys::Current();
  if (unit != nullptr && unit->Overran()) RaiseErrorTable(L, kOverranError);
  // PUBLISH and the like take effect at once: a script that calls one is never run again, so it
  // loses its time bound (it may then hold up the scripts that share its segment).
  if (unit != nullptr && (spec->flags & kAnywhere)) unit->set_time_bound(0);
  if (unit != nullptr && !unit->Admit(keys, (spec->flags & kAllKeys) != 0)) {
    // The unit runs the script again holding every key; this run must not go on (a pcall in
    // the script cannot catch its way past it: every later call fails too).
    RaiseErrorTable(L, "ERR the script touches keys it did not declare; running it again");
  }
  if ((spec->flags & kAllKeys) && unit != nullptr && unit->group() != nullptr) {
    // FLUSHALL / FLUSHDB / SWAPDB write with their own WriteOptions: what the script wrote
    // before is committed first (as inside EXEC).
    (void)unit->group()->Commit();
    unit->group()->BeginAtomic();
  }
  std::string& reply = scratch.reply;
  reply.clear();
  CallRequest request;
  request.spec = spec;
  request.argv = &argv;
  request.out = &reply;
  request.mode = CallMode::kAtomic;
  request.in_script = true;
  request.db = run.ctx->db;
  request.now_ms = run.ctx->now_ms;
  if (unit != nullptr) request.held_stripes = &unit->held();
  request.keys = &keys;
  const uint64_t start = Clock::Now();
  {
    // The script reads replies in the protocol it chose, whatever its client speaks.
    ReplyProtocolScope protocol(active.resp3 ? Protocol::kResp3 : Protocol::kResp2);
    CallNested(*run.ctx, request);
  }
  if (unit != nullptr) {
    unit->NoteCall(command_id, Clock::NanosBetween(start, Clock::Now()),
                   !reply.empty() && reply[0] == '-');
  }
  if ((spec->flags & kWrite) && unit != nullptr) {
    const int physical_db = CurrentDb();
    for (auto key : keys) unit->NoteWritten(physical_db, key);
  }
  if (!reply.empty() && reply[0] == '-') {
    std::string_view text(reply);
    text.remove_prefix(1);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    return ErrorOrRaise(L, raise, text);
  }
  const char* pos = reply.data();
  PushReply(L, &pos, reply.data() + reply.size());
  return 1;
}

int CallCommand(lua_State* L, bool raise) {
  ActiveRun* active = tls_run;
  if (active == nullptr || active->run == nullptr) {
    return ErrorOrRaise(L, raise, "ERR redis.call is only available while a script runs");
  }
  const int argc = lua_gettop(L);
  if (argc == 0) {
    return ErrorOrRaise(L, raise,
                        "ERR Please specify at least one argument for this redis lib call");
  }
  ScratchLease lease;  // Debian's liblua5.1-c++ raises Lua errors as C++ exceptions: it unwinds
  return CallWithScratch(L, raise, argc, *active, *lease);
}

int RedisCall(lua_State* L) { return CallCommand(L, /*raise=*/true); }
int RedisPCall(lua_State* L) { return CallCommand(L, /*raise=*/false); }

// redis.error_reply(text) -> {err = text}; redis.status_reply(text) -> {ok = text}.
int ReplyTable(lua_State* L, const char* field) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    RaiseErrorTable(L, "ERR wrong number or type of arguments");
  }
  size_t len = 0;
  const char* text = lua_tolstring(L, 1, &len);
  std::string value(text, len);
  if (std::strcmp(field, "err") == 0) {
    if (!value.empty() && value[0] == '-') value.erase(0, 1);
    if (value.empty()) value = "ERR ";
  }
  lua_createtable(L, 0, 1);
  lua_pushstring(L, field);
  lua_pushlstring(L, value.data(), value.size());
  lua_rawset(L, -3);
  return 1;
}
int ErrorReply(lua_State* L) { return ReplyTable(L, "err"); }
int StatusReply(lua_State* L) { return ReplyTable(L, "ok"); }

int Sha1HexFn(lua_State* L) {
  if (lua_gettop(L) != 1) RaiseErrorTable(L, "ERR wrong number of arguments");
  size_t len = 0;
  const char* text = lua_tolstring(L, 1, &len);
  const std::string hex = Sha1Hex(std::string_view(text == nullptr ? "" : text, len));
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

int Log(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) RaiseErrorTable(L, "ERR redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) RaiseErrorTable(L, "ERR First argument must be a number (log level).");
  const int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) RaiseErrorTable(L, "ERR Invalid debug level.");
  std::string message;
  for (int i = 2; i <= argc; ++i) {
    size_t len = 0;
    const char* text = lua_tolstring(L, i, &len);
    if (text == nullptr) continue;
    if (!message.empty()) message.push_back(' ');
    message.append(text, len);
  }
  switch (level) {
    case 0:
      spdlog::debug("script: {}", message);
      break;
    case 1:
    case 2:
      spdlog::info("script: {}", message);
      break;
    default:
      spdlog::warn("script: {}", message);
  }
  return 0;
}

int SetResp(lua_State* L) {
  if (lua_gettop(L) != 1) RaiseErrorTable(L, "ERR redis.setresp() requires one argument.");
  const int version = static_cast<int>(lua_tonumber(L, 1));
  if (version != 2 && version != 3) RaiseErrorTable(L, "ERR RESP version must be 2 or 3.");
  if (tls_run != nullptr) tls_run->resp3 = version == 3;
  return 0;
}

int SetRepl(lua_State* L) {
  if (lua_gettop(L) != 1) RaiseErrorTable(L, "ERR redis.set_repl() requires one argument.");
  return 0;  // every effect is replicated as a whole (there is one copy today)
}

int ReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int NoOpFalse(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

int MathRandom(lua_State* L) {
  const lua_Number r =
      static_cast<lua_Number>(NextRandom() % INT32_MAX) / static_cast<lua_Number>(INT32_MAX);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      const int upper = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= upper, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * upper) + 1);
      break;
    }
    case 2: {
      const int lower = luaL_checkint(L, 1);
      const int upper = luaL_checkint(L, 2);
      luaL_argcheck(L, lower <= upper, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (upper - lower + 1)) + lower);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomSeed(lua_State* L) {
  SeedRandom(static_cast<uint32_t>(luaL_checkint(L, 1)));
  return 0;
}

// The run's message handler: turns any error into {err = ..., source = ..., line = ...} with
// the script position where it happened (the Lua function that called a failing C function),
// as Redis's __redis__err__handler.
int ErrorHandler(lua_State* L) {
  lua_Debug ar;
  bool have = lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "nSl", &ar) != 0;
  if (have && std::strcmp(ar.what, "C") == 0) {
    have = lua_getstack(L, 2, &ar) != 0 && lua_getinfo(L, "nSl", &ar) != 0;
  }
  if (!lua_istable(L, 1)) {
    const char* text = lua_tostring(L, 1);
    std::string message =
        std::string("ERR ") + (text != nullptr ? text : "(error object is not a string)");
    lua_createtable(L, 0, 3);
    lua_pushstring(L, "err");
    lua_pushlstring(L, message.data(), message.size());
    lua_rawset(L, -3);
    lua_replace(L, 1);
  }
  if (have) {
    lua_pushstring(L, "source");
    lua_pushstring(L, ar.source);
    lua_rawset(L, 1);
    lua_pushstring(L, "line");
    lua_pushnumber(L, ar.currentline);
    lua_rawset(L, 1);
  }
  lua_settop(L, 1);
  return 1;
}

void Hook(lua_State* L, lua_Debug*) {
  ActiveRun* active = tls_run;
  if (active == nullptr || active->scripting == nullptr) return;
  if (!active->killed && !active->scripting->KillRequested(active->kill_epoch)) {
    // Past its bound beside other clients' scripts: it stops here and runs again alone. At every
    // line from now on, so a pcall cannot swallow it either.
    UnitKeys* unit = UnitKeys::Current();
    if (unit == nullptr || !unit->Overran()) return;
    lua_sethook(L, Hook, LUA_MASKLINE, 0);
    RaiseErrorTable(L, kOverranError);
  }
  active->killed = true;
  // From now on at every line, so a pcall in the script cannot swallow the kill.
  lua_sethook(L, Hook, LUA_MASKLINE, 0);
  RaiseErrorTable(L, "ERR Script killed by user with SCRIPT KILL...");
}

// ---- the sandbox ----

// __index of the globals proxy: an undeclared global is an error, as in Redis.
int GlobalIndex(lua_State* L) {
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  if (lua_isnil(L, -1)) {
    const char* name = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      name != nullptr ? name : "?");
  }
  return 1;
}

int ReadOnlyNewIndex(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

// rawset refuses the read-only proxies (their metatable is the registry's "readonly" marker).
int SafeRawSet(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (lua_getmetatable(L, 1) != 0) {
    lua_getfield(L, -1, "__readonly");
    const bool readonly = lua_toboolean(L, -1) != 0;
    lua_pop(L, 2);
    if (readonly) RaiseErrorTable(L, "ERR Attempt to modify a readonly table");
  }
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

// Replaces the table at the top of the stack by a read-only proxy of it. `strict`: reading a
// missing field is an error (the globals).
void MakeReadOnly(lua_State* L, bool strict) {
  const int table = lua_gettop(L);
  lua_newtable(L);           // the proxy
  lua_createtable(L, 0, 4);  // its metatable
  lua_pushstring(L, "__index");
  if (strict) {
    lua_pushvalue(L, table);
    lua_pushcclosure(L, GlobalIndex, 1);
  } else {
    lua_pushvalue(L, table);
  }
  lua_rawset(L, -3);
  lua_pushstring(L, "__newindex");
  lua_pushcfunction(L, ReadOnlyNewIndex);
  lua_rawset(L, -3);
  lua_pushstring(L, "__metatable");  // what getmetatable shows: an empty table
  lua_newtable(L);
  lua_rawset(L, -3);
  lua_pushstring(L, "__readonly");
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_setmetatable(L, -2);
  lua_replace(L, table);
}

// Opens a library and makes sure it is the global `name` (lua-cjson returns its table without
// setting one).
void OpenLibrary(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  if (name[0] != '\0' && lua_istable(L, -1)) {
    lua_setglobal(L, name);
  } else {
    lua_pop(L, 1);
  }
}

void SetFunction(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushstring(L, name);
  lua_pushcfunction(L, fn);
  lua_rawset(L, -3);
}

void SetNumber(lua_State* L, const char* name, lua_Number value) {
  lua_pushstring(L, name);
  lua_pushnumber(L, value);
  lua_rawset(L, -3);
}

// Versions as "7.0.15" and 0x00070015 -> 458767.
int VersionNumber(std::string_view version) {
  int parts[3] = {0, 0, 0};
  int index = 0;
  for (char c : version) {
    if (c == '.') {
      if (++index == 3) break;
    } else if (c >= '0' && c <= '9') {
      parts[index] = parts[index] * 10 + (c - '0');
    }
  }
  return (parts[0] << 16) | (parts[1] << 8) | parts[2];
}

// ---- function libraries (FUNCTION LOAD) ----

// The library being loaded on this thread: the functions its code registered, their callbacks
// in a Lua table (registry ref), by name.
struct LibraryLoad {
  std::vector<FunctionInfo> functions;
  int callbacks_ref = LUA_NOREF;
};
thread_local LibraryLoad* tls_load = nullptr;

bool ValidFunctionName(const char* name, size_t len) {
  if (len == 0) return false;
  for (size_t i = 0; i < len; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (!std::isalnum(c) && c != '_') return false;
  }
  return true;
}

// redis.register_function(name, callback) or redis.register_function{function_name=...,
// callback=..., flags={...}, description=...}, as Redis 7.0 (its error texts).
int RegisterFunction(lua_State* L) {
  LibraryLoad* load = tls_load;
  if (load == nullptr)
    RaiseErrorTable(L, "ERR redis.register_function can only be called on FUNCTION LOAD command");
  FunctionInfo info;
  int callback = 0;
  if (lua_gettop(L) == 2) {
    if (lua_type(L, 1) != LUA_TSTRING)
      RaiseErrorTable(L, "ERR first argument to redis.register_function must be a string");
    if (!lua_isfunction(L, 2))
      RaiseErrorTable(L, "ERR second argument to redis.register_function must be a function");
    info.name = lua_tostring(L, 1);
    callback = 2;
  } else if (lua_gettop(L) == 1) {
    if (!lua_istable(L, 1)) {
      RaiseErrorTable(L,
                      "ERR calling redis.register_function with a single argument is only "
                      "applicable to Lua table (representing named arguments).");
    }
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
      if (std::strcmp(key, "function_name") == 0 && lua_type(L, -1) == LUA_TSTRING) {
        info.name = lua_tostring(L, -1);
      } else if (std::strcmp(key, "callback") == 0) {
        if (!lua_isfunction(L, -1)) {
          RaiseErrorTable(
              L, "ERR callback argument given to redis.register_function must be a function");
        }
      } else if (std::strcmp(key, "description") == 0 && lua_type(L, -1) == LUA_TSTRING) {
        info.description = lua_tostring(L, -1);
      } else if (std::strcmp(key, "flags") == 0 && lua_istable(L, -1)) {
        for (int i = 1;; ++i) {
          lua_rawgeti(L, -1, i);
          if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
          }
          const char* flag = lua_tostring(L, -1);
          const std::string name = flag != nullptr ? flag : "";
          if (name != "no-writes" && name != "allow-oom" && name != "allow-stale" &&
              name != "no-cluster" && name != "allow-cross-slot-keys") {
            RaiseErrorTable(L, "ERR unknown flag given");
          }
          if (name == "no-writes") info.no_writes = true;
          info.flags.push_back(name);
          lua_pop(L, 1);
        }
      } else {
        RaiseErrorTable(L, "ERR unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    lua_getfield(L, 1, "callback");
    if (!lua_isfunction(L, -1))
      RaiseErrorTable(L, "ERR redis.register_function must get a callback argument");
    if (info.name.empty())
      RaiseErrorTable(L, "ERR redis.register_function must get a function name argument");
    callback = lua_gettop(L);
  } else {
    RaiseErrorTable(L, "ERR wrong number of arguments to redis.register_function");
  }
  if (!ValidFunctionName(info.name.data(), info.name.size())) {
    // redis-server 7.0.15's text, which says "Library" for a function's name too.
    RaiseErrorTable(L,
                    "ERR Library names can only contain letters, numbers, or underscores(_) "
                    "and must be at least one character long");
  }
  for (const FunctionInfo& fn : load->functions) {
    if (fn.name == info.name) RaiseErrorTable(L, "ERR Function already exists in the library");
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, load->callbacks_ref);
  lua_pushstring(L, info.name.c_str());
  lua_pushvalue(L, callback);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  load->functions.push_back(std::move(info));
  return 0;
}

void LoadHook(lua_State* L, lua_Debug*);

class Vm {
 public:
  Vm() {
    L_ = lua_newstate(LuaMemory::Allocate, &memory_);
    if (L_ == nullptr) return;
    OpenLibrary(L_, luaopen_base, "");
    OpenLibrary(L_, luaopen_table, LUA_TABLIBNAME);
    OpenLibrary(L_, luaopen_string, LUA_STRLIBNAME);
    OpenLibrary(L_, luaopen_math, LUA_MATHLIBNAME);
    OpenLibrary(L_, luaopen_cjson, "cjson");
    OpenLibrary(L_, luaopen_bit, "bit");
    lua_pushcfunction(L_, OpenCmsgpack);
    lua_call(L_, 0, 0);
    lua_pushcfunction(L_, OpenStruct);
    lua_call(L_, 0, 0);
    lua_settop(L_, 0);
    // What a script may not reach.
    for (const char* name : {"loadfile", "dofile", "getfenv", "setfenv", "module", "require",
                             "newproxy", "gcinfo", "print"}) {
      lua_pushnil(L_);
      lua_setglobal(L_, name);
    }
    lua_pushcfunction(L_, SafeRawSet);
    lua_setglobal(L_, "rawset");
    // math.random as Redis's.
    lua_getglobal(L_, "math");
    SetFunction(L_, "random", MathRandom);
    SetFunction(L_, "randomseed", MathRandomSeed);
    lua_pop(L_, 1);
    // The redis table.
    lua_newtable(L_);
    SetFunction(L_, "call", RedisCall);
    SetFunction(L_, "pcall", RedisPCall);
    SetFunction(L_, "error_reply", ErrorReply);
    SetFunction(L_, "status_reply", StatusReply);
    SetFunction(L_, "sha1hex", Sha1HexFn);
    SetFunction(L_, "log", Log);
    SetFunction(L_, "setresp", SetResp);
    SetFunction(L_, "set_repl", SetRepl);
    SetFunction(L_, "replicate_commands", ReplicateCommands);
    SetFunction(L_, "breakpoint", NoOpFalse);
    SetFunction(L_, "debug", NoOpFalse);
    SetNumber(L_, "LOG_DEBUG", 0);
    SetNumber(L_, "LOG_VERBOSE", 1);
    SetNumber(L_, "LOG_NOTICE", 2);
    SetNumber(L_, "LOG_WARNING", 3);
    SetNumber(L_, "REPL_NONE", 0);
    SetNumber(L_, "REPL_AOF", 1);
    SetNumber(L_, "REPL_SLAVE", 2);
    SetNumber(L_, "REPL_REPLICA", 2);
    SetNumber(L_, "REPL_ALL", 3);
    lua_pushstring(L_, "REDIS_VERSION");
    lua_pushstring(L_, kRedisCompatVersion);
    lua_rawset(L_, -3);
    SetNumber(L_, "REDIS_VERSION_NUM", VersionNumber(kRedisCompatVersion));
    lua_setglobal(L_, "redis");
    // Library tables read-only, then the globals behind a strict read-only proxy.
    for (const char* name :
         {"string", "table", "math", "redis", "cjson", "bit", "coroutine", "cmsgpack", "struct"}) {
      lua_getglobal(L_, name);
      if (lua_istable(L_, -1)) {
        MakeReadOnly(L_, /*strict=*/false);
        lua_setglobal(L_, name);
      } else {
        lua_pop(L_, 1);
      }
    }
    lua_pushvalue(L_, LUA_GLOBALSINDEX);
    globals_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);  // the real table (KEYS and ARGV go there)
    lua_pushvalue(L_, LUA_GLOBALSINDEX);
    MakeReadOnly(L_, /*strict=*/true);
    lua_pushvalue(L_, -1);
    lua_setfield(L_, LUA_GLOBALSINDEX, "_G");  // _G is the proxy too
    lua_replace(L_, LUA_GLOBALSINDEX);
    lua_newtable(L_);
    scripts_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);  // sha -> compiled function
    lua_newtable(L_);
    functions_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);  // function name -> callback
    // What a library's code sees while it loads: the libraries and a redis table with
    // register_function and log, nothing else (Redis 7.0's load environment).
    lua_newtable(L_);
    for (const char* name : {"string", "table", "math", "cjson", "bit", "cmsgpack", "struct"}) {
      lua_getglobal(L_, name);
      lua_setfield(L_, -2, name);
    }
    lua_newtable(L_);
    SetFunction(L_, "register_function", RegisterFunction);
    SetFunction(L_, "log", Log);
    SetNumber(L_, "LOG_DEBUG", 0);
    SetNumber(L_, "LOG_VERBOSE", 1);
    SetNumber(L_, "LOG_NOTICE", 2);
    SetNumber(L_, "LOG_WARNING", 3);
    lua_pushstring(L_, "REDIS_VERSION");
    lua_pushstring(L_, kRedisCompatVersion);
    lua_rawset(L_, -3);
    SetNumber(L_, "REDIS_VERSION_NUM", VersionNumber(kRedisCompatVersion));
    MakeReadOnly(L_, /*strict=*/true);  // redis.call and the rest do not exist while loading
    lua_setfield(L_, -2, "redis");
    MakeReadOnly(L_, /*strict=*/true);
    load_env_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
    // As Redis 7.0.15: one sequence per state, not restarted at each run.
    SeedRandom(static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
    lua_settop(L_, 0);
  }
  ~Vm() {
    if (L_ != nullptr) lua_close(L_);
  }
  Vm(const Vm&) = delete;
  Vm& operator=(const Vm&) = delete;

  lua_State* state() { return L_; }
  void set_cap(size_t cap) { memory_.set_cap(cap); }
  // An incremental collection step every kGcPeriod runs, as Redis: a step after every run cost
  // ~10k instructions, as much as the rest of a small script's run.
  void CollectSometimes() {
    if (++runs_since_gc_ < kGcPeriod) return;
    runs_since_gc_ = 0;
    lua_gc(L_, LUA_GCSTEP, kGcPeriod);
  }
  // The change of this state's memory since the last call (for INFO's used_memory_vm_eval).
  int64_t TakeMemoryDelta() {
    const auto used = static_cast<int64_t>(memory_.used());
    const int64_t delta = used - reported_;
    reported_ = used;
    return delta;
  }

  // Drops the compiled scripts (SCRIPT FLUSH moved the cache's generation).
  void Sync(uint64_t generation) {
    if (generation == generation_) return;
    generation_ = generation;
    lua_newtable(L_);
    lua_rawseti(L_, LUA_REGISTRYINDEX, scripts_ref_);
    lua_gc(L_, LUA_GCCOLLECT, 0);
  }

  // Pushes the compiled function of `sha`, compiling `body` if needed. False with the error
  // text in *error when it does not compile.
  bool PushFunction(std::string_view sha, std::string_view body, std::string* error) {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, scripts_ref_);
    lua_pushlstring(L_, sha.data(), sha.size());
    lua_rawget(L_, -2);
    if (lua_isfunction(L_, -1)) {
      lua_remove(L_, -2);
      return true;
    }
    lua_pop(L_, 1);
    if (luaL_loadbuffer(L_, body.data(), body.size(), "@user_script") != 0) {
      const char* text = lua_tostring(L_, -1);
      *error = std::string("ERR Error compiling script (new function): ") +
               (text != nullptr ? text : "?");
      lua_pop(L_, 2);
      return false;
    }
    lua_pushlstring(L_, sha.data(), sha.size());
    lua_pushvalue(L_, -2);
    lua_rawset(L_, -4);
    lua_remove(L_, -2);
    return true;
  }

  // Runs a library's code in the load environment and collects the functions it registers
  // into *info. `install`: the callbacks become this state's functions (FCALL); otherwise the
  // load only checks the library (FUNCTION LOAD) and this state reloads from the registry later.
  Status LoadLibrary(std::string_view code, LibraryInfo* info, bool install) {
    size_t body = 0;
    if (Status s = ParseLibraryHeader(code, &info->name, &body); !s.ok()) return s;
    info->code = std::string(code);
    lua_settop(L_, 0);
    lua_pushcfunction(L_, ErrorHandler);
    const std::string_view source = code.substr(body);
    if (luaL_loadbuffer(L_, source.data(), source.size(), "@user_function") != 0) {
      const char* text = lua_tostring(L_, -1);
      lua_settop(L_, 0);
      return Status::InvalidArgument(std::string("Error compiling function: ") +
                                     (text != nullptr ? text : "?"));
    }
    lua_rawgeti(L_, LUA_REGISTRYINDEX, load_env_ref_);
    lua_setfenv(L_, -2);
    LibraryLoad load;
    lua_newtable(L_);
    load.callbacks_ref = luaL_ref(L_, LUA_REGISTRYINDEX);
    tls_load = &load;
    lua_sethook(L_, LoadHook, LUA_MASKCOUNT, kHookEvery);
    load_deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    const int status = lua_pcall(L_, 0, 0, 1);
    lua_sethook(L_, nullptr, 0, 0);
    tls_load = nullptr;
    Status result = Status::OK();
    if (status != 0) {
      std::string message = "?";
      if (lua_istable(L_, -1)) {
        lua_getfield(L_, -1, "err");
        if (const char* text = lua_tostring(L_, -1)) message = text;
        lua_pop(L_, 1);
      } else if (const char* text = lua_tostring(L_, -1)) {
        message = text;
      }
      result = Status::InvalidArgument("Error registering functions: " + message);
    } else if (load.functions.empty()) {
      result = Status::InvalidArgument("No functions registered");
    }
    if (result.ok() && install) {
      // The callbacks run with the scripts' globals, not the load environment.
      lua_rawgeti(L_, LUA_REGISTRYINDEX, functions_ref_);
      lua_rawgeti(L_, LUA_REGISTRYINDEX, load.callbacks_ref);
      for (const FunctionInfo& fn : load.functions) {
        lua_getfield(L_, -1, fn.name.c_str());
        lua_pushvalue(L_, LUA_GLOBALSINDEX);
        lua_setfenv(L_, -2);
        lua_setfield(L_, -3, fn.name.c_str());
      }
    }
    luaL_unref(L_, LUA_REGISTRYINDEX, load.callbacks_ref);
    info->functions = std::move(load.functions);
    lua_settop(L_, 0);
    return result;
  }

  // Brings this state's functions up to the registry's generation (runs every library again).
  void SyncFunctions(const FunctionRegistry& registry) {
    const uint64_t generation = registry.generation();
    if (generation == functions_generation_) return;
    functions_generation_ = generation;
    lua_newtable(L_);
    lua_rawseti(L_, LUA_REGISTRYINDEX, functions_ref_);
    for (const LibraryInfo& library : registry.List()) {
      LibraryInfo loaded;
      Status s = LoadLibrary(library.code, &loaded, /*install=*/true);
      if (!s.ok()) spdlog::warn("function library {} did not load: {}", library.name, s.message());
    }
  }

  // Pushes the callback of function `name`; false when this state has none.
  bool PushCallback(std::string_view name) {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, functions_ref_);
    lua_pushlstring(L_, name.data(), name.size());
    lua_rawget(L_, -2);
    lua_remove(L_, -2);
    if (lua_isfunction(L_, -1)) return true;
    lua_pop(L_, 1);
    return false;
  }

  // Pushes KEYS and ARGV as two tables (a function's arguments).
  void PushArgumentTables(const ScriptRun& run) {
    const Args& argv = *run.argv;
    const size_t first_arg = run.first_key + run.numkeys;
    lua_createtable(L_, static_cast<int>(run.numkeys), 0);
    for (size_t i = 0; i < run.numkeys; ++i) {
      const std::string& key = argv[run.first_key + i];
      lua_pushlstring(L_, key.data(), key.size());
      lua_rawseti(L_, -2, static_cast<int>(i + 1));
    }
    lua_createtable(L_, static_cast<int>(argv.size() - first_arg), 0);
    for (size_t i = first_arg; i < argv.size(); ++i) {
      lua_pushlstring(L_, argv[i].data(), argv[i].size());
      lua_rawseti(L_, -2, static_cast<int>(i - first_arg + 1));
    }
  }

  // Sets KEYS and ARGV in the real globals.
  void SetArguments(const ScriptRun& run) {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, globals_ref_);
    const Args& argv = *run.argv;
    const size_t first_arg = run.first_key + run.numkeys;
    lua_createtable(L_, static_cast<int>(run.numkeys), 0);
    for (size_t i = 0; i < run.numkeys; ++i) {
      const std::string& key = argv[run.first_key + i];
      lua_pushlstring(L_, key.data(), key.size());
      lua_rawseti(L_, -2, static_cast<int>(i + 1));
    }
    lua_setfield(L_, -2, "KEYS");
    lua_createtable(L_, static_cast<int>(argv.size() - first_arg), 0);
    for (size_t i = first_arg; i < argv.size(); ++i) {
      lua_pushlstring(L_, argv[i].data(), argv[i].size());
      lua_rawseti(L_, -2, static_cast<int>(i - first_arg + 1));
    }
    lua_setfield(L_, -2, "ARGV");
    lua_pop(L_, 1);
  }

 private:
  LuaMemory memory_{kDefaultMemoryCap};
  lua_State* L_ = nullptr;
  int globals_ref_ = LUA_NOREF;
  int scripts_ref_ = LUA_NOREF;
  int functions_ref_ = LUA_NOREF;
  int load_env_ref_ = LUA_NOREF;
  uint64_t generation_ = 0;
  uint64_t functions_generation_ = 0;
  int64_t reported_ = 0;
  static constexpr int kGcPeriod = 50;
  int runs_since_gc_ = 0;

 public:
  // A library's code runs at most this long while it loads (then fails).
  static inline thread_local std::chrono::steady_clock::time_point load_deadline_;
};

void LoadHook(lua_State* L, lua_Debug*) {
  if (std::chrono::steady_clock::now() > Vm::load_deadline_) {
    RaiseErrorTable(L, "ERR FUNCTION LOAD timeout: the library's code ran for more than 500 ms");
  }
}

Vm& ThreadVm() {
  thread_local std::unique_ptr<Vm> vm;
  if (vm == nullptr) vm = std::make_unique<Vm>();
  return *vm;
}

// Appends the reply of a run that failed: the error table the handler built, as Redis words it.
void AppendRunError(lua_State* L, std::string_view sha, int status, std::string* out) {
  if (status == LUA_ERRMEM) {
    AppendError(out, "ERR Error running script: the script's Lua memory passed lua-maxmemory");
    return;
  }
  if (!lua_istable(L, -1)) {
    const char* text = lua_tostring(L, -1);
    AppendError(out, std::string("ERR Error running script ") + std::string(sha) + ", " +
                         (text != nullptr ? text : "execution failure"));
    return;
  }
  std::string message;
  lua_getfield(L, -1, "err");
  if (const char* text = lua_tostring(L, -1)) message = text;
  lua_pop(L, 1);
  lua_getfield(L, -1, "source");
  const char* source = lua_tostring(L, -1);
  std::string where = source != nullptr ? source : "";
  lua_pop(L, 1);
  lua_getfield(L, -1, "line");
  const bool has_line = lua_isnumber(L, -1) != 0;
  const long long line = has_line ? static_cast<long long>(lua_tonumber(L, -1)) : 0;
  lua_pop(L, 1);
  if (!where.empty() && has_line) {
    message += " script: " + std::string(sha) + ", on " + where + ":" + std::to_string(line) + ".";
  }
  AppendError(out, message);
}

}  // namespace

bool RunScript(const ScriptRun& run, std::string* out) {
  Vm& vm = ThreadVm();
  lua_State* L = vm.state();
  if (L == nullptr) {
    AppendError(out, "ERR the scripting engine could not start (out of memory)");
    return true;
  }
  Scripting& scripting = run.ctx->scripting();
  vm.set_cap(run.ctx->settings().lua_maxmemory.load(std::memory_order_relaxed));
  vm.Sync(scripting.cache().generation());
  lua_settop(L, 0);
  lua_pushcfunction(L, ErrorHandler);
  const bool is_function = !run.function.empty();
  if (is_function) {
    vm.SyncFunctions(scripting.functions());
    lua_settop(L, 0);
    lua_pushcfunction(L, ErrorHandler);
    if (!vm.PushCallback(run.function)) {
      lua_settop(L, 0);
      AppendError(out, "ERR Function not found");
      return true;
    }
    vm.PushArgumentTables(run);
  } else {
    std::string error;
    if (!vm.PushFunction(run.sha, run.body, &error)) {
      lua_settop(L, 0);
      AppendError(out, error);
      return false;
    }
    vm.SetArguments(run);
  }
  ActiveRun active;
  active.run = &run;
  active.scripting = &scripting;
  active.kill_epoch = scripting.StartRun();
  tls_run = &active;
  lua_sethook(L, Hook, LUA_MASKCOUNT, kHookEvery);
  const int status = lua_pcall(L, is_function ? 2 : 0, 1, 1);
  lua_sethook(L, nullptr, 0, 0);
  tls_run = nullptr;
  scripting.EndRun();
  if (active.killed) {
    if (UnitKeys* unit = UnitKeys::Current()) unit->RollBack();
  }
  if (status != 0) {
    AppendRunError(L, is_function ? run.function : run.sha, status, out);
  } else {
    std::string reply;
    lua_pushcfunction(L, [](lua_State* S) -> int {
      AppendLuaReply(S, 1, static_cast<std::string*>(lua_touserdata(S, 2)),
                     lua_toboolean(S, 3) != 0);
      return 0;
    });
    lua_pushvalue(L, -2);
    lua_pushlightuserdata(L, &reply);
    lua_pushboolean(L, active.resp3);
    if (lua_pcall(L, 3, 0, 0) != 0) {
      const char* text = lua_tostring(L, -1);
      AppendError(out, std::string("ERR ") + (text != nullptr ? text : "reply conversion failed"));
    } else {
      out->append(reply);
    }
  }
  lua_settop(L, 0);
  vm.CollectSometimes();
  scripting.AddVmBytes(vm.TakeMemoryDelta());
  return true;
}

Status CheckLibrary(std::string_view code, LibraryInfo* info) {
  Vm& vm = ThreadVm();
  if (vm.state() == nullptr) return Status::InvalidArgument("the scripting engine could not start");
  return vm.LoadLibrary(code, info, /*install=*/false);
}

Status LoadStoredLibraries(storage::Store& store, FunctionRegistry* registry) {
  auto records = store.ServerRecords(kLibraryRecordPrefix);
  if (!records.ok()) return records.status();
  for (const auto& [name, code] : *records) {
    LibraryInfo info;
    Status s = CheckLibrary(code, &info);
    if (s.ok()) s = registry->Add(std::move(info), /*replace=*/false);
    if (!s.ok()) spdlog::warn("function library record {} not loaded: {}", name, s.message());
  }
  return Status::OK();
}

Status ReloadStoredLibraries(storage::Store& store, FunctionRegistry* registry) {
  auto records = store.ServerRecords(kLibraryRecordPrefix);
  if (!records.ok()) return records.status();
  std::vector<LibraryInfo> libraries;
  for (const auto& [name, code] : *records) {
    LibraryInfo info;
    if (Status s = CheckLibrary(code, &info); !s.ok()) {
      spdlog::warn("function library record {} not loaded: {}", name, s.message());
      continue;
    }
    libraries.push_back(std::move(info));
  }
  for (const auto& name : registry->ReplaceAll(std::move(libraries))) {
    spdlog::warn("function library {} not loaded: a function of it exists already", name);
  }
  return Status::OK();
}

std::string CompileError(std::string_view body) {
  Vm& vm = ThreadVm();
  lua_State* L = vm.state();
  if (L == nullptr) return "ERR the scripting engine could not start (out of memory)";
  const int status = luaL_loadbuffer(L, body.data(), body.size(), "@user_script");
  std::string error;
  if (status != 0) {
    const char* text = lua_tostring(L, -1);
    error =
        std::string("ERR Error compiling script (new function): ") + (text != nullptr ? text : "?");
  }
  lua_settop(L, 0);
  return error;
}

}  // namespace rockcache::server::scripting
