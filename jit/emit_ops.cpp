// One emitter per opcode of vm/opcodes.def, and the table that dispatches to them.
#include "jit/compiler.h"

#include <iterator>

#include "jit/emitter_traits.h"
#include "jit/intrinsic_stubs.h"
#include "runtime/alloc_asm.h"
#include "runtime/barrier_asm.h"
#include "runtime/classes.h"
#include "runtime/closures.h"
#include "runtime/errors.h"
#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/mini_semantics_asm.h"
#include "runtime/slowdown.h"
#include "runtime/runtime_calls.h"
#include "runtime/thread.h"
#include "runtime/vm.h"

namespace jit::baseline {

// ---- One emitter per opcode of vm/opcodes.def, with its traits ----
//
// `emit` dispatches through a table built from opcodes.def itself: an opcode with no
// EMIT below instantiates the primary template, whose static_assert stops the build
// here and names the opcode ("[with vm::Op op = vm::Op::...]"). Its traits
// (jit/emitter_traits.h) are the EMIT's second argument, and their table is built the
// same way.

template <Op op>
void Compiler::emit_op(const Insn&) {
  static_assert(op != op, "this opcode of vm/opcodes.def has no JIT emitter: add EMIT(name, traits) in jit/emit_ops.cpp");
}

template <Op op>
struct Traits {
  static_assert(op != op, "this opcode's JIT emitter declares no traits: EMIT(name, traits) in jit/emit_ops.cpp");
};

#define EMIT(name, traits)                                        \
  template <>                                                     \
  struct Traits<Op::name> {                                       \
    static constexpr uint8_t value = traits;                      \
  };                                                              \
  template <>                                                     \
  void Compiler::emit_op<Op::name>([[maybe_unused]] const Insn& i)

EMIT(nop, REGS) {}
EMIT(ldc, REGS) {
  // The slot the Method holds: a string or function constant is its permanent value there.
  const vm::Constant c{sc_->fn->constants[i.a()].type, sc_->m->constants[i.a()]};
  Operand dst = expr(i.d, c.type);
  if (dst.isReg() && dst.as<Reg>().isXmm()) {
    if (c.bits == 0)
      a.xorps(dst.as<Xmm>(), dst.as<Xmm>());
    else
      a.movsd(dst.as<Xmm>(), float_constant(uint64_t(c.bits)));
  } else if (dst.isReg()) {
    a.mov(dst.as<Gp>(), imm(c.bits));
  } else if (c.bits == int64_t(int32_t(c.bits))) {
    a.mov(dst.as<Mem>(), imm(c.bits));
  } else {
    a.mov(rax, imm(c.bits));
    a.mov(dst.as<Mem>(), rax);
  }
}
EMIT(load, REGS) { move(expr(i.d, sc_->fn->local_types[i.a()]), local(i.a())); }
EMIT(store, REGS | FUSE_I | FUSE_F) {
  move(local(i.a()), right_operand(i, sc_->fn->local_types[i.a()]));
  after_local_write(i.a());
}
void Compiler::global_access(const Insn& i, bool store) {
  vm::Type t = runtime::VM::get().module().globals[i.a()].type;
  a.mov(rcx, imm(reinterpret_cast<uint64_t>(runtime::VM::get().globals() + i.a())));
  if (!store)
    move(expr(i.d, t), qword_ptr(rcx));
  else
    move(qword_ptr(rcx), expr(i.d - 1, t));
}
EMIT(gload, PLAIN) { global_access(i, false); }
EMIT(gstore, PLAIN) { global_access(i, true); }
// --slowdown's work (runtime/slowdown.h), its turns fixed as the method compiles; rcx and
// rdx are scratch between instructions, and no value moves.
EMIT(slowdown, REGS) {
  a.mov(rdx, x86::qword_ptr(x86::r15, runtime::kThreadSlowdownPassesOffset));
  a.inc(x86::qword_ptr(rdx, int32_t(8 * vm::read_u16(i.p, vm::kOperandA))));
  uint64_t turns = runtime::slowdown_turns(uint32_t(vm::read_i32(i.p, vm::kOperandB)));
  if (turns == 0) return;
  a.mov(rcx, imm(turns));
  runtime::emit_slowdown_spin(a, rcx, rdx);
}
EMIT(iinc, REGS) {
  a.emit(Inst::kIdAdd, local(i.a()), imm(vm::read_i32(i.p, vm::kOperandB)));
  after_local_write(i.a());
}
EMIT(pop, REGS) {}
EMIT(dup, REGS) { move(expr(i.d, top_type(i, 1)), expr(i.d - 1, top_type(i, 1))); }
EMIT(dup2, REGS) {
  move(expr(i.d, top_type(i, 2)), expr(i.d - 2, top_type(i, 2)));
  move(expr(i.d + 1, top_type(i, 1)), expr(i.d - 1, top_type(i, 1)));
}

// --- integer and bool arithmetic ---
EMIT(iadd, REGS | FUSE_I | FUSE_LEFT) { binop(Inst::kIdAdd, i); }
EMIT(isub, REGS | FUSE_I | FUSE_LEFT) { binop(Inst::kIdSub, i); }
EMIT(imul, REGS | FUSE_I | FUSE_LEFT) { binop(Inst::kIdImul, i); }
void Compiler::divide(const Insn& i, bool remainder) {
  int d = i.d;
  Operand right = right_operand(i, vm::Type::Int);
  if (right.isImm()) {
    int64_t v = right.as<Imm>().value();
    if (v > 1 && (v & (v - 1)) == 0) {
      divide_by_power_of_two(expr(d - 2), v, remainder);
      return;
    }
    if (v != 0 && v != -1) {  // neither throws nor wraps: idiv alone
      load(rax, expr(d - 2));
      a.mov(rcx, right.as<Imm>());
      a.cqo();
      a.idiv(rcx);
      a.emit(Inst::kIdMov, expr(d - 2), remainder ? rdx : rax);
      return;
    }
  }
  Label minus_one = a.newLabel(), done = a.newLabel();
  load(rcx, right);
  a.test(rcx, rcx);
  a.jz(cold([this] { throw_call(reinterpret_cast<void*>(&minivm_rt_throw_div_zero)); }));
  load(rax, expr(d - 2));
  a.cmp(rcx, -1);
  a.je(minus_one);
  a.cqo();
  a.idiv(rcx);
  a.emit(Inst::kIdMov, expr(d - 2), remainder ? rdx : rax);
  a.jmp(done);
  a.bind(minus_one);  // MIN / -1 = MIN (negation wraps), MIN % -1 = 0
  if (!remainder) {
    a.neg(rax);
    a.emit(Inst::kIdMov, expr(d - 2), rax);
  } else {
    a.emit(Inst::kIdMov, expr(d - 2), imm(0));
  }
  a.bind(done);
}

// x / 2^k and x % 2^k as Java defines them (the quotient truncated toward zero, the
// remainder with the dividend's sign) without idiv, whose latency is that of tens of
// adds: a negative x is biased by 2^k - 1 before the arithmetic shift, so it rounds
// toward zero, and the remainder is x minus the quotient's multiple.
void Compiler::divide_by_power_of_two(const Operand& x, int64_t v, bool remainder) {
  int k = __builtin_ctzll(uint64_t(v));
  Gp xr = in_gp(x, rax);  // x itself when it is in a register
  a.mov(rdx, xr);
  if (k == 1) {
    a.shr(rdx, 63);  // the sign bit is the bias 1
  } else {
    a.sar(rdx, 63);
    a.shr(rdx, 64 - k);  // 2^k - 1 for a negative x, else 0
  }
  if (!remainder) {
    a.add(xr, rdx);
    a.sar(xr, k);
  } else {
    a.add(rdx, xr);
    a.and_(rdx, imm(-v));  // a fused immediate is an int32 (operand_of), so -v is one too
    a.sub(xr, rdx);
  }
  if (xr != x) a.emit(Inst::kIdMov, x, xr);
}
EMIT(idiv, CALLS | FUSE_I) { divide(i, false); }
EMIT(irem, CALLS | FUSE_I) { divide(i, true); }
EMIT(ineg, REGS) { a.emit(Inst::kIdNeg, expr(i.d - 1)); }
EMIT(inot, REGS) { a.emit(Inst::kIdNot, expr(i.d - 1)); }
EMIT(iand, REGS | FUSE_I | FUSE_LEFT) { binop(Inst::kIdAnd, i); }
EMIT(ior, REGS | FUSE_I | FUSE_LEFT) { binop(Inst::kIdOr, i); }
EMIT(ixor, REGS | FUSE_I | FUSE_LEFT) { binop(Inst::kIdXor, i); }
void Compiler::shift(const Insn& i, Inst::Id id) {
  Operand n = right_operand(i, vm::Type::Int);
  if (n.isImm()) {
    a.emit(id, expr(i.d - 2), imm(n.as<Imm>().value() & 63));  // Mini's count is mod 64
    return;
  }
  load(rcx, n);
  a.emit(id, expr(i.d - 2), cl);  // x86 masks the count to 6 bits, as Mini does
}
EMIT(ishl, REGS | FUSE_I) { shift(i, Inst::kIdShl); }
EMIT(ishr, REGS | FUSE_I) { shift(i, Inst::kIdSar); }
EMIT(iushr, REGS | FUSE_I) { shift(i, Inst::kIdShr); }
EMIT(zand, REGS) { binop(Inst::kIdAnd, i); }
EMIT(zor, REGS) { binop(Inst::kIdOr, i); }
EMIT(zxor, REGS) { binop(Inst::kIdXor, i); }
EMIT(znot, REGS) { a.emit(Inst::kIdXor, expr(i.d - 1), imm(1)); }

// --- floats ---
EMIT(fadd, REGS | FUSE_F) { float_op(Inst::kIdAddsd, fexpr(i.d - 2), right_operand(i, vm::Type::Float)); }
EMIT(fsub, REGS | FUSE_F) { float_op(Inst::kIdSubsd, fexpr(i.d - 2), right_operand(i, vm::Type::Float)); }
EMIT(fmul, REGS | FUSE_F) {
  Operand x = fexpr(i.d - 2), y = right_operand(i, vm::Type::Float);
  if (is_two(y))
    float_op(Inst::kIdAddsd, x, x);  // x * 2.0 = x + x (operand_fusion.cpp)
  else
    float_op(Inst::kIdMulsd, x, y);
}
EMIT(fdiv, REGS | FUSE_F) { float_op(Inst::kIdDivsd, fexpr(i.d - 2), right_operand(i, vm::Type::Float)); }
EMIT(fneg, REGS) {
  Operand x = fexpr(i.d - 1);
  if (x.isMem())
    a.btc(x.as<Mem>(), 63);
  else
    a.xorpd(x.as<Xmm>(), xmmword_ptr(sign_mask()));
}
EMIT(i2f, REGS) {
  Operand src = expr(i.d - 1), dst = fexpr(i.d - 1);
  Xmm r = dst.isReg() ? dst.as<Xmm>() : xmm0;
  a.xorps(r, r);  // breaks cvtsi2sd's false dependency
  a.emit(Inst::kIdCvtsi2sd, r, src);
  if (dst.isMem()) a.movsd(dst.as<Mem>(), r);
}
EMIT(f2i, PLAIN) {
  runtime::emit_float_to_int(a, in_xmm(fexpr(i.d - 1), xmm0));  // shared with the interpreter
  a.emit(Inst::kIdMov, expr(i.d - 1), rax);
}

// --- comparisons ---
void Compiler::int_compare(const Insn& i, CondCode cc) {
  Operand y = right_operand(i, vm::Type::Int), x = left_operand(i, vm::Type::Int);
  bool when = true;
  if (const Label* to = fused_branch(i, when)) {
    cmp(x, y);
    a.j(when ? cc : x86::negateCond(cc), *to);
    return;
  }
  a.xor_(edx, edx);
  cmp(x, y);
  a.set(cc, dl);
  a.emit(Inst::kIdMov, expr(i.d - 2), rdx);
}
EMIT(icmpeq, REGS | FUSE_I | FUSE_LEFT) { int_compare(i, CondCode::kE); }
EMIT(icmpne, REGS | FUSE_I | FUSE_LEFT) { int_compare(i, CondCode::kNE); }
EMIT(icmplt, REGS | FUSE_I | FUSE_LEFT) { int_compare(i, CondCode::kL); }
EMIT(icmple, REGS | FUSE_I | FUSE_LEFT) { int_compare(i, CondCode::kLE); }
EMIT(icmpgt, REGS | FUSE_I | FUSE_LEFT) { int_compare(i, CondCode::kG); }
EMIT(icmpge, REGS | FUSE_I | FUSE_LEFT) { int_compare(i, CondCode::kGE); }
void Compiler::float_compare(const Insn& i) {
  // IEEE: ordered compares are false on NaN, != is true; a < b is computed as b > a.
  Op op = i.op();
  int d = i.d;
  bool swap = op == Op::fcmplt || op == Op::fcmple;
  Operand right = right_operand(i, vm::Type::Float), left = fexpr(d - 2);
  Xmm x = in_xmm(swap ? right : left, xmm0);
  Operand y = swap ? left : right;
  bool when = true;
  if (const Label* to = fused_branch(i, when)) {
    a.emit(Inst::kIdUcomisd, x, y);
    float_branch(op, when, *to);
    return;
  }
  a.xor_(edx, edx);
  a.emit(Inst::kIdUcomisd, x, y);
  if (op == Op::fcmpeq) {
    a.sete(dl);
    a.setnp(cl);
    a.and_(dl, cl);
  } else if (op == Op::fcmpne) {
    a.setne(dl);
    a.setp(cl);
    a.or_(dl, cl);
  } else {
    a.set(op == Op::fcmplt || op == Op::fcmpgt ? CondCode::kA : CondCode::kAE, dl);
  }
  a.emit(Inst::kIdMov, expr(d - 2), rdx);
}
// Jumps to `to` if the comparison `op` whose ucomisd was just emitted is `when`.
// Unordered (NaN) sets ZF, PF and CF: false for every compare but !=.
void Compiler::float_branch(Op op, bool when, const Label& to) {
  bool eq = op == Op::fcmpeq, ne = op == Op::fcmpne;
  if (eq || ne) {
    if (eq == when) {  // jump if equal and ordered
      Label skip = a.newLabel();
      a.jp(skip);
      a.je(to);
      a.bind(skip);
    } else {  // jump if not equal or unordered
      a.jne(to);
      a.jp(to);
    }
    return;
  }
  bool strict = op == Op::fcmplt || op == Op::fcmpgt;
  if (when)
    a.j(strict ? CondCode::kA : CondCode::kAE, to);
  else
    a.j(strict ? CondCode::kBE : CondCode::kB, to);
}
EMIT(fcmpeq, REGS | FUSE_F) { float_compare(i); }
EMIT(fcmpne, REGS | FUSE_F) { float_compare(i); }
EMIT(fcmplt, REGS | FUSE_F) { float_compare(i); }
EMIT(fcmple, REGS | FUSE_F) { float_compare(i); }
EMIT(fcmpgt, REGS | FUSE_F) { float_compare(i); }
EMIT(fcmpge, REGS | FUSE_F) { float_compare(i); }
EMIT(zcmpeq, REGS) { int_compare(i, CondCode::kE); }
EMIT(zcmpne, REGS) { int_compare(i, CondCode::kNE); }

// --- branches ---
EMIT(jump, PLAIN) { a.jmp(target(i)); }
void Compiler::if_bool(const Insn& i, bool when) {
  Operand x = expr(i.d - 1);
  if (x.isReg())
    a.test(x.as<Gp>(), x.as<Gp>());
  else
    a.cmp(x.as<Mem>(), 0);
  if (!when) a.jz(target(i)); else a.jnz(target(i));
}
EMIT(iffalse, REGS) { if_bool(i, false); }
EMIT(iftrue, REGS) { if_bool(i, true); }
void Compiler::if_compare(const Insn& i, CondCode cc) {
  Operand y = right_operand(i, vm::Type::Int), x = left_operand(i, vm::Type::Int);
  cmp(x, y);
  a.j(cc, target(i));
}
EMIT(if_icmpeq, REGS | FUSE_I | FUSE_LEFT) { if_compare(i, CondCode::kE); }
EMIT(if_icmpne, REGS | FUSE_I | FUSE_LEFT) { if_compare(i, CondCode::kNE); }
EMIT(if_icmplt, REGS | FUSE_I | FUSE_LEFT) { if_compare(i, CondCode::kL); }
EMIT(if_icmple, REGS | FUSE_I | FUSE_LEFT) { if_compare(i, CondCode::kLE); }
EMIT(if_icmpgt, REGS | FUSE_I | FUSE_LEFT) { if_compare(i, CondCode::kG); }
EMIT(if_icmpge, REGS | FUSE_I | FUSE_LEFT) { if_compare(i, CondCode::kGE); }
EMIT(forloop, PLAIN) {
  Operand l = local(i.a()), limit = local(vm::read_u16(i.p, vm::kOperandB));
  a.emit(Inst::kIdAdd, l, imm(1));
  after_local_write(i.a());
  const InlineScope::StripLoop* strip = strip_loop_at_latch(i.bci);
  if (strip == nullptr) {  // polls at its header, or none at all (jit/strip_mining.cpp)
    cmp(l, limit);
    a.jl(target(i));
    return;
  }
  cmp(l, inline_slot(strip->slot));  // the strip's end, never beyond the limit
  a.jl(target(i));
  strip_latch(i, *strip);
}

// --- arrays ---
// The TLAB bump inline (runtime/alloc_asm.h); the runtime when it is full or the array
// is large. newarray's operand is the ArrayKind (0 int, 1 float) but for bool (2), whose
// arrays are int arrays; anewarray's arrays are of kind Ref.
void Compiler::new_array(const Insn& i, vm::Type type, runtime::ArrayKind kind) {
  Label done = a.newLabel();
  Label slow = cold([this, i, type, done] {
    stack_helper(reinterpret_cast<void*>(&minivm_rt_newarray), i.bci, i.d, 1, type);
    a.jmp(done);
  });
  load(rcx, expr(i.d - 1));
  runtime::emit_allocate_array(a, rax, rcx, imm(int(kind)), rdx, slow);
  move(expr(i.d - 1, type), rax);
  a.bind(done);
}
EMIT(newarray, CALLS) {
  static const vm::Type kTypes[] = {vm::Type::IntArray, vm::Type::FloatArray, vm::array_of(vm::Type::Bool)};
  new_array(i, kTypes[i.p[1]], i.p[1] == 1 ? runtime::ArrayKind::Float : runtime::ArrayKind::Int);
}
EMIT(anewarray, CALLS) { new_array(i, sc_->fn->types[i.a()], runtime::ArrayKind::Ref); }
void Compiler::array_load(const Insn& i, vm::Type elem) {
  Operand index = right_operand(i, vm::Type::Int);
  array_load(i, elem, expr(i.d - 2), index, i.d - 2);  // the element replaces the array
}
// The element of `array` at `index` to expression depth `to`. The array and the index are
// used in the registers they are in (rax and rcx otherwise).
void Compiler::array_load(const Insn& i, vm::Type elem, const Operand& array, const Operand& index, int to) {
  Gp arr = in_gp(array, rax);
  Gp idx = in_gp(index, rcx);
  bounds_check(arr, idx);
  Mem slot = qword_ptr(arr, idx, 3, runtime::kArrayDataOffset);
  Operand dst = expr(to, elem);
  if (Inst::Id op = is_float(elem) ? fused_float_consumer(i, to) : Inst::kIdNone; op != Inst::kIdNone) {
    float_op(op, fexpr(to - 1), slot);  // `faloadll v, j; fmul`: mulsd x, [v + 8j + 16]
  } else if (dst.isReg() && dst.as<Reg>().isXmm()) {  // straight into the float register
    a.movsd(dst.as<Xmm>(), slot);
  } else if (dst.isReg()) {
    a.mov(dst.as<Gp>(), slot);
  } else {
    a.mov(rax, slot);
    move(dst, rax);
  }
}
EMIT(iaload, CALLS | FUSE_I) { array_load(i, vm::Type::Int); }
EMIT(faload, CALLS | FUSE_I) { array_load(i, vm::Type::Float); }
void Compiler::array_store(const Insn& i, vm::Type elem) {
  Operand value = right_operand(i, elem);
  array_store(elem, expr(i.d - 3), expr(i.d - 2), value);
}
// `value` into `array` at `index`, each used where it is (the array and the index in rax
// and rcx when they are not in registers).
void Compiler::array_store(vm::Type elem, const Operand& array, const Operand& index, const Operand& value,
                           bool checked) {
  Gp arr = in_gp(array, rax);
  Gp idx = in_gp(index, rcx);
  if (!checked) bounds_check(arr, idx);
  Mem slot = qword_ptr(arr, idx, 3, runtime::kArrayDataOffset);
  if (value.isImm()) {
    a.mov(slot, value.as<Imm>());
  } else if (value.isReg() && value.as<Reg>().isXmm()) {
    a.movsd(slot, value.as<Xmm>());
  } else {
    load(rdx, value);
    a.mov(slot, rdx);
  }
  if (vm::is_reference(elem)) runtime::emit_card_mark(a, arr, rcx);  // rcx: the index is no longer needed
}
EMIT(iastore, CALLS | FUSE_I) { array_store(i, vm::Type::Int); }
EMIT(fastore, CALLS | FUSE_F) { array_store(i, vm::Type::Float); }
// Bool and reference elements are int-class slots; the element's type is the array's.
EMIT(aaload, CALLS | FUSE_I) { array_load(i, vm::type_info(stack_types(i.bci)[size_t(i.d - 2)]).elem); }
EMIT(aastore, CALLS | FUSE_I) { array_store(i, vm::type_info(stack_types(i.bci)[size_t(i.d - 3)]).elem); }
EMIT(arraylength, CALLS) {
  load(rax, expr(i.d - 1));
  implicit_null_check(throws_null(runtime::NullUse::length));
  a.mov(rax, qword_ptr(rax, runtime::kArrayLengthOffset));  // an array's elements or a string's bytes
  a.emit(Inst::kIdMov, expr(i.d - 1), rax);
}

// --- references and strings ---
EMIT(aconst_null, REGS) {
  Operand dst = expr(i.d, vm::Type::Null);
  if (dst.isReg())
    a.xor_(dst.as<Gp>().r32(), dst.as<Gp>().r32());
  else
    a.mov(dst.as<Mem>(), imm(0));
}
EMIT(acmpeq, REGS | FUSE_I | FUSE_LEFT) { int_compare(i, CondCode::kE); }
EMIT(acmpne, REGS | FUSE_I | FUSE_LEFT) { int_compare(i, CondCode::kNE); }
EMIT(sload, CALLS | FUSE_I) {
  Operand index = right_operand(i, vm::Type::Int);
  load(rax, expr(i.d - 2));
  load(rcx, index);
  bounds_check(rax, rcx, runtime::NullUse::string_index);
  a.movzx(eax, byte_ptr(rax, rcx, 0, runtime::kArrayDataOffset));
  move(expr(i.d - 2, vm::Type::Int), rax);
}
// The operations that make strings, or compare their bytes, are the runtime's.
EMIT(sconcat, CALLS) { stack_helper(reinterpret_cast<void*>(&minivm_rt_sconcat), i.bci, i.d, 2, vm::Type::String); }
EMIT(scmpeq, CALLS) { stack_helper(reinterpret_cast<void*>(&minivm_rt_scompare), i.bci, i.d, 2, vm::Type::Bool); }
EMIT(scmpne, CALLS) { stack_helper(reinterpret_cast<void*>(&minivm_rt_scompare), i.bci, i.d, 2, vm::Type::Bool); }
EMIT(substring, CALLS) { stack_helper(reinterpret_cast<void*>(&minivm_rt_substring), i.bci, i.d, 3, vm::Type::String); }
EMIT(tostring, CALLS) { stack_helper(reinterpret_cast<void*>(&minivm_rt_tostring), i.bci, i.d, 1, vm::Type::String); }
EMIT(fsqrt, REGS) {
  Operand x = fexpr(i.d - 1);
  if (x.isMem()) {
    a.sqrtsd(xmm0, x.as<Mem>());
    a.movsd(x.as<Mem>(), xmm0);
  } else {
    a.sqrtsd(x.as<Xmm>(), x.as<Xmm>());
  }
}
EMIT(atomic_add, CALLS) {
  load(rax, expr(i.d - 3));
  load(rcx, expr(i.d - 2));
  bounds_check(rax, rcx);
  load(rdx, expr(i.d - 1));
  a.mov(r10, rdx);
  a.lock().xadd(qword_ptr(rax, rcx, 3, runtime::kArrayDataOffset), rdx);
  a.add(rdx, r10);
  a.emit(Inst::kIdMov, expr(i.d - 3), rdx);
}

// --- calls ---
EMIT(call, CALLS) {
  size_t bci = i.bci;
  int d = i.d;
  Method* callee = runtime::VM::get().method(i.a());
  bool inline_it = inline_decisions_.front();
  inline_decisions_.pop_front();
  if (inline_it) {
    inline_call(bci, d, callee);
    return;
  }
  invoke(bci, d, callee);
}
// A call of `callee` at depth d that is not inlined: its arguments pushed, its frame
// made by its own entry.
void Compiler::invoke(size_t bci, int d, Method* callee, int dispatch_slot, int32_t dispatch_table) {
  int n = callee->param_count;
  vm::Type result = callee->function->result;
  Types t = stack_types(bci);
  spill_exprs(t, d - n);
  push_arguments(t, d, n);
  spill_locals(true, bci);
  // A call of the method itself goes straight to this code (which needs no Method* in
  // rbx): the recursion of fib-like methods pays neither the Method* load nor an
  // indirect call. This code stays a correct version of the method as long as it runs.
  bool self = callee == m_ && dispatch_slot < 0;
  if (dispatch_slot >= 0) {  // the receiver's class's vtable or itable: the receiver is the deepest argument
    a.mov(rax, qword_ptr(rsp, 8 * (n - 1)));
    a.mov(eax, dword_ptr(rax, runtime::kObjectClassOffset));
    a.shl(rax, runtime::kClassShapeShift);
    a.mov(rcx, imm(reinterpret_cast<uint64_t>(&runtime::g_class_shapes)));
    a.mov(rcx, qword_ptr(rcx));
    a.mov(rcx, qword_ptr(rcx, rax, 0, dispatch_table));
    a.mov(rbx, qword_ptr(rcx, 8 * dispatch_slot));
  } else if (!self) {
    a.mov(rbx, imm(reinterpret_cast<uint64_t>(callee)));
  }
  mark(int32_t(bci), true);
  Label returned = a.newLabel();
  if (self)
    a.call(code_begin_);
  else
    a.call(qword_ptr(rbx, runtime::kMethodEntryOffset));
  calls_emitted_++;
  a.bind(returned);
  record_gc_map(returned, bci, d - n, d - n, true);  // the arguments are the callee's
  take_result(t, d - n, result, bci);
}

// The n values below depth d pushed as a call's arguments, the first deepest.
void Compiler::push_arguments(const Types& t, int d, int n) {
  for (int k = 0; k < n; k++) {
    Operand arg = expr(d - n + k, t[size_t(d - n + k)]);
    if (arg.isReg() && arg.as<Reg>().isXmm()) {
      a.sub(rsp, 8);
      a.movsd(qword_ptr(rsp), arg.as<Xmm>());
    } else {
      a.emit(Inst::kIdPush, arg);
    }
  }
}

// After a call returned: its result (left on the machine stack) becomes the expression at
// depth d, and the locals and expressions below come back into their registers.
void Compiler::take_result(const Types& t, int d, vm::Type result, size_t bci) {
  // The result straight into its register when it has one (the reloads below use none).
  Operand to = result == vm::Type::Void ? Operand() : expr(d, result);
  bool direct = to.isReg() && to.as<Reg>().isGp();
  if (direct)
    a.pop(to.as<Gp>());
  else if (result != vm::Type::Void)
    a.pop(rax);
  reload_locals(true, bci);
  reload_exprs(t, d);
  if (result != vm::Type::Void && !direct) move(to, rax);
}

// A call of the function value at depth d - n - 1 with the n arguments above it. The
// value's Method* is known only at run time: a lambda takes the closure as its first
// argument, a top-level function does not (runtime/closures.h), so the closure is pushed
// only when the method takes one argument more. Either way the callee pops what was
// pushed and leaves the result where the first push went.
void Compiler::invoke_value(size_t bci, int d, int n, vm::Type result) {
  int pops = n + 1;
  Types t = stack_types(bci);
  spill_exprs(t, d - pops);
  Label no_closure = a.newLabel();
  load(rax, expr(d - pops));
  implicit_null_check(throws_null(runtime::NullUse::call));
  a.mov(rcx, qword_ptr(rax, runtime::kClosureMethodOffset));
  a.cmp(word_ptr(rcx, runtime::kMethodParamCountOffset), n);
  a.je(no_closure);
  a.push(rax);
  a.bind(no_closure);
  push_arguments(t, d, n);
  spill_locals(true, bci);
  load(rax, expr(d - pops));
  a.mov(rbx, qword_ptr(rax, runtime::kClosureMethodOffset));
  mark(int32_t(bci), true);
  Label returned = a.newLabel();
  a.call(qword_ptr(rbx, runtime::kMethodEntryOffset));
  calls_emitted_++;
  a.bind(returned);
  record_gc_map(returned, bci, d - pops, d - pops, true);  // the value and the arguments are the callee's
  take_result(t, d - pops, result, bci);
}

// --- objects ---
// The TLAB bump inline, as newarray's, with the class's header word and field count.
EMIT(newobject, CALLS) {
  const runtime::ClassShape& shape = runtime::g_class_shapes[i.a()];
  vm::Type type = runtime::VM::get().module().classes[i.a()].type;
  Label done = a.newLabel();
  Label slow = cold([this, i, type, done] {
    stack_helper(reinterpret_cast<void*>(&minivm_rt_newobject), i.bci, i.d, 0, type);
    a.jmp(done);
  });
  a.mov(rcx, imm(shape.fields));
  a.mov(rdx, imm(shape.header));
  runtime::emit_allocate_array(a, rax, rcx, rdx, r10, slow);
  move(expr(i.d, type), rax);
  a.bind(done);
}
// The field's own read or write checks for null when its offset is in the first page.
void Compiler::field_null_check(const Gp& ref, size_t bci, uint16_t field) {
  if (runtime::kArrayDataOffset + 8 * uintptr_t(field) < runtime::kImplicitNullLimit)
    implicit_null_check(throws_null_member(bci));
  else
    null_member_check(ref, bci);
}
EMIT(getfield, CALLS) {
  const vm::ClassInfo& c = runtime::VM::get().module().classes[i.a()];
  uint16_t field = vm::read_u16(i.p, vm::kOperandB);
  load(rax, expr(i.d - 1));
  field_null_check(rax, i.bci, field);
  a.mov(rax, qword_ptr(rax, runtime::kArrayDataOffset + 8 * field));
  move(expr(i.d - 1, c.fields[field].type), rax);
}
EMIT(putfield, CALLS) {
  const vm::ClassInfo& c = runtime::VM::get().module().classes[i.a()];
  uint16_t field = vm::read_u16(i.p, vm::kOperandB);
  load(rax, expr(i.d - 2));
  load(rdx, expr(i.d - 1, c.fields[field].type));
  field_null_check(rax, i.bci, field);
  a.mov(qword_ptr(rax, runtime::kArrayDataOffset + 8 * field), rdx);
  if (vm::is_reference(c.fields[field].type)) runtime::emit_card_mark(a, rax, rcx);
}
// The receiver is checked for null (a call runs on no object), then the call is made
// directly or inlined when class hierarchy analysis found one target (dispatch_target),
// else through the receiver's class's vtable or itable.
void Compiler::invoke_on_object(const Insn& i) {
  DispatchTarget t = dispatch_target(i.p);
  load(rax, expr(i.d - t.callee->param_count));
  null_member_check(rax, i.bci);
  if (t.direct) {
    bool inline_it = inline_decisions_.front();
    inline_decisions_.pop_front();
    if (inline_it)
      inline_call(i.bci, i.d, t.callee);
    else
      invoke(i.bci, i.d, t.callee);
  } else {
    invoke(i.bci, i.d, t.callee, t.slot, t.table);
  }
}
EMIT(invokevirtual, CALLS) { invoke_on_object(i); }
EMIT(invokeinterface, CALLS) { invoke_on_object(i); }
// rax <- whether the (non-null) object in rax is a `target`: its class's ancestor bit.
void Compiler::class_test(uint16_t target) {
  a.mov(eax, dword_ptr(rax, runtime::kObjectClassOffset));
  a.shl(rax, runtime::kClassShapeShift);
  a.mov(rcx, imm(reinterpret_cast<uint64_t>(&runtime::g_class_shapes)));
  a.mov(rcx, qword_ptr(rcx));
  a.mov(rcx, qword_ptr(rcx, rax, 0, runtime::kClassShapeAncestorsOffset));
  a.bt(qword_ptr(rcx, 8 * (target / 64)), target % 64);
}
EMIT(instanceof, PLAIN) {
  Label null = a.newLabel();
  load(rax, expr(i.d - 1));
  a.test(rax, rax);
  a.jz(null);
  class_test(i.a());
  a.setc(al);
  a.movzx(eax, al);
  a.bind(null);
  a.emit(Inst::kIdMov, expr(i.d - 1), rax);
}
EMIT(checkcast, CALLS) {
  Label ok = a.newLabel();
  load(rdx, expr(i.d - 1));
  a.test(rdx, rdx);
  a.jz(ok);
  a.mov(rax, rdx);
  class_test(i.a());
  const uint8_t* bcp = sc_->fn->code.data() + i.bci;
  a.jnc(cold([this, bcp] {  // the object is still in rdx, the runtime's third argument
    a.mov(rsi, imm(reinterpret_cast<uint64_t>(bcp)));
    throw_call(reinterpret_cast<void*>(&minivm_rt_throw_cast));
  }));
  a.bind(ok);
}
// --- function values (runtime/closures.h) ---
EMIT(newclosure, CALLS) {
  const vm::Function& lambda = *runtime::VM::get().module().functions[i.a()];
  stack_helper(reinterpret_cast<void*>(&minivm_rt_newclosure), i.bci, i.d, int(lambda.captures.size()), lambda.params[0]);
}
EMIT(loadcapture, REGS) {
  load(rax, local(0));  // the lambda's closure
  a.mov(rax, qword_ptr(rax, runtime::kArrayDataOffset + 8 * (1 + i.a())));
  move(expr(i.d, sc_->fn->captures[i.a()]), rax);
}
EMIT(callvalue, CALLS) {
  vm::Type type = sc_->fn->types[i.a()];
  invoke_value(i.bci, i.d, vm::read_u16(i.p, vm::kOperandB), vm::type_info(type).elem);
}
EMIT(spawnvalue, CALLS) {
  stack_helper(reinterpret_cast<void*>(&minivm_rt_spawn_value), i.bci, i.d, vm::read_u16(i.p, vm::kOperandB) + 1,
               vm::Type::Int);
}
EMIT(spawn, CALLS) {
  int n = runtime::VM::get().method(i.a())->param_count;
  stack_helper(reinterpret_cast<void*>(&minivm_rt_spawn), i.bci, i.d, n, vm::Type::Int);
}
// arraycopy and crc32: range checks inline, then a direct call of the hand-written stub
// (jit/intrinsic_stubs.h) with no transition and no anchor, as HotSpot calls its stub
// routines. A failed check takes the runtime native instead, which reports the error.
void Compiler::intrinsic_call(vm::NativeId id, size_t bci, int d) {
  const IntrinsicStubs& stubs = intrinsic_stubs();
  Label slow = a.newLabel(), done = a.newLabel();
  Types t = stack_types(bci);
  spill_exprs(t, d);  // the stubs clobber every expression register; operands now in homes
  if (id == vm::NativeId::arraycopy) {
    a.mov(rax, home_expr(d - 5));   // src
    a.mov(rcx, home_expr(d - 4));   // srcPos
    a.mov(rdx, home_expr(d - 3));   // dst
    a.mov(r8, home_expr(d - 2));    // dstPos
    a.mov(r10, home_expr(d - 1));   // n
    a.test(rax, rax);
    a.jz(slow);                     // a null src
    a.test(rdx, rdx);
    a.jz(slow);                     // a null dst
    a.mov(r9, rcx);
    a.or_(r9, r8);
    a.or_(r9, r10);
    a.js(slow);                     // any of them negative
    a.mov(r11, qword_ptr(rax, runtime::kArrayLengthOffset));
    a.sub(r11, r10);
    a.cmp(rcx, r11);
    a.jg(slow);                     // srcPos > len(src) - n
    a.mov(r11, qword_ptr(rdx, runtime::kArrayLengthOffset));
    a.sub(r11, r10);
    a.cmp(r8, r11);
    a.jg(slow);                     // dstPos > len(dst) - n
    a.lea(rdi, ptr(rax, rcx, 3, runtime::kArrayDataOffset));
    a.lea(rsi, ptr(rdx, r8, 3, runtime::kArrayDataOffset));
    a.mov(rdx, r10);
    charge_strip_countdown(r10, bci);
    a.mov(rax, imm(stubs.arraycopy.blob.begin));
    a.call(rax);
    calls_emitted_++;
    if (vm::is_reference(vm::type_info(t[size_t(d - 3)]).elem)) {  // the write barrier, once for the range
      a.mov(rax, home_expr(d - 3));
      runtime::emit_card_mark(a, rax, rcx);
    }
    t.resize(size_t(d - 5));
  } else {
    a.mov(rax, home_expr(d - 3));   // a
    a.mov(rcx, home_expr(d - 2));   // from
    a.mov(rdx, home_expr(d - 1));   // to
    a.test(rax, rax);
    a.jz(slow);                     // a null array
    a.test(rcx, rcx);
    a.js(slow);
    a.cmp(rdx, qword_ptr(rax, runtime::kArrayLengthOffset));
    a.jg(slow);
    a.cmp(rcx, rdx);
    a.jg(slow);
    a.lea(rdi, ptr(rax, rcx, 3, runtime::kArrayDataOffset));
    a.sub(rdx, rcx);
    a.mov(rsi, rdx);
    charge_strip_countdown(rsi, bci);
    a.mov(rax, imm(stubs.crc32.blob.begin));
    a.call(rax);
    calls_emitted_++;
    a.mov(home_expr(d - 3), rax);   // eax, zero-extended by the 32-bit write
    t.resize(size_t(d - 3));
    t.push_back(vm::Type::Int);
  }
  reload_exprs(t, int(t.size()));
  a.jmp(done);
  a.bind(slow);  // the operands are in their homes already; the registers hold scratch
  const vm::NativeInfo& info = vm::native_info(id);
  stack_helper(reinterpret_cast<void*>(&minivm_rt_native), bci, d, int(info.params.size()), info.result,
               /*spilled=*/true);
  a.bind(done);
}
EMIT(native, CALLS) {
  vm::NativeId id = vm::NativeId(i.a());
  const vm::NativeInfo& info = vm::native_info(id);
  if (id == vm::NativeId::arraycopy || id == vm::NativeId::crc32) {
    intrinsic_call(id, i.bci, i.d);
    return;
  }
  stack_helper(reinterpret_cast<void*>(&minivm_rt_native), i.bci, i.d, int(info.params.size()), info.result);
}
EMIT(print, CALLS) {
  stack_helper(reinterpret_cast<void*>(&minivm_rt_print), i.bci, i.d, sc_->fn->prints[i.a()].value_count(),
               vm::Type::Void);
}
void Compiler::return_from(const Insn& i, bool value) {
  vm::Type t = value ? top_type(i, 1) : vm::Type::Void;
  if (sc_->caller != nullptr) {
    // An inlined return is a jump: no frame to tear down, so no poll (as in HotSpot).
    if (value) move(expr(sc_->depth_base, t), expr(i.d - 1, t));
    // The body's last instruction falls through: inline_call binds the exit right after it.
    size_t next = size_t(i.bci) + vm::op_info(vm::Op(sc_->fn->code[size_t(i.bci)])).length;
    if (next != sc_->fn->code.size()) a.jmp(sc_->exit);
    return;
  }
  poll(int32_t(i.bci));
  emit_return(i.d, value, t);
}
EMIT(ret, PLAIN) { return_from(i, false); }
EMIT(vret, PLAIN) { return_from(i, true); }

// --- superinstructions: an operation whose right operand is a local ---
EMIT(iaddl, REGS | FUSE_I) { local_binop(Inst::kIdAdd, i); }
EMIT(isubl, REGS | FUSE_I) { local_binop(Inst::kIdSub, i); }
EMIT(imull, REGS | FUSE_I) { local_binop(Inst::kIdImul, i); }
EMIT(faddl, REGS) {
  if (!accumulate(i, Inst::kIdAddsd, vm::Type::Float, fexpr(i.d - 1)))
    float_op(Inst::kIdAddsd, fexpr(i.d - 1), local(i.a()));
}
EMIT(fsubl, REGS) { float_op(Inst::kIdSubsd, fexpr(i.d - 1), local(i.a())); }
EMIT(fmull, REGS) {
  if (!deferred_.empty()) {  // `ldc 2.0; fmull x`, deferred: 2.0 * x = x + x
    deferred_.pop_back();
    move(fexpr(i.d - 1), local(i.a()));
    float_op(Inst::kIdAddsd, fexpr(i.d - 1), fexpr(i.d - 1));
    return;
  }
  if (!accumulate(i, Inst::kIdMulsd, vm::Type::Float, fexpr(i.d - 1))) float_op(Inst::kIdMulsd, fexpr(i.d - 1), local(i.a()));
}
EMIT(fdivl, REGS) { float_op(Inst::kIdDivsd, fexpr(i.d - 1), local(i.a())); }
EMIT(ialoadl, CALLS) { array_load(i, vm::Type::Int, expr(i.d - 1), local(i.a()), i.d - 1); }
EMIT(faloadl, CALLS) { array_load(i, vm::Type::Float, expr(i.d - 1), local(i.a()), i.d - 1); }
void Compiler::local_element_load(const Insn& i, vm::Type elem) {
  array_load(i, elem, local(i.a()), local(i.b()), i.d);
  checked_element_ = {unified(*sc_, i.a()), unified(*sc_, i.b())};
}
void Compiler::local_element_store(const Insn& i, vm::Type elem) {
  bool checked = checked_element_ == std::pair{unified(*sc_, i.a()), unified(*sc_, i.b())};
  array_store(elem, local(i.a()), local(i.b()), right_operand(i, elem), checked);
}
EMIT(ialoadll, CALLS) { local_element_load(i, vm::Type::Int); }
EMIT(faloadll, CALLS) { local_element_load(i, vm::Type::Float); }
EMIT(iastorell, CALLS | FUSE_I) { local_element_store(i, vm::Type::Int); }
EMIT(fastorell, CALLS | FUSE_F) { local_element_store(i, vm::Type::Float); }
EMIT(fmulll, REGS) {
  move(fexpr(i.d), local(i.a()));
  float_op(Inst::kIdMulsd, fexpr(i.d), local(i.b()));
}

#undef EMIT

namespace {

constexpr uint8_t kTraits[] = {
#define DEF(name, ...) Traits<Op::name>::value,
#include "vm/opcodes.def"
#undef DEF
};
static_assert(std::size(kTraits) == size_t(vm::kOpCount));

constexpr bool traits_consistent() {
  for (uint8_t t : kTraits)
    if (((t & REGS) && (t & CALLS)) || ((t & FUSE_LEFT) && !(t & (FUSE_I | FUSE_F)))) return false;
  return true;
}
static_assert(traits_consistent(), "REGS excludes CALLS, and FUSE_LEFT needs FUSE_I or FUSE_F");

}  // namespace

uint8_t emitter_traits(Op op) { return kTraits[size_t(op)]; }

void Compiler::emit(size_t bci, int d) {
  using Emitter = void (Compiler::*)(const Insn&);
  static constexpr Emitter kEmitters[] = {
#define DEF(name, ...) &Compiler::emit_op<Op::name>,
#include "vm/opcodes.def"
#undef DEF
  };
  static_assert(std::size(kEmitters) == size_t(vm::kOpCount));
  const uint8_t* p = sc_->fn->code.data() + bci;
  [[maybe_unused]] uint8_t traits = kTraits[*p];
  [[maybe_unused]] uint32_t calls = calls_emitted_;
  InlineScope* outer_scope = emitting_scope_;
  int32_t outer_bci = emitting_bci_;
  emitting_scope_ = sc_;
  emitting_bci_ = int32_t(bci);
  (this->*kEmitters[*p])(Insn{bci, d, p});
  emitting_scope_ = outer_scope;
  emitting_bci_ = outer_bci;
  MVM_ASSERT((traits & CALLS) || calls_emitted_ == calls, "an emitter that emits a call declares CALLS");
  MVM_ASSERT(deferred_.empty(), "an emitter handed a fused operand uses it: it declares FUSE_I or FUSE_F");
}

}  // namespace jit::baseline
