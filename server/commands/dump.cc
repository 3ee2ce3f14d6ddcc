// DUMP and RESTORE: a key's value as Redis 7.0's serialized payload (server/rdb/value_codec.h)
// and back. Both run on workers: DUMP reads the whole value over one snapshot
// (Store::ReadValue), RESTORE writes it as one WriteBatch (Store::WriteValue) and, being a
// plain write of its key, has the key erased from the cache by Call's kWorker discipline.
// MIGRATE (migrate.cc) is DUMP + RESTORE on another server + DEL.
#include "server/commands/dump.h"

#include "config/config.h"
#include "server/clock.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/reply_budget.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/rdb/value_codec.h"
#include "storage/store.h"

namespace rockcache::server {

rdb::EncodingLimits DumpLimits(const config::Config& config) {
  rdb::EncodingLimits limits;
  limits.hash_max_listpack_entries = config.GetInt("hash-max-listpack-entries");
  limits.hash_max_listpack_value = config.GetInt("hash-max-listpack-value");
  limits.zset_max_listpack_entries = config.GetInt("zset-max-listpack-entries");
  limits.zset_max_listpack_value = config.GetInt("zset-max-listpack-value");
  limits.set_max_intset_entries = config.GetInt("set-max-intset-entries");
  limits.list_max_listpack_size = config.GetInt("list-max-listpack-size");
  limits.stream_node_max_bytes = config.GetInt("stream-node-max-bytes");
  limits.stream_node_max_entries = config.GetInt("stream-node-max-entries");
  return limits;
}

StatusOr<std::optional<std::string>> DumpKey(CommandContext& ctx, std::string_view key,
                                             uint64_t max_bytes) {
  auto value = ctx.store->ReadValue(key, max_bytes);
  if (!value.ok()) return value.status();
  if (!value->has_value()) return std::optional<std::string>();
  return std::optional<std::string>(rdb::DumpPayload(**value, DumpLimits(ctx.config())));
}

namespace {

void Dump(CommandContext& ctx, Args& argv, std::string* out) {
  auto payload = DumpKey(ctx, argv[1], ReplyRoom(ctx, *out));
  if (!payload.ok()) {
    if (ReplyOverBudget(ctx, *out, payload.status())) return;
    return AppendStatusError(out, payload.status());
  }
  if (!payload->has_value()) return AppendNull(out);
  if (ReplyOverBudget(ctx, *out, (*payload)->size())) return;
  AppendBulk(out, **payload);
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]: the
// checks in Redis's order (options, BUSYKEY, TTL, payload footer, payload body).
void Restore(CommandContext& ctx, Args& argv, std::string* out) {
  bool replace = false, absttl = false;
  int64_t idle = -1, freq = -1;
  for (size_t j = 4; j < argv.size(); ++j) {
    const bool more = j + 1 < argv.size();
    if (Is(argv[j], "REPLACE")) {
      replace = true;
    } else if (Is(argv[j], "ABSTTL")) {
      absttl = true;
    } else if (Is(argv[j], "IDLETIME") && more && freq == -1) {
      if (!ParseInteger(argv[j + 1], &idle)) return out->append(kReplyNotInteger), void();
      if (idle < 0) return AppendError(out, "ERR Invalid IDLETIME value, must be >= 0");
      ++j;
    } else if (Is(argv[j], "FREQ") && more && idle == -1) {
      if (!ParseInteger(argv[j + 1], &freq)) return out->append(kReplyNotInteger), void();
      if (freq < 0 || freq > 255) {
        return AppendError(out, "ERR Invalid FREQ value, must be >= 0 and <= 255");
      }
      ++j;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  const std::string& key = argv[1];
  if (!replace) {
    auto exists = ctx.store->Exists({std::string_view(key)});
    if (!exists.ok()) return AppendStatusError(out, exists.status());
    if (*exists > 0) return AppendError(out, "BUSYKEY Target key name already exists.");
  }
  int64_t ttl = 0;
  if (!ParseInteger(argv[2], &ttl)) return out->append(kReplyNotInteger), void();
  if (ttl < 0) return AppendError(out, "ERR Invalid TTL value, must be >= 0");
  std::string_view body;
  if (!rdb::CheckFooter(argv[3], &body)) {
    return AppendError(out, "ERR DUMP payload version or checksum are wrong");
  }
  storage::KeyValue value;
  if (!rdb::DecodeObject(body, &value)) return AppendError(out, "ERR Bad data format");
  const int64_t now = NowUnixMs();
  if (ttl > 0 && !absttl) ttl = ttl > INT64_MAX - now ? INT64_MAX : ttl + now;
  if (ttl > 0 && ttl <= now) {
    // Already expired: Redis drops the value (and, with REPLACE, the key it replaces).
    if (replace) {
      auto removed = ctx.store->Del({std::string_view(key)});
      if (!removed.ok()) return AppendStatusError(out, removed.status());
      if (*removed > 0) NotifyKeyspaceEvent(ctx, kNotifyGeneric, "del", key);
    }
    return out->append(kReplyOk), void();
  }
  value.expire_at_ms = ttl;
  auto written = ctx.store->WriteValue(key, value, replace);
  if (!written.ok()) return AppendStatusError(out, written.status());
  if (!*written) return AppendError(out, "BUSYKEY Target key name already exists.");
  NotifyKeyspaceEvent(ctx, kNotifyGeneric, "restore", key);
  out->append(kReplyOk);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kDumpCommands = {
    {"dump", 2, kReadOnly, 1, 1, 1, Dump},
    {"restore", -4, kWrite, 1, 1, 1, Restore},
};
// clang-format on

}  // namespace rockcache::server
