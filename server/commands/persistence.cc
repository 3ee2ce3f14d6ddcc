// Persistence commands: BGSAVE, SAVE, LASTSAVE (server/persistence/checkpoints.h).
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/metrics/info.h"
#include "server/persistence/checkpoints.h"
#include "server/protocol/reply.h"
#include "server/server_admin.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

constexpr const char* kSaveInProgress = "ERR Background save already in progress";
// Both are "noscript" in Redis 7.0: a script's redis.call gets this error.
constexpr const char* kNotFromScript = "ERR This Redis command is not allowed from script";

// BGSAVE [SCHEDULE]: as Redis 7.0 (SCHEDULE only matters beside an AOF rewrite, which never
// runs here). Inside EXEC it answers "scheduled", as Redis; the checkpoint starts at once and
// holds all of the transaction's writes or none (they commit as one WriteBatch).
void BgSave(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 2 || (argv.size() == 2 && !Is(argv[1], "SCHEDULE"))) {
    return out->append(kReplySyntaxError), void();
  }
  if (ctx.in_script) return AppendError(out, kNotFromScript);
  // The writes before BGSAVE in this group commit first, so the checkpoint holds them (inside
  // EXEC this commits nothing: the transaction stays one WriteBatch).
  if (Status s = ctx.store->FlushThreadWriteGroup(); !s.ok()) return AppendStatusError(out, s);
  switch (ctx.admin().checkpoints().StartBackground(ctx.admin().WritesProcessed())) {
    case Checkpoints::Start::kStarted:
      return AppendSimple(
          out, ctx.in_exec ? "Background saving scheduled" : "Background saving started");
    case Checkpoints::Start::kInProgress:
      return AppendError(out, kSaveInProgress);
    case Checkpoints::Start::kStopped:
      return AppendError(out, "ERR The server is shutting down");
  }
}

void Save(CommandContext& ctx, Args&, std::string* out) {
  if (ctx.in_script) return AppendError(out, kNotFromScript);
  if (Status s = ctx.store->FlushThreadWriteGroup(); !s.ok()) return AppendStatusError(out, s);
  Status s = ctx.admin().checkpoints().SaveBlocking(ctx.admin().WritesProcessed());
  if (s.ok()) return out->append(kReplyOk), void();
  if (s.code() == Status::Code::kBusy) return AppendError(out, kSaveInProgress);
  AppendStatusError(out, s);
}

void LastSave(CommandContext& ctx, Args&, std::string* out) {
  AppendInteger(out, ctx.admin().checkpoints().LastSaveUnix());
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kPersistenceCommands = {
    {"bgsave", -1, kAdmin, 0, 0, 0, BgSave},
    {"save", 1, kAdmin, 0, 0, 0, Save},
    {"lastsave", 1, kAnywhere | kFast, 0, 0, 0, LastSave},
};
// clang-format on

}  // namespace rockcache::server
