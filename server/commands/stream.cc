// Stream commands: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM (no consumer groups, no XREAD).
// Arguments are parsed and checked in the order Redis 7.0's t_stream.c does (ids with its
// string2ull rules), so that a command with several faults reports the same error. Not cache
// readers: the writes have their keys erased from the cache by the executor. Keyspace events
// (class t) as Redis: xadd (then xtrim when it trimmed), xtrim, xdel.
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/commands/stream_args.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using storage::StreamId;
using storage::StreamTrim;
using storage::XAddSpec;

// Redis's default LIMIT of `~` trimming: 100 * stream-node-max-entries (100).
constexpr uint64_t kApproxTrimLimit = 10000;

struct AddOrTrimArgs {
  XAddSpec spec;
  bool id_given = false;
  bool seq_given = true;
  size_t id_pos = 0;  // XADD: the index of the id argument
};

// Redis's streamParseAddOrTrimArgsOrReply. False when it appended an error.
bool ParseAddOrTrim(const Args& argv, bool xadd, AddOrTrimArgs* a, std::string* out) {
  StreamTrim& trim = a->spec.trim;
  bool approx = false, limit_given = false;
  int64_t limit = 0;
  size_t i = 2;
  for (; i < argv.size(); ++i) {
    size_t more = argv.size() - 1 - i;
    const std::string& opt = argv[i];
    if (xadd && opt == "*") {
      break;
    } else if ((Is(opt, "maxlen") || Is(opt, "minid")) && more > 0) {
      bool maxlen = Is(opt, "maxlen");
      if (trim.strategy != StreamTrim::Strategy::kNone) {
        AppendError(out,
                    "ERR syntax error, MAXLEN and MINID options at the same time are not "
                    "compatible");
        return false;
      }
      approx = false;
      const std::string& next = argv[i + 1];
      if (more >= 2 && next == "~") {
        approx = true;
        ++i;
      } else if (more >= 2 && next == "=") {
        ++i;
      }
      if (maxlen) {
        int64_t n = 0;
        if (!ParseInteger(argv[i + 1], &n)) return out->append(kReplyNotInteger), false;
        if (n < 0) return AppendError(out, "ERR The MAXLEN argument must be >= 0."), false;
        trim.strategy = StreamTrim::Strategy::kMaxLen;
        trim.maxlen = static_cast<uint64_t>(n);
      } else {
        if (!ParseId(argv[i + 1], true, 0, &trim.minid)) return AppendError(out, kInvalidId), false;
        trim.strategy = StreamTrim::Strategy::kMinId;
      }
      ++i;
    } else if (Is(opt, "limit") && more > 0) {
      if (!ParseInteger(argv[i + 1], &limit)) return out->append(kReplyNotInteger), false;
      if (limit < 0) return AppendError(out, "ERR The LIMIT argument must be >= 0."), false;
      limit_given = true;
      ++i;
    } else if (xadd && Is(opt, "nomkstream")) {
      a->spec.nomkstream = true;
    } else if (xadd) {
      if (!ParseId(opt, true, 0, &a->spec.id, &a->seq_given)) {
        return AppendError(out, kInvalidId), false;
      }
      a->id_given = true;
      break;
    } else {
      return out->append(kReplySyntaxError), false;
    }
  }
  a->id_pos = i;
  if (limit != 0 && trim.strategy == StreamTrim::Strategy::kNone) {
    AppendError(out,
                "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return false;
  }
  if (!xadd && trim.strategy == StreamTrim::Strategy::kNone) {
    AppendError(out, "ERR syntax error, XTRIM must be called with a trimming strategy");
    return false;
  }
  if (limit_given) {
    if (!approx) {
      AppendError(out, "ERR syntax error, LIMIT cannot be used without the special ~ option");
      return false;
    }
    trim.limit = static_cast<uint64_t>(limit);
  } else {
    trim.limit = approx ? kApproxTrimLimit : 0;
  }
  if (!a->id_given) {
    a->spec.id_kind = XAddSpec::IdKind::kAuto;
  } else {
    a->spec.id_kind = a->seq_given ? XAddSpec::IdKind::kExplicit : XAddSpec::IdKind::kAutoSeq;
  }
  return true;
}

void XAdd(CommandContext& ctx, Args& argv, std::string* out) {
  AddOrTrimArgs a;
  if (!ParseAddOrTrim(argv, true, &a, out)) return;
  size_t field_pos = a.id_pos + 1;
  size_t n = argv.size() > field_pos ? argv.size() - field_pos : 0;
  if (n < 2 || n % 2 == 1) return AppendArityError(out, argv[0]);
  if (a.id_given && a.seq_given && a.spec.id == StreamId::Min()) {
    return AppendError(out, "ERR The ID specified in XADD must be greater than 0-0");
  }
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  fields.reserve(n / 2);
  for (size_t i = field_pos; i + 1 < argv.size(); i += 2) fields.emplace_back(argv[i], argv[i + 1]);
  uint64_t trimmed = 0;
  auto id = ctx.store->XAdd(argv[1], a.spec, fields, &trimmed);
  if (!id.ok()) return AppendStatusError(out, id.status());
  if (!*id) return out->append(NullBulkReply()), void();
  AppendBulk(out, (*id)->ToString());
  NotifyKeyspaceEvent(ctx, kNotifyStream, "xadd", argv[1]);
  if (trimmed > 0) NotifyKeyspaceEvent(ctx, kNotifyStream, "xtrim", argv[1]);
}

void XTrim(CommandContext& ctx, Args& argv, std::string* out) {
  AddOrTrimArgs a;
  if (!ParseAddOrTrim(argv, false, &a, out)) return;
  auto removed = ctx.store->XTrim(argv[1], a.spec.trim);
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  AppendInteger(out, *removed);
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyStream, "xtrim", argv[1]);
}

