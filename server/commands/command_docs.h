// What command_docs.cc's copy of Redis's command table (command_meta.inc) tells beyond COMMAND
// INFO / DOCS. Pure, any thread.
#pragma once

#include <string_view>

#include "server/commands/command.h"

namespace rockcache::server {

// Whether subcommand `sub` of container `spec` writes by Redis's command table (FUNCTION LOAD,
// DELETE, FLUSH, RESTORE): the check of a read-only replica, which the container's own flags
// cannot make.
bool SubcommandWrites(const CommandSpec& spec, std::string_view sub);

}  // namespace rockcache::server
