// The Prometheus endpoint from outside: /metrics is valid Prometheus text (checked by the strict
// parser of prometheus_text.h, itself checked against malformed text) and has the key series.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/prometheus_text.h"
#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::Exposition;
using rockcache::testing::FreePort;
using rockcache::testing::HttpGet;
using rockcache::testing::HttpResponse;
using rockcache::testing::InfoFields;
using rockcache::testing::InfoText;
using rockcache::testing::Join;
using rockcache::testing::ParsePrometheus;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

TEST_CASE("the strict Prometheus parser rejects malformed text", "[metrics]") {
  // Sanity of the checker itself, so that an empty error list below means something.
  CHECK(ParsePrometheus("# TYPE a counter\na 1\n").errors.empty());
  CHECK(ParsePrometheus("# TYPE a counter\na{x=\"q\\\"\\\\\\n\"} 1\n").errors.empty());
  CHECK(ParsePrometheus("# TYPE a gauge\na +Inf\n# TYPE b gauge\nb NaN\n").errors.empty());
  CHECK(!ParsePrometheus("a 1\n").errors.empty());                               // no TYPE
  CHECK(!ParsePrometheus("# TYPE a counter\na 1").errors.empty());               // no final newline
  CHECK(!ParsePrometheus("# TYPE 1a counter\n1a 1\n").errors.empty());           // bad name
  CHECK(!ParsePrometheus("# TYPE a counter\na{1x=\"v\"} 1\n").errors.empty());   // bad label
  CHECK(!ParsePrometheus("# TYPE a counter\na{x=v} 1\n").errors.empty());        // unquoted
  CHECK(!ParsePrometheus("# TYPE a counter\na{x=\"\\t\"} 1\n").errors.empty());  // bad escape
  CHECK(!ParsePrometheus("# TYPE a counter\na one\n").errors.empty());           // bad value
  CHECK(!ParsePrometheus("# TYPE a counter\na -1\n").errors.empty());            // negative counter
  CHECK(!ParsePrometheus("# TYPE a counter\na 1\na 2\n").errors.empty());        // duplicate
  CHECK(!ParsePrometheus("# TYPE a wibble\na 1\n").errors.empty());              // unknown type
  CHECK(!ParsePrometheus("# TYPE a counter\n# TYPE b counter\na 1\nb 1\n").errors.empty());
  CHECK(!ParsePrometheus("# TYPE a counter\na{x=\"1\"} 1\n# TYPE b counter\nb 1\n"
                         "a{x=\"2\"} 1\n")
             .errors.empty());  // not grouped
  const std::string h = "# TYPE h histogram\n";
  CHECK(ParsePrometheus(h + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n")
            .errors.empty());
  CHECK(!ParsePrometheus(h + "h_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\n"
                             "h_count 2\n")
             .errors.empty());  // decreasing
  CHECK(!ParsePrometheus(h + "h_bucket{le=\"1\"} 1\nh_sum 3\nh_count 1\n").errors.empty());
  CHECK(!ParsePrometheus(h + "h_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 3\n").errors.empty());
  CHECK(!ParsePrometheus(h + "h_bucket{le=\"+Inf\"} 2\nh_count 2\n").errors.empty());  // no sum
  CHECK(!ParsePrometheus(h + "h 1\n").errors.empty());
}

TEST_CASE("/metrics is valid Prometheus text and has the key series", "[metrics]") {
  const int metrics_port = FreePort();
  TestServer server({"--metrics-port", std::to_string(metrics_port)});
  Client c(server.port()), admin(server.port());
  const int kSets = 300, kGets = 200;
  for (int i = 0; i < kSets; ++i) {
    REQUIRE(Run(c, {"SET", "k" + std::to_string(i % 50), "v"}) == "status:OK");
  }
  for (int i = 0; i < kGets; ++i) REQUIRE(Run(c, {"GET", "k" + std::to_string(i % 60)}) != "");
  CHECK(Run(c, {"INCR", "k1"}).rfind("err:", 0) == 0);  // a failed call
  CHECK(Run(c, {"GET"}).rfind("err:", 0) == 0);         // a rejected call
  REQUIRE(Run(c, {"HSET", "h", "f", "v"}) == "int:1");
  REQUIRE(Run(c, {"HGET", "h", "f"}) == "bulk:v");

  HttpResponse response = HttpGet(metrics_port, "/metrics");
  REQUIRE(response.status == 200);
  CHECK(response.headers["content-type"].rfind("text/plain; version=0.0.4", 0) == 0);
  Exposition e = ParsePrometheus(response.body);
  INFO("first lines:\n" << response.body.substr(0, 600));
  {
    INFO("Prometheus format errors:" << Join(e.errors));
    CHECK(e.errors.empty());
  }
  CHECK(e.samples.size() > 50);

  CHECK(e.Value("rockcache_command_calls_total", {{"cmd", "set"}}) == kSets);
  CHECK(e.Value("rockcache_command_calls_total", {{"cmd", "get"}}) == kGets);
  CHECK(e.types["rockcache_command_calls_total"] == "counter");
  CHECK(e.Value("rockcache_command_duration_seconds_bucket",
                {{"cmd", "set"}, {"stage", "total"}, {"le", "+Inf"}}) == kSets);
  CHECK(e.Value("rockcache_command_duration_seconds_count", {{"cmd", "set"}, {"stage", "total"}}) ==
        kSets);
  CHECK(e.Value("rockcache_command_duration_seconds_sum", {{"cmd", "set"}, {"stage", "total"}}) >
        0);
  CHECK(e.types["rockcache_command_duration_seconds"] == "histogram");
  CHECK(e.Value("rockcache_command_failed_calls_total", {{"cmd", "incr"}}) == 1);
  CHECK(e.Value("rockcache_command_rejected_calls_total", {{"cmd", "get"}}) == 1);
  CHECK(e.Value("rockcache_cache_hits_total") > 0);
  CHECK(e.types["rockcache_cache_hits_total"] == "counter");
  CHECK(e.Value("rockcache_rtc_answers_total") > 0);
  CHECK(!std::isnan(e.Value("rockcache_pool_wakeups_total", {{"phase", "block"}})));
  CHECK(e.Value("rockcache_pool_wakeups_total", {{"phase", "spin"}}) +
            e.Value("rockcache_pool_wakeups_total", {{"phase", "yield"}}) +
            e.Value("rockcache_pool_wakeups_total", {{"phase", "block"}}) >
        0);
  CHECK(e.Value("rockcache_stage_duration_seconds_bucket", {{"stage", "total"}, {"le", "+Inf"}}) >=
        kSets + kGets);
  CHECK(e.Value("rockcache_connected_clients") >= 2);
  // The same numbers as INFO.
  auto cache = InfoFields(InfoText(admin, "cache"));
  CHECK(e.Value("rockcache_cache_maxmemory_bytes") == std::stod(cache["cache_maxmemory"]));

  HttpResponse missing = HttpGet(metrics_port, "/nope");
  CHECK(missing.status == 404);
  HttpResponse with_query = HttpGet(metrics_port, "/metrics?x=1");
  CHECK(with_query.status == 200);
}
