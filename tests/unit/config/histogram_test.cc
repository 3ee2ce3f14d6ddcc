#include "config/histogram.h"

#include <catch2/catch.hpp>
#include <cmath>

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::histogram_test {
namespace {

TEST_CASE("histogram buckets tile the value range", "[pool]") {
  uint64_t v = 0;
  for (int b = 0; b < Histogram::kBuckets; ++b) {
    INFO("bucket " << b);
    REQUIRE(Histogram::BucketLow(b) == v);
    REQUIRE(Histogram::BucketFor(v) == b);
    v += Histogram::BucketWidth(b);
    REQUIRE(Histogram::BucketFor(v - 1) == b);
    // A bucket is at most 1/8 of its lower bound wide.
    if (b >= Histogram::kSubBuckets) {
      REQUIRE(Histogram::BucketWidth(b) * 8 <= Histogram::BucketLow(b));
    }
  }
  REQUIRE(v == uint64_t{1} << Histogram::kMaxBits);
  REQUIRE(Histogram::BucketFor(~uint64_t{0}) == Histogram::kBuckets - 1);
}

TEST_CASE("histogram percentiles are within a bucket's error", "[pool]") {
  Histogram h;
  for (uint64_t i = 1; i <= 100000; ++i) h.Record(i * 10);  // uniform 10 ns .. 1 ms
  Histogram::Data d;
  h.AddTo(&d);
  REQUIRE(d.Count() == 100000);
  REQUIRE(d.sum_ns == 10 * 100000ull * 100001 / 2);
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = q * 1e6;
    INFO("q " << q << " got " << d.PercentileNs(q));
    REQUIRE(std::fabs(d.PercentileNs(q) - exact) <= exact * 0.07);
  }

  Histogram::Data base = d;
  h.Record(5);
  Histogram::Data later;
  h.AddTo(&later);
  later.Subtract(base);
  REQUIRE(later.Count() == 1);
  REQUIRE(later.PercentileNs(0.5) == Approx(5.0).margin(1.0));
  REQUIRE(Histogram::Data().PercentileNs(0.99) == 0);
}

}  // namespace
}  // namespace rockcache::histogram_test
