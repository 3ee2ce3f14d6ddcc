// Helpers of the replication tests: a replica's INFO fields, waiting until it caught up.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

namespace rockcache::testing::replication {

inline std::string Field(Client& c, const std::string& name) {
  return InfoFields(InfoText(c, "replication"))[name];
}

// INFO replication's fields, or an empty map when the server does not answer.
inline std::map<std::string, std::string> TryReplicationInfo(Client& c) {
  Reply reply;
  if (!c.TryCommand({"INFO", "replication"}, &reply) || reply.type != REDIS_REPLY_STRING) {
    return {};
  }
  return InfoFields(reply.str);
}

// Waits until the replica's link is up and it applied everything the primary has committed.
// On failure prints both servers' logs.
inline bool WaitCaughtUp(Client& primary, Client& replica, const TestServer& primary_server,
                         const TestServer& replica_server, int timeout_ms = 30000) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    auto r = TryReplicationInfo(replica);
    auto p = TryReplicationInfo(primary);
    if (r.empty() || p.empty()) break;
    if (r["master_link_status"] == "up" && r["slave_repl_offset"] == p["master_repl_offset"]) {
      return true;
    }
    SleepMs(50);
  }
  std::printf("---- primary log\n%s\n---- replica log\n%s\n", primary_server.Log().c_str(),
              replica_server.Log().c_str());
  return false;
}

inline std::vector<std::string> ReplicaArgs(const TestServer& primary) {
  return {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())};
}

}  // namespace rockcache::testing::replication
