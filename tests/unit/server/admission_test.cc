// Admission (server/admission.h): where each command runs, as a table over real command rows and
// connection states.
#include "server/admission.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::server::admission_test {
namespace {

struct Row {
  const char* command;  // nullptr: an unknown command
  size_t argc;
  AdmissionState state;
  Route route;
};

AdmissionState State(bool authenticated, bool subscribed, bool batch_empty, bool spares_keys,
                     bool rtc_reads) {
  AdmissionState state;
  state.authenticated = authenticated;
  state.subscribed = subscribed;
  state.batch_empty = batch_empty;
  state.batch_spares_keys = spares_keys;
  state.rtc_reads = rtc_reads;
  return state;
}

const AdmissionState kFresh = State(true, false, true, true, true);
const AdmissionState kBehindReads = State(true, false, false, true, true);  // or other keys' writes
const AdmissionState kBehindWrite = State(true, false, false, false, true);  // to its keys
const AdmissionState kNoRtc = State(true, false, true, true, false);
const AdmissionState kNoAuthYet = State(false, false, true, true, true);
const AdmissionState kSubscribed = State(true, true, true, true, true);

TEST_CASE("Admission routes every kind of command", "[server][admission]") {
  const std::vector<Row> table = {
      // Rejections, in Redis's order: unknown, then arity, then authentication.
      {nullptr, 2, kFresh, Route::kUnknownCommand},
      {"get", 1, kFresh, Route::kWrongArity},
      {"get", 3, kNoAuthYet, Route::kWrongArity},
      {"get", 2, kNoAuthYet, Route::kNoAuth},
      {"auth", 2, kNoAuthYet, Route::kLoop},
      {"hello", 1, kNoAuthYet, Route::kLoop},
      // Hot reads run to completion; behind a batch that does not write their keys they are
      // carried, behind a write to them they wait their turn on the pool, and with rtc-reads off
      // they always go there.
      {"get", 2, kFresh, Route::kCache},
      {"hget", 3, kFresh, Route::kCache},
      {"get", 2, kBehindReads, Route::kCacheBehindBatch},
      {"get", 2, kBehindWrite, Route::kPool},
      {"get", 2, kNoRtc, Route::kPool},
      // Writes and other storage commands join the batch.
      {"set", 3, kFresh, Route::kPool},
      {"lpush", 3, kBehindWrite, Route::kPool},
      // Connection commands run in the loop, after the batch when there is one.
      {"select", 2, kFresh, Route::kLoop},
      {"select", 2, kBehindReads, Route::kAfterBatch},
      {"client", 2, kBehindWrite, Route::kAfterBatch},
      // Anywhere commands run in the loop unless a batch is pending (then in order, in it).
      {"ping", 1, kFresh, Route::kLoop},
      {"echo", 2, kBehindReads, Route::kPool},
      // Blocking commands go alone.
      {"blpop", 3, kFresh, Route::kBlocking},
      {"blpop", 3, kBehindReads, Route::kAfterBatch},
      // RESP2 subscribed mode: only (un)subscribe, PING, QUIT and RESET.
      {"get", 2, kSubscribed, Route::kSubscribedReply},
      {"ping", 1, kSubscribed, Route::kSubscribedReply},
      {"ping", 3, kSubscribed, Route::kLoop},  // PING's arity error, from its handler
      {"subscribe", 2, kSubscribed, Route::kLoop},
      {"quit", 1, kSubscribed, Route::kLoop},
  };
  for (const Row& row : table) {
    INFO((row.command ? row.command : "(unknown)") << " argc=" << row.argc);
    const CommandSpec* spec = row.command ? FindCommand(row.command) : nullptr;
    if (row.command != nullptr) REQUIRE(spec != nullptr);
    CHECK(Admit(spec, row.argc, row.state) == row.route);
  }
}

TEST_CASE("Subcommands a row runs in the loop: FUNCTION KILL and STATS", "[server][admission]") {
  const CommandSpec* function = FindCommand("function");
  REQUIRE(function != nullptr);
  CHECK(InLoopSubcommand(function, {"FUNCTION", "STATS"}));
  CHECK(InLoopSubcommand(function, {"function", "kill"}));
  CHECK_FALSE(InLoopSubcommand(function, {"FUNCTION", "LOAD", "code"}));
  CHECK_FALSE(InLoopSubcommand(function, {"FUNCTION", "STAT"}));
  CHECK_FALSE(InLoopSubcommand(function, {"FUNCTION"}));
  CHECK_FALSE(InLoopSubcommand(FindCommand("get"), {"GET", "stats"}));
  CHECK_FALSE(InLoopSubcommand(nullptr, {"x", "stats"}));
  AdmissionState loop = kFresh;
  loop.loop_subcommand = true;
  CHECK(Admit(function, 2, loop) == Route::kLoop);
  loop.batch_empty = false;
  CHECK(Admit(function, 2, loop) == Route::kAfterBatch);
  CHECK(Admit(function, 3, kFresh) == Route::kPool);  // FUNCTION LOAD
}

TEST_CASE("The transaction layer sees MULTI's commands and EXEC/WATCH", "[server][admission]") {
  CHECK(ForTransaction(FindCommand("get"), /*in_multi=*/true));
  CHECK(ForTransaction(nullptr, /*in_multi=*/true));
  CHECK(ForTransaction(FindCommand("exec"), /*in_multi=*/false));
  CHECK(ForTransaction(FindCommand("watch"), /*in_multi=*/false));
  CHECK_FALSE(ForTransaction(FindCommand("get"), /*in_multi=*/false));
  CHECK_FALSE(ForTransaction(nullptr, /*in_multi=*/false));
}

}  // namespace
}  // namespace rockcache::server::admission_test
