// Server and connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT, CLIENT, CONFIG,
// COMMAND, INFO, TIME, DBSIZE, FLUSHDB, FLUSHALL, SHUTDOWN.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>

#include "cache/cache.h"
#include "cache/key_locks.h"
#include "pool/worker_pool.h"
#include "server/args.h"
#include "server/command.h"
#include "server/connection.h"
#include "server/info.h"
#include "server/net_loop.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/numbers.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// The error for a subcommand that did not match: Redis 7 tells a known subcommand with the wrong
// number of arguments ("wrong number of arguments for 'client|setname' command") from an
// unknown one ("unknown subcommand 'foo'. Try CLIENT HELP.").
void AppendSubcommandError(std::string* out, const Args& argv,
                           std::initializer_list<const char*> known) {
  std::string command = argv[0], sub = argv[1];
  for (char& c : command) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* name : known) {
    if (Is(sub, name)) {
      for (char& c : sub) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string text = "ERR wrong number of arguments for '";
      text.append(command).append("|").append(sub).append("' command");
      return AppendError(out, text);
    }
  }
  for (char& c : command) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string text = "ERR unknown subcommand '";
  text.append(sub, 0, 128).append("'. Try ").append(command).append(" HELP.");
  AppendError(out, text);
}

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
  std::string required = ctx.server->config().GetString("requirepass");
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
  if (argv.size() >= 2) {
    int64_t version = 0;
    if (!ParseInteger(argv[1], &version)) {
      return AppendError(out, "ERR Protocol version is not an integer or out of range");
    }
    if (version != 2) return AppendError(out, "NOPROTO unsupported protocol version");
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
  AppendArrayHeader(out, 14);
  AppendBulk(out, "server");
  AppendBulk(out, "redis");
  AppendBulk(out, "version");
  AppendBulk(out, kRedisCompatVersion);
  AppendBulk(out, "proto");
  AppendInteger(out, 2);
  AppendBulk(out, "id");
  AppendInteger(out, static_cast<int64_t>(ctx.conn->id));
  AppendBulk(out, "mode");
  AppendBulk(out, "standalone");
  AppendBulk(out, "role");
  AppendBulk(out, "master");
  AppendBulk(out, "modules");
  AppendArrayHeader(out, 0);
}

void Select(CommandContext&, Args& argv, std::string* out) {
  int64_t index = 0;
  if (!ParseInteger(argv[1], &index)) return out->append(kReplyNotInteger), void();
  if (index != 0) return AppendError(out, "ERR DB index is out of range");
  out->append(kReplyOk);
}

std::string ClientLine(const ClientInfo& info, int64_t now_ms) {
  std::string line = "id=" + std::to_string(info.id) + " addr=" + info.addr +
                     " laddr=" + info.laddr + " fd=" + std::to_string(info.fd) +
                     " name=" + info.name() +
                     " age=" + std::to_string((now_ms - info.created_ms) / 1000) +
                     " idle=" + std::to_string((now_ms - info.last_interaction_ms.load()) / 1000) +
                     " flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=" +
                     std::to_string(info.query_buffer_bytes.load()) +
                     " qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=" +
                     std::to_string(info.pending_reply_bytes.load()) +
                     " tot-mem=0 events=r cmd=" + info.last_command() +
                     " user=default redir=-1 resp=2 lib-name= lib-ver=\n";
  return line;
}

