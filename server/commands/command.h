// The command table: every command rockcache knows is one row (name, arity, flags, key
// positions, handler). Metadata is data; a handler is short and appends reply bytes.
//
// Where a command runs is decided by its flags, not by its handler:
// - kConnection: reads or changes the connection (AUTH, CLIENT, SELECT, HELLO, QUIT...), or
//   server-wide state (CONFIG, INFO, SHUTDOWN): it runs on the connection's network thread, and
//   only when the connection has nothing in flight. It never touches storage.
// - kAnywhere: pure and cheap (PING, ECHO, TIME): runs on the network thread when nothing is in
//   flight, or inside a worker task in order with the commands around it.
// - otherwise (storage commands): runs on a worker thread, inside a task, in request order.
//
// Cache discipline (server/executor.h applies it, so handlers stay short): a write command runs
// holding the key-stripe locks of its keys; a command flagged kCacheAware keeps the cache right
// itself (write-through) for every key it writes, multi-key ones (MSET) included, and leaves the
// cache as it was when it writes nothing; any other write has its keys erased from the cache
// first. A kCacheRead command has an `rtc` function that answers from the cache alone; the
// network thread tries it first (run to completion), and a worker tries it again under the key
// lock before reading storage and filling the cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/services.h"

namespace rockcache::storage {
class Store;
}
namespace rockcache::cache {
class Cache;
}

namespace rockcache::server {

struct Connection;
struct ReplyBudget;  // server/commands/reply_budget.h
struct Waiter;       // server/blocking/wait_registry.h
struct SliceSink;    // server/slicing/sliced_read.h
struct NewKeyWatch;  // server/pubsub/notify.h
class ClientPause;   // server/client_pause.h

enum CommandFlags : uint32_t {
  kWrite = 1u << 0,       // may modify the dataset
  kReadOnly = 1u << 1,    // reads the dataset only
  kConnection = 1u << 2,  // runs on the network thread with the Connection (see above)
  kAnywhere = 1u << 3,    // pure and cheap; may run on any thread
  kNoAuth = 1u << 4,      // allowed before AUTH (AUTH, HELLO, QUIT)
  kFast = 1u << 5,        // O(1) or O(log n)
  kAdmin = 1u << 6,
  kCacheRead = 1u << 7,     // has an `rtc` function: may be answered from the cache
  kCacheAware = 1u << 8,    // the handler updates the cache itself after a write (write-through)
  kAllKeys = 1u << 9,       // touches every key (FLUSHALL): runs holding every key lock
  kTransaction = 1u << 11,  // WATCH, EXEC: the network thread hands them to server/tx/
  // A kCacheRead command of one string key (GET, STRLEN, GETBIT, MGET of one key): a cache miss
  // may be filled from RocksDB's memory in the network thread (TryAnswerFromMemory,
  // server/executor.h), since a string or an absent key is all it reads. Not set on commands
  // that often meet collections (HGET, TYPE, TTL, EXISTS...), which would pay that read in the
  // network thread and still go to the pool.
  kStringRead = 1u << 12,
  // May block the client (BLPOP...): the network thread sends it to the pool alone, with a
  // Waiter (server/blocking/wait_registry.h), and parses nothing more from the client until it
  // is answered.
  kMayBlock = 1u << 10,
  // A script (EVAL, EVALSHA...): runs as one atomic unit with its own locks and commit
  // (server/scripting/script_unit.h), a barrier of the group commit.
  kScript = 1u << 13,
  // With kMayBlock: blocks only when given a BLOCK argument (XREAD, XREADGROUP), so scripts may
  // call it (Redis's "blocking" without "noscript").
  kBlockOption = 1u << 14,
};

using Args = std::vector<std::string>;

// What a handler may reach: the fields below (its store, cache, connection and call state), and
// the server's shared parts through the accessors at the end, each named for what it is. A
// handler never sees the Server. `conn` is set only for kConnection commands (network thread).
// `store` is set only on worker threads. `cache` is set only while the command holds the key
// locks of its keys (worker threads): then, and only then, it may fill or update the cache.
struct CommandContext {
  // Set by the call path (server/call.h) from the Server's; handlers use the accessors below.
  const Services* services = nullptr;
  storage::Store* store = nullptr;
  Connection* conn = nullptr;
  cache::Cache* cache = nullptr;
  int64_t now_ms = 0;  // wall clock, read once per batch
  // Set on worker threads: the reply bytes the batch may still produce (reply_budget.h).
  ReplyBudget* reply_budget = nullptr;
  // Set while the command runs inside EXEC (server/tx/transaction.h): a blocking command must
  // not block then (it behaves as if its timeout had passed, as Redis).
  bool in_exec = false;
  // Set (with in_exec) while a script's redis.call runs the command: XREAD/XREADGROUP refuse
  // BLOCK there, as Redis.
  bool in_script = false;
  // Set with in_exec: the key stripes (cache::KeyLocks) this thread holds for the whole
  // transaction, ascending. A handler that locks keys of its own (DEBUG CACHE-VERIFY) must not
  // lock these again and must not block on any other stripe (cache/key_locks.h: one Lock per
  // thread); nullptr when the thread holds no stripe.
  const std::vector<uint32_t>* held_stripes = nullptr;
  // Set for a kMayBlock command sent by a client that may block: the waiter that stands for it
  // (server/blocking/). nullptr (EXEC, scripts...) or no_block: a blocking pop answers at once,
  // with what is there or as if its timeout elapsed (Redis's behaviour inside MULTI).
  const std::shared_ptr<Waiter>* waiter = nullptr;
  bool no_block = false;
  // The database the command runs in: the number the connection SELECTed (logical; what
  // __keyspace@<db>__ and per-database registries use). Handlers need not pass it anywhere:
  // `store` and `cache` already work in it (config/current_db.h; the server sets the calling
  // thread's physical database before running the handler).
  int db = 0;
  // Set on workers for a command that may be sliced (server/slicing/sliced_read.h): a big read
  // leaves its continuation here. nullptr (EXEC, blocking commands...): it runs whole.
  SliceSink* slices = nullptr;
  // Set while `new` keyspace events (n) are on: the command's keys that did not exist before it
  // ran (server/pubsub/notify.h). nullptr otherwise.
  NewKeyWatch* new_keys = nullptr;
  // Set with `cache` by the executor, before the handler reads storage: the generation of the
  // command's database (cache::Cache::generation()) that every Put of the command is stamped
  // with, so a fill that read storage before a FLUSHDB/FLUSHALL is never installed as live after
  // it ("Fill fencing" in cache/cache.h). The cache helpers (cache_access.h) pass it.
  uint32_t cache_generation = 0;

