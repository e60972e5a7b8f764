// LLVM libunwind, loaded privately: generated code's CFI is registered with it, and
// stacks are walked with it (jit/native_walk.h).
//
// It is loaded with dlopen(RTLD_LOCAL) and reached only through dlsym. Linking it into
// the binary would interpose its `_Unwind_*` on libstdc++'s (libgcc_s's), and that breaks
// C++ exceptions (static link: every throw ends in std::terminate) or pthread_exit's
// forced unwind (dynamic link: a crash), so the C++ runtime keeps libgcc_s and never
// sees it.
#pragma once
#include <cstdint>
#include <vector>

// LLVM libunwind's header (from /usr/lib/llvm-16/include, added for jit/ only): its types
// and register numbers.
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#ifndef _LIBUNWIND_CURSOR_SIZE
#error "jit/ needs LLVM libunwind's libunwind.h (libunwind-16-dev), not another libunwind"
#endif

#include "runtime/frame_row.h"

namespace jit {

struct LlvmUnwind {
  int (*getcontext)(unw_context_t*);
  int (*init_local)(unw_cursor_t*, unw_context_t*);
  int (*step)(unw_cursor_t*);
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*);
  int (*set_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t);
  void (*add_dynamic_fde)(unw_word_t);
  void (*remove_dynamic_fde)(unw_word_t);
};

// The library's entry points, or nullptr when it cannot be loaded (then nothing is
// registered and native walks report `unavailable`).
const LlvmUnwind* llvm_unwind();

// Registers the CFI of [begin, end) described by `rows` with libunwind
// (`__unw_add_dynamic_fde`, one FDE, which is what its `__register_frame` calls; libgcc's
// `__register_frame` would take a whole .eh_frame section). The bytes live as long as the
// code. False when libunwind is unavailable or the rows are invalid.
bool register_with_libunwind(const char* name, uintptr_t begin, uintptr_t end,
                             const std::vector<runtime::FrameRow>& rows, bool signal_frame);
// Forgets the FDE registered for code starting at `begin` (code being freed) and frees
// its bytes (`__unw_remove_dynamic_fde`, which also drops libunwind's cached lookups).
void unregister_from_libunwind(uintptr_t begin);

}  // namespace jit
