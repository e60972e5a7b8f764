#include "runtime/return_barrier.h"

#include <atomic>

namespace runtime {

void mark_return_slot(Thread* t, uintptr_t* slot, uint64_t depth) {
  // The target and depth before the slot: a handler on this thread that reads the slot
  // between the stores must find the target it stands for.
  t->core.barrier_target = *slot;
  t->core.barrier_depth = depth;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  *slot = return_barrier_entry();
}

void unmark_return_slot(Thread* t, uintptr_t* slot) {
  *slot = t->core.barrier_target;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->core.barrier_depth = 0;
}

}  // namespace runtime