  // ---- the server's shared parts (server/services.h); any thread unless stated ----
  // Hot-path settings mirrored from the config (relaxed loads).
  const Settings& settings() const { return *services->settings; }
  // Server-wide counters (INFO stats).
  ServerStats& stats() const { return *services->stats; }
  // The config, read-only (GetInt, GetString take its lock: not for per-command paths).
  const config::Config& config() const { return *services->config; }
  // The number of logical databases (SELECT, MOVE, SWAPDB check against it).
  int databases() const { return services->databases; }
  // The key-stripe locks: for a write-sequence fence (CacheReadFence, server/executor.h) and the
  // few handlers that lock keys of their own (DEBUG CACHE-VERIFY: see held_stripes).
  cache::KeyLocks& key_locks() const { return *services->key_locks; }
  // Channel and pattern subscriptions, PUBLISH, notify-keyspace-events.
  PubSub& pubsub() const { return *services->pubsub; }
  // Client-side caching (CLIENT TRACKING).
  Tracking& tracking() const { return *services->tracking; }
  // Clients blocked in BLPOP-like commands.
  WaitRegistry& blocking() const { return *services->blocking; }
  // WATCHed keys (server/tx/).
  WatchRegistry& watches() const { return *services->watches; }
  // The script cache and the function libraries.
  scripting::Scripting& scripting() const { return *services->scripting; }
  // Every connected client (CLIENT LIST, MEMORY STATS).
  ClientRegistry& clients() const { return *services->clients; }
  // Role, link and replicas (REPLICAOF, ROLE, WAIT, PSYNC).
  replication::Replication& replication() const { return *services->replication; }
  // The administrative commands' view of the whole server (INFO, CONFIG, DEBUG, SHUTDOWN...).
  ServerAdmin& admin() const { return *services->admin; }
};

using CommandHandler = void (*)(CommandContext& ctx, Args& argv, std::string* out);

// What an `rtc` function may reach: the cache only. Never blocks.
struct RtcContext {
  cache::Cache* cache = nullptr;
  int64_t now_ms = 0;
  bool count_stats = true;  // false for a worker's re-check (a coalesced miss, not a new lookup)
  const Services* services = nullptr;  // as CommandContext's; through the accessors below
  int db = 0;                          // as CommandContext::db; `cache` already looks in it
  // false: the lookup answers the request whose miss just filled the entry, which is not a
  // second access (cache::Cache::Inspect: no promotion out of the probation segment), or is a
  // read Redis makes without touching (TTL, TYPE, EXISTS: cache_access.h NoTouch)
  bool touch = true;

