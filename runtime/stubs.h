// Generated glue owned by the runtime: the call stub (C++ -> Mini) and the safepoint
// blob (where a trapped poll resumes).
#pragma once
#include <cstdint>

#include "runtime/frame_row.h"

namespace runtime {

struct CodeBlob;

class Thread;
struct Method;

// Generates and registers both; idempotent.
void generate_runtime_stubs();

// Runs `m` on the current thread `t` with `args` (m->param_count slots); returns the
// result slot (unspecified for a void method). `t` is in_java, with its dispatch table
// set.
int64_t call_mini(Thread* t, Method* m, const int64_t* args);

uintptr_t safepoint_blob_entry();
// The call stub's code (a return address in it: the thread's first Mini frame's caller).
const CodeBlob& call_stub_blob();

// Where the safepoint blob saved register `r` of a thread stopped at a poll whose anchor
// sp is `anchor_sp` (the polling frame's sp: the blob's CFA). The collector reads the
// polling frame's register values there.
uintptr_t poll_saved_register_address(uintptr_t anchor_sp, Reg r);

}  // namespace runtime
