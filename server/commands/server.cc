// Server and connection commands: PING, ECHO, QUIT, HELLO, AUTH, CLIENT, INFO, TIME,
// DBSIZE, FLUSHALL, DEBUG, SHUTDOWN. (SELECT, FLUSHDB...: databases.cc; CONFIG: config_cmd.cc;
// COMMAND: command_docs.cc; OBJECT, MEMORY, TOUCH: introspection.cc; SLOWLOG, LATENCY:
// observability.cc.)

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>
#include <tuple>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "config/config.h"
#include "pool/worker_pool.h"
#include "server/batch.h"
#include "server/blocking/wait_registry.h"
#include "server/client_registry.h"
#include "server/clock.h"
#include "server/commands/args.h"
#include "server/commands/client_control.h"
#include "server/commands/client_tracking.h"
#include "server/commands/command.h"
#include "server/commands/subcommand.h"
#include "server/connection.h"
#include "server/metrics/info.h"
#include "server/protocol/reply.h"
#include "server/replication/replication.h"
#include "server/server_admin.h"
#include "server/unit_cache.h"
#include "storage/numbers.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

void Ping(CommandContext&, Args& argv, std::string* out) {
  if (argv.size() > 2) return AppendArityError(out, argv[0]);
  if (argv.size() == 2) return AppendBulk(out, argv[1]);
  out->append("+PONG\r\n");
}

void Echo(CommandContext&, Args& argv, std::string* out) { AppendBulk(out, argv[1]); }

void Time(CommandContext&, Args&, std::string* out) {
  int64_t us = NowUnixUs();
  AppendArrayHeader(out, 2);
  AppendBulk(out, std::to_string(us / 1000000));
  AppendBulk(out, std::to_string(us % 1000000));
}

void Quit(CommandContext& ctx, Args&, std::string* out) {
  out->append(kReplyOk);
  ctx.conn->close_after_reply = true;
}

// AUTH [username] password, also used by HELLO ... AUTH. True when authenticated.
bool CheckPassword(CommandContext& ctx, const std::string* username, const std::string& password,
                   std::string* out) {
  std::string required = ctx.config().GetString("requirepass");
  if (required.empty() && username == nullptr) {
    AppendError(out,
                "ERR AUTH <password> called without any password configured for the default "
                "user. Are you sure your configuration is correct?");
    return false;
  }
  bool user_ok = username == nullptr || *username == "default";
  if (!user_ok || password != required) {
    if (!required.empty() || !user_ok) {
      AppendError(out, "WRONGPASS invalid username-password pair or user is disabled.");
      return false;
    }
  }
  ctx.conn->authenticated = true;
  return true;
}

void Auth(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 3) return out->append(kReplySyntaxError), void();
  bool ok = argv.size() == 2 ? CheckPassword(ctx, nullptr, argv[1], out)
                             : CheckPassword(ctx, &argv[1], argv[2], out);
  if (ok) out->append(kReplyOk);
}

bool ValidClientName(const std::string& name) {
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '!' && c <= '~'; });
}

