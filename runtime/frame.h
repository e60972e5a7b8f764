// Frame conventions shared by everything that generates or walks Mini frames.
//
// Calling convention for Mini code (interpreter and compiled alike):
//   - the caller pushes the arguments left to right (argument 0 at the highest address),
//     puts the callee's Method* in rbx and executes `call [rbx + entry]`;
//   - the callee pops its arguments and, if it returns a value, leaves it pushed where
//     argument 0 was, so the caller sees "args replaced by result" like any bytecode;
//   - r15 (Thread*) and r12 (interpreter dispatch table) are preserved; rbp is restored;
//     every other register may be clobbered.
//
// Interpreter frame, anchored at rbp (HotSpot x86 style):
//
//      [locals + 0]          local 0 (argument 0)       <- locals pointer (r14)
//      ...                   local i at [locals - 8*i]
//      [rbp + 16]            last local
//      [rbp +  8]            return pc
//      [rbp +  0]            caller's rbp
//      [rbp -  8]            Method*
//      [rbp - 16]            bcp, stored at every call, poll and runtime call
//      [rbp - 24]            locals pointer
//      [rbp - 32] ... rsp    expression stack, one 8-byte slot per value, top at [rsp]
//
// The caller's sp before it pushed the arguments is locals + 8, which is how a walker
// finds the sender's sp.
#pragma once
#include <cstdint>

namespace runtime {

inline constexpr int32_t kFrameReturnPcOffset = 8;
inline constexpr int32_t kFrameSavedFpOffset = 0;
inline constexpr int32_t kInterpFrameMethodOffset = -8;
inline constexpr int32_t kInterpFrameBcpOffset = -16;
inline constexpr int32_t kInterpFrameLocalsOffset = -24;
inline constexpr int32_t kInterpFrameFixedSlots = 3;  // below rbp, before the expression stack

// Registers with fixed roles in interpreted code (names for documentation and listings).
//   r15 Thread*   r13 bcp   r14 locals   r12 dispatch table   rbp frame   rsp expression stack top
//   rbx callee Method* at calls; scratch otherwise (callee-saved in C, so it survives runtime calls)

}  // namespace runtime
