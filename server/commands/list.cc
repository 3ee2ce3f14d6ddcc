// List commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX, LSET, LREM,
// LTRIM, LINSERT, LPOS, RPOPLPUSH, LMOVE. Arguments are checked in the order Redis 7 checks them,
// so that a command with several faults reports the same error.
//
// The cache holds a list as its head (cache/value.h, ListHead): its first elements, up to
// cache-max-list-elements, and its length. LRANGE fills it with the head its range lies in;
// LRANGE / LINDEX inside the head and LLEN are then answered from it in the network thread.
// Pushes and pops keep it (they are kCacheAware: they edit the head as they edit the list);
// every other list write drops it (Call erases the keys of a write that is not).
#include <algorithm>
#include <climits>
#include <deque>
#include <iterator>

#include "server/commands/args.h"
#include "server/commands/cache_access.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/commands/write_run.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/slicing/sliced_read.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

using storage::ListEnd;

constexpr std::string_view kMustBePositive = "ERR value is out of range, must be positive";

// Redis looks LINDEX's and LSET's key up before it parses the index: an absent key replies
// `absent_reply` and a key of another type WRONGTYPE, whatever the index. Returns true when it
// appended one of those.
bool ReplyForKeyFirst(CommandContext& ctx, const std::string& key, std::string_view absent_reply,
                      std::string* out) {
  auto type = ctx.store->Type(key);
  if (!type.ok()) return AppendStatusError(out, type.status()), true;
  if (*type == storage::KeyType::kNone) return out->append(absent_reply), true;
  if (*type != storage::KeyType::kList) return out->append(kReplyWrongType), true;
  return false;
}

// ---- the cache: list heads ----

// A head whose elements pass this many bytes is not read for the cache: the range is read (and
// sliced when big) as if the cache were off. Bounds what one LRANGE builds outside the sliced
// path and what one entry holds.
constexpr uint64_t kListHeadMaxBytes = 1 << 20;

// Worker, with the cache (ctx.cache set, under the key lock): LRANGE of a range inside the first
// max_list_elements elements reads the head it lies in (Store::LHead), replies from it and caches
// it. Returns false, having replied nothing, when the range lies further or the head is too big:
// the caller reads the range itself.
bool ReplyFromListHead(CommandContext& ctx, std::string_view key, int64_t start, int64_t stop,
                       std::string* out) {
  if (ctx.cache == nullptr || ctx.cache->max_list_elements() == 0) return false;
  auto head = ctx.store->LHead(key, start, stop, ctx.cache->max_list_elements(),
                               std::min<uint64_t>(kListHeadMaxBytes, ReplyRoom(ctx, *out)));
  if (!head.ok()) {
    if (head.status().IsOverLimit()) return false;
    AppendStatusError(out, head.status());
    return true;
  }
  if (!head->found) {
    AppendArrayHeader(out, 0);
    CachePutAbsent(ctx, key);
    return true;
  }
  const storage::ListSpan span = head->span;
  if (span.begin == span.end) return AppendArrayHeader(out, 0), true;
  if (head->elements.empty()) return false;  // the range ends past the head the cache keeps
  AppendArrayHeader(out, static_cast<int64_t>(span.end - span.begin));
  for (uint64_t i = span.begin; i < span.end; ++i) AppendBulk(out, head->elements[i]);
  if (head->expire_at_ms == 0 || head->expire_at_ms > ctx.now_ms) {
    std::deque<std::string> elements(std::make_move_iterator(head->elements.begin()),
                                     std::make_move_iterator(head->elements.end()));
    ctx.cache->Put(key, cache::Value::List(std::move(elements), head->length), head->expire_at_ms,
                   ctx.now_ms, ctx.cache_generation);
  }
  return true;
}

// Runs `visit(const cache::ListHead&) -> bool` on a cached list head; false from it means the
// head cannot answer (the command goes to the pool; the lookup still counted as a cache hit). A
// cached value of another type answers WRONGTYPE, a key the cache knows absent `absent_reply`.
template <typename Visitor>
bool RtcList(RtcContext& ctx, std::string_view key, std::string_view absent_reply, std::string* out,
             Visitor&& visit) {
  bool answered = true;
  const bool found = CacheLookup(
      ctx, key,
      [&](const cache::Value& value, int64_t) {
        if (!value.is_list()) {
          out->append(kReplyWrongType);
          return;
        }
        answered = visit(*value.list);
      },
      [&] { out->append(absent_reply); });
  return found && answered;
}