void Hello(CommandContext& ctx, Args& argv, std::string* out) {
  size_t i = 1;
  Protocol protocol = ctx.conn->protocol;
  if (argv.size() >= 2) {
    int64_t version = 0;
    if (!ParseInteger(argv[1], &version)) {
      return AppendError(out, "ERR Protocol version is not an integer or out of range");
    }
    if (version != 2 && version != 3) {
      return AppendError(out, "NOPROTO unsupported protocol version");
    }
    protocol = version == 3 ? Protocol::kResp3 : Protocol::kResp2;
    i = 2;
  }
  std::string name;
  bool set_name = false;
  for (; i < argv.size(); ++i) {
    bool more = i + 1 < argv.size();
    if (Is(argv[i], "AUTH") && i + 2 < argv.size()) {
      std::string reply;
      if (!CheckPassword(ctx, &argv[i + 1], argv[i + 2], &reply)) return out->append(reply), void();
      i += 2;
    } else if (Is(argv[i], "SETNAME") && more) {
      name = argv[++i];
      if (!ValidClientName(name)) {
        return AppendError(out,
                           "ERR Client names cannot contain spaces, newlines or special "
                           "characters.");
      }
      set_name = true;
    } else {
      return AppendError(out, "ERR Syntax error in HELLO option '" + argv[i] + "'");
    }
  }
  if (!ctx.conn->authenticated) {
    return AppendError(out,
                       "NOAUTH HELLO must be called with the client already authenticated, "
                       "otherwise the HELLO <proto> AUTH <user> <pass> option can be used to "
                       "authenticate the client and select the RESP protocol version at the "
                       "same time");
  }
  if (set_name) ctx.conn->info->set_name(name);
  // The reply is in the protocol it switches to, as Redis's.
  ctx.conn->protocol = protocol;
  ctx.conn->info->resp.store(static_cast<int>(protocol), std::memory_order_relaxed);
  ReplyProtocolScope reply_protocol(protocol);
  AppendMapHeader(out, 7);
  AppendBulk(out, "server");
  AppendBulk(out, "redis");
  AppendBulk(out, "version");
  AppendBulk(out, kRedisCompatVersion);
  AppendBulk(out, "proto");
  AppendInteger(out, static_cast<int>(protocol));
  AppendBulk(out, "id");
  AppendInteger(out, static_cast<int64_t>(ctx.conn->id));
  AppendBulk(out, "mode");
  AppendBulk(out, "standalone");
  AppendBulk(out, "role");
  AppendBulk(out, "master");
  AppendBulk(out, "modules");
  AppendArrayHeader(out, 0);
}

// A client's CLIENT LIST / CLIENT KILL TYPE class: pubsub while it subscribes to anything.
bool IsPubSubClient(const ClientInfo& info) {
  return info.subscriptions.load(std::memory_order_relaxed) +
             info.pattern_subscriptions.load(std::memory_order_relaxed) +
             info.shard_subscriptions.load(std::memory_order_relaxed) >
         0;
}

// CLIENT LIST's flags, in Redis's order: P (subscribed), x (in MULTI), b (blocked), e
// (NO-EVICT), or N.
std::string ClientFlags(const ClientInfo& info) {
  std::string flags;
  if (IsPubSubClient(info)) flags += 'P';
  if (info.multi.load(std::memory_order_relaxed) >= 0) flags += 'x';
  if (info.blocked.load(std::memory_order_relaxed) || info.paused.load(std::memory_order_relaxed)) {
    flags += 'b';  // a client held by CLIENT PAUSE is blocked too, for Redis
  }
  if (info.no_evict.load(std::memory_order_relaxed)) flags += 'e';
  return flags.empty() ? "N" : flags;
}

std::string ClientLine(const ClientInfo& info, int64_t now_ms) {
  const uint32_t sub = info.subscriptions.load(std::memory_order_relaxed);
  const uint32_t psub = info.pattern_subscriptions.load(std::memory_order_relaxed);
  std::string line =
      "id=" + std::to_string(info.id) + " addr=" + info.addr + " laddr=" + info.laddr +
      " fd=" + std::to_string(info.fd) + " name=" + info.name() +
      " age=" + std::to_string((now_ms - info.created_ms) / 1000) +
      " idle=" + std::to_string((now_ms - info.last_interaction_ms.load()) / 1000) +
      " flags=" + ClientFlags(info) + " db=" + std::to_string(info.db.load()) +
      " sub=" + std::to_string(sub) + " psub=" + std::to_string(psub) +
      " ssub=" + std::to_string(info.shard_subscriptions.load()) +
      " multi=" + std::to_string(info.multi.load()) +
      " qbuf=" + std::to_string(info.query_buffer_bytes.load()) +
      " qbuf-free=" + std::to_string(info.query_buffer_free.load()) +
      " argv-mem=" + std::to_string(info.argv_memory.load()) +
      " multi-mem=" + std::to_string(info.multi_memory.load()) +
      " rbs=0 rbp=0 obl=0 oll=0 omem=" + std::to_string(info.output_memory.load()) +
      " tot-mem=" + std::to_string(info.total_memory.load()) +
      " events=r cmd=" + CommandRefName(info.last_command.load(std::memory_order_relaxed)) +
      " user=default redir=-1 resp=" + std::to_string(info.resp.load(std::memory_order_relaxed)) +
      " lib-name= lib-ver=\n";
  return line;
}

