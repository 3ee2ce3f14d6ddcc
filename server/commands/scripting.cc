// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (Redis 7.0 replies). A script command reaches a
// worker as a barrier of the group commit and runs as one atomic unit
// (server/scripting/script_unit.h); inside MULTI it runs under EXEC's unit. The Lua side is
// server/scripting/script_vm.h.
#include "server/scripting/scripting.h"

#include "config/glob.h"
#include "server/clock.h"
#include "server/commands/args.h"
#include "server/commands/numkeys.h"
#include "server/commands/subcommand.h"
#include "server/protocol/reply.h"
#include "server/rdb/rdb_codec.h"
#include "server/scripting/script_unit.h"
#include "server/scripting/script_vm.h"
#include "server/scripting/sha1.h"
#include "server/settings.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using scripting::ScriptRun;

constexpr std::string_view kNoScript = "-NOSCRIPT No matching script. Please use EVAL.\r\n";

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');  // a sha1: ASCII only
  }
  return lower;
}

// Keys of EVAL script numkeys key... (for the locks and COMMAND GETKEYS).
std::vector<std::string_view> ScriptKeys(const Args& argv) { return KeysAfterNumKeys(argv, 2); }

// EVAL / EVALSHA and the _RO forms: numkeys checked, the body found, the script run.
void RunEval(CommandContext& ctx, Args& argv, std::string* out, bool by_sha, bool read_only) {
  int64_t numkeys = 0;
  if (!ParseInteger(argv[2], &numkeys)) return (void)out->append(kReplyNotInteger);
  if (numkeys < 0) return AppendError(out, "ERR Number of keys can't be negative");
  if (static_cast<uint64_t>(numkeys) > argv.size() - 3) {
    return AppendError(out, "ERR Number of keys can't be greater than number of args");
  }
  if (scripting::UnitKeys::Current() == nullptr) {  // not reached through a unit: a defect
    return AppendError(out, "ERR scripts run only as a unit of their own or inside EXEC");
  }
  scripting::ScriptCache& cache = ctx.scripting().cache();
  std::string sha;
  std::shared_ptr<const std::string> body;
  if (by_sha) {
    sha = Lower(argv[1]);
    body = cache.Find(sha);
    if (body == nullptr) return (void)out->append(kNoScript);
  } else {
    sha = scripting::Sha1Hex(argv[1]);
  }
  const std::string_view text = by_sha ? std::string_view(*body) : std::string_view(argv[1]);
  scripting::ScriptShebang shebang;
  size_t code_offset = 0;
  if (Status s = scripting::ParseScriptShebang(text, &shebang, &code_offset); !s.ok()) {
    return AppendStatusError(out, s);
  }
  // A script with a shebang declares whether it writes; EVAL_RO refuses one that may.
  if (read_only && shebang.present && !shebang.no_writes) {
    return AppendError(out, "ERR Can not execute a script with write flag using *_ro command.");
  }
  ScriptRun run;
  run.ctx = &ctx;
  run.sha = sha;
  run.body = text.substr(code_offset);
  run.argv = &argv;
  run.first_key = 3;
  run.numkeys = static_cast<size_t>(numkeys);
  run.read_only = read_only || shebang.no_writes;
  const bool compiled = scripting::RunScript(run, out);
  if (compiled && !by_sha) {
    cache.Add(sha, argv[1], ctx.settings().lua_script_cache_bytes.load(std::memory_order_relaxed));
  }
}

void Eval(CommandContext& ctx, Args& argv, std::string* out) {
  RunEval(ctx, argv, out, /*by_sha=*/false, /*read_only=*/false);
}
void EvalSha(CommandContext& ctx, Args& argv, std::string* out) {
  RunEval(ctx, argv, out, /*by_sha=*/true, /*read_only=*/false);
}
void EvalRo(CommandContext& ctx, Args& argv, std::string* out) {
  RunEval(ctx, argv, out, /*by_sha=*/false, /*read_only=*/true);
}
void EvalShaRo(CommandContext& ctx, Args& argv, std::string* out) {
  RunEval(ctx, argv, out, /*by_sha=*/true, /*read_only=*/true);
}

