// CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO: a connection's client-side caching mode
// (server/tracking/tracking.h keeps the server's side). Network thread (kConnection).
#include "server/commands/client_tracking.h"

#include <string>
#include <vector>

#include "server/client_registry.h"
#include "server/commands/args.h"
#include "server/connection.h"
#include "server/protocol/reply.h"
#include "server/tracking/tracking.h"

namespace rockcache::server {
namespace {

void TrackingOn(CommandContext& ctx, const Args& argv, std::string* out) {
  Connection& conn = *ctx.conn;
  TrackingOptions options;
  for (size_t i = 3; i < argv.size(); ++i) {
    const bool more = i + 1 < argv.size();
    if (Is(argv[i], "REDIRECT") && more) {
      int64_t id = 0;
      if (!ParseInteger(argv[++i], &id)) return out->append(kReplyNotInteger), void();
      if (id != static_cast<int64_t>(conn.id) &&
          ctx.clients().Find(static_cast<uint64_t>(id)) == nullptr) {
        return AppendError(out, "ERR The client ID you want redirect to does not exist");
      }
      options.redirect = static_cast<uint64_t>(id) == conn.id ? 0 : static_cast<uint64_t>(id);
    } else if (Is(argv[i], "PREFIX") && more) {
      options.prefixes.push_back(argv[++i]);
    } else if (Is(argv[i], "BCAST")) {
      options.bcast = true;
    } else if (Is(argv[i], "OPTIN")) {
      options.optin = true;
    } else if (Is(argv[i], "OPTOUT")) {
      options.optout = true;
    } else if (Is(argv[i], "NOLOOP")) {
      options.noloop = true;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  if (!options.bcast && !options.prefixes.empty()) {
    return AppendError(out, "ERR PREFIX option requires BCAST mode to be enabled");
  }
  if (options.optin && options.optout) {
    return AppendError(out, "ERR You can't specify both OPTIN mode and OPTOUT mode");
  }
  if (options.bcast && (options.optin || options.optout)) {
    return AppendError(out, "ERR OPTIN and OPTOUT are not compatible with BCAST");
  }
  for (size_t a = 0; a < options.prefixes.size(); ++a) {
    for (size_t b = 0; b < options.prefixes.size(); ++b) {
      const std::string& pa = options.prefixes[a];
      const std::string& pb = options.prefixes[b];
      if (a != b && pb.compare(0, pa.size(), pa) == 0) {
        std::string error = "ERR Prefix '";
        error += pa;
        error += "' overlaps with another provided prefix '";
        error += pb;
        error += "'. Prefixes for a single client must not overlap.";
        return AppendError(out, error);
      }
    }
  }
  if (conn.tracking.on && (conn.tracking.bcast != options.bcast)) {
    return AppendError(out,
                       "ERR You can't switch BCAST mode on/off before disabling tracking for this "
                       "client, and then re-enabling it with a different mode.");
  }
  conn.tracking.on = true;
  conn.tracking.bcast = options.bcast;
  conn.tracking.optin = options.optin;
  conn.tracking.optout = options.optout;
  conn.tracking.caching = -1;
  ctx.tracking().Enable(conn.id, conn.info->loop_index, std::move(options));
  out->append(kReplyOk);
}

void TrackingInfo(CommandContext& ctx, std::string* out) {
  const Connection& conn = *ctx.conn;
  TrackingOptions options;
  bool broken_redirect = false;
  const bool on = conn.tracking.on && ctx.tracking().Options(conn.id, &options, &broken_redirect);
  std::vector<std::string> flags;
  if (!on) {
    flags.push_back("off");
  } else {
    flags.push_back("on");
    if (options.bcast) flags.push_back("bcast");
    if (options.optin) flags.push_back("optin");
    if (options.optout) flags.push_back("optout");
    if (conn.tracking.caching == 1) flags.push_back("caching-yes");
    if (conn.tracking.caching == 0) flags.push_back("caching-no");
    if (options.noloop) flags.push_back("noloop");
    if (broken_redirect) flags.push_back("broken_redirect");
  }
  AppendMapHeader(out, 3);
  AppendBulk(out, "flags");
  AppendSetHeader(out, static_cast<int64_t>(flags.size()));
  for (const std::string& flag : flags) AppendBulk(out, flag);
  AppendBulk(out, "redirect");
  AppendInteger(out, on ? static_cast<int64_t>(options.redirect) : -1);
  AppendBulk(out, "prefixes");
  AppendArrayHeader(out, static_cast<int64_t>(options.prefixes.size()));
  for (const std::string& prefix : options.prefixes) AppendBulk(out, prefix);
}

}  // namespace

bool ClientTrackingCommand(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  Connection& conn = *ctx.conn;
  if (Is(sub, "TRACKING") && argv.size() >= 3) {
    if (Is(argv[2], "ON")) {
      TrackingOn(ctx, argv, out);
    } else if (Is(argv[2], "OFF") && argv.size() == 3) {
      DisableTracking(ctx.tracking(), &conn);
      out->append(kReplyOk);
    } else {
      out->append(kReplySyntaxError);
    }
    return true;
  }
  if (Is(sub, "CACHING") && argv.size() == 3) {
    if (!conn.tracking.on || !(conn.tracking.optin || conn.tracking.optout)) {
      AppendError(out,
                  "ERR CLIENT CACHING can be called only when the client is in tracking mode "
                  "with OPTIN or OPTOUT mode enabled");
    } else if (Is(argv[2], "YES")) {
      if (!conn.tracking.optin) {
        AppendError(out,
                    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
      } else {
        conn.tracking.caching = 1;
        out->append(kReplyOk);
      }
    } else if (Is(argv[2], "NO")) {
      if (!conn.tracking.optout) {
        AppendError(out,
                    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
      } else {
        conn.tracking.caching = 0;
        out->append(kReplyOk);
      }
    } else {
      out->append(kReplySyntaxError);
    }
    return true;
  }
  if (Is(sub, "GETREDIR") && argv.size() == 2) {
    TrackingOptions options;
    if (!conn.tracking.on || !ctx.tracking().Options(conn.id, &options)) {
      AppendInteger(out, -1);
    } else {
      AppendInteger(out, static_cast<int64_t>(options.redirect));
    }
    return true;
  }
  if (Is(sub, "TRACKINGINFO") && argv.size() == 2) {
    TrackingInfo(ctx, out);
    conn.tracking.caching = -1;
    return true;
  }
  return false;
}

void DisableTracking(Tracking& tracking, Connection* conn) {
  if (!conn->tracking.on) return;
  conn->tracking = Connection::TrackingState{};
  tracking.Disable(conn->id);
}

bool NoteTrackedRead(Tracking& registry, Connection* conn, const CommandSpec& spec,
                     const Args& argv) {
  Connection::TrackingState& tracking = conn->tracking;
  // CLIENT CACHING sets the answer; CLIENT TRACKINGINFO shows it and uses it up itself (Redis
  // clears it after the command that follows CACHING has run).
  if (argv.size() >= 2 && std::string_view(spec.name) == "client" &&
      (Is(argv[1], "CACHING") || Is(argv[1], "TRACKINGINFO"))) {
    return false;
  }
  const int caching = tracking.caching;
  tracking.caching = -1;  // CLIENT CACHING applies to the next command only
  if (tracking.bcast) return false;
  if (tracking.optin && caching != 1) return false;
  if (tracking.optout && caching == 0) return false;
  if (spec.flags & kScript) return true;  // its reads record as they run
  if (!(spec.flags & kReadOnly)) return false;
  const std::vector<std::string_view> keys = CommandKeys(spec, argv);
  if (!keys.empty()) registry.Record(conn->id, keys);
  return false;
}

}  // namespace rockcache::server
