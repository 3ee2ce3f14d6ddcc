// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] and
// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: pop from the first key that holds
// elements, as Redis 7.0 (lmpopGenericCommand, zmpopGenericCommand): keys are tried in order,
// an absent key is skipped, the first key of another type replies WRONGTYPE, and nothing to pop
// replies a null array. The pops are the stores' bounded pops (LPOP/RPOP, ZPOPMIN/ZPOPMAX), so a
// key with a long deletion history costs no more than a fresh one.
#include <cstdint>

#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/numkeys.h"
#include "server/protocol/reply.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// Parses `numkeys key... WHERE [COUNT n]`; *where_index is WHERE's argv index. False (error
// appended) on a bad argument; `is_where` tells WHERE's keyword apart.
bool ParseMultiPop(const Args& argv, bool (*is_where)(const std::string&), size_t* where_index,
                   uint64_t* count, std::string* out) {
  int64_t numkeys = 0;
  if (!ParseInteger(argv[1], &numkeys) || numkeys < 1) {
    AppendError(out, "ERR numkeys should be greater than 0");
    return false;
  }
  if (numkeys >= static_cast<int64_t>(argv.size()) - 2) {  // WHERE would be past the end
    out->append(kReplySyntaxError);
    return false;
  }
  *where_index = 2 + static_cast<size_t>(numkeys);
  if (!is_where(argv[*where_index])) {
    out->append(kReplySyntaxError);
    return false;
  }
  bool has_count = false;
  *count = 1;
  for (size_t j = *where_index + 1; j < argv.size(); ++j) {
    bool more = j + 1 < argv.size();
    if (!has_count && Is(argv[j], "COUNT") && more) {
      int64_t n = 0;
      if (!ParseInteger(argv[++j], &n) || n < 1) {
        AppendError(out, "ERR count should be greater than 0");
        return false;
      }
      *count = static_cast<uint64_t>(n);
      has_count = true;
    } else {
      out->append(kReplySyntaxError);
      return false;
    }
  }
  return true;
}

bool IsListEnd(const std::string& arg) { return Is(arg, "LEFT") || Is(arg, "RIGHT"); }
bool IsZSetEnd(const std::string& arg) { return Is(arg, "MIN") || Is(arg, "MAX"); }

void LMPop(CommandContext& ctx, Args& argv, std::string* out) {
  size_t where = 0;
  uint64_t count = 1;
  if (!ParseMultiPop(argv, IsListEnd, &where, &count, out)) return;
  const bool left = Is(argv[where], "LEFT");
  for (size_t k = 2; k < where; ++k) {
    auto popped = left ? ctx.store->LPop(argv[k], count) : ctx.store->RPop(argv[k], count);
    if (!popped.ok()) return AppendStatusError(out, popped.status());
    if (!*popped || (*popped)->empty()) continue;
    AppendArrayHeader(out, 2);
    AppendBulk(out, argv[k]);
    AppendArrayHeader(out, static_cast<int64_t>((*popped)->size()));
    for (const auto& element : **popped) AppendBulk(out, element);
    return;
  }
  out->append(NullArrayReply());
}

void ZMPop(CommandContext& ctx, Args& argv, std::string* out) {
  size_t where = 0;
  uint64_t count = 1;
  if (!ParseMultiPop(argv, IsZSetEnd, &where, &count, out)) return;
  const bool min = Is(argv[where], "MIN");
  for (size_t k = 2; k < where; ++k) {
    auto popped = min ? ctx.store->ZPopMin(argv[k], count) : ctx.store->ZPopMax(argv[k], count);
    if (!popped.ok()) return AppendStatusError(out, popped.status());
    if (popped->empty()) continue;
    AppendArrayHeader(out, 2);
    AppendBulk(out, argv[k]);
    AppendArrayHeader(out, static_cast<int64_t>(popped->size()));
    for (const auto& item : *popped) {
      AppendArrayHeader(out, 2);
      AppendBulk(out, item.member);
      AppendDoubleText(out, storage::FormatDouble(item.score));
    }
    return;
  }
  out->append(NullArrayReply());
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kMultiPopCommands = {
    {"lmpop", -4, kWrite, 0, 0, 0, LMPop, nullptr, nullptr, NumKeysAt1},
    {"zmpop", -4, kWrite, 0, 0, 0, ZMPop, nullptr, nullptr, NumKeysAt1},
};
// clang-format on

}  // namespace rockcache::server
