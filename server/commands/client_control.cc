#include "server/commands/client_control.h"

#include <chrono>

#include "server/client_pause.h"
#include "server/clock.h"
#include "server/commands/args.h"
#include "server/connection.h"
#include "server/protocol/reply.h"

namespace rockcache::server {
namespace {

// CLIENT REPLY ON|OFF|SKIP. OFF and SKIP answer nothing themselves (their own reply is the
// first one dropped); ON answers +OK, and clears a SKIP given just before it, as Redis.
void ClientReply(Connection& conn, const std::string& mode, std::string* out) {
  if (Is(mode, "ON")) {
    conn.reply.off = false;
    conn.reply.skip = false;
    conn.reply.skip_next = false;
    out->append(kReplyOk);
  } else if (Is(mode, "OFF")) {
    conn.reply.off = true;
  } else if (Is(mode, "SKIP")) {
    if (!conn.reply.off) conn.reply.skip_next = true;
  } else {
    out->append(kReplySyntaxError);
  }
}

// CLIENT PAUSE timeout [WRITE|ALL], Redis 7.0's checks and errors.
void ClientPauseCommand(ClientPause* pause, Args& argv, std::string* out) {
  if (argv.size() < 3) {
    return AppendError(out, "ERR wrong number of arguments for 'client|pause' command");
  }
  if (argv.size() > 4) {
    return AppendError(
        out, "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.");
  }
  int64_t timeout = 0;
  if (!ParseInteger(argv[2], &timeout)) {
    return AppendError(out, "ERR timeout is not an integer or out of range");
  }
  if (timeout < 0) return AppendError(out, "ERR timeout is negative");
  PauseMode mode = PauseMode::kAll;
  if (argv.size() == 4) {
    if (Is(argv[3], "WRITE")) {
      mode = PauseMode::kWrite;
    } else if (!Is(argv[3], "ALL")) {
      return AppendError(out, "ERR CLIENT PAUSE mode must be WRITE or ALL");
    }
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  // A timeout past what a unix-ms clock can add is a pause with no end in practice.
  const int64_t end = timeout > INT64_MAX - now ? INT64_MAX : now + timeout;
  pause->Pause(PausePurpose::kClientCommand, now, end, mode);
  out->append(kReplyOk);
}

}  // namespace

bool ClientControlCommand(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  if (Is(sub, "REPLY")) {
    if (argv.size() != 3) {
      AppendError(out, "ERR wrong number of arguments for 'client|reply' command");
    } else {
      ClientReply(*ctx.conn, argv[2], out);
    }
    return true;
  }
  if (Is(sub, "PAUSE")) {
    ClientPauseCommand(&ctx.clients().pause(), argv, out);
    return true;
  }
  if (Is(sub, "UNPAUSE")) {
    if (argv.size() != 2) {
      AppendError(out, "ERR wrong number of arguments for 'client|unpause' command");
    } else {
      ctx.clients().pause().Unpause(PausePurpose::kClientCommand, NowUnixMs());
      out->append(kReplyOk);
    }
    return true;
  }
  return false;
}

}  // namespace rockcache::server
