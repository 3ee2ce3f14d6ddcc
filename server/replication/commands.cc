// The replication commands: REPLICAOF / SLAVEOF, ROLE, WAIT, and the link's own PSYNC / SYNC and
// REPLCONF (server/replication/replication.h describes the link).
#include <mutex>
#include <string>
#include <unordered_map>

#include "server/clock.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/connection.h"
#include "server/net_loop.h"
#include "server/protocol/reply.h"
#include "server/replication/replication.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// What REPLCONF told about a connection before its PSYNC (listening-port, ip-address), by
// connection id. Bounded: a connection that never sends PSYNC leaves at most one entry, and
// the table is cleared when it grows past kMaxPending.
struct PendingReplica {
  int port = 0;
  std::string ip;
  uint32_t event_classes = 0;  // rc-events
};
constexpr size_t kMaxPending = 1024;
std::mutex pending_mu;
std::unordered_map<uint64_t, PendingReplica> pending_replicas;

// REPLICAOF host port | NO ONE (and SLAVEOF). Worker thread: may wait for a batch being applied.
void ReplicaOf(CommandContext& ctx, Args& argv, std::string* out) {
  replication::Replication& repl = ctx.replication();
  if (Is(argv[1], "no") && Is(argv[2], "one")) {
    repl.BecomePrimary();
    return out->append(kReplyOk), void();
  }
  int64_t port = 0;
  if (!ParseInteger(argv[2], &port) || port < 0 || port > 65535) {
    return AppendError(out, "ERR Invalid master port");
  }
  const bool same = repl.is_replica() && repl.LinkInfo().host == argv[1] &&
                    repl.LinkInfo().port == static_cast<int>(port);
  if (same) return AppendSimple(out, "OK Already connected to specified master");
  if (Status s = repl.BecomeReplicaOf(argv[1], static_cast<int>(port)); !s.ok()) {
    return AppendError(out, "ERR " + s.message());
  }
  out->append(kReplyOk);
}

// ROLE: ["master", offset, [[ip, port, offset]...]] or ["slave", host, port, state, offset].
void Role(CommandContext& ctx, Args&, std::string* out) {
  replication::Replication& repl = ctx.replication();
  if (!repl.is_replica()) {
    const auto replicas = repl.Replicas();
    AppendArrayHeader(out, 3);
    AppendBulk(out, "master");
    AppendInteger(out, static_cast<int64_t>(repl.Offset()));
    AppendArrayHeader(out, static_cast<int64_t>(replicas.size()));
    for (const auto& r : replicas) {
      AppendArrayHeader(out, 3);
      AppendBulk(out, r.ip);
      AppendBulk(out, std::to_string(r.port));
      AppendBulk(out, std::to_string(r.ack_offset));
    }
    return;
  }
  const replication::ReplicaLinkInfo link = repl.LinkInfo();
  AppendArrayHeader(out, 5);
  AppendBulk(out, "slave");
  AppendBulk(out, link.host);
  AppendInteger(out, link.port);
  AppendBulk(out, link.link_up ? "connected" : link.sync_in_progress ? "sync" : "connect");
  AppendInteger(out, link.link_up || link.offset > 0 ? static_cast<int64_t>(link.offset) : -1);
}

// WAIT numreplicas timeout. Network thread (kConnection: nothing of the client is in flight,
// so its writes are committed): answers at once when enough replicas acknowledged the last
// committed offset, else the client waits, parsing nothing, for Replication to post the reply.
void Wait(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t replicas = 0, timeout = 0;
  if (!ParseInteger(argv[1], &replicas)) return out->append(kReplyNotInteger), void();
  if (!ParseInteger(argv[2], &timeout)) {
    return AppendError(out, "ERR timeout is not an integer or out of range");
  }
  if (timeout < 0) return AppendError(out, "ERR timeout is negative");
  replication::Replication& repl = ctx.replication();
  if (repl.is_replica()) {
    return AppendError(out, "ERR WAIT cannot be used with replica instances.");
  }
  const uint64_t offset = repl.Offset();  // a primary's: the store's latest WAL sequence
  const int64_t acked = repl.CountAcked(offset);
  if (acked >= replicas || ctx.in_exec) return AppendInteger(out, acked);
  ctx.conn->in_flight = true;  // the reply comes through the loop's completion queue
  repl.AddAckWaiter(ctx.conn->loop->index(), ctx.conn->info, offset, replicas,
                    timeout == 0 ? 0 : NowUnixMs() + timeout);
}

