// A primary's guards and views of its replicas: min-replicas-to-write / min-replicas-max-lag
// (-NOREPLICAS, INFO min_slaves_good_slaves).
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/replication_helpers.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using namespace rockcache::testing;
using rockcache::testing::replication::Field;
using rockcache::testing::replication::ReplicaArgs;
using rockcache::testing::replication::WaitCaughtUp;

TEST_CASE("min-replicas-to-write refuses writes without enough acknowledging replicas",
          "[replication]") {
  TestServer primary({"--min-replicas-to-write", "1", "--min-replicas-max-lag", "2"});
  Client p(primary.port());
  const std::string refused = "err:NOREPLICAS Not enough good replicas to write.";
  CHECK(Run(p, {"SET", "k", "v"}) == refused);
  CHECK(Run(p, {"GET", "k"}) == "nil");  // reads are not refused
  CHECK(Run(p, {"EVAL", "return redis.call('SET', 'k', 'v')", "0"}) ==
        refused + " script: 5c4d62f4e30c54fb15935b5892148e5ce7374077, on @user_script:1.");
  CHECK(Run(p, {"FUNCTION", "LOAD",
                "#!lua name=x\nredis.register_function('f', function() "
                "return 1 end)"}) == refused);
  CHECK(Field(p, "min_slaves_good_slaves") == "0");

  auto replica = std::make_unique<TestServer>(ReplicaArgs(primary));
  Client r(replica->port());
  REQUIRE(WaitCaughtUp(p, r, primary, *replica));
  bool accepted = false;
  for (int i = 0; i < 100 && !accepted; ++i) {
    accepted = Run(p, {"SET", "k", "v"}) == "status:OK";
    if (!accepted) SleepMs(50);
  }
  CHECK(accepted);
  CHECK(Field(p, "min_slaves_good_slaves") == "1");

  // The replica goes away: once its last acknowledgement is older than the lag, writes stop.
  replica.reset();
  bool refusing = false;
  for (int i = 0; i < 200 && !refusing; ++i) {
    refusing = Run(p, {"SET", "k", "w"}) == refused;
    if (!refusing) SleepMs(50);
  }
  CHECK(refusing);
  CHECK(Run(p, {"GET", "k"}) != "nil");
  REQUIRE(Run(p, {"CONFIG", "SET", "min-replicas-to-write", "0"}) == "status:OK");
  CHECK(Run(p, {"SET", "k", "x"}) == "status:OK");
  CHECK(Field(p, "min_slaves_good_slaves").empty());  // shown only while the check is on
}

TEST_CASE("CLIENT LIST shows the replication links: S on the primary, M on the replica",
          "[replication]") {
  TestServer primary;
  TestServer replica(ReplicaArgs(primary));
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  const std::string replicas = Str(p.Command({"CLIENT", "LIST", "TYPE", "replica"}));
  CHECK(Contains(replicas, " flags=S "));
  CHECK(Contains(replicas, " cmd=replconf "));
  CHECK(Str(p.Command({"CLIENT", "LIST", "TYPE", "slave"})) == replicas);
  CHECK(Contains(Str(p.Command({"CLIENT", "LIST"})), " flags=S "));
  CHECK(Str(p.Command({"CLIENT", "LIST", "TYPE", "master"})).empty());
  CHECK(!Contains(Str(p.Command({"CLIENT", "LIST", "TYPE", "normal"})), " flags=S "));

  const std::string master = Str(r.Command({"CLIENT", "LIST", "TYPE", "master"}));
  CHECK(Contains(master, " addr=127.0.0.1:" + std::to_string(primary.port()) + " "));
  CHECK(Contains(master, " flags=M "));
  CHECK(Str(r.Command({"CLIENT", "LIST", "TYPE", "replica"})).empty());
  // CLIENT LIST ID finds the link by its id.
  const std::string id = master.substr(3, master.find(' ') - 3);
  CHECK(Contains(Str(r.Command({"CLIENT", "LIST", "ID", id})), " flags=M "));
}

TEST_CASE("a replica that stops reading is cut off by the replica class of the output limits",
          "[replication][hostile]") {
  TestServer primary({"--client-output-buffer-limit", "replica 4mb 0 0"});
  Client p(primary.port());
  REQUIRE(Run(p, {"SET", "k", "v"}) == "status:OK");
  const std::string replid = Field(p, "master_replid");
  const std::string next = std::to_string(std::stoull(Field(p, "master_repl_offset")) + 1);
  // A replica that continues from the primary's position and then never reads again.
  RawConnection stalled(primary.port());
  stalled.Send(Resp({"REPLCONF", "listening-port", "1"}));
  REQUIRE(stalled.ReadExactly(5) == "+OK\r\n");
  stalled.Send(Resp({"PSYNC", replid, next}));
  REQUIRE(stalled.ReadExactly(52) == "+CONTINUE " + replid + "\r\n");
  REQUIRE(Field(p, "connected_slaves") == "1");
  const std::string value(1 << 20, 'x');
  bool cut = false;
  for (int i = 0; i < 200 && !cut; ++i) {
    REQUIRE(Run(p, {"SET", "big:" + std::to_string(i % 16), value}) == "status:OK");
    cut = Field(p, "connected_slaves") == "0";
  }
  CHECK(cut);
  CHECK(Contains(primary.Log(), "for overcoming of output buffer limits"));
}

TEST_CASE("INFO replication of a replica has Redis 7.0's fields, in its order", "[replication]") {
  TestServer primary;
  TestServer replica(ReplicaArgs(primary));
  Client p(primary.port());
  Client r(replica.port());
  REQUIRE(WaitCaughtUp(p, r, primary, replica));
  const std::string text = InfoText(r, "replication");
  // The fields redis-server 7.0.15 prints for a connected replica, in its order.
  const std::vector<std::string> fields = {"role",
                                           "master_host",
                                           "master_port",
                                           "master_link_status",
                                           "master_last_io_seconds_ago",
                                           "master_sync_in_progress",
                                           "slave_read_repl_offset",
                                           "slave_repl_offset",
                                           "slave_priority",
                                           "slave_read_only",
                                           "replica_announced",
                                           "connected_slaves",
                                           "master_failover_state",
                                           "master_replid",
                                           "master_replid2",
                                           "master_repl_offset",
                                           "second_repl_offset",
                                           "repl_backlog_active",
                                           "repl_backlog_size",
                                           "repl_backlog_first_byte_offset",
                                           "repl_backlog_histlen"};
  size_t at = 0;
  for (const auto& field : fields) {
    const size_t found = text.find("\r\n" + field + ":", at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found + 1;
  }
}
