// MVM_ASSERT(cond, "what must hold"): an invariant the code relies on, stated where it is
// relied on. Checked in Debug and sanitizer builds (MINIVM_ASSERTS, set by CMake; the test
// command's ASan build runs with them), compiled out in Release, where `cond` is not
// evaluated. A failure writes what must hold, the condition and where, with write(2) only
// (an invariant may fail inside a signal handler), and aborts.
#pragma once

namespace runtime {

[[noreturn]] void invariant_failed(const char* what, const char* condition, const char* file, int line);

// Whether this build checks its invariants.
inline constexpr bool kInvariantsChecked =
#if MINIVM_ASSERTS
    true;
#else
    false;
#endif

}  // namespace runtime

#if MINIVM_ASSERTS
#define MVM_ASSERT(cond, what) ((cond) ? (void)0 : ::runtime::invariant_failed(what, #cond, __FILE__, __LINE__))
#else
#define MVM_ASSERT(cond, what) ((void)sizeof(!(cond)))
#endif