// FCALL / FCALL_RO function numkeys key... arg...
void RunFcall(CommandContext& ctx, Args& argv, std::string* out, bool read_only) {
  std::optional<scripting::FunctionInfo> fn = ctx.scripting().functions().Find(argv[1]);
  if (!fn) return AppendError(out, "ERR Function not found");
  int64_t numkeys = 0;
  if (!ParseInteger(argv[2], &numkeys)) return AppendError(out, "ERR Bad number of keys provided");
  if (numkeys < 0) return AppendError(out, "ERR Number of keys can't be negative");
  if (static_cast<uint64_t>(numkeys) > argv.size() - 3) {
    return AppendError(out, "ERR Number of keys can't be greater than number of args");
  }
  if (read_only && !fn->no_writes) {
    return AppendError(out, "ERR Can not execute a script with write flag using *_ro command.");
  }
  if (scripting::UnitKeys::Current() == nullptr) {
    return AppendError(out, "ERR scripts run only as a unit of their own or inside EXEC");
  }
  ScriptRun run;
  run.ctx = &ctx;
  run.function = argv[1];
  run.argv = &argv;
  run.first_key = 3;
  run.numkeys = static_cast<size_t>(numkeys);
  run.read_only = read_only || fn->no_writes;
  scripting::RunScript(run, out);
}

void Fcall(CommandContext& ctx, Args& argv, std::string* out) {
  RunFcall(ctx, argv, out, /*read_only=*/false);
}
void FcallRo(CommandContext& ctx, Args& argv, std::string* out) {
  RunFcall(ctx, argv, out, /*read_only=*/true);
}

// One library of FUNCTION LIST, as Redis 7.0 lays it out (maps; RESP2: flat key/value arrays).
void AppendLibrary(std::string* out, const scripting::LibraryInfo& library, bool with_code) {
  AppendMapHeader(out, with_code ? 4 : 3);
  AppendBulk(out, "library_name");
  AppendBulk(out, library.name);
  AppendBulk(out, "engine");
  AppendBulk(out, "LUA");
  AppendBulk(out, "functions");
  AppendArrayHeader(out, static_cast<int64_t>(library.functions.size()));
  for (const scripting::FunctionInfo& fn : library.functions) {
    AppendMapHeader(out, 3);
    AppendBulk(out, "name");
    AppendBulk(out, fn.name);
    AppendBulk(out, "description");
    AppendOptionalBulk(out, fn.description);
    AppendBulk(out, "flags");
    AppendSetHeader(out, static_cast<int64_t>(fn.flags.size()));
    for (const std::string& flag : fn.flags) AppendSimple(out, flag);
  }
  if (with_code) {
    AppendBulk(out, "library_code");
    AppendBulk(out, library.code);
  }
}

// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]: every library checked before any is
// installed (all or nothing), then kept durably as FUNCTION LOAD keeps them.
void RestoreFunctions(CommandContext& ctx, Args& argv, std::string* out) {
  scripting::FunctionRegistry& registry = ctx.scripting().functions();
  enum class Policy { kAppend, kReplace, kFlush } policy = Policy::kAppend;
  if (argv.size() == 4) {
    if (Is(argv[3], "FLUSH")) {
      policy = Policy::kFlush;
    } else if (Is(argv[3], "REPLACE")) {
      policy = Policy::kReplace;
    } else if (!Is(argv[3], "APPEND")) {
      return AppendError(out,
                         "ERR Wrong restore policy given, value should be either FLUSH, "
                         "APPEND or REPLACE.");
    }
  }
  std::string_view body;
  if (!rdb::CheckFooter(argv[2], &body)) {
    return AppendError(out, "ERR DUMP payload version or checksum are wrong");
  }
  std::vector<scripting::LibraryInfo> libraries;
  rdb::Reader reader(body);
  while (!reader.done()) {
    uint8_t opcode = 0;
    std::string code;
    if (!reader.ReadByte(&opcode)) break;
    if (opcode == rdb::kOpcodeFunctionPreGa) {
      return AppendError(out, "ERR Pre-GA function format not supported");
    }
    if (opcode != rdb::kOpcodeFunction2)
      return AppendError(out, "ERR given type is not a function");
    if (!reader.ReadString(&code)) {
      return AppendError(out, "ERR DUMP payload version or checksum are wrong");
    }
    scripting::LibraryInfo library;
    if (Status s = scripting::CheckLibrary(code, &library); !s.ok()) {
      return AppendStatusError(out, s);
    }
    libraries.push_back(std::move(library));
  }
  if (policy == Policy::kAppend) {
    for (const auto& library : libraries) {
      for (const auto& existing : registry.List()) {
        if (existing.name == library.name) {
          return AppendError(out, "ERR Library " + library.name + " already exists");
        }
      }
    }
  }
  if (policy == Policy::kFlush) {
    for (const scripting::LibraryInfo& library : registry.List()) {
      if (Status s = ctx.store->DeleteServerRecord(scripting::LibraryRecordName(library.name));
          !s.ok()) {
        return AppendStatusError(out, s);
      }
    }
    registry.Flush();
  }
  for (auto& library : libraries) {
    const std::string name = library.name;
    const std::string code = library.code;
    if (Status s = registry.Add(std::move(library), /*replace=*/true); !s.ok()) {
      return AppendStatusError(out, s);
    }
    if (Status s = ctx.store->PutServerRecord(scripting::LibraryRecordName(name), code); !s.ok()) {
      return AppendStatusError(out, s);
    }
  }
  AppendSimple(out, "OK");
}

