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
// but CLIENT CACHING uses up the CACHING answer.
void NoteTrackedRead(Tracking& tracking, Connection* conn, const CommandSpec& spec,
                     const Args& argv);

}  // namespace rockcache::server
