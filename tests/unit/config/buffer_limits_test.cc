#include "config/buffer_limits.h"

#include <catch2/catch.hpp>

using rockcache::config::ClientBufferLimits;
using rockcache::config::FormatClientBufferLimits;
using rockcache::config::ParseClientBufferLimits;

TEST_CASE("client-output-buffer-limit: Redis's groups, merged per class", "[config]") {
  ClientBufferLimits base, out;
  REQUIRE(
      ParseClientBufferLimits("normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60", base, &out)
          .ok());
  CHECK(FormatClientBufferLimits(out) ==
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
  ClientBufferLimits merged;
  REQUIRE(ParseClientBufferLimits("NORMAL 1gb 512mb 10 slave 1 2 3", out, &merged).ok());
  CHECK(merged.normal.hard == 1ll << 30);
  CHECK(merged.normal.soft == 512ll << 20);
  CHECK(merged.normal.soft_seconds == 10);
  CHECK(merged.replica.hard == 1);
  CHECK(merged.pubsub == out.pubsub);  // untouched
  // The single-size alias: the normal class's hard limit.
  ClientBufferLimits alias;
  REQUIRE(ParseClientBufferLimits("2mb", merged, &alias).ok());
  CHECK(alias.normal.hard == 2 << 20);
  CHECK(alias.normal.soft == merged.normal.soft);
}

TEST_CASE("client-output-buffer-limit: Redis's errors", "[config]") {
  ClientBufferLimits base, out;
  CHECK(ParseClientBufferLimits("normal 1 2", base, &out).message() ==
        "Wrong number of arguments in buffer limit configuration.");
  CHECK(ParseClientBufferLimits("", base, &out).message() ==
        "Wrong number of arguments in buffer limit configuration.");
  CHECK(ParseClientBufferLimits("master 1 2 3", base, &out).message() ==
        "Invalid client class specified in buffer limit configuration.");
  CHECK(ParseClientBufferLimits("normal 1x 2 3", base, &out).message() ==
        "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
  CHECK(ParseClientBufferLimits("normal 1 2 -3", base, &out).message() ==
        "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
  CHECK(ParseClientBufferLimits("normal -1 2 3", base, &out).message() ==
        "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
}
