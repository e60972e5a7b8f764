// The SPSC ring of sample requests: order, capacity, full/empty, and a concurrent
// producer/consumer that loses nothing.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "sampler/spsc_ring.h"

using sampler::SpscRing;

TEST_CASE("ring: FIFO order, capacity, full and empty") {
  SpscRing<int, 8> ring;
  int v = 0;
  REQUIRE_FALSE(ring.pop(v));
  for (int i = 0; i < 8; i++) REQUIRE(ring.push(i));
  REQUIRE_FALSE(ring.push(99));  // full: refused, counted as a drop by the caller
  REQUIRE(ring.size() == 8);
  for (int i = 0; i < 8; i++) {
    REQUIRE(ring.pop(v));
    REQUIRE(v == i);
  }
  REQUIRE_FALSE(ring.pop(v));
  // Wrap around many times.
  for (int i = 0; i < 1000; i++) {
    REQUIRE(ring.push(i));
    REQUIRE(ring.pop(v));
    REQUIRE(v == i);
  }
}

TEST_CASE("ring: a concurrent producer and consumer lose and duplicate nothing") {
  static SpscRing<uint64_t, 64> ring;
  constexpr uint64_t kCount = 2'000'000;
  std::atomic<uint64_t> refused{0};
  std::thread producer([&] {
    for (uint64_t i = 1; i <= kCount;) {
      if (ring.push(i)) i++;
      else refused++;
    }
  });
  uint64_t expected = 1, v = 0;
  while (expected <= kCount) {
    if (ring.pop(v)) {
      REQUIRE(v == expected);
      expected++;
    }
  }
  producer.join();
  REQUIRE(ring.size() == 0);
}
