// Stream consumer groups: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP),
// XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO (STREAM [FULL], GROUPS, CONSUMERS, HELP) and XSETID,
// with Redis 7.0's argument order, errors and replies (maps through AppendMapHeader). The
// records live in storage (store.h "stream consumer groups"); XREADGROUP is in stream_read.cc.
#include <climits>

#include "server/clock.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/commands/stream_args.h"
#include "server/commands/subcommand.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using storage::StreamId;

constexpr std::string_view kNeedsKey =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
    "use the MKSTREAM option to create an empty stream automatically.";
constexpr std::string_view kNoSuchKey = "ERR no such key";

int64_t Now(const CommandContext& ctx) { return ctx.now_ms != 0 ? ctx.now_ms : NowUnixMs(); }

std::string NoGroupForKey(std::string_view group, std::string_view key) {
  std::string text = "NOGROUP No such consumer group '";
  text.append(group).append("' for key name '").append(key).append("'");
  return text;
}

std::string NoKeyOrGroup(std::string_view key, std::string_view group) {
  std::string text = "NOGROUP No such key '";
  text.append(key).append("' or consumer group '").append(group).append("'");
  return text;
}

void AppendSubcommandSyntaxError(std::string* out, const Args& argv, const char* command) {
  std::string text = "ERR unknown subcommand or wrong number of arguments for '";
  text.append(argv[1], 0, 128).append("'. Try ").append(command).append(" HELP.");
  AppendError(out, text);
}

