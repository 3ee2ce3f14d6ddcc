// XREAD and XREADGROUP, with Redis 7.0's argument order, errors and replies: an array of
// [key, entries] for each key that had something ({key: entries} under RESP3), or a null array.
// With BLOCK and nothing to serve, the handler queues the command's Waiter
// (server/blocking/wait_registry.h) and the next write to one of its keys serves it through
// ProbeStreamWait / ServeStreamWait (serve.h), one key's entries, as Redis's
// serveClientsBlockedOnStreamKey. Inside MULTI/EXEC a BLOCK answers at once (as if it timed out);
// a script may not use BLOCK at all.
#include <strings.h>

#include "server/blocking/serve.h"
#include "server/blocking/timeout.h"
#include "server/blocking/wait_registry.h"
#include "server/clock.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/commands/stream_args.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using storage::StreamEntry;
using storage::StreamId;

struct ReadArgs {
  bool group_read = false;
  int64_t count = 0;
  bool block = false;
  bool noack = false;
  const std::string* group = nullptr;
  const std::string* consumer = nullptr;
  size_t streams = 0;  // the index of the first key
  size_t nkeys = 0;
};

// xreadCommand's option loop. False when it appended an error.
bool ParseReadArgs(CommandContext& ctx, const Args& argv, ReadArgs* a, std::string* out) {
  a->group_read = Is(argv[0], "xreadgroup");
  for (size_t i = 1; i < argv.size(); ++i) {
    const size_t more = argv.size() - i - 1;
    const std::string& o = argv[i];
    if (Is(o, "BLOCK") && more > 0) {
      if (ctx.in_script) {
        std::string text =
            "ERR " + argv[0] + " command is not allowed with BLOCK option from scripts";
        return AppendError(out, text), false;
      }
      ++i;
      int64_t ms = 0;
      std::string_view error = ParseBlockMillis(argv[i], &ms);
      if (!error.empty()) return AppendError(out, error), false;
      a->block = true;
    } else if (Is(o, "COUNT") && more > 0) {
      ++i;
      if (!ParseInteger(argv[i], &a->count)) return out->append(kReplyNotInteger), false;
      if (a->count < 0) a->count = 0;
    } else if (Is(o, "STREAMS") && more > 0) {
      a->streams = i + 1;
      const size_t n = argv.size() - a->streams;
      if (n % 2 != 0) {
        AppendError(out,  // the same text for XREADGROUP, as Redis 7.0
                    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must "
                    "be specified.");
        return false;
      }
      a->nkeys = n / 2;
      break;
    } else if (Is(o, "GROUP") && more >= 2) {
      if (!a->group_read) {
        return AppendError(out,
                           "ERR The GROUP option is only supported by XREADGROUP. You called "
                           "XREAD instead."),
               false;
      }
      a->group = &argv[i + 1];
      a->consumer = &argv[i + 2];
      i += 2;
    } else if (Is(o, "NOACK")) {
      if (!a->group_read) {
        return AppendError(out,
                           "ERR The NOACK option is only supported by XREADGROUP. You called "
                           "XREAD instead."),
               false;
      }
      a->noack = true;
    } else {
      return out->append(kReplySyntaxError), false;
    }
  }
  if (a->streams == 0) return out->append(kReplySyntaxError), false;
  if (a->group_read && a->group == nullptr) {
    return AppendError(out, "ERR Missing GROUP option for XREADGROUP"), false;
  }
  return true;
}

// The keys of XREAD / XREADGROUP: the first half of what follows STREAMS (none when the command
// is malformed: the handler then answers its error without reading anything).
std::vector<std::string_view> ReadKeys(const Args& argv) {
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const size_t more = argv.size() - i - 1;
    if ((Is(argv[i], "BLOCK") || Is(argv[i], "COUNT")) && more > 0) {
      ++i;
    } else if (Is(argv[i], "GROUP") && more >= 2) {
      i += 2;
    } else if (Is(argv[i], "NOACK")) {
      continue;
    } else {
      break;
    }
  }
  if (i >= argv.size() || !Is(argv[i], "STREAMS")) return {};
  const size_t first = i + 1, n = argv.size() - first;
  if (n == 0 || n % 2 != 0) return {};
  return {argv.begin() + static_cast<long>(first), argv.begin() + static_cast<long>(first + n / 2)};
}

