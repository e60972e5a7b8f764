// A fixed-capacity, lock-free, single-producer single-consumer ring.
//
// The producer may be a signal handler running on the consumer's own thread (the
// --suspend=signal path pushes from the handler; the thread drains at its next poll),
// so both sides use only atomic loads and stores: no locks, no allocation, and an
// interrupted consumer leaves the ring consistent. A full ring refuses the push; the
// caller counts that as a dropped sample.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/invariant.h"

namespace sampler {

template <typename T, size_t Capacity>
class SpscRing {
  static_assert((Capacity & (Capacity - 1)) == 0, "capacity must be a power of two");

 public:
  // Producer side. Returns false when full.
  bool push(const T& v) {
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) == Capacity) return false;
    slots_[tail & (Capacity - 1)] = v;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  // Consumer side. Returns false when empty.
  bool pop(T& out) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return false;
    out = slots_[head & (Capacity - 1)];
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  // A third party reading the queued entries, oldest first, without taking them. Only
  // while the consumer is stopped (a global safepoint); a concurrent push is not seen.
  template <typename F>
  void for_each_queued(F f) const {
    uint64_t tail = tail_.load(std::memory_order_acquire);
    for (uint64_t i = head_.load(std::memory_order_acquire); i != tail; i++) f(slots_[i & (Capacity - 1)]);
  }
  // The head first: it never passes the tail, so a tail read after it is not below it,
  // however the two sides move in between (the other order could wrap).
  size_t size() const {
    uint64_t head = head_.load(std::memory_order_acquire);
    size_t n = size_t(tail_.load(std::memory_order_acquire) - head);
    MVM_ASSERT(n <= Capacity, "the head never passes the tail, and the tail never passes the head by more than the ring");
    return n;
  }
  static constexpr size_t capacity() { return Capacity; }

 private:
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  T slots_[Capacity];
};

}  // namespace sampler
