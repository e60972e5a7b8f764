// What every emitter uses: moves between any two locations, integer and float
// operations on them, polls and pc descs, spills around calls, and calls into the
// runtime (anchor, stack helpers, throws).
#include "jit/compiler.h"

#include <algorithm>

#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/poll_asm.h"
#include "runtime/runtime_calls.h"
#include "runtime/thread.h"

namespace jit::baseline {

// dst <- src (64 bits) between any two locations: registers of either class or memory.
void Compiler::move(const Operand& dst, const Operand& src) {
  if (dst == src) return;
  bool dx = dst.isReg() && dst.as<Reg>().isXmm(), sx = src.isReg() && src.as<Reg>().isXmm();
  if (dst.isMem() && src.isMem()) {
    a.mov(rax, src.as<Mem>());
    a.mov(dst.as<Mem>(), rax);
  } else if (dx && sx) {
    a.movapd(dst.as<Xmm>(), src.as<Xmm>());
  } else if (dx) {
    if (src.isMem()) a.movsd(dst.as<Xmm>(), src.as<Mem>());
    else a.movq(dst.as<Xmm>(), src.as<Gp>());
  } else if (sx) {
    if (dst.isMem()) a.movsd(dst.as<Mem>(), src.as<Xmm>());
    else a.movq(dst.as<Gp>(), src.as<Xmm>());
  } else {
    a.emit(Inst::kIdMov, dst, src);
  }
}

void Compiler::zero(const Operand& dst) {
  if (dst.isMem())
    a.mov(dst.as<Mem>(), 0);
  else if (dst.as<Reg>().isXmm())
    a.xorps(dst.as<Xmm>(), dst.as<Xmm>());
  else
    a.xor_(dst.as<Gp>().r32(), dst.as<Gp>().r32());
}

// x = x OP y for an integer instruction (add, sub, imul, and, or, xor), whatever x and
// y are: a memory destination goes through rax (imul cannot write memory anyway).
void Compiler::int_op(Inst::Id id, const Operand& x, const Operand& y) {
  if (x.isReg()) {
    a.emit(id, x, y);
  } else {
    a.mov(rax, x.as<Mem>());
    a.emit(id, rax, y);
    a.mov(x.as<Mem>(), rax);
  }
}

void Compiler::binop(Inst::Id id, const Insn& i) {
  Operand right = right_operand(i, vm::Type::Int);
  if (deferred_.empty())
    int_op(id, expr(i.d - 2), right);
  else
    fused_binop(id, i, i.d - 2, left_operand(i, vm::Type::Int), right);
}

void Compiler::local_binop(Inst::Id id, const Insn& i) {
  Operand right = local(i.a());
  bool fused = !deferred_.empty();
  Operand left = right_operand(i, vm::Type::Int);  // the one operand on the stack
  if ((id == Inst::kIdAdd || id == Inst::kIdImul) && accumulate(i, id, vm::Type::Int, left)) return;
  if (fused)
    fused_binop(id, i, i.d - 1, left, right);
  else
    int_op(id, left, right);
}

void Compiler::fused_binop(Inst::Id id, const Insn& i, int depth, Operand left, Operand right) {
  bool commutative = id == Inst::kIdAdd || id == Inst::kIdImul || id == Inst::kIdAnd || id == Inst::kIdOr ||
                     id == Inst::kIdXor;
  if (left.isImm() && commutative) std::swap(left, right);  // `ldc k; iaddl x`: x + k
  // lea computes x + y, x + k and x - k (-k an int32 too) without writing either.
  bool lea = left.isReg() && ((id == Inst::kIdAdd && (right.isReg() || right.isImm())) ||
                              (id == Inst::kIdSub && right.isImm() && right.as<Imm>().value() != INT32_MIN));
  Operand dst = expr(depth);
  int stored = next_store_to_register(i);
  if (stored >= 0 && (lea || local(stored) != right)) dst = local(stored);  // never `mov x, y; sub x, x`
  if (lea && dst.isReg()) {
    if (right.isReg())
      a.lea(dst.as<Gp>(), x86::ptr(left.as<Gp>(), right.as<Gp>()));
    else
      a.lea(dst.as<Gp>(), x86::ptr(left.as<Gp>(), int32_t(id == Inst::kIdSub ? -right.as<Imm>().value()
                                                                             : right.as<Imm>().value())));
  } else if (id == Inst::kIdImul && right.isImm() && dst.isReg() && !left.isImm()) {
    a.emit(Inst::kIdImul, dst, left, right);  // imul r, r/m, imm32
  } else {
    move(dst, left);
    int_op(id, dst, right);
  }
  if (stored >= 0 && dst == local(stored)) {
    take_next(i);
    after_local_write(stored);
  }
}

// x = x OP y for a scalar double instruction (addsd, ...), x an xmm register or memory.
void Compiler::float_op(Inst::Id id, const Operand& x, const Operand& y) {
  if (x.isReg()) {
    a.emit(id, x, y);
  } else {
    a.movsd(xmm0, x.as<Mem>());
    a.emit(id, xmm0, y);
    a.movsd(x.as<Mem>(), xmm0);
  }
}

void Compiler::cmp(const Operand& x, const Operand& y) {
  if (x.isMem() && y.isMem()) {
    a.mov(rax, y.as<Mem>());
    a.cmp(x.as<Mem>(), rax);
  } else {
    a.emit(Inst::kIdCmp, x, y);
  }
}

// An xmm register holding the float at `o` (o itself, or xmm0/xmm1 loaded from memory).
Xmm Compiler::in_xmm(const Operand& o, const Xmm& scratch) {
  if (o.isReg()) return o.as<Xmm>();
  a.movsd(scratch, o.as<Mem>());
  return scratch;
}

Gp Compiler::in_gp(const Operand& o, const Gp& scratch) {
  if (o.isReg() && o.as<Reg>().isGp()) return o.as<Gp>();
  load(scratch, o);
  return scratch;
}

// A stub call does `n` elements of work without a poll: it counts as n iterations
// against the strip-mining countdown, and the loops around it end their strips, so a
// counted loop around stub calls still polls within the bound. Clobbers rax.
void Compiler::charge_strip_countdown(const Gp& n, size_t bci) {
  if (options_.strip_mining_iters == 0 || !options_.emit_polls) return;
  Label charged = a.newLabel();
  a.sub(strip_countdown(), n);
  a.jge(charged);
  a.mov(strip_countdown(), 0);  // never negative: a strip's entry compares it unsigned
  a.bind(charged);
  end_enclosing_strips(bci);
}

void Compiler::poll(int32_t bci) {
  runtime::PollLabels at = runtime::new_branch_poll_labels(a);
  mark(bci, true);
  if (!options_.emit_polls) return;
  runtime::emit_branch_poll(a, at);
  polls.push_back({at, sc_, bci});
  // Stopped here, every register is in the safepoint blob's save area.
  int depth = int(stack_types(size_t(bci)).size());
  record_gc_map(at.resume, size_t(bci), depth, 0, false);
}

void Compiler::record_gc_map(const Label& at, size_t bci, int depth, int spilled_below, bool locals_in_homes) {
  GcMapAt map{at, {}};
  auto add = [&](const Operand& o) {
    if (o.isReg())
      map.slots.push_back({int8_t(o.as<Gp>().id()), 0});
    else
      map.slots.push_back({runtime::GcSlot::kFrame, int32_t(o.as<Mem>().offset())});
  };
  Types t = stack_types(bci);
  for (int d = 0; d < depth; d++)
    if (vm::is_reference(t[size_t(d)])) add(d < spilled_below ? Operand(home_expr(d)) : expr(d, t[size_t(d)]));
  size_t scope_bci = bci;
  std::vector<int> seen;
  for (const InlineScope* s = sc_; s != nullptr; scope_bci = s->call_bci, s = s->caller) {
    const auto& types = s->fn->local_types;
    for (int i = 0; i < int(types.size()); i++) {
      if (!vm::is_reference(types[size_t(i)]) || !s->info.live_locals.live(scope_bci, uint32_t(i))) continue;
      int u = unified(*s, i);
      if (std::find(seen.begin(), seen.end(), u) != seen.end()) continue;  // an aliased parameter and its caller's local
      seen.push_back(u);
      add(locals_in_homes ? Operand(home(u)) : where(u));
    }
  }
  gc_maps.push_back(std::move(map));
}

// Only the live ones, those record_gc_map lists: a dead local's register may hold what a
// callee left there (reload_locals skips it), and a root parameter's home is the
// caller's argument slot, which an interpreted caller's walk reads as its own root.
void Compiler::spill_reference_locals(size_t bci) {
  for (int k = 0; k < kLocalRegCount; k++)
    if (int u = reg_local_[k]; u >= 0 && written_[size_t(u)] && in_scope_chain(u) &&
                               vm::is_reference(local_types_[size_t(u)]) && live_in_chain(u, bci))
      a.mov(home(u), kLocalRegs[k]);
}

// Starts a new pc desc at the current position.
void Compiler::mark(int32_t bci, bool safepoint) {
  Label l = a.newLabel();
  a.bind(l);
  descs.push_back({l, sc_, bci, safepoint});
}

// The types of the whole (absolute) expression stack before `bci` of the current body.
Compiler::Types Compiler::stack_types(size_t bci) const {
  Types t = outer_types_;
  const Types& own = sc_->info.stack_at[bci];
  t.insert(t.end(), own.begin(), own.end());
  return t;
}

void Compiler::spill_exprs(const Types& t, int below) {
  for (int d = 0; d < below; d++) {
    Operand o = expr(d, t[size_t(d)]);
    if (o.isReg()) move(home_expr(d), o);
  }
}

void Compiler::reload_exprs(const Types& t, int below) {
  for (int d = 0; d < below; d++) {
    Operand o = expr(d, t[size_t(d)]);
    if (o.isReg()) move(o, home_expr(d));
  }
}

// Register locals of the body chain to their homes and back: all of them around Mini
// calls (the callee may be interpreted and use every register); only the xmm ones
// around C calls (the others are callee-saved in C). A root local the method never
// writes is never stored: its home (an argument, or a zeroed extra local) holds its
// value all along. A register of a body not on the chain holds nothing live: that body
// writes its locals where it is entered. Across a Mini call, a local no later path reads
// is neither stored nor reloaded (fib's n after its second call): its register is
// written again before any read.
void Compiler::spill_locals(bool gp, std::optional<size_t> across) {
  auto wanted = [&](int u) { return u >= 0 && written_[size_t(u)] && in_scope_chain(u) && (!across || live_across(u, *across)); };
  for (int k = 0; gp && k < kLocalRegCount; k++)
    if (int u = reg_local_[k]; wanted(u)) a.mov(home(u), kLocalRegs[k]);
  for (int k = 0; k < kXmmLocalCount; k++)
    if (int u = xmm_local_[k]; wanted(u)) a.movsd(home(u), kXmmLocals[k]);
}

void Compiler::reload_locals(bool gp, std::optional<size_t> across) {
  auto wanted = [&](int u) { return u >= 0 && in_scope_chain(u) && (!across || live_across(u, *across)); };
  for (int k = 0; gp && k < kLocalRegCount; k++)
    if (int u = reg_local_[k]; wanted(u)) a.mov(kLocalRegs[k], home(u));
  for (int k = 0; k < kXmmLocalCount; k++)
    if (int u = xmm_local_[k]; wanted(u)) a.movsd(kXmmLocals[k], home(u));
}

bool Compiler::live_across(int u, size_t bci) const {
  // Live after the call is live before the next instruction (a call reads no local).
  size_t at = bci + vm::op_info(Op(sc_->fn->code[bci])).length;
  return at >= sc_->fn->code.size() || live_in_chain(u, at);
}

bool Compiler::live_in_chain(int u, size_t bci) const {
  for (const InlineScope* s = sc_; s != nullptr; bci = s->call_bci, s = s->caller)
    for (int i = 0; i < int(s->fn->local_count()); i++)
      if (unified(*s, i) == u && s->info.live_locals.live(bci, uint32_t(i))) return true;
  return false;
}

// Anchor at this frame with pc = `after`, then call `fn` with rsp aligned; rsp is
// restored from rbp afterwards.
void Compiler::call_runtime(void* fn, const Label& after) {
  a.lea(rax, ptr(after));
  a.mov(qword_ptr(r15, runtime::kThreadAnchorPcOffset), rax);
  a.mov(qword_ptr(r15, runtime::kThreadAnchorFpOffset), rbp);
  a.mov(qword_ptr(r15, runtime::kThreadAnchorSpOffset), rsp);
  a.and_(rsp, -16);
  a.mov(rax, imm(reinterpret_cast<uint64_t>(fn)));
  a.call(rax);
  calls_emitted_++;
  a.bind(after);
  a.lea(rsp, ptr(rbp, -int32_t(frame_bytes_)));
}

void Compiler::throw_call(void* fn) {
  Label after = a.newLabel();
  a.mov(rdi, r15);
  call_runtime(fn, after);
  a.ud2();
}

// A runtime stack helper (runtime_calls.h) at depth d popping `pops` values and
// pushing one of type `result` (Void: none). Its operands are passed in their homes.
void Compiler::stack_helper(void* fn, size_t bci, int d, int pops, vm::Type result, bool spilled) {
  MVM_ASSERT(pops <= d, "a stack helper pops only values on the expression stack (so at depth 0 nothing reads rdx)");
  Label after = a.newLabel();
  Types t = stack_types(bci);
  if (!spilled) spill_exprs(t, d);
  spill_locals(false);
  spill_reference_locals(bci);
  a.mov(rdi, r15);
  a.mov(rsi, imm(reinterpret_cast<uint64_t>(sc_->fn->code.data() + bci)));
  a.lea(rdx, home_expr(d - 1));  // d == 0: the slot above depth 0, which it pops nothing from
  a.mov(rcx, imm(reinterpret_cast<uint64_t>(sc_->m)));
  mark(int32_t(bci), true);
  call_runtime(fn, after);
  record_gc_map(after, bci, d, d, true);
  a.mov(qword_ptr(r15, runtime::kThreadAnchorSpOffset), 0);
  t.resize(size_t(d - pops));
  if (result != vm::Type::Void) t.push_back(result);
  reload_exprs(t, int(t.size()));
  reload_locals(false);
}

Label Compiler::cold(std::function<void()> emit) {
  MVM_ASSERT(emitting_scope_ == sc_, "a cold path belongs to the instruction being emitted");
  Label entry = a.newLabel();
  cold_.push_back({entry, emitting_scope_, emitting_bci_, outer_types_, std::move(emit)});
  return entry;
}

std::function<void()> Compiler::throws_null(runtime::NullUse use) {
  return [this, use] {
    a.mov(esi, int(use));
    throw_call(reinterpret_cast<void*>(&minivm_rt_throw_null));
  };
}

// A getfield, putfield, invokevirtual or invokeinterface on null: the error names the member.
std::function<void()> Compiler::throws_null_member(size_t bci) {
  const uint8_t* bcp = sc_->fn->code.data() + bci;
  return [this, bcp] {
    a.mov(rsi, imm(reinterpret_cast<uint64_t>(bcp)));
    throw_call(reinterpret_cast<void*>(&minivm_rt_throw_null_member));
  };
}

void Compiler::null_member_check(const Gp& ref, size_t bci) {
  a.test(ref, ref);
  a.jz(cold(throws_null_member(bci)));
}

void Compiler::implicit_null_check(std::function<void()> throw_path) {
  Label at = a.newLabel();
  a.bind(at);
  implicit_nulls.push_back({at, cold(std::move(throw_path))});
}

// The length is read from the array itself, which is its null check.
void Compiler::bounds_check(const Gp& array, const Gp& index, runtime::NullUse use) {
  implicit_null_check(throws_null(use));
  a.cmp(index, qword_ptr(array, runtime::kArrayLengthOffset));
  a.jae(cold([this, array, index] {  // unsigned: a negative index is out of range too
    a.mov(rdx, qword_ptr(array, runtime::kArrayLengthOffset));  // first: the array may be in rsi
    a.mov(rsi, index);
    throw_call(reinterpret_cast<void*>(&minivm_rt_throw_index));
  }));
}

}  // namespace jit::baseline
