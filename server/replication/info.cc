// INFO replication: Redis's field names and formats, which Sentinel parses (sentinel.c,
// sentinelRefreshInstanceInfo): role, connected_slaves, slaveN:ip=,port=,state=,offset=,lag=,
// master_host, master_port, master_link_status, master_last_io_seconds_ago,
// master_sync_in_progress, slave_repl_offset, slave_priority, slave_read_only,
// replica_announced, master_link_down_since_seconds, master_replid, master_repl_offset,
// master_replid2 and second_repl_offset (the history a promoted server continues).
#include <string>

#include "config/config.h"
#include "server/replication/replication.h"
#include "server/server.h"

namespace rockcache::server::replication {
namespace {

void Line(std::string* out, const std::string& name, const std::string& value) {
  out->append(name);
  out->push_back(':');
  out->append(value);
  out->append("\r\n");
}

}  // namespace

void AppendReplicationInfo(Server& server, std::string* out) {
  Replication& repl = server.replication();
  config::Config& config = server.config();
  const int64_t now = NowUnixMs();
  const bool replica = repl.is_replica();
  Line(out, "role", replica ? "slave" : "master");
  uint64_t offset = repl.Offset();
  if (replica) {
    const ReplicaLinkInfo link = repl.LinkInfo();
    Line(out, "master_host", link.host);
    Line(out, "master_port", std::to_string(link.port));
    Line(out, "master_link_status", link.link_up ? "up" : "down");
    Line(out, "master_last_io_seconds_ago",
         link.last_io_ms == 0 ? "-1" : std::to_string((now - link.last_io_ms) / 1000));
    Line(out, "master_sync_in_progress", link.sync_in_progress ? "1" : "0");
    Line(out, "slave_read_repl_offset", std::to_string(link.offset));
    Line(out, "slave_repl_offset", std::to_string(link.offset));
    if (!link.link_up) {
      Line(out, "master_link_down_since_seconds",
           link.link_down_since_ms == 0 ? "-1"
                                        : std::to_string((now - link.link_down_since_ms) / 1000));
    }
    Line(out, "slave_priority", config.Get("replica-priority"));
    Line(out, "slave_read_only", config.GetBool("replica-read-only") ? "1" : "0");
    Line(out, "replica_announced", config.GetBool("replica-announced") ? "1" : "0");
  }
  const auto replicas = repl.Replicas();
  Line(out, "connected_slaves", std::to_string(replicas.size()));
  for (size_t i = 0; i < replicas.size(); ++i) {
    const ReplicaInfo& r = replicas[i];
    Line(out, "slave" + std::to_string(i),
         "ip=" + r.ip + ",port=" + std::to_string(r.port) + ",state=" + r.state +
             ",offset=" + std::to_string(r.ack_offset) +
             ",lag=" + std::to_string(r.last_ack_ms == 0 ? 0 : (now - r.last_ack_ms) / 1000));
  }
  if (!replica && config.GetInt("min-replicas-to-write") > 0 &&
      config.GetInt("min-replicas-max-lag") > 0) {
    Line(out, "min_slaves_good_slaves", std::to_string(repl.GoodReplicas()));
  }
  Line(out, "master_failover_state", repl.FailoverState());
  Line(out, "master_replid", repl.replid());
  const auto [replid2, second_offset] = repl.PreviousHistory();
  Line(out, "master_replid2", replid2.empty() ? std::string(40, '0') : replid2);
  Line(out, "master_repl_offset", std::to_string(offset));
  Line(out, "second_repl_offset", replid2.empty() ? "-1" : std::to_string(second_offset));
  Line(out, "repl_backlog_active", "1");
  Line(out, "repl_backlog_size", config.Get("repl-wal-size-limit"));
  Line(out, "repl_backlog_first_byte_offset", "1");
  Line(out, "repl_backlog_histlen", std::to_string(offset));
}

}  // namespace rockcache::server::replication
