// Tiering: how interpreted code asks for compilation and enters compiled code through
// on-stack replacement. The interpreter counts invocations and loop back-edges in each
// Method; past a threshold it calls these entry points, which defer to the TierPolicy
// that jit/ installs (runtime/ never includes jit/).
#pragma once
#include <cstdint>

namespace runtime {

class Thread;
struct Method;

class TierPolicy {
 public:
  virtual ~TierPolicy() = default;
  // `m` has been invoked often: compile it (asynchronously or not), then switch its entry.
  virtual void on_hot_method(Thread* t, Method* m) = 0;
  // A back-edge of `m` to `target_bci` with an empty expression stack passed the
  // threshold. Returns the address of compiled OSR code for that loop header, or null
  // to go on interpreting. `locals` is the interpreter frame's locals pointer.
  virtual void* on_hot_backedge(Thread* t, Method* m, uint32_t target_bci) = 0;
};

struct TierThresholds {
  uint32_t invocations = UINT32_MAX;  // UINT32_MAX: never (--xint)
  uint32_t backedges = UINT32_MAX;
};

void set_tier_policy(TierPolicy* policy, const TierThresholds& thresholds);
const TierThresholds& tier_thresholds();

}  // namespace runtime

extern "C" {
// Called by the interpreter (anchor set) once m->invocations reached the threshold.
void minivm_rt_hot_method(runtime::Thread* t, runtime::Method* m);
// Called by the interpreter (anchor set) at a back-edge once m->backedges reached the
// threshold. If OSR code is available, copies the frame's locals into the thread's OSR
// buffer and returns the OSR entry; else returns null.
void* minivm_rt_hot_backedge(runtime::Thread* t, runtime::Method* m, const uint8_t* target_bcp, const int64_t* locals);
}