// FUNCTION LOAD / DELETE / FLUSH / LIST / STATS / KILL / DUMP / RESTORE / HELP, on a worker: LOAD
// and DELETE write the libraries' records durably (server records, storage/store.h).
void Function(CommandContext& ctx, Args& argv, std::string* out) {
  scripting::Scripting& scripting = ctx.scripting();
  scripting::FunctionRegistry& registry = scripting.functions();
  const std::string& sub = argv[1];
  if (Is(sub, "LOAD") && (argv.size() == 3 || (argv.size() == 4 && Is(argv[2], "REPLACE")))) {
    const bool replace = argv.size() == 4;
    scripting::LibraryInfo library;
    if (Status s = scripting::CheckLibrary(argv.back(), &library); !s.ok()) {
      return AppendStatusError(out, s);
    }
    const std::string name = library.name;
    if (Status s = registry.Add(library, replace); !s.ok()) return AppendStatusError(out, s);
    if (Status s = ctx.store->PutServerRecord(scripting::LibraryRecordName(name), argv.back());
        !s.ok()) {
      (void)registry.Delete(name);
      return AppendStatusError(out, s);
    }
    return AppendBulk(out, name);
  }
  if (Is(sub, "DELETE") && argv.size() == 3) {
    if (Status s = registry.Delete(argv[2]); !s.ok()) return AppendStatusError(out, s);
    if (Status s = ctx.store->DeleteServerRecord(scripting::LibraryRecordName(argv[2])); !s.ok()) {
      return AppendStatusError(out, s);
    }
    return AppendSimple(out, "OK");
  }
  if (Is(sub, "FLUSH") && argv.size() <= 3) {
    if (argv.size() == 3 && !Is(argv[2], "ASYNC") && !Is(argv[2], "SYNC")) {
      return AppendError(out, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    }
    for (const scripting::LibraryInfo& library : registry.List()) {
      if (Status s = ctx.store->DeleteServerRecord(scripting::LibraryRecordName(library.name));
          !s.ok()) {
        return AppendStatusError(out, s);
      }
    }
    registry.Flush();
    return AppendSimple(out, "OK");
  }
  if (Is(sub, "LIST")) {
    bool with_code = false;
    std::optional<std::string> pattern;
    for (size_t i = 2; i < argv.size(); ++i) {
      if (Is(argv[i], "WITHCODE") && !with_code) {
        with_code = true;
      } else if (Is(argv[i], "LIBRARYNAME") && !pattern && i + 1 < argv.size()) {
        pattern = argv[++i];
      } else {
        return AppendError(out, "ERR Unknown argument " + argv[i]);
      }
    }
    std::vector<scripting::LibraryInfo> libraries = registry.List();
    std::vector<const scripting::LibraryInfo*> shown;
    for (const auto& library : libraries) {
      if (!pattern || GlobMatch(*pattern, library.name)) shown.push_back(&library);
    }
    AppendArrayHeader(out, static_cast<int64_t>(shown.size()));
    for (const auto* library : shown) AppendLibrary(out, *library, with_code);
    return;
  }
  if (Is(sub, "STATS") && argv.size() == 2) {
    AppendMapHeader(out, 2);
    AppendBulk(out, "running_script");
    scripting::Scripting::RunningScript running;
    if (scripting.OldestRunning(NowUnixMs(), &running)) {
      AppendMapHeader(out, 3);
      AppendBulk(out, "name");
      AppendBulk(out, running.name);
      AppendBulk(out, "command");
      AppendArrayHeader(out, static_cast<int64_t>(running.command.size()));
      for (const std::string& arg : running.command) AppendBulk(out, arg);
      AppendBulk(out, "duration_ms");
      AppendInteger(out, running.duration_ms);
    } else {
      AppendNull(out);
    }
    AppendBulk(out, "engines");
    AppendMapHeader(out, 1);
    AppendBulk(out, "LUA");
    AppendMapHeader(out, 2);
    AppendBulk(out, "libraries_count");
    AppendInteger(out, static_cast<int64_t>(registry.library_count()));
    AppendBulk(out, "functions_count");
    AppendInteger(out, static_cast<int64_t>(registry.function_count()));
    return;
  }
  if (Is(sub, "KILL") && argv.size() == 2) {
    if (!scripting.KillRunning())
      return AppendError(out, "NOTBUSY No scripts in execution right now.");
    return AppendSimple(out, "OK");
  }
  if (Is(sub, "DUMP") && argv.size() == 2) {
    // Redis's payload: each library as its code, then the RDB version and CRC-64 (uncompressed
    // strings, so a library of a few dozen bytes dumps byte for byte as Redis dumps it).
    std::string payload;
    for (const scripting::LibraryInfo& library : registry.List()) {
      payload.push_back(static_cast<char>(rdb::kOpcodeFunction2));
      rdb::AppendString(&payload, library.code);
    }
    rdb::AppendFooter(&payload);
    return AppendBulk(out, payload);
  }
  if (Is(sub, "RESTORE") && (argv.size() == 3 || argv.size() == 4)) {
    return RestoreFunctions(ctx, argv, out);
  }
  if (Is(sub, "HELP") && argv.size() == 2) {
    return AppendHelp(
        out,
        {"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
         "LOAD [REPLACE] <FUNCTION CODE>",
         "    Create a new library with the given library name and code.", "DELETE <LIBRARY NAME>",
         "    Delete the given library.", "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
         "    Return general information on all the libraries:", "    * Library name",
         "    * The engine used to run the Library", "    * Library description",
         "    * Functions list", "    * Library code (if WITHCODE is given)",
         // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one line of Redis's help, split
         "    It also possible to get only function that matches a pattern using LIBRARYNAME "
         "argument.",
         "STATS", "    Return information about the current function running:",
         "    * Function name", "    * Command used to run the function",
         "    * Duration in MS that the function is running",
         "    If no function is running, return nil",
         "    In addition, returns a list of available engines.", "KILL",
         "    Kill the current running function.", "FLUSH [ASYNC|SYNC]",
         "    Delete all the libraries.",
         "    When called without the optional mode argument, the behavior is determined by the",
         "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
         "    * ASYNC: Asynchronously flush the libraries.",
         "    * SYNC: Synchronously flush the libraries.", "HELP", "    Prints this help."});
  }
  AppendSubcommandError(
      out, argv, {"LOAD", "DELETE", "FLUSH", "LIST", "STATS", "KILL", "DUMP", "RESTORE", "HELP"});
}

// SCRIPT LOAD / EXISTS / FLUSH / KILL / HELP, on the network thread: KILL must not wait behind
// the workers a script keeps busy. LOAD compiles on this thread's Lua state (O(script size)).
void Script(CommandContext& ctx, Args& argv, std::string* out) {
  scripting::Scripting& scripting = ctx.scripting();
  const std::string& sub = argv[1];
  if (Is(sub, "LOAD") && argv.size() == 3) {
    scripting::ScriptShebang shebang;
    size_t code_offset = 0;
    if (Status s = scripting::ParseScriptShebang(argv[2], &shebang, &code_offset); !s.ok()) {
      return AppendStatusError(out, s);
    }
    std::string error = scripting::CompileError(std::string_view(argv[2]).substr(code_offset));
    if (!error.empty()) return AppendError(out, error);
    const std::string sha = scripting::Sha1Hex(argv[2]);
    scripting.cache().Add(sha, argv[2],
                          ctx.settings().lua_script_cache_bytes.load(std::memory_order_relaxed));
    return AppendBulk(out, sha);
  }
  if (Is(sub, "EXISTS") && argv.size() >= 3) {
    AppendArrayHeader(out, static_cast<int64_t>(argv.size() - 2));
    for (size_t i = 2; i < argv.size(); ++i) {
      AppendInteger(out, scripting.cache().Exists(Lower(argv[i])) ? 1 : 0);
    }
    return;
  }
  if (Is(sub, "FLUSH") && argv.size() <= 3) {
    if (argv.size() == 3 && !Is(argv[2], "ASYNC") && !Is(argv[2], "SYNC")) {
      return AppendError(out, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    scripting.cache().Flush();
    return AppendSimple(out, "OK");
  }
  if (Is(sub, "KILL") && argv.size() == 2) {
    if (!scripting.KillRunning())
      return AppendError(out, "NOTBUSY No scripts in execution right now.");
    return AppendSimple(out, "OK");
  }
  if (Is(sub, "HELP") && argv.size() == 2) {
    return AppendHelp(
        out,
        {"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
         "EXISTS <sha1> [<sha1> ...]",
         "    Return information about the existence of the scripts in the script cache.",
         "FLUSH [ASYNC|SYNC]", "    Flush the Lua scripts cache. Very dangerous on replicas.",
         "    When called without the optional mode argument, the behavior is determined by the",
         "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
         "    * ASYNC: Asynchronously flush the scripts cache.",
         "    * SYNC: Synchronously flush the scripts cache.", "KILL",
         "    Kill the currently executing Lua script.", "LOAD <script>",
         "    Load a script into the scripts cache without executing it.", "HELP",
         "    Prints this help."});
  }
  AppendSubcommandError(out, argv, {"LOAD", "EXISTS", "FLUSH", "KILL", "HELP"});
}

}  // namespace

const std::vector<CommandSpec> kScriptingCommands = {
    {"eval", -3, kScript, 0, 0, 0, Eval, nullptr, nullptr, ScriptKeys},
    {"evalsha", -3, kScript, 0, 0, 0, EvalSha, nullptr, nullptr, ScriptKeys},
    {"eval_ro", -3, kScript | kReadOnly, 0, 0, 0, EvalRo, nullptr, nullptr, ScriptKeys},
    {"evalsha_ro", -3, kScript | kReadOnly, 0, 0, 0, EvalShaRo, nullptr, nullptr, ScriptKeys},
    {"script", -2, kConnection, 0, 0, 0, Script, nullptr, "load|exists|flush|kill|help"},
    {"fcall", -3, kScript, 0, 0, 0, Fcall, nullptr, nullptr, ScriptKeys},
    {"fcall_ro", -3, kScript | kReadOnly, 0, 0, 0, FcallRo, nullptr, nullptr, ScriptKeys},
    {"function", -2, 0, 0, 0, 0, Function, nullptr,
     "load|delete|flush|list|stats|kill|dump|restore|help", nullptr, nullptr, "stats|kill"},
};

}  // namespace rockcache::server
