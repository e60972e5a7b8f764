#include "runtime/tiering.h"

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
  ThreadInVM in_vm(t);
  m->backedges.store(0, std::memory_order_relaxed);
  if (g_policy == nullptr) return nullptr;
  void* entry = g_policy->on_hot_backedge(t, m, uint32_t(target_bcp - m->code));
  if (entry != nullptr) {
    // Interpreter local i is at locals[-i]; OSR code reads buffer[i].
    uint32_t n = uint32_t(m->param_count) + m->extra_locals;
    for (uint32_t i = 0; i < n; i++) t->core.osr_buffer[i] = *(locals - i);
  }
  return entry;
}
