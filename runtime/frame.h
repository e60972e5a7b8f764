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
//
// Compiled frame (jit/baseline_compiler.h has the slots below rbp, which only the JIT
// and its stack maps address):
//
//      [rbp + 16 + 8*(n-1-i)] argument i of n (argument 0 highest)
//      [rbp +  8]            return pc
//      [rbp +  0]            caller's rbp
//      [rbp -  8] ... rsp    homes of locals, inline slots and expression depths
//
// Both kinds are rbp-chained, with the return pc and the caller's rbp at the same
// offsets and the arguments right above them: what a walker needs to step out of either
// is named here once.
#pragma once
#include <cstdint>

namespace runtime {

inline constexpr int32_t kFrameSavedFpOffset = 0;
inline constexpr int32_t kFrameReturnPcOffset = 8;
inline constexpr int32_t kFrameArgsOffset = 16;  // the last argument's slot; argument 0 is highest
inline constexpr int32_t kInterpFrameMethodOffset = -8;
inline constexpr int32_t kInterpFrameBcpOffset = -16;
inline constexpr int32_t kInterpFrameLocalsOffset = -24;
inline constexpr int32_t kInterpFrameFixedSlots = 3;  // below rbp, before the expression stack

// Argument i of a frame with n arguments, from its rbp.
constexpr int32_t frame_arg_offset(int i, int n) { return kFrameArgsOffset + 8 * (n - 1 - i); }
// Where a callee with n > 0 arguments leaves its result: argument 0's slot, so that its
// caller sees the arguments replaced by the result, as after any bytecode.
constexpr int32_t frame_result_offset(int n) { return frame_arg_offset(0, n); }

// The frame's real fp (HotSpot's real_fp): the lowest address above its return pc, where
// the caller's sp was at the call. A frame called after a sample was taken at sp has its
// real fp at or below that sp.
constexpr uintptr_t real_fp(uintptr_t fp) { return fp + kFrameArgsOffset; }
// The caller's sp before it pushed the n arguments: where a walker finds the sender.
constexpr uintptr_t sender_sp(uintptr_t fp, int n) { return real_fp(fp) + 8 * uintptr_t(n); }

// Top-of-stack caching (interp/interp_masm.h): an interpreter frame's expression value k
// (0 = bottom), when in memory, lies below the fixed slots and one junk slot (the cached
// top at depth 0, pushed once).
constexpr uintptr_t interp_expr_address(uintptr_t fp, int k) {
  return fp - 8 * uintptr_t(kInterpFrameFixedSlots + 2 + k);
}

// Registers with fixed roles in interpreted code (names for documentation and listings).
//   r15 Thread*   r13 bcp   r14 locals   r12 dispatch table   rbp frame   rsp expression stack top
//   rbx callee Method* at calls; scratch otherwise (callee-saved in C, so it survives runtime calls)

}  // namespace runtime