// XGROUP <subcommand> key group ...
void XGroup(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  const size_t argc = argv.size();
  if (Is(sub, "HELP") && argc == 2) {
    return AppendHelp(
        out,
        {"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
         "CREATE <key> <groupname> <id|$> [option]",
         "    Create a new consumer group. Options are:", "    * MKSTREAM",
         "      Create the empty stream if it does not exist.", "    * ENTRIESREAD entries_read",
         "      Set the group's entries_read counter (internal use).",
         "CREATECONSUMER <key> <groupname> <consumer>",
         "    Create a new consumer in the specified group.",
         "DELCONSUMER <key> <groupname> <consumer>", "    Remove the specified consumer.",
         "DESTROY <key> <groupname>", "    Remove the specified group.",
         "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
         "    Set the current group ID and entries_read counter.", "HELP",
         "    Prints this help."});
  }
  const bool create = Is(sub, "CREATE"), setid = Is(sub, "SETID"), destroy = Is(sub, "DESTROY");
  const bool createconsumer = Is(sub, "CREATECONSUMER"), delconsumer = Is(sub, "DELCONSUMER");
  const bool arity_ok = ((create || setid) && argc >= 5) || (destroy && argc == 4) ||
                        ((createconsumer || delconsumer) && argc == 5);
  if (!arity_ok) {
    return AppendSubcommandError(
        out, argv, {"CREATE", "SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER", "HELP"});
  }
  const std::string& key = argv[2];
  const std::string& group = argv[3];
  bool mkstream = false;
  int64_t entries_read = storage::kInvalidEntriesRead;
  for (size_t i = 5; i < argc;) {
    if (create && Is(argv[i], "MKSTREAM")) {
      mkstream = true;
      ++i;
    } else if ((create || setid) && Is(argv[i], "ENTRIESREAD") && i + 1 < argc) {
      if (!ParseInteger(argv[i + 1], &entries_read)) return out->append(kReplyNotInteger), void();
      if (entries_read < 0 && entries_read != storage::kInvalidEntriesRead) {
        return AppendError(out, "ERR value for ENTRIESREAD must be positive or -1");
      }
      i += 2;
    } else {
      return AppendSubcommandSyntaxError(out, argv, "XGROUP");
    }
  }
  storage::Store& store = *ctx.store;
  auto info = store.XInfoStream(key);
  if (!info.ok()) return AppendStatusError(out, info.status());
  if (!mkstream) {
    if (!*info) return AppendError(out, kNeedsKey);
    if (setid || createconsumer || delconsumer) {
      auto g = store.XInfoGroup(key, group);
      if (!g.ok()) return AppendStatusError(out, g.status());
      if (!*g) return AppendError(out, NoGroupForKey(group, key));
    }
  }
  if (create) {
    if (argc > 8) return AppendSubcommandSyntaxError(out, argv, "XGROUP");
    std::optional<StreamId> id;
    if (argv[4] != "$") {
      StreamId parsed;
      if (!ParseId(argv[4], true, 0, &parsed)) return AppendError(out, kInvalidId);
      id = parsed;
    }
    Status s = store.XGroupCreate(key, group, id, mkstream, entries_read);
    if (s.code() == Status::Code::kBusy) return AppendError(out, s.message());
    if (!s.ok()) return AppendStatusError(out, s);
    out->append(kReplyOk);
    NotifyKeyspaceEvent(ctx, kNotifyStream, "xgroup-create", key);
  } else if (setid) {
    if (argc != 5 && argc != 7) return AppendSubcommandSyntaxError(out, argv, "XGROUP");
    std::optional<StreamId> id;
    if (argv[4] != "$") {
      StreamId parsed;
      if (!ParseId(argv[4], false, 0, &parsed)) return AppendError(out, kInvalidId);
      id = parsed;
    }
    Status s = store.XGroupSetId(key, group, id, entries_read);
    if (!s.ok()) return AppendStatusError(out, s);
    out->append(kReplyOk);
    NotifyKeyspaceEvent(ctx, kNotifyStream, "xgroup-setid", key);
  } else if (destroy) {
    auto gone = store.XGroupDestroy(key, group);
    if (!gone.ok()) return AppendStatusError(out, gone.status());
    AppendInteger(out, *gone ? 1 : 0);
    if (*gone) NotifyKeyspaceEvent(ctx, kNotifyStream, "xgroup-destroy", key);
  } else if (createconsumer) {
    auto created = store.XGroupCreateConsumer(key, group, argv[4], Now(ctx));
    if (!created.ok()) return AppendStatusError(out, created.status());
    AppendInteger(out, *created ? 1 : 0);
    if (*created) NotifyKeyspaceEvent(ctx, kNotifyStream, "xgroup-createconsumer", key);
  } else {
    auto pending = store.XGroupDelConsumer(key, group, argv[4]);
    if (!pending.ok()) return AppendStatusError(out, pending.status());
    AppendInteger(out, static_cast<int64_t>(*pending));
    NotifyKeyspaceEvent(ctx, kNotifyStream, "xgroup-delconsumer", key);
  }
}

