// The sample requests waiting for a thread's next poll, kept without bias however long
// the thread runs without one.
//
// A stretch is what the thread is interrupted for between two polls that serve it. While
// a stretch's requests fit they are all kept. Once they do not, the store keeps a uniform
// random subset of them (reservoir sampling, Vitter's Algorithm R): the i-th request of
// the stretch replaces a random kept one with probability Capacity / i. Each request of a
// long stretch is then as likely to be kept as any other, so a stretch that moves from
// one loop to another shows both in their proportions, where a ring that refused what no
// longer fits would keep only the stretch's beginning. When the poll takes the stretch,
// each kept request stands for stretch size / kept requests of it (integer weights that
// add up to the stretch size exactly); every request not kept is handed back to the
// producer, which records it as a drop (ring_full) with its id.
//
// The producer is the thread's own SIGPROF handler, or the sampler thread while the
// thread is held in that handler: either way it runs while the consumer (the thread, at
// its poll or when it ends) is stopped at some instruction, as an interrupt runs. So the
// two never run at once; atomics with signal fences keep the compiler from reordering
// around that interruption. A stretch is taken whole: the consumer switches the producer
// to the other of two stretches and then reads the one it took, which nothing else
// writes, at leisure.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "sampler/sample_request.h"

namespace sampler {

// xorshift64*: a few instructions, no state shared between threads, async-signal-safe.
class FastRandom {
 public:
  explicit FastRandom(uint64_t seed) : s_(seed | 1) {}
  uint64_t next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545f4914f6cdd1dull;
  }
  // Uniform in [0, n) (Lemire's multiply-shift; its bias is below 2^-32 for the n here).
  uint64_t below(uint64_t n) { return uint64_t((__uint128_t(next()) * n) >> 64); }

 private:
  uint64_t s_;
};

template <size_t Capacity>
class RequestReservoir {
 public:
  explicit RequestReservoir(uint64_t seed) : offer_random_(seed), weight_random_(seed * 0x9e3779b97f4a7c15ull + 1) {}

  // Producer. Offers a request to the current stretch. Returns true and sets `left_out`
  // when a request is not kept: `r` itself, or the kept one it replaced.
  bool offer(const SampleRequest& r, SampleRequest& left_out) {
    Stretch& s = stretches_[filling_.load(std::memory_order_relaxed)];
    uint64_t n = s.offered.load(std::memory_order_relaxed) + 1;
    bool replaced = false;
    if (n <= Capacity) {
      s.kept[n - 1] = r;
    } else {
      uint64_t j = offer_random_.below(n);
      if (j < Capacity) {
        left_out = s.kept[j];
        s.kept[j] = r;
      } else {
        left_out = r;
      }
      replaced = true;
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    s.offered.store(n, std::memory_order_release);
    return replaced;
  }

  // Consumer. Takes the current stretch and calls `serve(request, weight)` for each kept
  // request, in interruption order; the producer fills the other stretch meanwhile. The
  // weights add up to the number of requests the stretch was offered. False when there
  // was nothing to take.
  template <typename F>
  bool take(F serve) {
    uint32_t which = filling_.load(std::memory_order_relaxed);
    Stretch& s = stretches_[which];
    uint64_t offered = s.offered.load(std::memory_order_acquire);
    if (offered == 0) return false;
    filling_.store(which ^ 1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    // Read again after the switch: a request offered between the first read and the
    // switch went into this stretch.
    offered = s.offered.load(std::memory_order_acquire);
    size_t kept = size_t(std::min<uint64_t>(offered, Capacity));
    std::sort(s.kept, s.kept + kept, [](const SampleRequest& a, const SampleRequest& b) { return a.id < b.id; });
    // Each kept request stands for offered / kept requests; the remainder goes one each
    // to kept requests drawn at random (selection sampling), so no position is favoured.
    uint64_t base = offered / kept, extra = offered % kept;
    for (size_t i = 0; i < kept; i++) {
      bool one_more = extra > 0 && weight_random_.below(kept - i) < extra;
      if (one_more) extra--;
      serve(s.kept[i], base + (one_more ? 1 : 0));
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    s.offered.store(0, std::memory_order_release);
    return true;
  }

  // Kept requests not yet served (a stretch being served counts until it is done). Exact
  // only while the producer is quiet; a dump reads it as an estimate of what is in flight.
  size_t pending() const {
    size_t n = 0;
    for (const Stretch& s : stretches_) n += size_t(std::min<uint64_t>(s.offered.load(std::memory_order_acquire), Capacity));
    return n;
  }
  // A third party reading the kept requests without taking them: only while the thread
  // is stopped (a global safepoint).
  template <typename F>
  void for_each_kept(F f) const {
    for (const Stretch& s : stretches_) {
      size_t kept = size_t(std::min<uint64_t>(s.offered.load(std::memory_order_acquire), Capacity));
      for (size_t i = 0; i < kept; i++) f(s.kept[i]);
    }
  }
  static constexpr size_t capacity() { return Capacity; }

 private:
  struct Stretch {
    std::atomic<uint64_t> offered{0};  // requests offered since the stretch began
    SampleRequest kept[Capacity];
  };
  Stretch stretches_[2];
  std::atomic<uint32_t> filling_{0};
  FastRandom offer_random_;   // the producer's
  FastRandom weight_random_;  // the consumer's
};

}  // namespace sampler