bool RtcLLen(RtcContext& ctx, const Args& argv, std::string* out) {
  return RtcList(ctx, argv[1], ":0\r\n", out, [&](const cache::ListHead& head) {
    AppendInteger(out, static_cast<int64_t>(head.length));
    return true;
  });
}

bool RtcLRange(RtcContext& ctx, const Args& argv, std::string* out) {
  int64_t start = 0, stop = 0;
  if (!ParseInteger(argv[2], &start) || !ParseInteger(argv[3], &stop)) return false;
  return RtcList(ctx, argv[1], "*0\r\n", out, [&](const cache::ListHead& head) {
    const storage::ListSpan span = storage::ListRangeSpan(start, stop, head.length);
    if (span.end > head.elements.size()) return false;
    AppendArrayHeader(out, static_cast<int64_t>(span.end - span.begin));
    for (uint64_t i = span.begin; i < span.end; ++i) AppendBulk(out, head.elements[i]);
    return true;
  });
}

bool RtcLIndex(RtcContext& ctx, const Args& argv, std::string* out) {
  int64_t index = 0;
  const bool numeric = ParseInteger(argv[2], &index);
  return RtcList(ctx, argv[1], NullBulkReply(), out, [&](const cache::ListHead& head) {
    if (!numeric) return out->append(kReplyNotInteger), true;  // the key is checked first
    const storage::ListSpan at = storage::ListRangeSpan(index, index, head.length);
    if (at.begin == at.end) return out->append(NullBulkReply()), true;
    if (at.begin >= head.elements.size()) return false;
    AppendBulk(out, head.elements[at.begin]);
    return true;
  });
}

// After a push of `pushed` that made the list `length` long: LPUSH puts them in front of the
// cached head (which then keeps its first max_list_elements); RPUSH lengthens the list and, when
// the head was the whole list, adds them to it while it has room. A head that does not match the
// list's old length is dropped.
void CachePushed(CommandContext& ctx, std::string_view key, bool left,
                 const std::vector<std::string_view>& pushed, int64_t length) {
  CacheUpdate(ctx, key, [&](cache::Value& cached, int64_t&) {
    if (!cached.is_list()) return false;
    cache::ListHead& head = *cached.list;
    if (head.length + pushed.size() != static_cast<uint64_t>(length)) return false;
    const size_t room = ctx.cache->max_list_elements();
    if (left) {
      for (auto element : pushed) head.PushFront(element);
      while (head.elements.size() > room) head.PopBack();
    } else if (head.elements.size() == head.length) {
      for (auto element : pushed) {
        if (head.elements.size() >= room) break;
        head.PushBack(element);
      }
    }
    head.length = static_cast<uint64_t>(length);
    return true;
  });
}

// After a pop of `popped` (in pop order): LPOP takes them off the cached head, RPOP shortens a
// head that reached the list's tail. A head left empty is dropped (it answers nothing).
void CachePopped(CommandContext& ctx, std::string_view key, bool left,
                 const std::vector<std::string>& popped) {
  CacheUpdate(ctx, key, [&](cache::Value& cached, int64_t&) {
    if (!cached.is_list()) return false;
    cache::ListHead& head = *cached.list;
    if (head.length < popped.size()) return false;
    head.length -= popped.size();
    if (left) {
      for (const auto& element : popped) {
        if (head.elements.empty()) break;
        if (head.elements.front() != element) return false;  // not the list we think it is
        head.PopFront();
      }
    }
    while (head.elements.size() > head.length) head.PopBack();
    return !head.elements.empty();
  });
}

using PushFn = StatusOr<int64_t> (storage::Store::*)(std::string_view,
                                                     const std::vector<std::string_view>&);

// The store call of LPUSH / RPUSH / LPUSHX / RPUSHX (argv[0]).
PushFn PushOf(const std::string& name) {
  return Is(name, "LPUSH")    ? &storage::Store::LPush
         : Is(name, "RPUSH")  ? &storage::Store::RPush
         : Is(name, "LPUSHX") ? &storage::Store::LPushX
                              : &storage::Store::RPushX;
}
bool PushesLeft(PushFn push) {
  return push == &storage::Store::LPush || push == &storage::Store::LPushX;
}

// LPUSH / RPUSH / LPUSHX / RPUSHX.
void Push(CommandContext& ctx, Args& argv, std::string* out) {
  const PushFn push = PushOf(argv[0]);
  const std::vector<std::string_view> elements = ArgViews(argv, 2);
  auto length = (ctx.store->*push)(argv[1], elements);
  if (!length.ok()) return AppendStatusError(out, length.status());
  const bool left = PushesLeft(push);
  if (*length > 0) {
    CachePushed(ctx, argv[1], left, elements, *length);
    NotifyKeyspaceEvent(ctx, kNotifyList, left ? "lpush" : "rpush", argv[1]);
  }
  AppendInteger(out, *length);
}

