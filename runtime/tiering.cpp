#include "runtime/tiering.h"

#include "runtime/compiled_code.h"
#include "runtime/method.h"
#include "runtime/thread.h"

namespace runtime {

namespace {
TierPolicy* g_policy = nullptr;
TierThresholds g_thresholds;
}  // namespace

void set_tier_policy(TierPolicy* policy, const TierThresholds& thresholds) {
  g_policy = policy;
  g_thresholds = thresholds;
}

const TierThresholds& tier_thresholds() { return g_thresholds; }

}  // namespace runtime

using namespace runtime;

extern "C" void minivm_rt_hot_method(Thread* t, Method* m) {
  ThreadInVM in_vm(t);
  m->invocations.store(0, std::memory_order_relaxed);  // ask again only after another round
  if (g_policy != nullptr) g_policy->on_hot_method(t, m);
}

extern "C" void* minivm_rt_hot_backedge(Thread* t, Method* m, const uint8_t* target_bcp, const int64_t* locals) {
  uint32_t bci = uint32_t(target_bcp - m->code);
  {
    ThreadInVM in_vm(t);
    m->backedges.store(0, std::memory_order_relaxed);
    if (g_policy == nullptr || g_policy->on_hot_backedge(t, m, bci) == nullptr) return nullptr;
  }
  // Back in Java, where no safepoint (and so no code unloading) comes before the
  // interpreter jumps: the entry is read from the code installed now. The code the
  // policy saw may have been replaced and freed while this thread stopped on its way back.
  const CompiledCode* code = m->compiled.load(std::memory_order_acquire);
  uintptr_t entry = code != nullptr ? code->osr_entry_for(bci) : 0;
  if (entry != 0) {
    // Interpreter local i is at locals[-i]; OSR code reads buffer[i].
    uint32_t n = uint32_t(m->param_count) + m->extra_locals;
    for (uint32_t i = 0; i < n; i++) t->core.osr_buffer[i] = *(locals - i);
  }
  return reinterpret_cast<void*>(entry);
}
