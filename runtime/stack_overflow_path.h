// The out-of-line path a method entry takes when the new frame would not fit on the
// stack: shared by the interpreter's method entry and the JIT's prologue, which reach it
// with the return pc at [rsp], no frame of their own yet and r15 = Thread*.
#pragma once
#include <asmjit/x86.h>

#include "runtime/frame_recorder.h"

namespace runtime {

// Binds `path` and emits the path: it anchors the thread at the caller's frame (the
// error is reported from there, where the stack trace is intact) and calls the runtime,
// which does not return. Records its frame shapes, then `after` for the code that follows.
void emit_stack_overflow_path(asmjit::x86::Assembler& a, FrameRecorder& frames, const asmjit::Label& path,
                              const FrameRow& after);

}  // namespace runtime