// A run of pushes is one push of all their elements, in order (LPUSH k a, LPUSH k b leaves the
// list b a, as LPUSH k a b). Each command's reply is the length after it: the final length less
// what the commands after it pushed. A PUSHX run on an absent key pushes nothing: every reply 0.
bool PushJoinsRun(const Args&) { return true; }
void PushRun(CommandContext& ctx, const WriteRun& run) {
  const Args& first = *run.argvs.front();
  const PushFn push = PushOf(first[0]);
  const std::vector<std::string_view> elements = RunArgViews(run, 2);
  auto length = (ctx.store->*push)(first[1], elements);
  if (!length.ok()) return AppendStatusErrorToAll(run, length.status());
  if (*length > 0) CachePushed(ctx, first[1], PushesLeft(push), elements, *length);
  int64_t after = *length;  // the length after command c
  for (size_t c = run.argvs.size(); c-- > 0;) {
    AppendInteger(run.replies[c], after);
    if (after > 0) after -= static_cast<int64_t>(run.argvs[c]->size() - 2);
  }
}
const WriteRunSpec kPushRun{PushJoinsRun, PushRun};

// LPOP / RPOP key [count]: without a count a bulk (nil when absent); with one an array (a null
// array when absent).
void Pop(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 3) return AppendArityError(out, argv[0]);
  int64_t count = 1;
  if (argv.size() == 3 && (!ParseInteger(argv[2], &count) || count < 0)) {
    return AppendError(out, kMustBePositive);
  }
  bool left = Is(argv[0], "LPOP");
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->LLen(argv[1]); });
  auto popped = left ? ctx.store->LPop(argv[1], static_cast<uint64_t>(count))
                     : ctx.store->RPop(argv[1], static_cast<uint64_t>(count));
  if (!popped.ok()) return AppendStatusError(out, popped.status());
  if (*popped && !(*popped)->empty()) {
    CachePopped(ctx, argv[1], left, **popped);
    NotifyKeyspaceEvent(ctx, kNotifyList, left ? "lpop" : "rpop", argv[1]);
    NotifyIfEmptied(ctx, before, static_cast<int64_t>((*popped)->size()), argv[1]);
  }
  if (argv.size() == 2) {
    if (!*popped || (*popped)->empty()) return out->append(NullBulkReply()), void();
    return AppendBulk(out, (*popped)->front());
  }
  if (!*popped) return out->append(NullArrayReply()), void();
  AppendArrayHeader(out, static_cast<int64_t>((*popped)->size()));
  for (const auto& element : **popped) AppendBulk(out, element);
}

// A run of LPOPs (RPOPs) without a count is one pop of as many elements: the c-th command gets
// the c-th element popped, or nil once the list ran out (it was deleted then).
bool PopJoinsRun(const Args& argv) { return argv.size() == 2; }
void PopRun(CommandContext& ctx, const WriteRun& run) {
  const Args& first = *run.argvs.front();
  const bool left = Is(first[0], "LPOP");
  const uint64_t count = run.argvs.size();
  auto popped = left ? ctx.store->LPop(first[1], count) : ctx.store->RPop(first[1], count);
  if (!popped.ok()) return AppendStatusErrorToAll(run, popped.status());
  const size_t got = *popped ? (*popped)->size() : 0;
  if (got > 0) CachePopped(ctx, first[1], left, **popped);
  for (size_t c = 0; c < run.argvs.size(); ++c) {
    if (c < got) {
      AppendBulk(run.replies[c], (**popped)[c]);
    } else {
      run.replies[c]->append(NullBulkReply());
    }
  }
}
const WriteRunSpec kPopRun{PopJoinsRun, PopRun};

void LLen(CommandContext& ctx, Args& argv, std::string* out) {
  auto length = ctx.store->LLen(argv[1]);
  if (!length.ok()) return AppendStatusError(out, length.status());
  AppendInteger(out, *length);
}

void LRange(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t start = 0, stop = 0;
  if (!ParseInteger(argv[2], &start) || !ParseInteger(argv[3], &stop)) {
    return out->append(kReplyNotInteger), void();
  }
  if (ReplyFromListHead(ctx, argv[1], start, stop, out)) return;
  storage::RangeQuery query;  // sliced when big (server/slicing/sliced_read.h)
  query.kind = storage::RangeQuery::Kind::kList;
  query.key = argv[1];
  query.start = start;
  query.stop = stop;
  ReplyRange(ctx, query, ItemFormat::kKey, out);
}