// XACK key group id [id ...]: 0 when the key or group is absent (before the ids are parsed).
void XAck(CommandContext& ctx, Args& argv, std::string* out) {
  auto group = ctx.store->XInfoStream(argv[1]);
  if (!group.ok()) return AppendStatusError(out, group.status());
  if (!*group) return AppendInteger(out, 0);
  auto g = ctx.store->XInfoGroup(argv[1], argv[2]);
  if (!g.ok()) return AppendStatusError(out, g.status());
  if (!*g) return AppendInteger(out, 0);
  std::vector<StreamId> ids(argv.size() - 3);
  for (size_t j = 3; j < argv.size(); ++j) {
    if (!ParseId(argv[j], true, 0, &ids[j - 3])) return AppendError(out, kInvalidId);
  }
  auto acked = ctx.store->XAck(argv[1], argv[2], ids);
  if (!acked.ok()) return AppendStatusError(out, acked.status());
  AppendInteger(out, *acked);
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
void XPending(CommandContext& ctx, Args& argv, std::string* out) {
  const size_t argc = argv.size();
  const bool summary = argc == 3;
  if (argc != 3 && (argc < 6 || argc > 9)) return out->append(kReplySyntaxError), void();
  storage::StreamPendingQuery q;
  if (argc >= 6) {
    size_t at = 3;
    if (Is(argv[3], "IDLE")) {
      if (!ParseInteger(argv[4], &q.min_idle_ms)) return out->append(kReplyNotInteger), void();
      if (argc < 8) return out->append(kReplySyntaxError), void();
      at += 2;
    }
    int64_t count = 0;
    if (!ParseInteger(argv[at + 2], &count)) return out->append(kReplyNotInteger), void();
    q.count = count < 0 ? 0 : static_cast<uint64_t>(count);
    bool ex = false;
    if (!ParseIntervalId(argv[at], 0, &q.start, &ex)) return AppendError(out, kInvalidId);
    if (ex && !q.start.Incr()) return AppendError(out, "ERR invalid start ID for the interval");
    if (!ParseIntervalId(argv[at + 1], UINT64_MAX, &q.end, &ex)) {
      return AppendError(out, kInvalidId);
    }
    if (ex && !q.end.Decr()) return AppendError(out, "ERR invalid end ID for the interval");
    if (at + 3 < argc) q.consumer = argv[at + 3];
  }
  const int64_t now = Now(ctx);
  if (summary) {
    auto s = ctx.store->XPendingSummary(argv[1], argv[2]);
    if (!s.ok()) {
      if (s.status().IsNotFound()) return AppendError(out, NoKeyOrGroup(argv[1], argv[2]));
      return AppendStatusError(out, s.status());
    }
    AppendArrayHeader(out, 4);
    AppendInteger(out, static_cast<int64_t>(s->count));
    if (s->count == 0) {
      AppendNull(out);
      AppendNull(out);
      return AppendNullArray(out);
    }
    AppendBulk(out, s->min_id.ToString());
    AppendBulk(out, s->max_id.ToString());
    AppendArrayHeader(out, static_cast<int64_t>(s->consumers.size()));
    for (const auto& [name, n] : s->consumers) {
      AppendArrayHeader(out, 2);
      AppendBulk(out, name);
      AppendBulk(out, std::to_string(n));
    }
    return;
  }
  auto entries = ctx.store->XPendingRange(argv[1], argv[2], q, now);
  if (!entries.ok()) {
    if (entries.status().IsNotFound()) return AppendError(out, NoKeyOrGroup(argv[1], argv[2]));
    return AppendStatusError(out, entries.status());
  }
  AppendArrayHeader(out, static_cast<int64_t>(entries->size()));
  for (const auto& e : *entries) {
    AppendArrayHeader(out, 4);
    AppendBulk(out, e.id.ToString());
    AppendBulk(out, e.consumer);
    AppendInteger(out, std::max<int64_t>(0, now - e.delivery_time_ms));
    AppendInteger(out, static_cast<int64_t>(e.delivery_count));
  }
}

// Checks that key is a stream with `group`; false when it appended the error.
bool CheckGroup(CommandContext& ctx, const std::string& key, const std::string& group,
                std::string* out) {
  auto info = ctx.store->XInfoStream(key);
  if (!info.ok()) return AppendStatusError(out, info.status()), false;
  if (*info) {
    auto g = ctx.store->XInfoGroup(key, group);
    if (!g.ok()) return AppendStatusError(out, g.status()), false;
    if (*g) return true;
  }
  AppendError(out, NoKeyOrGroup(key, group));
  return false;
}

void AppendClaimed(std::string* out, const storage::StreamClaimResult& r, bool justid) {
  AppendArrayHeader(out, static_cast<int64_t>(r.claimed.size()));
  for (const auto& e : r.claimed) {
    if (justid) {
      AppendBulk(out, e.id.ToString());
    } else {
      AppendStreamEntry(out, e);
    }
  }
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE]
// [JUSTID] [LASTID id]
void XClaim(CommandContext& ctx, Args& argv, std::string* out) {
  if (!CheckGroup(ctx, argv[1], argv[2], out)) return;
  int64_t min_idle = 0;
  if (!ParseInteger(argv[4], &min_idle)) {
    return AppendError(out, "ERR Invalid min-idle-time argument for XCLAIM");
  }
  storage::StreamClaimSpec spec;
  spec.group = argv[2];
  spec.consumer = argv[3];
  spec.min_idle_ms = min_idle < 0 ? 0 : min_idle;
  size_t j = 5;
  for (; j < argv.size(); ++j) {
    StreamId id;
    if (!ParseId(argv[j], true, 0, &id)) break;
    spec.ids.push_back(id);
  }
  const int64_t now = Now(ctx);
  int64_t delivery = -1;
  for (; j < argv.size(); ++j) {
    const bool more = j + 1 < argv.size();
    const std::string& opt = argv[j];
    int64_t v = 0;
    if (Is(opt, "FORCE")) {
      spec.force = true;
    } else if (Is(opt, "JUSTID")) {
      spec.justid = true;
    } else if (Is(opt, "IDLE") && more) {
      if (!ParseInteger(argv[++j], &v)) {
        return AppendError(out, "ERR Invalid IDLE option argument for XCLAIM");
      }
      delivery = now - v;
    } else if (Is(opt, "TIME") && more) {
      if (!ParseInteger(argv[++j], &v)) {
        return AppendError(out, "ERR Invalid TIME option argument for XCLAIM");
      }
      delivery = v;
    } else if (Is(opt, "RETRYCOUNT") && more) {
      if (!ParseInteger(argv[++j], &v)) {
        return AppendError(out, "ERR Invalid RETRYCOUNT option argument for XCLAIM");
      }
      spec.retry_count = v;
    } else if (Is(opt, "LASTID") && more) {
      StreamId id;
      if (!ParseId(argv[++j], true, 0, &id)) return AppendError(out, kInvalidId);
      spec.last_id = id;
    } else {
      return AppendError(out, "ERR Unrecognized XCLAIM option '" + opt + "'");
    }
  }
  spec.delivery_time_ms = (delivery < 0 || delivery > now) ? now : delivery;
  auto r = ctx.store->XClaim(argv[1], spec, now);
  if (!r.ok()) {
    if (r.status().IsNotFound()) return AppendError(out, NoKeyOrGroup(argv[1], argv[2]));
    return AppendStatusError(out, r.status());
  }
  AppendClaimed(out, *r, spec.justid);
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void XAutoClaim(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t min_idle = 0;
  if (!ParseInteger(argv[4], &min_idle)) {
    return AppendError(out, "ERR Invalid min-idle-time argument for XAUTOCLAIM");
  }
  if (min_idle < 0) min_idle = 0;
  StreamId start;
  bool ex = false;
  if (!ParseIntervalId(argv[5], 0, &start, &ex)) return AppendError(out, kInvalidId);
  if (ex && !start.Incr()) return AppendError(out, "ERR invalid start ID for the interval");
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < argv.size(); ++j) {
    if (Is(argv[j], "COUNT") && j + 1 < argv.size()) {
      constexpr int64_t kMaxCount = LONG_MAX / 16;  // LONG_MAX / max(sizeof(streamID), 10)
      if (!ParseInteger(argv[j + 1], &count) || count < 1 || count > kMaxCount) {
        return AppendError(out, "ERR COUNT must be > 0");
      }
      ++j;
    } else if (Is(argv[j], "JUSTID")) {
      justid = true;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  if (!CheckGroup(ctx, argv[1], argv[2], out)) return;
  auto r = ctx.store->XAutoClaim(argv[1], argv[2], argv[3], min_idle, start,
                                 static_cast<uint64_t>(count), justid, Now(ctx));
  if (!r.ok()) {
    if (r.status().IsNotFound()) return AppendError(out, NoKeyOrGroup(argv[1], argv[2]));
    return AppendStatusError(out, r.status());
  }
  AppendArrayHeader(out, 3);
  AppendBulk(out, r->next.ToString());
  AppendClaimed(out, *r, justid);
  AppendArrayHeader(out, static_cast<int64_t>(r->deleted.size()));
  for (StreamId id : r->deleted) AppendBulk(out, id.ToString());
}

void AppendEntryOrNull(std::string* out, const std::vector<storage::StreamEntry>& entries) {
  if (entries.empty()) return AppendNull(out);
  AppendStreamEntry(out, entries.front());
}

void AppendOptionalInteger(std::string* out, std::optional<int64_t> v) {
  if (!v) return AppendNull(out);
  AppendInteger(out, *v);
}

// Redis's radix tree figures cannot be reproduced (they describe its memory layout); these are
// what Redis shows for the same number of entries in nodes of 100 (stream-node-max-entries).
void AppendRadixFigures(std::string* out, uint64_t length) {
  const int64_t nodes = static_cast<int64_t>((length + 99) / 100);
  AppendBulk(out, "radix-tree-keys");
  AppendInteger(out, nodes);
  AppendBulk(out, "radix-tree-nodes");
  AppendInteger(out, nodes == 0 ? 1 : nodes + 1);
}

void AppendStreamHead(std::string* out, const storage::StreamInfo& s) {
  AppendBulk(out, "length");
  AppendInteger(out, static_cast<int64_t>(s.length));
  AppendRadixFigures(out, s.length);
  AppendBulk(out, "last-generated-id");
  AppendBulk(out, s.last_id.ToString());
  AppendBulk(out, "max-deleted-entry-id");
  AppendBulk(out, s.max_deleted_id.ToString());
  AppendBulk(out, "entries-added");
  AppendInteger(out, static_cast<int64_t>(s.entries_added));
  AppendBulk(out, "recorded-first-entry-id");
  AppendBulk(out, s.first_id.ToString());
}

void XInfoStreamFull(CommandContext& ctx, const std::string& key, uint64_t count,
                     std::string* out) {
  auto full = ctx.store->XInfoFull(key, count);
  if (!full.ok()) return AppendStatusError(out, full.status());
  AppendMapHeader(out, 9);
  AppendStreamHead(out, full->stream);
  AppendBulk(out, "entries");
  AppendStreamEntries(out, full->entries);
  AppendBulk(out, "groups");
  AppendArrayHeader(out, static_cast<int64_t>(full->groups.size()));
  for (const auto& g : full->groups) {
    AppendMapHeader(out, 7);
    AppendBulk(out, "name");
    AppendBulk(out, g.info.name);
    AppendBulk(out, "last-delivered-id");
    AppendBulk(out, g.info.last_id.ToString());
    AppendBulk(out, "entries-read");
    AppendOptionalInteger(out, g.info.entries_read == storage::kInvalidEntriesRead
                                   ? std::nullopt
                                   : std::optional<int64_t>(g.info.entries_read));
    AppendBulk(out, "lag");
    AppendOptionalInteger(out, g.info.lag);
    AppendBulk(out, "pel-count");
    AppendInteger(out, static_cast<int64_t>(g.info.pending));
    AppendBulk(out, "pending");
    AppendArrayHeader(out, static_cast<int64_t>(g.pel.size()));
    for (const auto& p : g.pel) {
      AppendArrayHeader(out, 4);
      AppendBulk(out, p.id.ToString());
      AppendBulk(out, p.consumer);
      AppendInteger(out, p.delivery_time_ms);
      AppendInteger(out, static_cast<int64_t>(p.delivery_count));
    }
    AppendBulk(out, "consumers");
    AppendArrayHeader(out, static_cast<int64_t>(g.consumers.size()));
    for (const auto& c : g.consumers) {
      AppendMapHeader(out, 4);
      AppendBulk(out, "name");
      AppendBulk(out, c.info.name);
      AppendBulk(out, "seen-time");
      AppendInteger(out, c.info.seen_time_ms);
      AppendBulk(out, "pel-count");
      AppendInteger(out, static_cast<int64_t>(c.info.pending));
      AppendBulk(out, "pending");
      AppendArrayHeader(out, static_cast<int64_t>(c.pending.size()));
      for (const auto& p : c.pending) {
        AppendArrayHeader(out, 3);
        AppendBulk(out, p.id.ToString());
        AppendInteger(out, p.delivery_time_ms);
        AppendInteger(out, static_cast<int64_t>(p.delivery_count));
      }
    }
  }
}

// XINFO STREAM key [FULL [COUNT count]] / GROUPS key / CONSUMERS key group / HELP
void XInfo(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  const size_t argc = argv.size();
  if (Is(sub, "HELP") && argc == 2) {
    return AppendHelp(
        out, {"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
              "CONSUMERS <key> <groupname>", "    Show consumers of <groupname>.", "GROUPS <key>",
              "    Show the stream consumer groups.", "STREAM <key> [FULL [COUNT <count>]",
              "    Show information about the stream.", "HELP", "    Prints this help."});
  }
  const bool stream = Is(sub, "STREAM") && argc >= 3;
  const bool groups = Is(sub, "GROUPS") && argc == 3;
  const bool consumers = Is(sub, "CONSUMERS") && argc == 4;
  if (!stream && !groups && !consumers) {
    return AppendSubcommandError(out, argv, {"CONSUMERS", "GROUPS", "STREAM", "HELP"});
  }
  const std::string& key = argv[2];
  auto info = ctx.store->XInfoStream(key);
  if (!info.ok() && !info.status().IsWrongType()) return AppendStatusError(out, info.status());
  if (info.ok() && !*info) return AppendError(out, kNoSuchKey);
  if (!info.ok()) return out->append(kReplyWrongType), void();
  if (consumers) {
    auto list = ctx.store->XInfoConsumers(key, argv[3]);
    if (!list.ok()) {
      if (list.status().IsNotFound()) return AppendError(out, NoGroupForKey(argv[3], key));
      return AppendStatusError(out, list.status());
    }
    const int64_t now = Now(ctx);
    AppendArrayHeader(out, static_cast<int64_t>(list->size()));
    for (const auto& c : *list) {
      AppendMapHeader(out, 3);
      AppendBulk(out, "name");
      AppendBulk(out, c.name);
      AppendBulk(out, "pending");
      AppendInteger(out, static_cast<int64_t>(c.pending));
      AppendBulk(out, "idle");
      AppendInteger(out, std::max<int64_t>(0, now - c.seen_time_ms));
    }
    return;
  }
  if (groups) {
    auto list = ctx.store->XInfoGroups(key);
    if (!list.ok()) return AppendStatusError(out, list.status());
    AppendArrayHeader(out, static_cast<int64_t>(list->size()));
    for (const auto& g : *list) {
      AppendMapHeader(out, 6);
      AppendBulk(out, "name");
      AppendBulk(out, g.name);
      AppendBulk(out, "consumers");
      AppendInteger(out, static_cast<int64_t>(g.consumers));
      AppendBulk(out, "pending");
      AppendInteger(out, static_cast<int64_t>(g.pending));
      AppendBulk(out, "last-delivered-id");
      AppendBulk(out, g.last_id.ToString());
      AppendBulk(out, "entries-read");
      AppendOptionalInteger(out, g.entries_read == storage::kInvalidEntriesRead
                                     ? std::nullopt
                                     : std::optional<int64_t>(g.entries_read));
      AppendBulk(out, "lag");
      AppendOptionalInteger(out, g.lag);
    }
    return;
  }
  // STREAM key [FULL [COUNT n]]
  const size_t extra = argc - 3;
  if (extra != 0) {
    if ((extra != 1 && extra != 3) || !Is(argv[3], "FULL")) {
      return out->append(kReplySyntaxError), void();
    }
    int64_t count = 10;  // Redis's default, so a big stream is not sent whole
    if (extra == 3) {
      if (!Is(argv[4], "COUNT")) return out->append(kReplySyntaxError), void();
      if (!ParseInteger(argv[5], &count)) return out->append(kReplyNotInteger), void();
      if (count < 0) count = 0;
    }
    return XInfoStreamFull(ctx, key, static_cast<uint64_t>(count), out);
  }
  const storage::StreamInfo& s = **info;
  std::vector<storage::StreamEntry> first, last;
  if (s.length > 0) {
    auto f = ctx.store->XRange(key, StreamId::Min(), StreamId::Max(), false, 1);
    if (!f.ok()) return AppendStatusError(out, f.status());
    auto l = ctx.store->XRange(key, StreamId::Min(), StreamId::Max(), true, 1);
    if (!l.ok()) return AppendStatusError(out, l.status());
    first = std::move(*f);
    last = std::move(*l);
  }
  AppendMapHeader(out, 10);
  AppendStreamHead(out, s);
  AppendBulk(out, "groups");
  AppendInteger(out, static_cast<int64_t>(s.groups));
  AppendBulk(out, "first-entry");
  AppendEntryOrNull(out, first);
  AppendBulk(out, "last-entry");
  AppendEntryOrNull(out, last);
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
void XSetId(CommandContext& ctx, Args& argv, std::string* out) {
  StreamId id;
  if (!ParseId(argv[2], true, 0, &id)) return AppendError(out, kInvalidId);
  std::optional<uint64_t> entries_added;
  std::optional<StreamId> max_deleted;
  for (size_t i = 3; i < argv.size();) {
    const bool more = i + 1 < argv.size();
    if (Is(argv[i], "ENTRIESADDED") && more) {
      int64_t n = 0;
      if (!ParseInteger(argv[i + 1], &n)) return out->append(kReplyNotInteger), void();
      if (n < 0) return AppendError(out, "ERR entries_added must be positive");
      entries_added = static_cast<uint64_t>(n);
      i += 2;
    } else if (Is(argv[i], "MAXDELETEDID") && more) {
      StreamId m;
      if (!ParseId(argv[i + 1], true, 0, &m)) return AppendError(out, kInvalidId);
      if (id < m) {
        return AppendError(
            out,
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
      }
      max_deleted = m;
      i += 2;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  Status s = ctx.store->XSetId(argv[1], id, entries_added, max_deleted);
  if (s.IsNotFound()) return AppendError(out, kNoSuchKey);
  if (!s.ok()) return AppendStatusError(out, s);
  out->append(kReplyOk);
  NotifyKeyspaceEvent(ctx, kNotifyStream, "xsetid", argv[1]);
}

// XGROUP / XINFO (containers: no key positions of their own, as Redis's table): the key is
// argv[2], except for HELP.
std::vector<std::string_view> SubcommandKey(const Args& argv) {
  if (argv.size() < 3) return {};
  return {argv[2]};
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kStreamGroupCommands = {
    {"xgroup", -2, kWrite, 0, 0, 0, XGroup,
     nullptr, "create|setid|destroy|createconsumer|delconsumer|help", SubcommandKey},
    {"xack", -4, kWrite | kFast, 1, 1, 1, XAck},
    {"xpending", -3, kReadOnly, 1, 1, 1, XPending},
    {"xclaim", -6, kWrite | kFast, 1, 1, 1, XClaim},
    {"xautoclaim", -6, kWrite | kFast, 1, 1, 1, XAutoClaim},
    {"xinfo", -2, kReadOnly, 0, 0, 0, XInfo, nullptr, "consumers|groups|stream|help",
     SubcommandKey},
    {"xsetid", -3, kWrite | kFast, 1, 1, 1, XSetId},
};
// clang-format on

}  // namespace rockcache::server
