#include "config/histogram.h"

namespace rockcache {

uint64_t Histogram::BucketLow(int bucket) {
  if (bucket < kSubBuckets) return static_cast<uint64_t>(bucket);
  const int k = (bucket - kSubBuckets) / kSubBuckets + kSubBucketBits;
  const uint64_t sub = static_cast<uint64_t>((bucket - kSubBuckets) % kSubBuckets);
  return (kSubBuckets + sub) << (k - kSubBucketBits);
}

uint64_t Histogram::BucketWidth(int bucket) {
  if (bucket < kSubBuckets) return 1;
  const int k = (bucket - kSubBuckets) / kSubBuckets + kSubBucketBits;
  return uint64_t{1} << (k - kSubBucketBits);
}

void Histogram::AddTo(Data* out) const {
  for (int i = 0; i < kBuckets; ++i) {
    out->buckets[i] += buckets_[i].load(std::memory_order_relaxed);
  }
  out->sum_ns += sum_ns_.load(std::memory_order_relaxed);
}

uint64_t Histogram::Data::Count() const {
  uint64_t n = 0;
  for (uint64_t b : buckets) n += b;
  return n;
}

void Histogram::Data::Subtract(const Data& base) {
  for (int i = 0; i < kBuckets; ++i) buckets[i] -= base.buckets[i];
  sum_ns -= base.sum_ns;
}

double Histogram::Data::PercentileNs(double q) const {
  const uint64_t total = Count();
  if (total == 0) return 0;
  const double rank = q * static_cast<double>(total);
  double seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    if (buckets[i] == 0) continue;
    const double n = static_cast<double>(buckets[i]);
    if (seen + n >= rank) {
      const double fraction = rank > seen ? (rank - seen) / n : 0.0;
      return static_cast<double>(BucketLow(i)) + fraction * static_cast<double>(BucketWidth(i));
    }
    seen += n;
  }
  return static_cast<double>(BucketLow(kBuckets - 1));  // rounding: rank a hair above total
}

}  // namespace rockcache