void ClientKill(CommandContext& ctx, Args& argv, std::string* out) {
  Server& server = *ctx.server;
  auto kill = [&](const std::shared_ptr<ClientInfo>& info) {
    info->killed.store(true);
    if (info->id == ctx.conn->id) {
      ctx.conn->close_after_reply = true;
    } else {
      Completion completion;
      completion.kind = Completion::Kind::kKill;
      completion.conn_id = info->id;
      server.loop(info->loop_index)->PostCompletion(std::move(completion));
    }
  };
  if (argv.size() == 3) {  // old form: CLIENT KILL ip:port
    for (const auto& info : server.clients().Snapshot()) {
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
      if ((Is(argv[i], "TYPE") && !Is(value, "normal")) ||
          (Is(argv[i], "USER") && value != "default")) {
        id = 0;
      }
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  int64_t killed = 0;
  for (const auto& info : server.clients().Snapshot()) {
    if (id == 0) break;
    if (info->killed.load()) continue;
    if (id > 0 && info->id != static_cast<uint64_t>(id)) continue;
    if (!addr.empty() && info->addr != addr) continue;
    if (!laddr.empty() && info->laddr != laddr) continue;
    if (skip_me && info->id == ctx.conn->id) continue;
    kill(info);
    ++killed;
  }
  AppendInteger(out, killed);
}

void Client(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  Connection& conn = *ctx.conn;
  if (Is(sub, "ID") && argv.size() == 2) return AppendInteger(out, static_cast<int64_t>(conn.id));
  if (Is(sub, "GETNAME") && argv.size() == 2) {
    std::string name = conn.info->name();
    if (name.empty()) return out->append(kReplyNullBulk), void();
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
    conn.info->set_last_command("client|info");
    return AppendBulk(out, ClientLine(*conn.info, NowUnixMs()));
  }
  if (Is(sub, "LIST")) {
    conn.info->set_last_command("client|list");
    std::vector<uint64_t> ids;
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
          !Is(argv[3], "pubsub")) {
        return AppendError(out, "ERR Unknown client type '" + argv[3] + "'");
      }
      if (!Is(argv[3], "normal")) return AppendBulk(out, "");
    } else if (argv.size() != 2) {
      return out->append(kReplySyntaxError), void();
    }
    std::string text;
    int64_t now = NowUnixMs();
    for (const auto& info : ctx.server->clients().Snapshot()) {
      if (!ids.empty() && std::find(ids.begin(), ids.end(), info->id) == ids.end()) continue;
      text += ClientLine(*info, now);
    }
    return AppendBulk(out, text);
  }
  if (Is(sub, "KILL") && argv.size() >= 3) return ClientKill(ctx, argv, out);
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
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "HELP",
        "    Print this help."};
    AppendArrayHeader(out, static_cast<int64_t>(std::size(lines)));
    for (const char* line : lines) AppendSimple(out, line);
    return;
  }
  AppendSubcommandError(out, argv,
                        {"ID", "GETNAME", "SETNAME", "SETINFO", "INFO", "LIST", "KILL", "HELP"});
}

void Config(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  config::Config& config = ctx.server->config();
  if (Is(sub, "GET") && argv.size() >= 3) {
    std::vector<std::pair<std::string, std::string>> found;
    for (size_t i = 2; i < argv.size(); ++i) {
      for (auto& pair : config.Match(argv[i])) {
        if (std::find(found.begin(), found.end(), pair) == found.end()) found.push_back(pair);
      }
    }
    AppendArrayHeader(out, static_cast<int64_t>(found.size() * 2));
    for (const auto& [name, value] : found) {
      AppendBulk(out, name);
      AppendBulk(out, value);
    }
    return;
  }
  if (Is(sub, "SET") && argv.size() >= 4 && argv.size() % 2 == 0) {
    // Validate every pair first so a bad one changes nothing (as Redis 7).
    for (size_t i = 2; i < argv.size(); i += 2) {
      const config::OptionSpec* spec = config::FindOption(argv[i]);
      if (spec == nullptr) {
        return AppendError(
            out, "ERR Unknown option or number of arguments for CONFIG SET - '" + argv[i] + "'");
      }
      if (!spec->runtime) {
        return AppendError(out, "ERR CONFIG SET failed (possibly related to argument '" + argv[i] +
                                    "') - can't set immutable config");
      }
    }
    config::Config probe;
    for (size_t i = 2; i < argv.size(); i += 2) {
      Status s = probe.Set(argv[i], argv[i + 1]);
      if (!s.ok()) {
        return AppendError(out, "ERR CONFIG SET failed (possibly related to argument '" + argv[i] +
                                    "') - " + s.message());
      }
    }
    for (size_t i = 2; i < argv.size(); i += 2) {
      Status s = config.Set(argv[i], argv[i + 1], /*from_config_set=*/true);
      if (!s.ok()) return AppendError(out, "ERR " + s.message());
    }
    return out->append(kReplyOk), void();
  }
  if (Is(sub, "RESETSTAT") && argv.size() == 2) {
    ctx.server->ResetStats();
    return out->append(kReplyOk), void();
  }
  if (Is(sub, "REWRITE") && argv.size() == 2) {
    return AppendError(out, "ERR CONFIG REWRITE is not supported; edit the config file instead");
  }
  if (Is(sub, "HELP")) {
    const char* lines[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "HELP",
        "    Print this help."};
    AppendArrayHeader(out, static_cast<int64_t>(std::size(lines)));
    for (const char* line : lines) AppendSimple(out, line);
    return;
  }
  AppendSubcommandError(out, argv, {"GET", "SET", "RESETSTAT", "REWRITE", "HELP"});
}

