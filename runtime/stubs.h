// Generated glue owned by the runtime: the call stub (C++ -> Mini) and the safepoint
// blob (where a trapped poll resumes).
#pragma once
#include <cstdint>

namespace runtime {

class Thread;
struct Method;

// Generates and registers both; idempotent.
void generate_runtime_stubs();

// Runs `m` on the current thread `t` with `args` (m->param_count slots); returns the
// result slot (unspecified for a void method). `t` must be in_java and its dispatch
// table set.
int64_t call_mini(Thread* t, Method* m, const int64_t* args);

uintptr_t safepoint_blob_entry();

}  // namespace runtime
