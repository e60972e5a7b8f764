// Distribution (sampler/profile/distribution.h): durations in bounded memory. Percentiles are
// exact for few, distinct values and at most 0.8% above the exact nearest-rank value for
// many; a million values take the buckets their range needs, not a million slots.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "sampler/profile/distribution.h"
#include "sampler/profile/report.h"

using sampler::Distribution;

TEST_CASE("distribution: exact below 256 and for values far apart", "[distribution]") {
  Distribution d;
  for (uint64_t v = 255; v >= 1; --v) d.push_back(v);
  REQUIRE(d.size() == 255);
  for (uint64_t k = 1; k <= 255; ++k) CHECK(d.at_rank(k) == k);
  Distribution far{1000, 150000, 3000, 7};
  CHECK(far.at_rank(1) == 7);
  CHECK(far.at_rank(2) == 1000);
  CHECK(far.at_rank(3) == 3000);
  CHECK(far.at_rank(4) == 150000);
  CHECK(far.max() == 150000);
}

TEST_CASE("distribution: bounded memory and at most 0.8% above the exact rank", "[distribution]") {
  Distribution d;
  std::vector<uint64_t> all;
  uint64_t x = 88172645463325252ull;  // xorshift: values from 1 ns to ~1 s
  for (int i = 0; i < 1'000'000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint64_t v = 1 + (x >> (34 + (x & 15)));
    d.push_back(v);
    all.push_back(v);
  }
  std::sort(all.begin(), all.end());
  CHECK(d.buckets() < 256 + 30 * 128);  // the range's buckets, not the values
  CHECK(d.max() == all.back());
  for (uint64_t p : {1, 10, 50, 90, 99}) {
    uint64_t k = (p * all.size() + 99) / 100;
    uint64_t exact = all[k - 1], got = d.at_rank(k);
    INFO("p" << p << ": exact " << exact << ", got " << got);
    CHECK(got >= exact);
    CHECK(double(got) <= double(exact) * 1.008);
  }
  Distribution half, other;
  for (size_t i = 0; i < all.size(); ++i) (i % 2 ? half : other).push_back(all[i]);
  half.merge(other);
  CHECK(half.size() == d.size());
  CHECK(sampler::percentiles(half).p99 == sampler::percentiles(d).p99);
}
