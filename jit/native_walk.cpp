#include "jit/native_walk.h"

#include <ucontext.h>

#include <iterator>

#include "jit/llvm_unwind.h"
#include "runtime/return_barrier.h"

namespace jit {

namespace {

// The general registers: libunwind's numbers and the signal context's.
const struct {
  int unw, greg;
} kRegs[] = {{UNW_X86_64_RAX, REG_RAX}, {UNW_X86_64_RBX, REG_RBX}, {UNW_X86_64_RCX, REG_RCX},
             {UNW_X86_64_RDX, REG_RDX}, {UNW_X86_64_RSI, REG_RSI}, {UNW_X86_64_RDI, REG_RDI},
             {UNW_X86_64_RBP, REG_RBP}, {UNW_X86_64_RSP, REG_RSP}, {UNW_X86_64_R8, REG_R8},
             {UNW_X86_64_R9, REG_R9},   {UNW_X86_64_R10, REG_R10}, {UNW_X86_64_R11, REG_R11},
             {UNW_X86_64_R12, REG_R12}, {UNW_X86_64_R13, REG_R13}, {UNW_X86_64_R14, REG_R14},
             {UNW_X86_64_R15, REG_R15}};

// Goes on from a frame whose return pc is the return barrier's entry at its real return
// pc. libunwind ended the walk there (the barrier's info, if it found any, is not this
// frame's), and its cursor keeps that end even when the IP is set again, so the walk
// restarts on a fresh cursor with the same registers. The IP is set to the pc inside the
// call (libunwind applies a set IP as it stands, not as a return address).
bool resume_past_barrier(const LlvmUnwind* u, unw_cursor_t& cursor, uintptr_t target) {
  unw_word_t values[std::size(kRegs)];
  for (size_t i = 0; i < std::size(kRegs); i++) u->get_reg(&cursor, kRegs[i].unw, &values[i]);
  unw_context_t context;
  if (u->getcontext(&context) != 0 || u->init_local(&cursor, &context) != 0) return false;
  for (size_t i = 0; i < std::size(kRegs); i++) u->set_reg(&cursor, kRegs[i].unw, values[i]);
  return u->set_reg(&cursor, UNW_REG_IP, target - 1) == 0;
}

NativeWalk collect(const LlvmUnwind* u, unw_cursor_t& cursor, NativeFrame* frames, size_t max, size_t count,
                   uintptr_t first_pc, const runtime::ThreadCore* core) {
  NativeWalk w;
  w.count = count;
  uintptr_t barrier_target = 0;  // the frame's real return pc, when the walk resumed past the barrier
  for (;;) {
    if (w.count == max) {
      w.end = WalkEnd::truncated;
      return w;
    }
    unw_word_t ip = 0, sp = 0, fp = 0;
    u->get_reg(&cursor, UNW_REG_IP, &ip);
    u->get_reg(&cursor, UNW_REG_SP, &sp);
    u->get_reg(&cursor, UNW_X86_64_RBP, &fp);
    uintptr_t pc = w.count == 0 && first_pc != 0 ? first_pc : barrier_target != 0 ? barrier_target : uintptr_t(ip);
    frames[w.count] = {pc, uintptr_t(sp), uintptr_t(fp)};
    barrier_target = 0;
    w.count++;
    int r = u->step(&cursor);
    unw_word_t next = 0;
    if (core != nullptr && r >= 0 && u->get_reg(&cursor, UNW_REG_IP, &next) == 0 && next != 0 &&
        uintptr_t(next) == runtime::return_barrier_entry()) {
      barrier_target = core->barrier_target;
      r = resume_past_barrier(u, cursor, barrier_target) ? 1 : -1;
    }
    if (r == 0) {
      w.end = WalkEnd::end_of_stack;
      return w;
    }
    if (r < 0) {
      w.end = WalkEnd::error;
      return w;
    }
  }
}

}  // namespace

__attribute__((noinline)) NativeWalk walk_native_stack(NativeFrame* frames, size_t max, const runtime::ThreadCore* core) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return {};
  unw_context_t context;
  unw_cursor_t cursor;
  if (u->getcontext(&context) != 0 || u->init_local(&cursor, &context) != 0) return {0, WalkEnd::error};
  int r = u->step(&cursor);  // over this function's own frame
  if (r <= 0) return {0, r == 0 ? WalkEnd::end_of_stack : WalkEnd::error};
  return collect(u, cursor, frames, max, 0, 0, core);
}

namespace {

// A cursor at the context's registers (false when libunwind cannot make one).
bool cursor_at(const LlvmUnwind* u, const void* ucontext, unw_cursor_t& cursor) {
  const greg_t* g = static_cast<const ucontext_t*>(ucontext)->uc_mcontext.gregs;
  unw_context_t context;
  if (u->getcontext(&context) != 0 || u->init_local(&cursor, &context) != 0) return false;
  for (auto& r : kRegs) u->set_reg(&cursor, r.unw, unw_word_t(g[r.greg]));
  return true;
}

}  // namespace

__attribute__((noinline)) NativeWalk walk_native_stack_from(const void* ucontext, NativeFrame* frames, size_t max,
                                                          const runtime::ThreadCore* core) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return {};
  if (max == 0) return {0, WalkEnd::truncated};
  unw_cursor_t cursor;
  if (!cursor_at(u, ucontext, cursor)) return {0, WalkEnd::error};
  const greg_t* g = static_cast<const ucontext_t*>(ucontext)->uc_mcontext.gregs;
  uintptr_t pc = uintptr_t(g[REG_RIP]), sp = uintptr_t(g[REG_RSP]), fp = uintptr_t(g[REG_RBP]);
  if (*reinterpret_cast<const uint8_t*>(pc) == 0xC3) {
    // At a `ret` the frame is known without unwind info (and pc+1 may be past the code).
    frames[0] = {pc, sp, fp};
    u->set_reg(&cursor, UNW_REG_SP, sp + 8);
    u->set_reg(&cursor, UNW_REG_IP, *reinterpret_cast<const unw_word_t*>(sp));
    return collect(u, cursor, frames, max, 1, 0, core);
  }
  // libunwind evaluates a frame's CFA rows for pc-1, as for a return address; an
  // interrupted pc is exact, so ask for pc+1 (inside the same instruction) and report pc.
  u->set_reg(&cursor, UNW_REG_IP, pc + 1);
  return collect(u, cursor, frames, max, 0, pc, core);
}

__attribute__((noinline)) NativeWalk walk_native_stack_from_caller(const void* ucontext, uintptr_t pc, uintptr_t sp,
                                                                 uintptr_t fp, NativeFrame* frames, size_t max,
                                                                 const runtime::ThreadCore* core) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return {};
  unw_cursor_t cursor;
  if (!cursor_at(u, ucontext, cursor)) return {0, WalkEnd::error};
  u->set_reg(&cursor, UNW_REG_SP, sp);
  u->set_reg(&cursor, UNW_X86_64_RBP, fp);
  // A set IP is looked up as it stands: the pc inside the call gives the call's row.
  u->set_reg(&cursor, UNW_REG_IP, pc - 1);
  return collect(u, cursor, frames, max, 0, pc, core);
}

}  // namespace jit
