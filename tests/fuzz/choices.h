// The program generator's source of decisions. From fuzzer input, each decision reads the
// next bytes, so libFuzzer's mutations change the program a little at a time; once the
// bytes run out, a generator seeded from all of them takes over, so that short inputs
// still give whole programs. From a seed (minivm_gen), only that generator.
#pragma once
#include <cstddef>
#include <cstdint>

namespace minigen {

class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size), state_(0x9e3779b97f4a7c15ULL) {
    for (size_t i = 0; i < size; i++) state_ = (state_ ^ data[i]) * 0x100000001b3ULL;  // FNV-1a
  }
  explicit Choices(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ULL + 1) {}

  // A number in [0, n); 0 when n is 0 or 1.
  uint32_t below(uint32_t n) {
    if (n <= 1) return 0;
    uint32_t raw;
    if (pos_ < size_) {
      raw = data_[pos_++];
      if (n > 256 && pos_ < size_) raw = raw << 8 | data_[pos_++];
    } else {
      raw = uint32_t(next() >> 32);
    }
    return raw % n;
  }
  // True with probability about num/den.
  bool chance(uint32_t num, uint32_t den) { return below(den) < num; }
  // A number in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) { return lo + int64_t(below(uint32_t(hi - lo + 1))); }

 private:
  uint64_t next() {  // splitmix64
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;
  uint64_t state_;
};

}  // namespace minigen