void XLen(CommandContext& ctx, Args& argv, std::string* out) {
  auto length = ctx.store->XLen(argv[1]);
  if (!length.ok()) return AppendStatusError(out, length.status());
  AppendInteger(out, *length);
}

// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n].
void XRange(CommandContext& ctx, Args& argv, std::string* out) {
  bool rev = Is(argv[0], "xrevrange");
  const std::string& start_arg = rev ? argv[3] : argv[2];
  const std::string& end_arg = rev ? argv[2] : argv[3];
  StreamId start, end;
  bool start_ex = false, end_ex = false;
  if (!ParseIntervalId(start_arg, 0, &start, &start_ex)) return AppendError(out, kInvalidId);
  if (start_ex && !start.Incr()) return AppendError(out, "ERR invalid start ID for the interval");
  if (!ParseIntervalId(end_arg, UINT64_MAX, &end, &end_ex)) return AppendError(out, kInvalidId);
  if (end_ex && !end.Decr()) return AppendError(out, "ERR invalid end ID for the interval");
  int64_t count = -1;
  for (size_t j = 4; j < argv.size(); ++j) {
    if (Is(argv[j], "count") && j + 1 < argv.size()) {
      if (!ParseInteger(argv[j + 1], &count)) return out->append(kReplyNotInteger), void();
      if (count < 0) count = 0;
      ++j;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  if (count == 0) {  // Redis looks the key up first, then replies a null array
    auto type = ctx.store->Type(argv[1]);
    if (!type.ok()) return AppendStatusError(out, type.status());
    if (*type == storage::KeyType::kNone) return AppendArrayHeader(out, 0);
    if (*type != storage::KeyType::kStream) return out->append(kReplyWrongType), void();
    return out->append(NullArrayReply()), void();
  }
  auto entries = ctx.store->XRange(
      argv[1], start, end, rev, count < 0 ? 0 : static_cast<uint64_t>(count), ReplyRoom(ctx, *out));
  if (ReplyOverBudget(ctx, *out, entries.status())) return;
  if (!entries.ok()) return AppendStatusError(out, entries.status());
  AppendArrayHeader(out, static_cast<int64_t>(entries->size()));
  for (const auto& entry : *entries) {
    AppendStreamEntry(out, entry);
    if (ReplyOverBudget(ctx, *out)) return;
  }
}

// XDEL: Redis looks the key up before it parses the ids.
void XDel(CommandContext& ctx, Args& argv, std::string* out) {
  auto type = ctx.store->Type(argv[1]);
  if (!type.ok()) return AppendStatusError(out, type.status());
  if (*type == storage::KeyType::kNone) return AppendInteger(out, 0);
  if (*type != storage::KeyType::kStream) return out->append(kReplyWrongType), void();
  std::vector<StreamId> ids(argv.size() - 2);
  for (size_t j = 2; j < argv.size(); ++j) {
    if (!ParseId(argv[j], true, 0, &ids[j - 2])) return AppendError(out, kInvalidId);
  }
  auto removed = ctx.store->XDel(argv[1], ids);
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  AppendInteger(out, *removed);
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyStream, "xdel", argv[1]);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kStreamCommands = {
    {"xadd", -5, kWrite | kFast, 1, 1, 1, XAdd},
    {"xlen", 2, kReadOnly | kFast, 1, 1, 1, XLen},
    {"xrange", -4, kReadOnly, 1, 1, 1, XRange},
    {"xrevrange", -4, kReadOnly, 1, 1, 1, XRange},
    {"xdel", -3, kWrite | kFast, 1, 1, 1, XDel},
    {"xtrim", -4, kWrite, 1, 1, 1, XTrim},
};
// clang-format on

}  // namespace rockcache::server
