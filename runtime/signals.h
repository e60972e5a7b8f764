// The process's signal handling: the SIGSEGV handler that turns a trapped poll into a
// call of the safepoint blob, recognises stack overflow in a guard page as a backstop,
// and reports anything else as an internal error with the pc and its code blob.
#pragma once

namespace runtime {

void install_signal_handlers();
// Gives the calling thread an alternate signal stack (needed to report stack overflow).
void install_alt_signal_stack();

}  // namespace runtime