void AppendFlags(std::string* out, uint32_t flags) {
  std::vector<const char*> names;
  if (flags & kWrite) names.push_back("write");
  if (flags & kReadOnly) names.push_back("readonly");
  if (flags & kAdmin) names.push_back("admin");
  if (flags & kNoAuth) names.push_back("no_auth");
  if (flags & kFast) names.push_back("fast");
  AppendArrayHeader(out, static_cast<int64_t>(names.size()));
  for (const char* name : names) AppendSimple(out, name);
}

void AppendCommandInfo(std::string* out, const CommandSpec& spec) {
  AppendArrayHeader(out, 10);
  AppendBulk(out, spec.name);
  AppendInteger(out, spec.arity);
  AppendFlags(out, spec.flags);
  AppendInteger(out, spec.first_key);
  AppendInteger(out, spec.last_key);
  AppendInteger(out, spec.key_step);
  AppendArrayHeader(out, 0);  // ACL categories
  AppendArrayHeader(out, 0);  // tips
  AppendArrayHeader(out, 0);  // key specs
  AppendArrayHeader(out, 0);  // subcommands
}

void Command(CommandContext&, Args& argv, std::string* out) {
  const auto& all = AllCommands();
  if (argv.size() == 1) {
    AppendArrayHeader(out, static_cast<int64_t>(all.size()));
    for (const auto* spec : all) AppendCommandInfo(out, *spec);
    return;
  }
  const std::string& sub = argv[1];
  if (Is(sub, "COUNT") && argv.size() == 2)
    return AppendInteger(out, static_cast<int64_t>(all.size()));
  if (Is(sub, "INFO")) {
    if (argv.size() == 2) {
      AppendArrayHeader(out, static_cast<int64_t>(all.size()));
      for (const auto* spec : all) AppendCommandInfo(out, *spec);
      return;
    }
    AppendArrayHeader(out, static_cast<int64_t>(argv.size() - 2));
    for (size_t i = 2; i < argv.size(); ++i) {
      const CommandSpec* spec = FindCommand(argv[i]);
      if (spec == nullptr) {
        out->append(kReplyNullArray);
      } else {
        AppendCommandInfo(out, *spec);
      }
    }
    return;
  }
  if (Is(sub, "DOCS")) {
    // Name -> empty doc map for each known command asked for (or all): enough for redis-cli.
    std::vector<const CommandSpec*> specs;
    if (argv.size() == 2) {
      specs = all;
    } else {
      for (size_t i = 2; i < argv.size(); ++i) {
        if (const CommandSpec* spec = FindCommand(argv[i])) specs.push_back(spec);
      }
    }
    AppendArrayHeader(out, static_cast<int64_t>(specs.size() * 2));
    for (const auto* spec : specs) {
      AppendBulk(out, spec->name);
      AppendArrayHeader(out, 0);
    }
    return;
  }
  if (Is(sub, "LIST") && argv.size() == 2) {
    AppendArrayHeader(out, static_cast<int64_t>(all.size()));
    for (const auto* spec : all) AppendBulk(out, spec->name);
    return;
  }
  AppendSubcommandError(out, argv, {"COUNT", "INFO", "DOCS", "LIST", "HELP"});
}

