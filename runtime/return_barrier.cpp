#include "runtime/return_barrier.h"

#include <atomic>

#include "runtime/invariant.h"

namespace runtime {

void mark_return_slot(Thread* t, uintptr_t* slot, uint64_t depth) {
  MVM_ASSERT(t->core.barrier_depth == 0 && *slot != return_barrier_entry(),
             "one marked return slot per thread: the last mark was dropped before a new one is set");
  // The target and depth before the slot: a handler on this thread that reads the slot
  // between the stores must find the target it stands for.
  t->core.barrier_target = *slot;
  t->core.barrier_depth = depth;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  *slot = return_barrier_entry();
}

void unmark_return_slot(Thread* t, uintptr_t* slot) {
  MVM_ASSERT(*slot == return_barrier_entry(), "only the marked return slot is unmarked");
  *slot = t->core.barrier_target;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->core.barrier_depth = 0;
}

}  // namespace runtime
