// Histogram: a log-linear histogram of durations in nanoseconds, written by one thread and read
// (merged) by any. Shared by the pool (queue wait) and the server (command stages).
//
// Buckets: values 0..7 ns each get their own bucket; above that every power of two [2^k, 2^k+1)
// is split into 8 equal sub-buckets, so a bucket is at most 1/8 as wide as its lower bound and a
// percentile interpolated inside it is off by at most ~6%. Values at or above 2^40 ns (~18 min)
// land in the last bucket. 304 buckets, 2.4 KB per histogram.
//
// Threads: Record() only from the owning thread (relaxed load + store, no locked instruction);
// AddTo() from any thread, concurrently with Record() (it may miss the latest few samples).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace rockcache {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 3;
  static constexpr int kSubBuckets = 1 << kSubBucketBits;
  static constexpr int kMaxBits = 40;
  static constexpr int kBuckets = kSubBuckets + (kMaxBits - kSubBucketBits) * kSubBuckets;

  struct Data {
    std::array<uint64_t, kBuckets> buckets{};
    uint64_t sum_ns = 0;

    uint64_t Count() const;
    // this -= base, element-wise (base is an earlier snapshot of the same histograms).
    void Subtract(const Data& base);
    // The q-quantile (0 < q <= 1) in nanoseconds, interpolated linearly inside its bucket; 0 when
    // empty.
    double PercentileNs(double q) const;
  };

  Histogram() = default;
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // REQUIRES: called by the owning thread only.
  void Record(uint64_t ns) {
    auto& b = buckets_[BucketFor(ns)];
    b.store(b.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    sum_ns_.store(sum_ns_.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
  }

  // Adds this histogram's counts into *out. Any thread.
  void AddTo(Data* out) const;

  static int BucketFor(uint64_t ns) {
    if (ns < kSubBuckets) return static_cast<int>(ns);
    const int k = 63 - __builtin_clzll(ns);  // ns in [2^k, 2^k+1), k >= kSubBucketBits
    if (k >= kMaxBits) return kBuckets - 1;
    const int sub = static_cast<int>(ns >> (k - kSubBucketBits)) & (kSubBuckets - 1);
    return kSubBuckets + (k - kSubBucketBits) * kSubBuckets + sub;
  }
  static uint64_t BucketLow(int bucket);
  static uint64_t BucketWidth(int bucket);

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace rockcache