void ClientKill(CommandContext& ctx, Args& argv, std::string* out) {
  auto kill = [&](const std::shared_ptr<ClientInfo>& info) {
    info->killed.store(true);
    if (info->id == ctx.conn->id) {
      ctx.conn->close_after_reply = true;
    } else {
      Completion completion;
      completion.kind = Completion::Kind::kKill;
      completion.conn_id = info->id;
      ctx.admin().PostCompletion(info->loop_index, std::move(completion));
    }
  };
  if (argv.size() == 3) {  // old form: CLIENT KILL ip:port
    for (const auto& info : ctx.clients().Snapshot()) {
      if (info->addr == argv[2] && !info->killed.load()) {
        kill(info);
        return out->append(kReplyOk), void();
      }
    }
    return AppendError(out, "ERR No such client");
  }
  if (argv.size() % 2 != 0) return out->append(kReplySyntaxError), void();
  int64_t id = -1;
  std::string addr, laddr;
  bool skip_me = true;
  int type = -1;                  // -1 any, 0 normal, 1 pubsub
  std::string replication_links;  // TYPE replica|master: closes those links instead
  for (size_t i = 2; i + 1 < argv.size(); i += 2) {
    const std::string& value = argv[i + 1];
    if (Is(argv[i], "ID")) {
      if (!ParseInteger(value, &id) || id <= 0) {
        return AppendError(out, "ERR client-id should be greater than 0");
      }
    } else if (Is(argv[i], "ADDR")) {
      addr = value;
    } else if (Is(argv[i], "LADDR")) {
      laddr = value;
    } else if (Is(argv[i], "SKIPME")) {
      if (Is(value, "yes")) {
        skip_me = true;
      } else if (Is(value, "no")) {
        skip_me = false;
      } else {
        return out->append(kReplySyntaxError), void();
      }
    } else if (Is(argv[i], "TYPE") || Is(argv[i], "USER") || Is(argv[i], "MAXAGE")) {
      // Every client is a normal client of the default user here: TYPE normal / USER default
      // match all, other values match none.
      if (Is(argv[i], "TYPE") && (Is(value, "normal") || Is(value, "pubsub"))) {
        type = Is(value, "pubsub") ? 1 : 0;
      } else if (Is(argv[i], "TYPE") &&
                 (Is(value, "replica") || Is(value, "slave") || Is(value, "master"))) {
        replication_links = Is(value, "master") ? "master" : "replica";
        id = 0;  // the links are not clients of the registry
      } else if ((Is(argv[i], "TYPE") && !Is(value, "normal")) ||
                 (Is(argv[i], "USER") && value != "default")) {
        id = 0;
      }
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  int64_t killed = 0;
  if (!replication_links.empty()) killed += ctx.replication().KillByType(replication_links);
  for (const auto& info : ctx.clients().Snapshot()) {
    if (id == 0) break;
    if (info->killed.load()) continue;
    if (id > 0 && info->id != static_cast<uint64_t>(id)) continue;
    if (!addr.empty() && info->addr != addr) continue;
    if (!laddr.empty() && info->laddr != laddr) continue;
    if (skip_me && info->id == ctx.conn->id) continue;
    if (type >= 0 && IsPubSubClient(*info) != (type == 1)) continue;
    kill(info);
    ++killed;
  }
  AppendInteger(out, killed);
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends another client's blocking pop as if its timeout
// elapsed, or with an error. 1 when that client was blocked.
void ClientUnblock(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t id = 0;
  if (!ParseInteger(argv[2], &id)) return out->append(kReplyNotInteger), void();
  bool error = false;
  if (argv.size() == 4) {
    if (Is(argv[3], "ERROR")) {
      error = true;
    } else if (!Is(argv[3], "TIMEOUT")) {
      return AppendError(out, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
  }
  WaitRegistry& registry = ctx.blocking();
  std::shared_ptr<Waiter> waiter =
      id > 0 ? registry.FindByClient(static_cast<uint64_t>(id)) : nullptr;
  if (waiter == nullptr || !registry.Finish(waiter.get(), WaitState::kUnblocked)) {
    return AppendInteger(out, 0);
  }
  Completion completion;
  completion.conn_id = waiter->client_id;
  completion.unblock = Completion::Unblock::kTimedOut;  // counted, not slow-logged (Redis)
  if (error) {
    AppendError(&completion.replies, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
  } else {
    completion.replies = std::string(waiter->NullReply());
  }
  ctx.admin().PostCompletion(waiter->loop_index, std::move(completion));
  AppendInteger(out, 1);
}

void Client(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  Connection& conn = *ctx.conn;
  if (Is(sub, "ID") && argv.size() == 2) return AppendInteger(out, static_cast<int64_t>(conn.id));
  if (ClientTrackingCommand(ctx, argv, out)) return;
  if (ClientControlCommand(ctx, argv, out)) return;
  if (Is(sub, "GETNAME") && argv.size() == 2) {
    std::string name = conn.info->name();
    if (name.empty()) return out->append(NullBulkReply()), void();
    return AppendBulk(out, name);
  }
  if (Is(sub, "SETNAME") && argv.size() == 3) {
    if (!ValidClientName(argv[2])) {
      return AppendError(out,
                         "ERR Client names cannot contain spaces, newlines or special characters.");
    }
    conn.info->set_name(argv[2]);
    return out->append(kReplyOk), void();
  }
  if (Is(sub, "SETINFO") && argv.size() == 4) {
    if (!Is(argv[2], "LIB-NAME") && !Is(argv[2], "LIB-VER")) {
      return AppendError(out, "ERR Unrecognized option '" + argv[2] + "'");
    }
    return out->append(kReplyOk), void();
  }
  if (Is(sub, "INFO") && argv.size() == 2) {
    return AppendVerbatim(out, ClientLine(*conn.info, NowUnixMs()));
  }
  if (Is(sub, "LIST")) {
    std::vector<uint64_t> ids;
    int type = -1;  // -1 any, 0 normal, 1 pubsub
    if (argv.size() >= 4 && Is(argv[2], "ID")) {
      for (size_t i = 3; i < argv.size(); ++i) {
        int64_t id = 0;
        if (!ParseInteger(argv[i], &id) || id <= 0) {
          return AppendError(out, "ERR Invalid client ID");
        }
        ids.push_back(static_cast<uint64_t>(id));
      }
    } else if (argv.size() == 4 && Is(argv[2], "TYPE")) {
      if (!Is(argv[3], "normal") && !Is(argv[3], "master") && !Is(argv[3], "replica") &&
          !Is(argv[3], "slave") && !Is(argv[3], "pubsub")) {
        return AppendError(out, "ERR Unknown client type '" + argv[3] + "'");
      }
      if (!Is(argv[3], "normal") && !Is(argv[3], "pubsub")) {
        // The replication links (server/replication/): kept by the replication module.
        return AppendVerbatim(out, ctx.replication().ClientListLines(!Is(argv[3], "master"),
                                                                     Is(argv[3], "master"), {}));
      }
      type = Is(argv[3], "pubsub") ? 1 : 0;
    } else if (argv.size() != 2) {
      return out->append(kReplySyntaxError), void();
    }
    std::string text;
    int64_t now = NowUnixMs();
    for (const auto& info : ctx.clients().Snapshot()) {
      if (!ids.empty() && std::find(ids.begin(), ids.end(), info->id) == ids.end()) continue;
      if (type >= 0 && IsPubSubClient(*info) != (type == 1)) continue;
      text += ClientLine(*info, now);
    }
    if (type < 0) text += ctx.replication().ClientListLines(true, true, ids);
    return AppendVerbatim(out, text);
  }
  if (Is(sub, "NO-EVICT") && argv.size() == 3) {  // exempt from maxmemory-clients
    if (!Is(argv[2], "ON") && !Is(argv[2], "OFF")) return out->append(kReplySyntaxError), void();
    conn.info->no_evict.store(Is(argv[2], "ON"), std::memory_order_relaxed);
    return out->append(kReplyOk), void();
  }
  if (Is(sub, "KILL") && argv.size() >= 3) return ClientKill(ctx, argv, out);
  if (Is(sub, "UNBLOCK") && (argv.size() == 3 || argv.size() == 4)) {
    return ClientUnblock(ctx, argv, out);
  }
  if (Is(sub, "HELP")) {
    const char* lines[] = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are: ID, ADDR, LADDR, SKIPME, TYPE, USER.",
        "LIST [TYPE normal|master|replica|pubsub] [ID <id> [<id> ...]]",
        "    Return information about client connections.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "HELP",
        "    Print this help."};
    AppendArrayHeader(out, static_cast<int64_t>(std::size(lines)));
    for (const char* line : lines) AppendSimple(out, line);
    return;
  }
  AppendSubcommandError(out, argv,
                        {"ID", "GETNAME", "SETNAME", "SETINFO", "INFO", "LIST", "NO-EVICT", "KILL",
                         "UNBLOCK", "REPLY", "PAUSE", "UNPAUSE", "HELP"});
}

void Info(CommandContext& ctx, Args& argv, std::string* out) {
  std::vector<std::string> sections(argv.begin() + 1, argv.end());
  AppendVerbatim(out, ctx.admin().Info(sections));
}

void DbSize(CommandContext& ctx, Args&, std::string* out) {
  auto size = ctx.store->DbSize();
  if (!size.ok()) return AppendStatusError(out, size.status());
  AppendInteger(out, *size);
}

void Flush(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 2) return out->append(kReplySyntaxError), void();
  if (argv.size() == 2 && !Is(argv[1], "ASYNC") && !Is(argv[1], "SYNC")) {
    return out->append(kReplySyntaxError), void();
  }
  Status s = ctx.store->FlushAll();
  if (!s.ok()) return AppendStatusError(out, s);
  out->append(kReplyOk);
}

// DEBUG CACHE-VERIFY: compares every cached entry with RocksDB, each under its key lock (so a
// write in progress is never reported as a mismatch); a negative entry must match a missing key.
// Replies a bulk string of "name:value" lines: checked, mismatches, and up to 10 "mismatch:<key>"
// lines.
// Inside EXEC this thread already holds the transaction's stripes (ctx.held_stripes): a key on
// one of them is locked already (taking it again would deadlock on the spot), and waiting for any
// other stripe could deadlock against another worker's ascending multi-key Lock, so it is only
// tried: a key whose stripe another thread holds at that moment is skipped, not counted.
// Inside a unit (EXEC, a script: server/unit_cache.h) the keys it staged are checked in its
// staging cache, against storage as the unit sees it; their shared entries (the committed
// values) are not checked.
void DebugCacheVerify(CommandContext& ctx, std::string* out) {
  cache::KeyLocks& locks = ctx.key_locks();
  const UnitCache* unit = UnitCache::Current();
  std::vector<std::tuple<cache::Cache*, int, std::string>> keys;  // (cache, physical db, key)
  for (cache::Cache* cache : {ctx.admin().cache(), unit != nullptr ? unit->staging() : nullptr}) {
    if (cache == nullptr) continue;
    const bool staging = unit != nullptr && cache == unit->staging();
    cache->ForEachSnapshot(ctx.now_ms, [&](std::string_view key, const cache::Value&, int64_t) {
      // ForEachSnapshot scopes each visit to its database
      if (!staging && unit != nullptr && unit->IsStaged(key, CurrentDb())) return;
      keys.emplace_back(cache, CurrentDb(), key);
    });
  }
  uint64_t checked = 0;
  std::vector<std::string> mismatched;
  for (const auto& [cache, db, key] : keys) {
    DbScope scope(db);  // the cache and storage reads below look in the entry's database
    cache::KeyLocks::Guard guard;
    if (ctx.held_stripes == nullptr) {
      guard = locks.Lock(key);
    } else {
      const auto stripe = static_cast<uint32_t>(locks.StripeOf(key));
      const std::vector<uint32_t>& held = *ctx.held_stripes;
      if (!std::binary_search(held.begin(), held.end(), stripe)) {
        guard = locks.TryLockStripe(stripe);
        if (!guard.owns_lock()) continue;  // busy: see above
      }
    }
    int64_t now = NowUnixMs();
    std::optional<cache::Value> cached;
    int64_t cached_expire = 0;
    cache::Lookup found =
        cache->Inspect(key, now, [&](const cache::Value& value, int64_t expire_at) {
          cached = value;
          cached_expire = expire_at;
        });
    if (found == cache::Lookup::kAbsent) {  // a negative entry: storage must not hold the key
      ++checked;
      auto type = ctx.store->Type(key);
      if (!type.ok() || *type != storage::KeyType::kNone) mismatched.push_back(key);
      continue;
    }
    if (!cached) continue;  // evicted or expired meanwhile
    ++checked;
    bool same = false;
    auto expire = ctx.store->ExpireTimeMs(key);
    bool expire_same = expire.ok() && (*expire < 0 ? 0 : *expire) == cached_expire;
    if (cached->type == cache::Value::Type::kString) {
      auto stored = ctx.store->Get(key);
      same = stored.ok() && *stored && **stored == cached->str;
    } else if (cached->is_list()) {
      const cache::ListHead& head = *cached->list;
      auto length = ctx.store->LLen(key);
      auto stored = ctx.store->LRange(key, 0, static_cast<int64_t>(head.elements.size()) - 1);
      same = length.ok() && static_cast<uint64_t>(*length) == head.length && stored.ok() &&
             std::equal(stored->begin(), stored->end(), head.elements.begin(), head.elements.end());
    } else {
      auto stored = ctx.store->HGetAll(key);
      same = stored.ok() && *stored == cached->fields;
    }
    if (!same || !expire_same) mismatched.push_back(key);
  }
  std::string text = "checked:" + std::to_string(checked) +
                     "\r\nmismatches:" + std::to_string(mismatched.size()) + "\r\n";
  for (size_t i = 0; i < mismatched.size() && i < 10; ++i) {
    text += "mismatch:" + mismatched[i] + "\r\n";
  }
  AppendBulk(out, text);
}

void Debug(CommandContext& ctx, Args& argv, std::string* out) {
  if (Is(argv[1], "CACHE-VERIFY") && argv.size() == 2) return DebugCacheVerify(ctx, out);
  if (Is(argv[1], "COMPACT") && argv.size() == 2) {  // flushes and compacts: O(database)
    Status s = ctx.store->CompactAll();
    return s.ok() ? out->append(kReplyOk), void() : AppendError(out, "ERR " + s.ToString());
  }
  if (Is(argv[1], "SLEEP") && argv.size() == 3) {
    long double seconds = 0;
    if (!storage::ParseLongDouble(argv[2], &seconds) || seconds < 0 || seconds > 3600) {
      return AppendError(out, "ERR value is not a valid float");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6L)));
    return out->append(kReplyOk), void();
  }
  AppendSubcommandError(out, argv, {"CACHE-VERIFY", "SLEEP"});
}

void Shutdown(CommandContext& ctx, Args& argv, std::string* out) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (!Is(argv[i], "NOSAVE") && !Is(argv[i], "SAVE") && !Is(argv[i], "NOW") &&
        !Is(argv[i], "FORCE")) {
      if (Is(argv[i], "ABORT")) return AppendError(out, "ERR No shutdown in progress.");
      return out->append(kReplySyntaxError), void();
    }
  }
  // Like Redis: no reply on success; the connection closes as the server exits.
  ctx.admin().RequestShutdown();
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kServerCommands = {
    {"ping", -1, kAnywhere | kFast, 0, 0, 0, Ping},
    {"echo", 2, kAnywhere | kFast, 0, 0, 0, Echo},
    {"time", 1, kAnywhere | kFast, 0, 0, 0, Time},
    {"quit", -1, kConnection | kNoAuth | kFast, 0, 0, 0, Quit},
    {"auth", -2, kConnection | kNoAuth | kFast, 0, 0, 0, Auth},
    {"hello", -1, kConnection | kNoAuth | kFast, 0, 0, 0, Hello},
    {"client", -2, kConnection, 0, 0, 0, Client, nullptr,
     "id|getname|setname|setinfo|info|list|kill|unblock|help"},
    {"shutdown", -1, kConnection | kAdmin, 0, 0, 0, Shutdown},
    {"info", -1, 0, 0, 0, 0, Info},
    {"debug", -2, kAdmin, 0, 0, 0, Debug},
    {"dbsize", 1, kReadOnly | kFast, 0, 0, 0, DbSize},
    {"flushall", -1, kWrite | kAllKeys, 0, 0, 0, Flush},
};
// clang-format on

}  // namespace rockcache::server
