// A distribution of durations in bounded memory: suspension and latency per sample, the
// sampler thread's CPU per visit. A run of any length keeps at most one bucket per
// (power of two, 1/128 of it) it has seen, not one number per sample.
//
// Values under 256 have a bucket each; above, a bucket spans 1/128 of its power of two.
// A bucket keeps its count and the largest value put in it, and the value at a rank is
// that largest value of the bucket holding the rank: exact when the bucket's values are
// equal (or few and far apart), otherwise at most 0.8% above the exact nearest-rank
// value. The maximum is always exact.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <vector>

namespace sampler {

class Distribution {
 public:
  Distribution() = default;
  Distribution(std::initializer_list<uint64_t> values) {
    for (uint64_t v : values) push_back(v);
  }
  Distribution(const std::vector<uint64_t>& values) {  // NOLINT: a list of values is one
    for (uint64_t v : values) push_back(v);
  }
  void push_back(uint64_t value);
  void merge(const Distribution& other);
  uint64_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  // The value at nearest rank k (1 = the smallest), k in 1..size().
  uint64_t at_rank(uint64_t k) const;
  uint64_t max() const { return buckets_.empty() ? 0 : buckets_.rbegin()->second.max; }
  size_t buckets() const { return buckets_.size(); }

 private:
  struct Bucket {
    uint64_t count = 0, max = 0;
  };
  static uint32_t bucket_of(uint64_t value);
  std::map<uint32_t, Bucket> buckets_;
  uint64_t n_ = 0;
};

}  // namespace sampler
