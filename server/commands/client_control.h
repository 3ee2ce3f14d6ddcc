// CLIENT REPLY ON|OFF|SKIP, CLIENT PAUSE timeout [WRITE|ALL], CLIENT UNPAUSE: the CLIENT
// subcommands that control when a connection's replies are sent and when clients' commands
// run. Network thread only (kConnection). The per-command effects live in the loop: dropped
// replies in ReplyGate (server/net_dispatch.cc), held commands in server/net_pause.cc.
#pragma once

#include <string>

#include "server/commands/command.h"

namespace rockcache::server {

// Runs CLIENT REPLY / PAUSE / UNPAUSE and returns true; false for any other CLIENT subcommand
// (nothing appended).
bool ClientControlCommand(CommandContext& ctx, Args& argv, std::string* out);

}  // namespace rockcache::server
