// ClientPause (server/client_pause.h): CLIENT PAUSE and a FAILOVER's pause end on their own, and
// what is in effect is the strongest of those not ended.
#include "server/client_pause.h"

#include <catch2/catch.hpp>

namespace rockcache::server {
namespace {

TEST_CASE("CLIENT UNPAUSE ends the CLIENT PAUSE, not a FAILOVER's pause", "[pause]") {
  ClientPause pause;
  int resumes = 0;
  pause.set_resume_hook([&] { ++resumes; });
  CHECK(pause.Mode(1000) == PauseMode::kNone);
  pause.Pause(PausePurpose::kFailover, 1000, 100000, PauseMode::kWrite);
  pause.Pause(PausePurpose::kClientCommand, 1000, 5000, PauseMode::kAll);
  CHECK(pause.Mode(1001) == PauseMode::kAll);
  CHECK(pause.end_ms() == 5000);  // the loops look again when the ALL pause ends

  pause.Unpause(PausePurpose::kClientCommand, 2000);
  CHECK(resumes == 1);
  CHECK(pause.Mode(2000) == PauseMode::kWrite);
  CHECK(pause.end_ms() == 100000);

  pause.Unpause(PausePurpose::kFailover, 3000);
  CHECK(resumes == 2);
  CHECK(pause.Mode(3000) == PauseMode::kNone);
  CHECK_FALSE(pause.maybe_active());
}

TEST_CASE("A purpose's pause that ends first leaves the other's in effect", "[pause]") {
  ClientPause pause;
  pause.Pause(PausePurpose::kClientCommand, 0, 5000, PauseMode::kAll);
  pause.Pause(PausePurpose::kFailover, 0, 9000, PauseMode::kWrite);
  CHECK(pause.Mode(4999) == PauseMode::kAll);
  // Past the ALL pause's end, before anyone cleared it, and after.
  CHECK(pause.Mode(5000) == PauseMode::kWrite);
  pause.ClearIfEnded(5000);
  CHECK(pause.Mode(5000) == PauseMode::kWrite);
  CHECK(pause.end_ms() == 9000);
  CHECK(pause.Mode(9000) == PauseMode::kNone);
  pause.ClearIfEnded(9000);
  CHECK_FALSE(pause.maybe_active());
}

TEST_CASE("A purpose's pause in effect only grows; an ended one is replaced", "[pause]") {
  ClientPause pause;
  pause.Pause(PausePurpose::kClientCommand, 0, 5000, PauseMode::kAll);
  pause.Pause(PausePurpose::kClientCommand, 10, 3000, PauseMode::kWrite);
  CHECK(pause.Mode(4000) == PauseMode::kAll);
  CHECK(pause.end_ms() == 5000);
  pause.Pause(PausePurpose::kClientCommand, 6000, 7000, PauseMode::kWrite);
  CHECK(pause.Mode(6000) == PauseMode::kWrite);
  CHECK(pause.end_ms() == 7000);
}

}  // namespace
}  // namespace rockcache::server