  // As CommandContext's (a multi-key answer fences on the key stripes' write sequences).
  const Settings& settings() const { return *services->settings; }
  const cache::KeyLocks& key_locks() const { return *services->key_locks; }
};

// Answers from the cache alone. Returns true and appends the whole reply when the cache holds
// everything the reply needs; returns false and leaves `out` untouched otherwise.
using RtcHandler = bool (*)(RtcContext& ctx, const Args& argv, std::string* out);

// The keys of a command whose keys are not at fixed positions (SORT ... STORE dst, GEORADIUS ...
// STORE dst): views into argv. Pure, any thread.
using KeysFinder = std::vector<std::string_view> (*)(const Args& argv);

// A write run: consecutive commands of one row on one key, in one group of the group commit
// (server/group_commit.h), run as one storage operation — a pipeline of 16 LPUSHes on a hot list
// reads and writes the list's meta once, not 16 times. Only where nothing can observe the states
// between the commands (CallRun, server/call.h, says when).
struct WriteRun {
  std::vector<Args*> argvs;           // in execution order; argv[1] is the same key in all
  std::vector<std::string*> replies;  // replies[i]: where argvs[i]'s reply is appended
};
// How a row's commands join a run. The run's replies and its final state are exactly those of
// running its commands one by one.
struct WriteRunSpec {
  // Whether `argv` (arity already checked) may join a run: a command whose shape is wrong (an odd
  // HSET, an LPOP with a count) runs alone, so its error is its own.
  bool (*joins)(const Args& argv);
  // Runs the commands of `run` as one and appends each one's reply. `ctx` as a handler's.
  void (*run)(CommandContext& ctx, const WriteRun& run);
};

struct CommandSpec {
  const char* name;  // lower case
  int arity;         // Redis convention: N exact, -N at least N (argv[0] counts)
  uint32_t flags;
  int first_key;  // 0 = no keys
  int last_key;   // -1 = last argument
  int key_step;
  CommandHandler handler;
  RtcHandler rtc = nullptr;  // set for kCacheRead commands
  // Container commands (CONFIG, CLIENT, OBJECT...): the subcommands the handler implements,
  // "get|set|help", for COMMAND INFO / DOCS. nullptr otherwise.
  const char* subcommands = nullptr;
  // Set when the keys depend on the arguments; first_key/last_key/key_step then only describe
  // the keys that are always there (for COMMAND), and CommandKeys asks this function.
  KeysFinder find_keys = nullptr;
  // Set when consecutive commands of this row on one key may run as one (WriteRun above).
  const WriteRunSpec* write_run = nullptr;
  // Subcommands ("stats|kill") that run in the network thread as kConnection commands do, while
  // the rest of the row goes to the pool: what must answer while every worker is busy (FUNCTION
  // KILL and STATS during a long script, as Redis's allow-busy). nullptr for most rows.
  const char* loop_subcommands = nullptr;
};

// The keys of a command, by the table's key positions (views into argv).
std::vector<std::string_view> CommandKeys(const CommandSpec& spec, const Args& argv);
// The same keys appended to *keys (no allocation when *keys has room: the group commit reuses
// one vector for all its commands).
void AppendCommandKeys(const CommandSpec& spec, const Args& argv,
                       std::vector<std::string_view>* keys);

// The row for `name` (case-insensitive), or nullptr. With `id`, also its index in
// AllCommands() (for per-command metrics). Any thread.
const CommandSpec* FindCommand(std::string_view name, int* id = nullptr);
// Every row, for COMMAND / COMMAND COUNT.
const std::vector<const CommandSpec*>& AllCommands();

// What CLIENT LIST / CLIENT INFO show as cmd= (Redis's lastcmd): a command id and one of its
// subcommands packed in 32 bits, so a connection records every command it parses with one
// relaxed store and the name is rendered only when a client list is asked for.
// kNoCommandRef (Redis prints "NULL"): no command yet, an unknown command, or an unknown
// subcommand of a container (CONFIG FOO).
inline constexpr uint32_t kNoCommandRef = 0;
// The ref of `spec` (id `id` from FindCommand) run with `argv`: the container's subcommand when
// it has a list and argv[1] names one ("client|list"), the command alone when argv has no
// argv[1]. nullptr spec -> kNoCommandRef. No allocation.
uint32_t CommandRefOf(const CommandSpec* spec, int id, const Args& argv);
// "set", "client|list", or "NULL".
std::string CommandRefName(uint32_t ref);

// Checks arity. False means the reply is "-ERR wrong number of arguments for '<name>' command".
inline bool ArityOk(const CommandSpec& spec, size_t argc) {
  return spec.arity >= 0 ? argc == static_cast<size_t>(spec.arity)
                         : argc >= static_cast<size_t>(-spec.arity);
}

// Appends Redis's "-ERR unknown command '<name>', with args beginning with: ..." reply.
void AppendUnknownCommand(std::string* out, const Args& argv);
// Appends "-ERR wrong number of arguments for '<name>' command".
void AppendArityError(std::string* out, std::string_view name);

// Row groups, defined beside their handlers (server/commands/<type>.cc) and joined in
// command_table.cc.
extern const std::vector<CommandSpec> kServerCommands;
extern const std::vector<CommandSpec> kDatabaseCommands;       // databases.cc
extern const std::vector<CommandSpec> kConfigCommands;         // config_cmd.cc
extern const std::vector<CommandSpec> kCommandDocsCommands;    // command_docs.cc
extern const std::vector<CommandSpec> kObservabilityCommands;  // observability.cc
extern const std::vector<CommandSpec> kIntrospectionCommands;  // introspection.cc
extern const std::vector<CommandSpec> kStringCommands;
extern const std::vector<CommandSpec> kKeyspaceCommands;
extern const std::vector<CommandSpec> kHashCommands;
extern const std::vector<CommandSpec> kListCommands;
extern const std::vector<CommandSpec> kSetCommands;
extern const std::vector<CommandSpec> kZSetCommands;
extern const std::vector<CommandSpec> kHyperLogLogCommands;
extern const std::vector<CommandSpec> kGeoCommands;
extern const std::vector<CommandSpec> kSortCommands;
extern const std::vector<CommandSpec> kBitmapCommands;       // bitmap.cc
extern const std::vector<CommandSpec> kLcsCommands;          // lcs.cc
extern const std::vector<CommandSpec> kZSetAlgebraCommands;  // zset_algebra.cc
extern const std::vector<CommandSpec> kMultiPopCommands;     // multipop.cc
extern const std::vector<CommandSpec> kTransactionCommands;  // transaction.cc
extern const std::vector<CommandSpec> kScriptingCommands;    // scripting.cc
extern const std::vector<CommandSpec> kPubSubCommands;       // pubsub.cc
extern const std::vector<CommandSpec> kBlockingCommands;     // blocking.cc
extern const std::vector<CommandSpec> kStreamCommands;       // stream.cc
extern const std::vector<CommandSpec> kDumpCommands;         // dump.cc
extern const std::vector<CommandSpec> kMigrateCommands;      // migrate.cc
extern const std::vector<CommandSpec> kStreamReadCommands;   // stream_read.cc
extern const std::vector<CommandSpec> kStreamGroupCommands;  // stream_group.cc
extern const std::vector<CommandSpec> kPersistenceCommands;  // persistence.cc
extern const std::vector<CommandSpec> kReplicationCommands;  // replication/commands.cc

}  // namespace rockcache::server