// REPLCONF listening-port <port> | ip-address <ip> | capa <...> | ack <offset> | getack.
// Network thread of the replica's connection (before its PSYNC).
void ReplConf(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() % 2 == 0) return out->append(kReplySyntaxError), void();
  for (size_t i = 1; i + 1 < argv.size(); i += 2) {
    if (Is(argv[i], "listening-port")) {
      int64_t port = 0;
      if (!ParseInteger(argv[i + 1], &port) || port < 0 || port > 65535) {
        return AppendError(out, "ERR Invalid listening port");
      }
      std::lock_guard<std::mutex> lock(pending_mu);
      if (pending_replicas.size() > kMaxPending) pending_replicas.clear();
      pending_replicas[ctx.conn->id].port = static_cast<int>(port);
    } else if (Is(argv[i], "ip-address")) {
      std::lock_guard<std::mutex> lock(pending_mu);
      if (pending_replicas.size() > kMaxPending) pending_replicas.clear();
      pending_replicas[ctx.conn->id].ip = argv[i + 1];
    } else if (Is(argv[i], "rc-events")) {
      int64_t classes = 0;
      if (!ParseInteger(argv[i + 1], &classes) || classes < 0 || classes > UINT32_MAX) {
        return AppendError(out, "ERR Invalid rc-events");
      }
      std::lock_guard<std::mutex> lock(pending_mu);
      if (pending_replicas.size() > kMaxPending) pending_replicas.clear();
      pending_replicas[ctx.conn->id].event_classes = static_cast<uint32_t>(classes);
    } else if (Is(argv[i], "ack") || Is(argv[i], "getack")) {
      return;  // only meaningful on an established link, which the sender reads itself
    } else if (!Is(argv[i], "capa") && !Is(argv[i], "rdb-only") &&
               !Is(argv[i], "rdb-filter-only")) {
      return AppendError(out, "ERR Unrecognized REPLCONF option: " + argv[i]);
    }
  }
  out->append(kReplyOk);
}

// PSYNC replid offset (and SYNC): hands the connection to a replication sender.
void PSync(CommandContext& ctx, Args& argv, std::string* out) {
  Connection* conn = ctx.conn;
  if (conn->output.size() > conn->output_pos) {
    return AppendError(out, "ERR PSYNC with replies still unsent");
  }
  if (conn->tx_multi()) return AppendError(out, "ERR Replica can't interact with the keyspace");
  std::string replid = "?";
  int64_t from = -1;
  if (argv.size() >= 3) {
    replid = argv[1];
    if (!ParseInteger(argv[2], &from)) return out->append(kReplyNotInteger), void();
  }
  std::string error;
  if (argv.size() >= 4 && Is(argv[3], "failover")) {
    // FAILOVER: our primary hands over to us; we take over before serving it.
    if (!ctx.replication().TakeOverForFailover(replid, &error)) return AppendError(out, error);
  }
  PendingReplica pending;
  {
    std::lock_guard<std::mutex> lock(pending_mu);
    if (auto it = pending_replicas.find(conn->id); it != pending_replicas.end()) {
      pending = it->second;
      pending_replicas.erase(it);
    }
  }
  replication::ReplicaPeer peer;
  peer.client_id = conn->id;
  peer.addr = conn->info->addr;
  peer.laddr = conn->info->laddr;
  peer.listening_port = pending.port;
  peer.announced_ip = pending.ip;
  peer.event_classes = pending.event_classes;
  peer.after_full_sync = argv.size() >= 4 && Is(argv[3], "rc-resume");
  if (!ctx.replication().StartSender(conn->fd, peer, replid, from, &error)) {
    return AppendError(out, error);
  }
  // The sender owns a dup of the socket now; this connection ends without another byte.
  conn->close_after_reply = true;
}

// FAILOVER [TO host port [FORCE]] [TIMEOUT ms] [ABORT] (Redis 7.0). Worker thread.
void Failover(CommandContext& ctx, Args& argv, std::string* out) {
  std::string host;
  int64_t port = 0, timeout = 0;
  bool to = false, force = false, abort = false;
  for (size_t j = 1; j < argv.size(); ++j) {
    if (Is(argv[j], "to") && !to && j + 2 < argv.size()) {
      to = true;
      host = argv[j + 1];
      if (!ParseInteger(argv[j + 2], &port)) return out->append(kReplyNotInteger), void();
      j += 2;
    } else if (Is(argv[j], "timeout") && timeout <= 0 && j + 1 < argv.size()) {
      if (!ParseInteger(argv[j + 1], &timeout)) return out->append(kReplyNotInteger), void();
      if (timeout <= 0) return AppendError(out, "ERR FAILOVER timeout must be greater than 0");
      ++j;
    } else if (Is(argv[j], "force") && !force) {
      force = true;
    } else if (Is(argv[j], "abort") && !abort) {
      abort = true;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  if (abort && (to || force || timeout > 0)) return out->append(kReplySyntaxError), void();
  if (to && (port <= 0 || port > 65535)) port = -1;  // matches no replica
  const std::string error =
      ctx.replication().StartFailover(host, to ? static_cast<int>(port) : 0, force, timeout, abort);
  if (!error.empty()) return AppendError(out, error);
  out->append(kReplyOk);
}

}  // namespace

const std::vector<CommandSpec> kReplicationCommands = {
    {"replicaof", 3, kAdmin, 0, 0, 0, ReplicaOf},
    {"slaveof", 3, kAdmin, 0, 0, 0, ReplicaOf},
    {"role", 1, kFast, 0, 0, 0, Role},
    {"wait", 3, kConnection, 0, 0, 0, Wait},
    {"replconf", -1, kConnection | kAdmin, 0, 0, 0, ReplConf},
    {"psync", -3, kConnection | kAdmin, 0, 0, 0, PSync},
    {"sync", 1, kConnection | kAdmin, 0, 0, 0, PSync},
    {"failover", -1, kAdmin, 0, 0, 0, Failover},
};

}  // namespace rockcache::server
