// CLIENT TRACKING and its companions (CACHING, GETREDIR, TRACKINGINFO), and the two hooks the
// network loop calls for a tracking connection. Network thread only.
#pragma once

#include <string>

#include "server/commands/command.h"

namespace rockcache::server {

class Tracking;
struct Connection;

// Runs CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO and returns true; false for any other
// CLIENT subcommand (nothing appended).
bool ClientTrackingCommand(CommandContext& ctx, Args& argv, std::string* out);

// Tracking off for `conn` (CLIENT TRACKING OFF, RESET, close).
void DisableTracking(Tracking& tracking, Connection* conn);

// Before a command of a tracking connection runs: a read in default mode records its keys
// (OPTIN: only after CLIENT CACHING YES; OPTOUT: unless after CLIENT CACHING NO), and any command
// but CLIENT CACHING uses up the CACHING answer. True for a script (EVAL, FCALL...) whose reads
// are to be recorded the same way: the keys its read-only redis.call commands read, as Redis
// (the worker records them, Tracking::ReaderScope).
bool NoteTrackedRead(Tracking& tracking, Connection* conn, const CommandSpec& spec,
                     const Args& argv);

}  // namespace rockcache::server
