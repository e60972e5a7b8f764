// Distribution (distribution.h): log-linear buckets, 128 per power of two.
#include "sampler/profile/distribution.h"

#include <algorithm>
#include <bit>

namespace sampler {

uint32_t Distribution::bucket_of(uint64_t value) {
  if (value < 256) return uint32_t(value);
  uint32_t power = 63 - uint32_t(std::countl_zero(value));  // 8..63
  uint32_t sub = uint32_t(value >> (power - 7)) & 127;      // the 7 bits below the top one
  return 256 + (power - 8) * 128 + sub;
}

void Distribution::push_back(uint64_t value) {
  Bucket& b = buckets_[bucket_of(value)];
  b.count++;
  b.max = std::max(b.max, value);
  n_++;
}

void Distribution::merge(const Distribution& other) {
  for (const auto& [key, from] : other.buckets_) {
    Bucket& b = buckets_[key];
    b.count += from.count;
    b.max = std::max(b.max, from.max);
  }
  n_ += other.n_;
}

uint64_t Distribution::at_rank(uint64_t k) const {
  uint64_t seen = 0;
  for (const auto& [key, b] : buckets_) {
    seen += b.count;
    if (seen >= k) return b.max;
  }
  return max();
}

}  // namespace sampler
