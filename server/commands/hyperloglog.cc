// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, over string values in Redis 7.0's exact
// representation (server/commands/hll.h), so values move between rockcache and redis-server with
// GET/SET and both count the same.
//
// All three are write commands for the executor: PFCOUNT of one key stores the cardinality it
// computed in the value's cache bytes, as Redis does, and must not interleave with a PFADD.
// A value keeps its TTL when PFADD, PFCOUNT or PFMERGE rewrites it.
#include <optional>
#include <vector>

#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/hll.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

constexpr std::string_view kNotHll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
constexpr std::string_view kCorruptHll = "INVALIDOBJ Corrupted HLL object detected";

// Reads `key` as a HyperLogLog into *value (nullopt when absent). On a non-string or a string
// that is not a HyperLogLog, appends Redis's error and returns false.
bool ReadHll(CommandContext& ctx, const std::string& key, std::optional<std::string>* value,
             std::string* out) {
  auto got = ctx.store->Get(key);
  if (!got.ok()) {
    AppendStatusError(out, got.status());
    return false;
  }
  if (*got && !hll::LooksValid(**got)) {
    AppendError(out, kNotHll);
    return false;
  }
  *value = std::move(*got);
  return true;
}

// Writes the value back, keeping the key's TTL (a new key gets none).
bool WriteHll(CommandContext& ctx, const std::string& key, const std::string& value,
              std::string* out) {
  storage::SetOptions options;
  options.expiry.mode = storage::Expiry::Mode::kKeep;
  auto result = ctx.store->Set(key, value, options);
  if (!result.ok()) {
    AppendStatusError(out, result.status());
    return false;
  }
  return true;
}

// PFADD key [element ...]: 1 when the key was created or a register changed, else 0.
void PfAdd(CommandContext& ctx, Args& argv, std::string* out) {
  std::optional<std::string> value;
  if (!ReadHll(ctx, argv[1], &value, out)) return;
  bool updated = false;
  if (!value) {
    value = hll::NewSparse();
    updated = true;
  }
  for (size_t i = 2; i < argv.size(); ++i) {
    int changed = hll::Add(&*value, argv[i]);
    if (changed < 0) return AppendError(out, kCorruptHll);
    if (changed > 0) updated = true;
  }
  if (!updated) return AppendInteger(out, 0);
  hll::InvalidateCachedCount(&*value);
  if (!WriteHll(ctx, argv[1], *value, out)) return;
  NotifyKeyspaceEvent(ctx, kNotifyString, "pfadd", argv[1]);
  AppendInteger(out, 1);
}

// PFCOUNT key [key ...]: one key uses (or refreshes) the cached cardinality; several keys are
// merged in memory and nothing is written.
void PfCount(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 2) {
    std::vector<uint8_t> max(hll::kRegisters, 0);
    for (size_t i = 1; i < argv.size(); ++i) {
      std::optional<std::string> value;
      if (!ReadHll(ctx, argv[i], &value, out)) return;
      if (!value) continue;
      if (!hll::MergeInto(*value, max.data())) return AppendError(out, kCorruptHll);
    }
    return AppendInteger(out, static_cast<int64_t>(hll::CountRaw(max.data())));
  }
  std::optional<std::string> value;
  if (!ReadHll(ctx, argv[1], &value, out)) return;
  if (!value) return AppendInteger(out, 0);
  if (auto cached = hll::CachedCount(*value)) {
    return AppendInteger(out, static_cast<int64_t>(*cached));
  }
  auto count = hll::Count(*value);
  if (!count) return AppendError(out, kCorruptHll);
  hll::SetCachedCount(&*value, *count);
  if (!WriteHll(ctx, argv[1], *value, out)) return;
  AppendInteger(out, static_cast<int64_t>(*count));
}

// PFMERGE destkey [sourcekey ...]: dest becomes the union of itself and the sources. It turns
// dense when any input is dense, as in Redis.
void PfMerge(CommandContext& ctx, Args& argv, std::string* out) {
  std::vector<uint8_t> max(hll::kRegisters, 0);
  bool use_dense = false;
  std::optional<std::string> dest;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::optional<std::string> value;
    if (!ReadHll(ctx, argv[i], &value, out)) return;
    if (!value) continue;
    if (hll::IsDense(*value)) use_dense = true;
    if (!hll::MergeInto(*value, max.data())) return AppendError(out, kCorruptHll);
    if (i == 1) dest = std::move(value);
  }
  if (!dest) dest = hll::NewSparse();
  if (use_dense && !hll::ToDense(&*dest)) return AppendError(out, kCorruptHll);
  for (size_t i = 0; i < hll::kRegisters; ++i) {
    if (max[i] != 0) (void)hll::SetRegister(&*dest, i, max[i]);
  }
  hll::InvalidateCachedCount(&*dest);
  if (!WriteHll(ctx, argv[1], *dest, out)) return;
  NotifyKeyspaceEvent(ctx, kNotifyString, "pfadd", argv[1]);
  out->append(kReplyOk);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kHyperLogLogCommands = {
    {"pfadd", -2, kWrite | kFast, 1, 1, 1, PfAdd},
    {"pfcount", -2, kWrite, 1, -1, 1, PfCount},
    {"pfmerge", -2, kWrite, 1, -1, 1, PfMerge},
};
// clang-format on

}  // namespace rockcache::server
