#include "server/metrics/latency_monitor.h"

#include <catch2/catch.hpp>

using rockcache::server::LatencyMonitor;

TEST_CASE("the latency monitor is off until a threshold is set", "[latency]") {
  LatencyMonitor monitor;
  CHECK_FALSE(monitor.ShouldRecord(1'000'000'000));
  CHECK(monitor.Doctor().find("Latency monitoring is disabled") != std::string::npos);
  monitor.set_threshold_ms(10);
  CHECK_FALSE(monitor.ShouldRecord(9'999'999));
  CHECK(monitor.ShouldRecord(10'000'000));
  CHECK(monitor.Doctor().find("no latency spike") != std::string::npos);
  monitor.set_threshold_ms(0);
  CHECK_FALSE(monitor.ShouldRecord(1'000'000'000));
}

TEST_CASE("the latency monitor keeps one sample per second, 160 at most, and the max",
          "[latency]") {
  LatencyMonitor monitor;
  monitor.Record("command", 12, 100);
  monitor.Record("command", 30, 100);  // same second: the worst stays
  monitor.Record("command", 11, 100);
  monitor.Record("fast-command", 5, 101);
  auto events = monitor.Events();
  REQUIRE(events.size() == 2);
  REQUIRE(events["command"].samples.size() == 1);
  CHECK(events["command"].samples[0].latency_ms == 30);
  CHECK(events["command"].max_ms == 30);
  for (int64_t t = 0; t < 200; ++t) monitor.Record("command", static_cast<uint64_t>(t), 1000 + t);
  events = monitor.Events();
  REQUIRE(events["command"].samples.size() == LatencyMonitor::kHistory);
  CHECK(events["command"].samples.front().unix_time == 1000 + 200 - 160);
  CHECK(events["command"].max_ms == 199);
  CHECK(monitor.Reset({"fast-command", "nosuch"}) == 1);
  CHECK(monitor.Events().size() == 1);
  CHECK(monitor.Reset({}) == 1);
  CHECK(monitor.Events().empty());
}