void Info(CommandContext& ctx, Args& argv, std::string* out) {
  std::vector<std::string> sections(argv.begin() + 1, argv.end());
  AppendBulk(out, BuildInfo(*ctx.server, sections));
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

void SlowlogCommand(CommandContext& ctx, Args& argv, std::string* out) {
  SlowLog& slowlog = ctx.server->slowlog();
  if (Is(argv[1], "GET") && argv.size() <= 3) {
    int64_t count = 10;
    if (argv.size() == 3 && (!ParseInteger(argv[2], &count) || count < -1)) {
      return AppendError(out, "ERR count should be greater than or equal to -1");
    }
    auto entries = slowlog.Get(count);
    AppendArrayHeader(out, static_cast<int64_t>(entries.size()));
    for (const auto& e : entries) {
      // Redis's six fields, then ours: the stage breakdown in microseconds.
      AppendArrayHeader(out, 7);
      AppendInteger(out, static_cast<int64_t>(e.id));
      AppendInteger(out, e.unix_time);
      AppendInteger(out, static_cast<int64_t>(e.duration_us));
      AppendArrayHeader(out, static_cast<int64_t>(e.args.size()));
      for (const auto& arg : e.args) AppendBulk(out, arg);
      AppendBulk(out, e.client_addr);
      AppendBulk(out, e.client_name);
      std::vector<int> stages;
      if (e.in_loop) {
        stages = {kExecute, kTotal};
      } else {
        stages = {kBeforeQueue, kQueueWait, kExecute, kHandBack, kTotal};
      }
      AppendArrayHeader(out, static_cast<int64_t>(stages.size() * 2));
      for (int stage : stages) {
        AppendBulk(out, StageName(stage));
        AppendInteger(out, static_cast<int64_t>(e.stage_us[stage]));
      }
    }
    return;
  }
  if (Is(argv[1], "LEN") && argv.size() == 2) {
    return AppendInteger(out, static_cast<int64_t>(slowlog.size()));
  }
  if (Is(argv[1], "RESET") && argv.size() == 2) {
    slowlog.Reset();
    return out->append(kReplyOk), void();
  }
  if (Is(argv[1], "HELP") && argv.size() == 2) {
    const char* lines[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name, stage breakdown (before_queue, queue_wait, execute, hand_back, total)",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Print this help."};
    AppendArrayHeader(out, static_cast<int64_t>(std::size(lines)));
    for (const char* line : lines) AppendSimple(out, line);
    return;
  }
  AppendSubcommandError(out, argv, {"GET", "LEN", "RESET", "HELP"});
}

// LATENCY HISTOGRAM in Redis 7's reply shape: per command, its calls and a cumulative
// histogram of total latency over power-of-two microsecond buckets.
void LatencyHistogramReply(CommandContext& ctx, Args& argv, std::string* out) {
  Metrics::Snapshot snapshot = ctx.server->metrics().Read();
  const auto& all = AllCommands();
  std::vector<size_t> ids;
  for (size_t i = 0; i < all.size(); ++i) {
    bool wanted = argv.size() == 2;
    for (size_t a = 2; a < argv.size() && !wanted; ++a) wanted = Is(argv[a], all[i]->name);
    if (wanted && snapshot.per_command[i].stages[kTotal].Count() > 0) ids.push_back(i);
  }
  AppendArrayHeader(out, static_cast<int64_t>(ids.size() * 2));
  for (size_t id : ids) {
    const LatencyHistogram::Data& data = snapshot.per_command[id].stages[kTotal];
    AppendBulk(out, all[id]->name);
    AppendArrayHeader(out, 4);
    AppendBulk(out, "calls");
    AppendInteger(out, static_cast<int64_t>(data.Count()));
    AppendBulk(out, "histogram_usec");
    // Cumulative counts at each power-of-two microsecond bound that has samples up to it.
    std::vector<std::pair<uint64_t, uint64_t>> points;
    uint64_t cumulative = 0;
    uint64_t bound_us = 1;
    int bucket = 0;
    uint64_t total = data.Count();
    while (cumulative < total && bound_us <= (1ull << 40)) {
      uint64_t bound_ns = bound_us * 1000;
      uint64_t before = cumulative;
      while (bucket < LatencyHistogram::kBuckets &&
             LatencyHistogram::BucketLow(bucket) < bound_ns) {
        cumulative += data.buckets[static_cast<size_t>(bucket)];
        ++bucket;
      }
      if (cumulative > before) points.emplace_back(bound_us, cumulative);
      bound_us *= 2;
    }
    AppendArrayHeader(out, static_cast<int64_t>(points.size() * 2));
    for (const auto& [bound, count] : points) {
      AppendInteger(out, static_cast<int64_t>(bound));
      AppendInteger(out, static_cast<int64_t>(count));
    }
  }
}

void Latency(CommandContext& ctx, Args& argv, std::string* out) {
  if (Is(argv[1], "HISTOGRAM")) return LatencyHistogramReply(ctx, argv, out);
  if (Is(argv[1], "LATEST") && argv.size() == 2) return AppendArrayHeader(out, 0);
  if (Is(argv[1], "RESET")) return AppendInteger(out, 0);
  if (Is(argv[1], "HELP") && argv.size() == 2) {
    const char* lines[] = {
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the",
        "    specified command names. If no commands are specified then all histograms are",
        "    replied.",
        "HELP",
        "    Print this help."};
    AppendArrayHeader(out, static_cast<int64_t>(std::size(lines)));
    for (const char* line : lines) AppendSimple(out, line);
    return;
  }
  AppendSubcommandError(out, argv, {"HISTOGRAM", "LATEST", "RESET", "HELP"});
}

// DEBUG CACHE-VERIFY: compares every cached entry with RocksDB, each under its key lock (so a
// write in progress is never reported as a mismatch). Replies a bulk string of "name:value"
// lines: checked, mismatches, and up to 10 "mismatch:<key>" lines.
void DebugCacheVerify(CommandContext& ctx, std::string* out) {
  cache::Cache* cache = ctx.server->cache();
  std::vector<std::string> keys;
  cache->ForEachSnapshot(ctx.now_ms, [&keys](std::string_view key, const cache::Value&, int64_t) {
    keys.emplace_back(key);
  });
  uint64_t checked = 0;
  std::vector<std::string> mismatched;
  for (const auto& key : keys) {
    auto guard = ctx.server->key_locks().Lock(key);
    int64_t now = NowUnixMs();
    std::optional<cache::Value> cached;
    int64_t cached_expire = 0;
    cache->Peek(key, now, [&](const cache::Value& value, int64_t expire_at) {
      cached = value;
      cached_expire = expire_at;
    });
    if (!cached) continue;  // evicted or expired meanwhile
    ++checked;
    bool same = false;
    auto expire = ctx.store->ExpireTimeMs(key);
    bool expire_same = expire.ok() && (*expire < 0 ? 0 : *expire) == cached_expire;
    if (cached->type == cache::Value::Type::kString) {
      auto stored = ctx.store->Get(key);
      same = stored.ok() && *stored && **stored == cached->str;
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
  ctx.server->RequestShutdown();
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
    {"select", 2, kConnection | kFast, 0, 0, 0, Select},
    {"client", -2, kConnection, 0, 0, 0, Client},
    {"config", -2, kConnection | kAdmin, 0, 0, 0, Config},
    {"command", -1, kConnection, 0, 0, 0, Command},
    {"shutdown", -1, kConnection | kAdmin, 0, 0, 0, Shutdown},
    {"info", -1, 0, 0, 0, 0, Info},
    {"debug", -2, kAdmin, 0, 0, 0, Debug},
    {"slowlog", -2, kAnywhere | kAdmin, 0, 0, 0, SlowlogCommand},
    {"latency", -2, kAnywhere | kAdmin, 0, 0, 0, Latency},
    {"dbsize", 1, kReadOnly | kFast, 0, 0, 0, DbSize},
    {"flushdb", -1, kWrite | kAllKeys, 0, 0, 0, Flush},
    {"flushall", -1, kWrite | kAllKeys, 0, 0, 0, Flush},
};
// clang-format on

}  // namespace rockcache::server
