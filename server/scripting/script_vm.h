// The Lua machine scripts run in: one Lua 5.1 state per thread that runs scripts (workers, and a
// network thread compiling for SCRIPT LOAD), created on first use, with the environment Redis
// gives scripts — the base, table, string and math libraries, cjson, bit, cmsgpack and struct,
// the `redis` table (call, pcall, error_reply, status_reply, sha1hex, log, setresp, set_repl,
// replicate_commands, REDIS_VERSION...), KEYS and ARGV — inside a sandbox: no loadfile, dofile,
// os, io, require, debug, getfenv/setfenv; reading an undeclared global is an error, and the
// globals and library tables are read-only (proxies: stock Lua 5.1 has no read-only tables, so
// `rawset` refuses them instead of Redis's patched VM refusing every write).
//
// A run is bounded: the state's memory is capped (lua-maxmemory: past it the script fails with
// an out-of-memory error), and a hook every 100,000 VM instructions stops a script SCRIPT KILL
// asked to stop. math.random is Redis's (lrand48), one sequence per state: redis-server 7.0.15
// does not reseed it per run either.
#pragma once

#include <string>
#include <string_view>

#include "config/status.h"
#include "server/commands/command.h"
#include "server/scripting/functions.h"

namespace rockcache::storage {
class Store;
}

namespace rockcache::server::scripting {

// One script run, from EVAL / EVALSHA (and their _RO forms).
struct ScriptRun {
  CommandContext* ctx = nullptr;  // the EVAL's context: server, database, clock
  std::string_view sha;           // lowercase hex SHA-1 of body
  std::string_view body;
  // FCALL: the function to run (sha and body unused); it gets KEYS and ARGV as its arguments.
  std::string_view function;
  const Args* argv = nullptr;
  size_t first_key = 3;  // KEYS = argv[first_key, first_key + numkeys), ARGV = the rest
  size_t numkeys = 0;
  bool read_only = false;  // EVAL_RO / EVALSHA_RO: writes are refused
};

// Runs `run` on this thread's Lua state and appends its reply (or Redis's error for it) to
// *out. Each command the script calls goes through Call (server/call.h) in kAtomic mode, in the
// running unit (script_unit.h). False when the body did not compile (the error is the reply).
// REQUIRES: a worker inside a unit (RunScriptUnit or EXEC).
bool RunScript(const ScriptRun& run, std::string* out);

// FUNCTION LOAD's check: runs a library's code on this thread's state and fills *info with the
// functions it registers. Errors as Redis's ("Error compiling function: ...", "Error
// registering functions: ...", "No functions registered", the metadata errors).
Status CheckLibrary(std::string_view code, LibraryInfo* info);

// At startup, before any client: loads the libraries kept in `store` (FUNCTION LOAD's records)
// into `registry`, checking each on this thread's state. A library that no longer loads is
// logged and skipped.
Status LoadStoredLibraries(storage::Store& store, FunctionRegistry* registry);

// A replica, after its storage changed under it (a full sync, a replicated FUNCTION LOAD /
// DELETE / FLUSH / RESTORE): replaces the libraries of `registry` by those kept in `store`
// (ReplaceAll), checking each on this thread's state. A library that no longer loads is logged
// and skipped.
Status ReloadStoredLibraries(storage::Store& store, FunctionRegistry* registry);

// Compiles `body` on this thread's state without running it (SCRIPT LOAD). Empty when it
// compiles, else Redis's error text ("ERR Error compiling script (new function): ...").
std::string CompileError(std::string_view body);

}  // namespace rockcache::server::scripting
