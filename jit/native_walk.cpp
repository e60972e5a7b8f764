#include "jit/native_walk.h"

#include <ucontext.h>

#include "jit/llvm_unwind.h"

namespace jit {

namespace {

NativeWalk collect(const LlvmUnwind* u, unw_cursor_t& cursor, NativeFrame* frames, size_t max, size_t count,
                   uintptr_t first_pc) {
  NativeWalk w;
  w.count = count;
  for (;;) {
    if (w.count == max) {
      w.end = WalkEnd::truncated;
      return w;
    }
    unw_word_t ip = 0, sp = 0, fp = 0;
    u->get_reg(&cursor, UNW_REG_IP, &ip);
    u->get_reg(&cursor, UNW_REG_SP, &sp);
    u->get_reg(&cursor, UNW_X86_64_RBP, &fp);
    frames[w.count] = {w.count == 0 && first_pc != 0 ? first_pc : uintptr_t(ip), uintptr_t(sp), uintptr_t(fp)};
    w.count++;
    int r = u->step(&cursor);
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

__attribute__((noinline)) NativeWalk walk_native_stack(NativeFrame* frames, size_t max) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return {};
  unw_context_t context;
  unw_cursor_t cursor;
  if (u->getcontext(&context) != 0 || u->init_local(&cursor, &context) != 0) return {0, WalkEnd::error};
  int r = u->step(&cursor);  // over this function's own frame
  if (r <= 0) return {0, r == 0 ? WalkEnd::end_of_stack : WalkEnd::error};
  return collect(u, cursor, frames, max, 0, 0);
}

__attribute__((noinline)) NativeWalk walk_native_stack_from(const void* ucontext, NativeFrame* frames, size_t max) {
  const LlvmUnwind* u = llvm_unwind();
  if (u == nullptr) return {};
  if (max == 0) return {0, WalkEnd::truncated};
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  const greg_t* g = uc->uc_mcontext.gregs;
  unw_context_t context;
  unw_cursor_t cursor;
  if (u->getcontext(&context) != 0 || u->init_local(&cursor, &context) != 0) return {0, WalkEnd::error};
  static const struct {
    int unw, greg;
  } kRegs[] = {{UNW_X86_64_RAX, REG_RAX}, {UNW_X86_64_RBX, REG_RBX}, {UNW_X86_64_RCX, REG_RCX},
               {UNW_X86_64_RDX, REG_RDX}, {UNW_X86_64_RSI, REG_RSI}, {UNW_X86_64_RDI, REG_RDI},
               {UNW_X86_64_RBP, REG_RBP}, {UNW_X86_64_RSP, REG_RSP}, {UNW_X86_64_R8, REG_R8},
               {UNW_X86_64_R9, REG_R9},   {UNW_X86_64_R10, REG_R10}, {UNW_X86_64_R11, REG_R11},
               {UNW_X86_64_R12, REG_R12}, {UNW_X86_64_R13, REG_R13}, {UNW_X86_64_R14, REG_R14},
               {UNW_X86_64_R15, REG_R15}};
  for (auto& r : kRegs) u->set_reg(&cursor, r.unw, unw_word_t(g[r.greg]));
  uintptr_t pc = uintptr_t(g[REG_RIP]), sp = uintptr_t(g[REG_RSP]), fp = uintptr_t(g[REG_RBP]);
  if (*reinterpret_cast<const uint8_t*>(pc) == 0xC3) {
    // At a `ret` the frame is known without unwind info (and pc+1 may be past the code).
    frames[0] = {pc, sp, fp};
    u->set_reg(&cursor, UNW_REG_SP, sp + 8);
    u->set_reg(&cursor, UNW_REG_IP, *reinterpret_cast<const unw_word_t*>(sp));
    return collect(u, cursor, frames, max, 1, 0);
  }
  // libunwind evaluates a frame's CFA rows for pc-1, as for a return address; an
  // interrupted pc is exact, so ask for pc+1 (inside the same instruction) and report pc.
  u->set_reg(&cursor, UNW_REG_IP, pc + 1);
  return collect(u, cursor, frames, max, 0, pc);
}

}  // namespace jit