std::string NoGroupError(std::string_view key, std::string_view group) {
  std::string text = "NOGROUP No such key '";
  text.append(key).append("' or consumer group '").append(group);
  text.append("' in XREADGROUP with GROUP option");
  return text;
}

// One served key of the reply: [key, entries] (RESP3: key then entries, inside the map).
void AppendServedKey(std::string* out, std::string_view key,
                     const std::vector<StreamEntry>& entries) {
  if (!ReplyResp3()) AppendArrayHeader(out, 2);
  AppendBulk(out, key);
  AppendStreamEntries(out, entries);
}

void AppendReadHeader(std::string* out, int64_t keys) {
  if (ReplyResp3()) return AppendMapHeader(out, keys);
  AppendArrayHeader(out, keys);
}

void XRead(CommandContext& ctx, Args& argv, std::string* out) {
  ReadArgs a;
  if (!ParseReadArgs(ctx, argv, &a, out)) return;
  storage::Store& store = *ctx.store;
  // Every key is checked (type, group) and every id parsed before anything is served.
  std::vector<StreamId> ids(a.nkeys);
  std::vector<bool> newest(a.nkeys, false);  // `>`
  std::vector<std::optional<storage::StreamInfo>> infos(a.nkeys);
  for (size_t k = 0; k < a.nkeys; ++k) {
    const std::string& key = argv[a.streams + k];
    const std::string& id = argv[a.streams + a.nkeys + k];
    auto info = store.XInfoStream(key);
    if (!info.ok()) return AppendStatusError(out, info.status());
    infos[k] = *info;
    if (a.group_read) {
      std::optional<storage::StreamGroupInfo> group;
      if (*info) {
        auto g = store.XInfoGroup(key, *a.group);
        if (!g.ok()) return AppendStatusError(out, g.status());
        group = *g;
      }
      if (!group) return AppendError(out, NoGroupError(key, *a.group));
    }
    if (id == "$") {
      if (a.group_read) {
        return AppendError(out,
                           "ERR The $ ID is meaningless in the context of XREADGROUP: you want "
                           "to read the history of this consumer by specifying a proper ID, or "
                           "use the > ID to get new messages. The $ ID would just return an "
                           "empty result set.");
      }
      ids[k] = *info ? (*info)->last_id : StreamId::Min();
      continue;
    }
    if (id == ">") {
      if (!a.group_read) {
        return AppendError(out,
                           "ERR The > ID can be specified only when calling XREADGROUP using "
                           "the GROUP <group> <consumer> option.");
      }
      newest[k] = true;
      continue;
    }
    if (!ParseId(id, true, 0, &ids[k])) return AppendError(out, kInvalidId);
    // Redis marks `>` with the greatest id: XREADGROUP given that id explicitly reads new entries.
    if (a.group_read && ids[k] == StreamId::Max()) newest[k] = true;
  }
  std::string body;
  int64_t served = 0;
  const uint64_t count = static_cast<uint64_t>(a.count);
  for (size_t k = 0; k < a.nkeys; ++k) {
    const std::string& key = argv[a.streams + k];
    if (a.group_read) {
      storage::StreamGroupReadSpec spec;
      spec.group = *a.group;
      spec.consumer = *a.consumer;
      if (!newest[k]) spec.after = ids[k];
      spec.count = count;
      spec.noack = a.noack;
      auto read = store.XReadGroup(key, spec, ctx.now_ms != 0 ? ctx.now_ms : NowUnixMs(),
                                   ReplyRoom(ctx, *out));
      if (!read.ok()) {
        if (read.status().IsNotFound()) return AppendError(out, NoGroupError(key, *a.group));
        return AppendStatusError(out, read.status());
      }
      if (!*read) continue;
      AppendServedKey(&body, key, **read);
      ++served;
      continue;
    }
    const auto& info = infos[k];
    StreamId from = ids[k];
    if (!info || info->length == 0 || info->top_id <= from || !from.Incr()) continue;
    auto entries = store.XRange(key, from, StreamId::Max(), false, count, ReplyRoom(ctx, *out));
    if (ReplyOverBudget(ctx, *out, entries.status())) return;
    if (!entries.ok()) return AppendStatusError(out, entries.status());
    AppendServedKey(&body, key, *entries);
    ++served;
  }
  if (served > 0) {
    AppendReadHeader(out, served);
    out->append(body);
    return;
  }
  const std::shared_ptr<Waiter>* waiter = ctx.waiter;
  if (!a.block || waiter == nullptr || ctx.no_block || ctx.in_exec ||
      (*waiter)->state.load() == WaitState::kGone) {
    return AppendNullArray(out);
  }
  Waiter& w = **waiter;
  w.db = WaitDb();
  w.notify_db = ctx.db;
  w.keys.assign(argv.begin() + static_cast<long>(a.streams),
                argv.begin() + static_cast<long>(a.streams + a.nkeys));
  w.op = WaitOp();
  w.op.kind = a.group_read ? WaitOp::Kind::kStreamGroupRead : WaitOp::Kind::kStreamRead;
  w.op.stream_count = count;
  w.op.stream_ids = ids;
  if (a.group_read) {
    w.op.group = *a.group;
    w.op.consumer = *a.consumer;
    w.op.noack = a.noack;
  }
  if (!ctx.blocking().Add(*waiter)) return AppendNullArray(out);  // timed out before
  w.queued = true;  // no reply now: the one who ends the wait posts it
}

