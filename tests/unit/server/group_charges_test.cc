#include "server/group_charges.h"

#include <catch2/catch.hpp>

using rockcache::server::GroupCharges;

TEST_CASE("a group charges each client its own commands and its part of the commit",
          "[group-charges]") {
  // Four clients, one SET each (10 us of command each), then one commit of the four SETs that
  // took 4 ms: each client is charged 1 ms of it, the last one to run included.
  GroupCharges charges(4);
  uint64_t t = 0;
  for (size_t b = 0; b < 4; ++b) {
    charges.ChargeTo(b, t);
    t += 10'000;
  }
  charges.Mark(t);
  t += 4'000'000;
  charges.Shared({0, 1, 2, 3}, t);
  charges.Finish(t);
  for (size_t b = 0; b < 4; ++b) CHECK(charges.spent()[b] == 10'000 + 1'000'000);
}

TEST_CASE("a commit is split by how many of its commands each client sent", "[group-charges]") {
  // Client 0 sent three writes, client 1 one; client 2 sent a read after the commit.
  GroupCharges charges(3);
  charges.ChargeTo(0, 0);
  charges.ChargeTo(1, 300);
  charges.Mark(400);
  charges.Shared({0, 0, 0, 1}, 400 + 8'000);
  charges.ChargeTo(2, 8'400 + 50);  // the 50 ns after the commit belong to client 1
  charges.Finish(8'450 + 700);
  CHECK(charges.spent()[0] == 300 + 6'000);
  CHECK(charges.spent()[1] == 100 + 2'000 + 50);
  CHECK(charges.spent()[2] == 700);
}

TEST_CASE("a commit with no write commands stays with the client being charged",
          "[group-charges]") {
  // A barrier command (EXEC) commits its own writes: pending is empty, so its client pays.
  GroupCharges charges(2);
  charges.ChargeTo(0, 0);
  charges.ChargeTo(1, 100);
  charges.Mark(200);
  charges.Shared({}, 5'200);
  charges.Finish(5'200);
  CHECK(charges.spent()[0] == 100);
  CHECK(charges.spent()[1] == 5'100);
  // Nothing is charged before the first ChargeTo.
  GroupCharges idle(1);
  idle.Mark(1'000);
  idle.Finish(2'000);
  CHECK(idle.spent()[0] == 0);
}
