// Blocking pops: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP, with
// Redis 7.0's replies, errors and argument order. A handler runs on a worker holding its keys'
// locks: it pops at once when a key has something, and otherwise queues the command's Waiter
// (server/blocking/wait_registry.h) and leaves the reply to whoever ends the wait.
#include <climits>

#include "server/blocking/serve.h"
#include "server/blocking/timeout.h"
#include "server/blocking/wait_registry.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/protocol/reply.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using storage::KeyType;

// Pops from the first key that has something, or blocks, or answers the null reply.
void PopOrBlock(CommandContext& ctx, std::vector<std::string_view> keys, const WaitOp& op,
                std::string* out) {
  const std::shared_ptr<Waiter>* waiter = ctx.waiter;
  const std::string_view null_reply =
      op.kind == WaitOp::Kind::kListMove ? NullBulkReply() : NullArrayReply();
  if (waiter != nullptr && (*waiter)->state.load() == WaitState::kGone) {
    return out->append(null_reply), void();  // the client left: take nothing
  }
  const KeyType want = op.kind == WaitOp::Kind::kZSetPop ? KeyType::kZSet : KeyType::kList;
  for (auto key : keys) {
    auto type = ctx.store->Type(key);
    if (!type.ok()) return AppendStatusError(out, type.status());
    if (*type == KeyType::kNone) continue;
    if (*type != want) return out->append(kReplyWrongType), void();
    std::string reply;
    Status s = PopFor(ctx, op, key, &reply);
    if (!s.ok()) return AppendStatusError(out, s);
    return out->append(reply), void();
  }
  if (waiter == nullptr || ctx.no_block) return out->append(null_reply), void();
  Waiter& w = **waiter;
  w.db = WaitDb();
  w.notify_db = ctx.db;
  w.keys.assign(keys.begin(), keys.end());
  w.op = op;
  if (!ctx.blocking().Add(*waiter)) {
    return out->append(null_reply), void();  // its timeout passed before it ran
  }
  w.queued = true;  // no reply now: the one who ends the wait posts it
}

bool CheckTimeout(const std::string& arg, std::string* out) {
  int64_t ms = 0;
  std::string_view error = ParseBlockTimeout(arg, &ms);
  if (!error.empty()) return AppendError(out, error), false;
  return true;
}

bool ParseEnd(const std::string& arg, bool* left) {
  if (Is(arg, "LEFT")) return *left = true, true;
  if (Is(arg, "RIGHT")) return *left = false, true;
  return false;
}

// BLPOP / BRPOP / BZPOPMIN / BZPOPMAX key [key ...] timeout
void BPop(CommandContext& ctx, Args& argv, std::string* out) {
  if (!CheckTimeout(argv.back(), out)) return;
  WaitOp op;
  op.kind = (Is(argv[0], "BLPOP") || Is(argv[0], "BRPOP")) ? WaitOp::Kind::kListPop
                                                           : WaitOp::Kind::kZSetPop;
  op.left = Is(argv[0], "BLPOP") || Is(argv[0], "BZPOPMIN");
  std::vector<std::string_view> keys(argv.begin() + 1, argv.end() - 1);
  PopOrBlock(ctx, std::move(keys), op, out);
}

// BRPOPLPUSH source destination timeout
void BRPopLPush(CommandContext& ctx, Args& argv, std::string* out) {
  if (!CheckTimeout(argv[3], out)) return;
  WaitOp op;
  op.kind = WaitOp::Kind::kListMove;
  op.left = false;
  op.dst = argv[2];
  op.dst_left = true;
  PopOrBlock(ctx, {argv[1]}, op, out);
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
void BLMove(CommandContext& ctx, Args& argv, std::string* out) {
  WaitOp op;
  op.kind = WaitOp::Kind::kListMove;
  if (!ParseEnd(argv[3], &op.left) || !ParseEnd(argv[4], &op.dst_left)) {
    return out->append(kReplySyntaxError), void();
  }
  if (!CheckTimeout(argv[5], out)) return;
  op.dst = argv[2];
  PopOrBlock(ctx, {argv[1]}, op, out);
}

// numkeys of BLMPOP / BZMPOP (argv[2]); 0 when it is not a positive integer.
int64_t NumKeys(const Args& argv) {
  int64_t n = 0;
  if (argv.size() < 3 || !ParseInteger(argv[2], &n) || n < 1) return 0;
  return n;
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
void BMPop(CommandContext& ctx, Args& argv, std::string* out) {
  if (!CheckTimeout(argv[1], out)) return;
  const bool list = Is(argv[0], "BLMPOP");
  const int64_t numkeys = NumKeys(argv);
  if (numkeys == 0) return AppendError(out, "ERR numkeys should be greater than 0");
  if (numkeys >= static_cast<int64_t>(argv.size()) - 3) {
    return out->append(kReplySyntaxError), void();
  }
  const size_t where = 3 + static_cast<size_t>(numkeys);
  WaitOp op;
  op.kind = list ? WaitOp::Kind::kListPop : WaitOp::Kind::kZSetPop;
  op.multi = true;
  if (list ? !ParseEnd(argv[where], &op.left)
           : !(Is(argv[where], "MIN") || Is(argv[where], "MAX"))) {
    return out->append(kReplySyntaxError), void();
  }
  if (!list) op.left = Is(argv[where], "MIN");
  bool has_count = false;
  for (size_t i = where + 1; i < argv.size(); ++i) {
    if (!has_count && Is(argv[i], "COUNT") && i + 1 < argv.size()) {
      int64_t count = 0;
      if (!ParseInteger(argv[++i], &count) || count < 1) {
        return AppendError(out, "ERR count should be greater than 0");
      }
      op.count = static_cast<uint64_t>(count);
      has_count = true;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  std::vector<std::string_view> keys(argv.begin() + 3, argv.begin() + static_cast<long>(where));
  PopOrBlock(ctx, std::move(keys), op, out);
}

// BLMPOP's / BZMPOP's keys: the numkeys keys after numkeys (none when numkeys is bad).
std::vector<std::string_view> MPopKeys(const Args& argv) {
  const int64_t numkeys = NumKeys(argv);
  if (numkeys == 0 || numkeys >= static_cast<int64_t>(argv.size()) - 3) return {};
  return {argv.begin() + 3, argv.begin() + 3 + numkeys};
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kBlockingCommands = {
    {"blpop", -3, kWrite | kMayBlock, 1, -2, 1, BPop},
    {"brpop", -3, kWrite | kMayBlock, 1, -2, 1, BPop},
    {"bzpopmin", -3, kWrite | kMayBlock | kFast, 1, -2, 1, BPop},
    {"bzpopmax", -3, kWrite | kMayBlock | kFast, 1, -2, 1, BPop},
    {"brpoplpush", 4, kWrite | kMayBlock, 1, 2, 1, BRPopLPush},
    {"blmove", 6, kWrite | kMayBlock, 1, 2, 1, BLMove},
    {"blmpop", -5, kWrite | kMayBlock, 0, 0, 0, BMPop, nullptr, nullptr, MPopKeys},
    {"bzmpop", -5, kWrite | kMayBlock, 0, 0, 0, BMPop, nullptr, nullptr, MPopKeys},
};
// clang-format on

}  // namespace rockcache::server