void LIndex(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t index = 0;
  if (!ParseInteger(argv[2], &index)) {
    if (!ReplyForKeyFirst(ctx, argv[1], NullBulkReply(), out)) out->append(kReplyNotInteger);
    return;
  }
  auto element = ctx.store->LIndex(argv[1], index);
  if (!element.ok()) return AppendStatusError(out, element.status());
  AppendOptionalBulk(out, *element);
}

void LSet(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t index = 0;
  if (!ParseInteger(argv[2], &index)) {
    if (!ReplyForKeyFirst(ctx, argv[1], "-ERR no such key\r\n", out)) {
      out->append(kReplyNotInteger);
    }
    return;
  }
  Status s = ctx.store->LSet(argv[1], index, argv[3]);
  if (!s.ok()) return AppendStatusError(out, s);
  NotifyKeyspaceEvent(ctx, kNotifyList, "lset", argv[1]);
  out->append(kReplyOk);
}

void LRem(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t count = 0;
  if (!ParseInteger(argv[2], &count)) return out->append(kReplyNotInteger), void();
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->LLen(argv[1]); });
  auto removed = ctx.store->LRem(argv[1], count, argv[3]);
  if (!removed.ok()) return AppendStatusError(out, removed.status());
  if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyList, "lrem", argv[1]);
  NotifyIfEmptied(ctx, before, *removed, argv[1]);
  AppendInteger(out, *removed);
}

// What LTRIM start stop leaves of a list of `length` elements (Redis's index rules); 0 for
// length <= 0 (-1: not measured), so length + index never overflows.
int64_t TrimmedLength(int64_t length, int64_t start, int64_t stop) {
  if (length <= 0) return 0;
  if (start < 0) start = length + start;
  if (stop < 0) stop = length + stop;
  if (start < 0) start = 0;
  if (start > stop || start >= length) return 0;
  if (stop >= length) stop = length - 1;
  return stop - start + 1;
}

void LTrim(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t start = 0, stop = 0;
  if (!ParseInteger(argv[2], &start) || !ParseInteger(argv[3], &stop)) {
    return out->append(kReplyNotInteger), void();
  }
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->LLen(argv[1]); });
  Status s = ctx.store->LTrim(argv[1], start, stop);
  if (!s.ok()) return AppendStatusError(out, s);
  if (before != 0) NotifyKeyspaceEvent(ctx, kNotifyList, "ltrim", argv[1]);
  NotifyIfEmptied(ctx, before, before - TrimmedLength(before, start, stop), argv[1]);
  out->append(kReplyOk);
}

// LINSERT key BEFORE|AFTER pivot element
void LInsert(CommandContext& ctx, Args& argv, std::string* out) {
  bool before = Is(argv[2], "BEFORE");
  if (!before && !Is(argv[2], "AFTER")) return out->append(kReplySyntaxError), void();
  auto length = ctx.store->LInsert(argv[1], before, argv[3], argv[4]);
  if (!length.ok()) return AppendStatusError(out, length.status());
  if (*length > 0) NotifyKeyspaceEvent(ctx, kNotifyList, "linsert", argv[1]);
  AppendInteger(out, *length);
}

