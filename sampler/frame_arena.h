// FrameArena: per-thread storage for the frames that signal-handler walks (async,
// oracle) record, until the sampler thread turns them into events.
//
// Single producer (the handler on the sampled thread, or the sampler thread while that
// thread is held), single consumer (the sampler thread). The producer writes frames at a
// private cursor and publishes them with `commit`; a walk whose frames do not fit is a
// counted failure (`arena_full`), never a block. The consumer frees space in order with
// `release_to`.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/stack_walker.h"

namespace sampler {

// A walked frame, as small as a handler can store it: names and lines are looked up later.
struct CompactFrame {
  const runtime::Method* method = nullptr;  // null for a stub frame
  const char* stub = nullptr;               // stub frames: the stub's name
  int32_t bci = -1;
  runtime::FrameKind kind = runtime::FrameKind::interp;
  // Mixed stacks (sampler/mixed_stack.h): a cpp frame's pc, as symbolized later (a
  // return address already moved into its call); 0 in every other frame.
  uintptr_t pc = 0;
  bool operator==(const CompactFrame&) const = default;
};

inline CompactFrame compact_frame(const runtime::Frame& f) { return CompactFrame{f.method, nullptr, f.bci, f.kind}; }

class FrameArena {
 public:
  // Room for `capacity` frames (a power of two). The slots are not initialised: a page of
  // them costs memory only once a walk has written there.
  explicit FrameArena(size_t capacity) : capacity_(capacity), slots_(new Slot[capacity]) {}
  // Producer: where the next frame goes.
  uint64_t cursor() const { return tail_.load(std::memory_order_relaxed); }
  // Producer: stores f at `cur` and advances it; false when the arena is full.
  bool put(uint64_t& cur, const CompactFrame& f) {
    if (cur - head_.load(std::memory_order_acquire) >= capacity_) return false;
    slots_[cur & (capacity_ - 1)].frame = f;
    cur++;
    return true;
  }
  // Producer: publishes everything written up to `cur`.
  void commit(uint64_t cur) { tail_.store(cur, std::memory_order_release); }
  // Consumer.
  const CompactFrame& at(uint64_t i) const { return slots_[i & (capacity_ - 1)].frame; }
  void release_to(uint64_t i) { head_.store(i, std::memory_order_release); }
  size_t capacity() const { return capacity_; }

 private:
  union Slot {
    Slot() {}  // leaves the frame unwritten (put writes it before at reads it)
    CompactFrame frame;
  };
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace sampler
