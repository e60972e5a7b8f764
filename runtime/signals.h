// The process's signal handling: the SIGSEGV handler that turns a trapped poll into a
// call of the safepoint blob, recognises stack overflow in a guard page as a backstop,
// and reports anything else as an internal error with the pc and its code blob.
#pragma once
#include <setjmp.h>

namespace runtime {

// Crash protection for code that reads memory it cannot vouch for (a sampler walking an
// interrupted stack by guesswork, as JFR's classical sampler does): while a thread has a
// protection buffer set, a SIGSEGV or SIGBUS on it that is not a poll jumps back to the
// sigsetjmp that set the buffer instead of killing the process. Async-signal-safe; may
// nest inside a signal handler. Use through `protected_call`.
sigjmp_buf* set_crash_protection(sigjmp_buf* buf);  // returns the previous buffer
// Runs fn(arg) under crash protection: true if it returned, false if it crashed.
bool protected_call(void (*fn)(void*), void* arg);
// How many crashes protection has turned into failures, process-wide.
unsigned long protected_crash_count();

void install_signal_handlers();
// Gives the calling thread an alternate signal stack (needed to report stack overflow).
void install_alt_signal_stack();

}  // namespace runtime