// The index of `key` among the waiter's keys.
size_t KeyIndex(const Waiter& waiter, std::string_view key) {
  for (size_t i = 0; i < waiter.keys.size(); ++i) {
    if (waiter.keys[i] == key) return i;
  }
  return 0;
}

}  // namespace

StreamReadiness ProbeStreamWait(storage::Store& store, const Waiter& waiter, std::string_view key,
                                std::string* error_reply) {
  if (waiter.op.kind == WaitOp::Kind::kStreamRead) {
    auto info = store.XInfoStream(key);
    if (!info.ok() || !*info) return StreamReadiness::kNotReady;  // another type, or gone
    const StreamId after = waiter.op.stream_ids[KeyIndex(waiter, key)];
    return (*info)->last_id > after ? StreamReadiness::kReady : StreamReadiness::kNotReady;
  }
  storage::StreamGroupReadSpec spec;
  spec.group = waiter.op.group;
  spec.consumer = waiter.op.consumer;
  spec.blocked = true;
  spec.probe = true;
  auto read = store.XReadGroup(key, spec, 0);
  if (read.ok()) return *read ? StreamReadiness::kReady : StreamReadiness::kNotReady;
  if (read.status().IsNotFound() && read.status().message() == storage::kNoStreamGroup) {
    AppendError(error_reply,
                "NOGROUP the consumer group this client was blocked on no longer exists");
    return StreamReadiness::kError;
  }
  if (read.status().IsNotFound() || read.status().IsWrongType()) {
    AppendError(error_reply, "UNBLOCKED the stream key no longer exists");
    return StreamReadiness::kError;
  }
  AppendStatusError(error_reply, read.status());
  return StreamReadiness::kError;
}

Status ServeStreamWait(CommandContext& ctx, const Waiter& waiter, std::string_view key,
                       std::string* out) {
  storage::Store& store = *ctx.store;
  std::vector<StreamEntry> entries;
  if (waiter.op.kind == WaitOp::Kind::kStreamRead) {
    StreamId from = waiter.op.stream_ids[KeyIndex(waiter, key)];
    if (from.Incr()) {
      auto read = store.XRange(key, from, StreamId::Max(), false, waiter.op.stream_count);
      if (!read.ok()) return read.status();
      entries = std::move(*read);
    }
  } else {
    storage::StreamGroupReadSpec spec;
    spec.group = waiter.op.group;
    spec.consumer = waiter.op.consumer;
    spec.count = waiter.op.stream_count;
    spec.noack = waiter.op.noack;
    spec.blocked = true;
    auto read = store.XReadGroup(key, spec, NowUnixMs());
    if (!read.ok()) return read.status();
    if (*read) entries = std::move(**read);
  }
  AppendReadHeader(out, 1);
  AppendServedKey(out, key, entries);
  return Status::OK();
}

// clang-format off
const std::vector<CommandSpec> kStreamReadCommands = {
    {"xread", -4, kReadOnly | kMayBlock | kBlockOption, 0, 0, 0, XRead, nullptr, nullptr,
     ReadKeys},
    {"xreadgroup", -7, kWrite | kMayBlock | kBlockOption, 0, 0, 0, XRead, nullptr, nullptr,
     ReadKeys},
};
// clang-format on

}  // namespace rockcache::server
