// Replies shared by commands with subcommands (CLIENT, CONFIG, OBJECT, MEMORY, LATENCY, ...).
// Pure, any thread.
#pragma once

#include <initializer_list>
#include <string>

#include "server/commands/command.h"

namespace rockcache::server {

// The error for a subcommand that did not match: Redis 7 tells a known subcommand with the wrong
// number of arguments ("wrong number of arguments for 'client|setname' command") from an
// unknown one ("unknown subcommand 'foo'. Try CLIENT HELP."). REQUIRES: argv.size() >= 2.
void AppendSubcommandError(std::string* out, const Args& argv,
                           std::initializer_list<const char*> known);

// A HELP reply: the lines as an array of simple strings.
void AppendHelp(std::string* out, std::initializer_list<const char*> lines);

}  // namespace rockcache::server