// A non-negative LPOS option; a bad or negative value replies `error` (Redis uses it for both).
bool ParseNonNegative(const std::string& arg, std::string_view error, uint64_t* value,
                      std::string* out) {
  int64_t n = 0;
  if (!ParseInteger(arg, &n) || n < 0) return AppendError(out, error), false;
  *value = static_cast<uint64_t>(n);
  return true;
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void LPos(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t rank = 1;
  uint64_t count = 0, maxlen = 0;
  bool has_count = false;
  for (size_t i = 3; i < argv.size(); i += 2) {
    if (i + 1 >= argv.size()) return out->append(kReplySyntaxError), void();
    const std::string& value = argv[i + 1];
    if (Is(argv[i], "RANK")) {
      if (!ParseInteger(value, &rank)) return out->append(kReplyNotInteger), void();
      if (rank == 0) {
        return AppendError(out,
                           "ERR RANK can't be zero: use 1 to start from the first match, 2 from "
                           "the second ... or use negative to start from the end of the list");
      }
    } else if (Is(argv[i], "COUNT")) {
      if (!ParseNonNegative(value, "ERR COUNT can't be negative", &count, out)) return;
      has_count = true;
    } else if (Is(argv[i], "MAXLEN")) {
      if (!ParseNonNegative(value, "ERR MAXLEN can't be negative", &maxlen, out)) return;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  // Redis 7.0 negates the rank, and -LLONG_MIN stays LLONG_MIN: it scans from the tail, every
  // match qualifies and COUNT's test (matches - rank + 1 >= count) overflows, so it never stops
  // early: RANK -1 with COUNT read as 0 (7.2 refuses the rank).
  if (rank == LLONG_MIN) {
    rank = -1;
    count = 0;
  }
  auto indexes = ctx.store->LPos(argv[1], argv[2], rank, has_count ? count : 1, maxlen);
  if (!indexes.ok()) return AppendStatusError(out, indexes.status());
  if (!has_count) {
    if (indexes->empty()) return out->append(NullBulkReply()), void();
    return AppendInteger(out, indexes->front());
  }
  AppendArrayHeader(out, static_cast<int64_t>(indexes->size()));
  for (int64_t index : *indexes) AppendInteger(out, index);
}

void MoveAndReply(CommandContext& ctx, const Args& argv, ListEnd from, ListEnd to,
                  std::string* out) {
  const int64_t before = LengthIfNotifying(ctx, [&] { return ctx.store->LLen(argv[1]); });
  auto element = ctx.store->LMove(argv[1], argv[2], from, to);
  if (!element.ok()) return AppendStatusError(out, element.status());
  if (*element) {  // as Redis: the push on the destination, the pop on the source, its "del"
    NotifyKeyspaceEvent(ctx, kNotifyList, to == ListEnd::kLeft ? "lpush" : "rpush", argv[2]);
    NotifyKeyspaceEvent(ctx, kNotifyList, from == ListEnd::kLeft ? "lpop" : "rpop", argv[1]);
    if (argv[1] != argv[2]) NotifyIfEmptied(ctx, before, 1, argv[1]);
  }
  AppendOptionalBulk(out, *element);
}

void RPopLPush(CommandContext& ctx, Args& argv, std::string* out) {
  MoveAndReply(ctx, argv, ListEnd::kRight, ListEnd::kLeft, out);
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
void LMove(CommandContext& ctx, Args& argv, std::string* out) {
  ListEnd ends[2];
  for (int i = 0; i < 2; ++i) {
    const std::string& arg = argv[3 + i];
    if (Is(arg, "LEFT")) {
      ends[i] = ListEnd::kLeft;
    } else if (Is(arg, "RIGHT")) {
      ends[i] = ListEnd::kRight;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  MoveAndReply(ctx, argv, ends[0], ends[1], out);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kListCommands = {
    {"lpush", -3, kWrite | kFast | kCacheAware, 1, 1, 1, Push, nullptr, nullptr, nullptr, &kPushRun},
    {"rpush", -3, kWrite | kFast | kCacheAware, 1, 1, 1, Push, nullptr, nullptr, nullptr, &kPushRun},
    {"lpushx", -3, kWrite | kFast | kCacheAware, 1, 1, 1, Push, nullptr, nullptr, nullptr, &kPushRun},
    {"rpushx", -3, kWrite | kFast | kCacheAware, 1, 1, 1, Push, nullptr, nullptr, nullptr, &kPushRun},
    {"lpop", -2, kWrite | kFast | kCacheAware, 1, 1, 1, Pop, nullptr, nullptr, nullptr, &kPopRun},
    {"rpop", -2, kWrite | kFast | kCacheAware, 1, 1, 1, Pop, nullptr, nullptr, nullptr, &kPopRun},
    {"llen", 2, kReadOnly | kFast | kCacheRead, 1, 1, 1, LLen, RtcLLen},
    {"lrange", 4, kReadOnly | kCacheRead, 1, 1, 1, LRange, RtcLRange},
    {"lindex", 3, kReadOnly | kCacheRead, 1, 1, 1, LIndex, RtcLIndex},
    {"lset", 4, kWrite, 1, 1, 1, LSet},
    {"lrem", 4, kWrite, 1, 1, 1, LRem},
    {"ltrim", 4, kWrite, 1, 1, 1, LTrim},
    {"linsert", 5, kWrite, 1, 1, 1, LInsert},
    {"lpos", -3, kReadOnly, 1, 1, 1, LPos},
    {"rpoplpush", 3, kWrite, 1, 2, 1, RPopLPush},
    {"lmove", 5, kWrite, 1, 2, 1, LMove},
};
// clang-format on

}  // namespace rockcache::server
