// One small generator per bytecode (vm/opcodes.def). Each ends by dispatching.
#include "interp/templates.h"

#include "runtime/alloc_asm.h"
#include "runtime/barrier_asm.h"
#include "runtime/classes.h"
#include "runtime/closures.h"
#include "runtime/errors.h"
#include "runtime/frame.h"
#include "runtime/heap.h"
#include "runtime/invariant.h"
#include "runtime/method.h"
#include "runtime/mini_semantics_asm.h"
#include "runtime/slowdown.h"
#include "runtime/runtime_calls.h"
#include "runtime/stack_overflow_path.h"
#include "runtime/thread.h"
#include "runtime/tiering.h"

namespace interp {

using namespace asmjit;
using namespace asmjit::x86;
using namespace runtime;

namespace {

constexpr int len(vm::Op op) { return vm::kOpInfo[uint8_t(op)].length; }
#define NEXT(name) g.dispatch_next(len(vm::Op::name))

void* fnptr(auto f) { return reinterpret_cast<void*>(f); }

// Stack values live in 8-byte slots; the top one is cached in rax (interp_masm.h):
// below, `b` is the top (rax) and `a` the value under it ([rsp]).

// --- helpers shared by several templates ---

// rax = a OP b for a commutative OP.
void int_binop(InterpMasm& g, Inst::Id id, vm::Op op) {
  g.a.pop(rcx);
  g.a.emit(id, rax, rcx);
  g.dispatch_next(len(op));
}

void float_binop(InterpMasm& g, Inst::Id id, vm::Op op) {
  Assembler& a = g.a;
  if (op == vm::Op::fadd || op == vm::Op::fmul) {
    a.movq(xmm0, rax);  // commutative: b op a, with a straight from memory
    a.emit(id, xmm0, qword_ptr(rsp));
  } else {
    a.movq(xmm1, rax);
    a.movsd(xmm0, qword_ptr(rsp));
    a.emit(id, xmm0, xmm1);
  }
  a.add(rsp, 8);
  a.movq(rax, xmm0);
  g.dispatch_next(len(op));
}

void int_compare(InterpMasm& g, CondCode cc, vm::Op op) {
  Assembler& a = g.a;
  a.pop(rcx);
  a.xor_(edx, edx);
  a.cmp(rcx, rax);
  a.set(cc, dl);
  a.mov(rax, rdx);
  g.dispatch_next(len(op));
}

// Float compares with IEEE semantics: every ordered compare is false on NaN, != is true.
// ucomisd sets ZF=PF=CF=1 when unordered, so `a < b` is computed as `b > a` (seta).
void float_compare(InterpMasm& g, vm::Op op) {
  Assembler& a = g.a;
  a.movsd(xmm0, qword_ptr(rsp));  // a
  a.movq(xmm1, rax);              // b
  a.add(rsp, 8);
  a.xor_(edx, edx);
  switch (op) {
    case vm::Op::fcmpeq:
      a.ucomisd(xmm0, xmm1);
      a.sete(dl);
      a.setnp(cl);
      a.and_(dl, cl);
      break;
    case vm::Op::fcmpne:
      a.ucomisd(xmm0, xmm1);
      a.setne(dl);
      a.setp(cl);
      a.or_(dl, cl);
      break;
    case vm::Op::fcmplt:
    case vm::Op::fcmple:
      a.ucomisd(xmm1, xmm0);
      a.set(op == vm::Op::fcmplt ? CondCode::kA : CondCode::kAE, dl);
      break;
    default:
      MVM_ASSERT(op == vm::Op::fcmpgt || op == vm::Op::fcmpge, "float_compare generates the six float compares only");
      a.ucomisd(xmm0, xmm1);
      a.set(op == vm::Op::fcmpgt ? CondCode::kA : CondCode::kAE, dl);
      break;
  }
  a.mov(rax, rdx);
  g.dispatch_next(len(op));
}

void if_compare(InterpMasm& g, CondCode taken, vm::Op op) {
  Assembler& a = g.a;
  Label not_taken = a.newLabel();
  a.pop(rcx);
  a.cmp(rcx, rax);
  a.pop(rax);  // pop leaves the flags alone
  a.j(negateCond(taken), not_taken);
  g.branch(1);
  a.bind(not_taken);
  g.dispatch_next(len(op));
}

void if_bool(InterpMasm& g, bool branch_if_true, vm::Op op) {
  Assembler& a = g.a;
  Label not_taken = a.newLabel();
  a.test(rax, rax);
  a.pop(rax);
  if (branch_if_true)
    a.jz(not_taken);
  else
    a.jnz(not_taken);
  g.branch(1);
  a.bind(not_taken);
  g.dispatch_next(len(op));
}

// Null and bounds check of the index in rcx against the array (or string) in r8. Both
// failures are the shared out-of-line paths of gen_array_failures. Reading the length is
// the null check (an implicit one: null faults at address 8), so the hot path is one
// compare and one branch, not taken, that falls through to the access.
void bounds_check(InterpMasm& g, runtime::NullUse use = runtime::NullUse::array_index) {
  Assembler& a = g.a;
  g.implicit_null_check(use == runtime::NullUse::string_index ? g.null_string_index : g.null_array_index);
  static_assert(kArrayLengthOffset < runtime::kImplicitNullLimit);
  a.cmp(rcx, qword_ptr(r8, kArrayLengthOffset));
  a.jae(g.index_out_of_bounds);  // unsigned: a negative index is huge
}

void array_load(InterpMasm& g, vm::Op op) {
  Assembler& a = g.a;
  a.mov(rcx, rax);  // index
  a.pop(r8);        // array
  bounds_check(g);
  a.mov(rax, qword_ptr(r8, rcx, 3, kArrayDataOffset));
  g.dispatch_next(len(op));
}

void array_store(InterpMasm& g, vm::Op op) {
  Assembler& a = g.a;
  a.pop(rcx);  // index
  a.pop(r8);   // array
  bounds_check(g);
  a.mov(qword_ptr(r8, rcx, 3, kArrayDataOffset), rax);
  // A bool array's store dirties its card too: one template serves both.
  if (op == vm::Op::aastore) runtime::emit_card_mark(a, r8, rcx);
  a.pop(rax);
  g.dispatch_next(len(op));
}

void divide(InterpMasm& g, bool remainder, vm::Op op) {
  Assembler& a = g.a;
  Label zero = a.newLabel(), minus_one = a.newLabel();
  a.mov(rcx, rax);
  a.test(rcx, rcx);
  a.jz(zero);
  a.pop(rax);
  a.cmp(rcx, -1);
  a.je(minus_one);  // idiv would trap on MIN / -1; Java says MIN and 0
  a.cqo();
  a.idiv(rcx);
  if (remainder) a.mov(rax, rdx);
  g.dispatch_next(len(op));
  a.bind(minus_one);
  if (remainder)
    a.xor_(eax, eax);
  else
    a.neg(rax);
  g.dispatch_next(len(op));
  a.bind(zero);
  g.call_throw(fnptr(&minivm_rt_throw_div_zero));
}

// Tears down the frame and returns to the caller; if `value`, rax holds the result and
// is left where argument 0 was (frame.h: "Calling convention").
void return_from_frame(InterpMasm& g, bool value) {
  Assembler& a = g.a;
  // Read everything from the frame before rsp moves above it: a signal arriving after
  // that may overwrite memory below rsp.
  a.mov(rcx, qword_ptr(rbp, kFrameReturnPcOffset));
  a.mov(rbp, qword_ptr(rbp, kFrameSavedFpOffset));
  a.bind(g.left_frame);  // from here rbp is the caller's
  // The frame is gone: the return pc waits in rcx, and the caller's sp follows from the
  // locals pointer (argument 0 is the highest slot).
  g.frames.shape(FrameRow::entry().with_cfa(FrameRow::Cfa::r14, 8).with_ra(FrameRow::Ra::in_rcx));
  if (value) {
    a.mov(qword_ptr(kLocals), rax);
    a.lea(rsp, ptr(kLocals, -8));
  } else {
    a.mov(rsp, kLocals);
  }
  a.mov(qword_ptr(rsp), rcx);
  g.frames.shape(FrameRow::entry());
  a.ret();  // a real ret keeps the return-stack predictor in step with the call
  g.frames.shape(FrameRow::rbp_frame());
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The generators, named after the opcodes; a missing one is a link error.

void gen_nop(InterpMasm& g) { NEXT(nop); }

void gen_ldc(InterpMasm& g) {
  Assembler& a = g.a;
  a.push(rax);
  a.movzx(ecx, g.u16_operand());
  a.mov(rdx, qword_ptr(rbp, kInterpFrameMethodOffset));
  a.mov(rdx, qword_ptr(rdx, kMethodConstantsOffset));
  a.mov(rax, qword_ptr(rdx, rcx, 3));
  NEXT(ldc);
}

void gen_load(InterpMasm& g) {
  g.a.push(rax);
  g.load_local_index(rcx);
  g.a.mov(rax, g.local_slot(rcx));
  NEXT(load);
}

void gen_store(InterpMasm& g) {
  g.load_local_index(rcx);
  g.a.mov(g.local_slot(rcx), rax);
  g.a.pop(rax);
  NEXT(store);
}

void gen_gload(InterpMasm& g) {
  Assembler& a = g.a;
  a.push(rax);
  a.movzx(ecx, g.u16_operand());
  a.mov(rdx, qword_ptr(kThread, kThreadGlobalsOffset));
  a.mov(rax, qword_ptr(rdx, rcx, 3));
  NEXT(gload);
}

void gen_gstore(InterpMasm& g) {
  Assembler& a = g.a;
  a.movzx(ecx, g.u16_operand());
  a.mov(rdx, qword_ptr(kThread, kThreadGlobalsOffset));
  a.mov(qword_ptr(rdx, rcx, 3), rax);
  a.pop(rax);
  NEXT(gstore);
}

void gen_iinc(InterpMasm& g) {
  Assembler& a = g.a;
  g.load_local_index(rcx);
  a.movsxd(rdx, g.i32_operand(vm::kOperandB));
  a.add(g.local_slot(rcx), rdx);
  NEXT(iinc);
}

void gen_pop(InterpMasm& g) {
  g.a.pop(rax);
  NEXT(pop);
}

void gen_dup(InterpMasm& g) {
  g.a.push(rax);
  NEXT(dup);
}

// [.. a b] -> [.. a b a b]: memory gets b then a, and b stays in rax.
void gen_dup2(InterpMasm& g) {
  g.a.push(rax);
  g.a.push(qword_ptr(rsp, 8));
  NEXT(dup2);
}

void gen_iadd(InterpMasm& g) { int_binop(g, Inst::kIdAdd, vm::Op::iadd); }
void gen_isub(InterpMasm& g) {
  g.a.pop(rcx);
  g.a.sub(rcx, rax);
  g.a.mov(rax, rcx);
  NEXT(isub);
}
void gen_imul(InterpMasm& g) { int_binop(g, Inst::kIdImul, vm::Op::imul); }
void gen_idiv(InterpMasm& g) { divide(g, false, vm::Op::idiv); }
void gen_irem(InterpMasm& g) { divide(g, true, vm::Op::irem); }
void gen_ineg(InterpMasm& g) { g.a.neg(rax); NEXT(ineg); }
void gen_inot(InterpMasm& g) { g.a.not_(rax); NEXT(inot); }
void gen_iand(InterpMasm& g) { int_binop(g, Inst::kIdAnd, vm::Op::iand); }
void gen_ior(InterpMasm& g) { int_binop(g, Inst::kIdOr, vm::Op::ior); }
void gen_ixor(InterpMasm& g) { int_binop(g, Inst::kIdXor, vm::Op::ixor); }
// x86 masks 64-bit shift counts to 6 bits, exactly Mini's rule.
void shift(InterpMasm& g, Inst::Id id, vm::Op op) {
  g.a.mov(rcx, rax);
  g.a.pop(rax);
  g.a.emit(id, rax, cl);
  g.dispatch_next(len(op));
}
void gen_ishl(InterpMasm& g) { shift(g, Inst::kIdShl, vm::Op::ishl); }
void gen_ishr(InterpMasm& g) { shift(g, Inst::kIdSar, vm::Op::ishr); }
void gen_iushr(InterpMasm& g) { shift(g, Inst::kIdShr, vm::Op::iushr); }
void gen_zand(InterpMasm& g) { int_binop(g, Inst::kIdAnd, vm::Op::zand); }
void gen_zor(InterpMasm& g) { int_binop(g, Inst::kIdOr, vm::Op::zor); }
void gen_zxor(InterpMasm& g) { int_binop(g, Inst::kIdXor, vm::Op::zxor); }
void gen_znot(InterpMasm& g) { g.a.xor_(rax, 1); NEXT(znot); }

void gen_fadd(InterpMasm& g) { float_binop(g, Inst::kIdAddsd, vm::Op::fadd); }
void gen_fsub(InterpMasm& g) { float_binop(g, Inst::kIdSubsd, vm::Op::fsub); }
void gen_fmul(InterpMasm& g) { float_binop(g, Inst::kIdMulsd, vm::Op::fmul); }
void gen_fdiv(InterpMasm& g) { float_binop(g, Inst::kIdDivsd, vm::Op::fdiv); }
void gen_fneg(InterpMasm& g) { g.a.btc(rax, 63); NEXT(fneg); }

void gen_i2f(InterpMasm& g) {
  Assembler& a = g.a;
  a.xorps(xmm0, xmm0);  // breaks cvtsi2sd's false dependency on xmm0
  a.cvtsi2sd(xmm0, rax);
  a.movq(rax, xmm0);
  NEXT(i2f);
}

// int(f): the sequence shared with the JIT (runtime/mini_semantics_asm.h).
void gen_f2i(InterpMasm& g) {
  g.a.movq(xmm0, rax);
  emit_float_to_int(g.a, xmm0);
  NEXT(f2i);
}

void gen_icmpeq(InterpMasm& g) { int_compare(g, CondCode::kE, vm::Op::icmpeq); }
void gen_icmpne(InterpMasm& g) { int_compare(g, CondCode::kNE, vm::Op::icmpne); }
void gen_icmplt(InterpMasm& g) { int_compare(g, CondCode::kL, vm::Op::icmplt); }
void gen_icmple(InterpMasm& g) { int_compare(g, CondCode::kLE, vm::Op::icmple); }
void gen_icmpgt(InterpMasm& g) { int_compare(g, CondCode::kG, vm::Op::icmpgt); }
void gen_icmpge(InterpMasm& g) { int_compare(g, CondCode::kGE, vm::Op::icmpge); }
void gen_fcmpeq(InterpMasm& g) { float_compare(g, vm::Op::fcmpeq); }
void gen_fcmpne(InterpMasm& g) { float_compare(g, vm::Op::fcmpne); }
void gen_fcmplt(InterpMasm& g) { float_compare(g, vm::Op::fcmplt); }
void gen_fcmple(InterpMasm& g) { float_compare(g, vm::Op::fcmple); }
void gen_fcmpgt(InterpMasm& g) { float_compare(g, vm::Op::fcmpgt); }
void gen_fcmpge(InterpMasm& g) { float_compare(g, vm::Op::fcmpge); }
void gen_zcmpeq(InterpMasm& g) { int_compare(g, CondCode::kE, vm::Op::zcmpeq); }
void gen_zcmpne(InterpMasm& g) { int_compare(g, CondCode::kNE, vm::Op::zcmpne); }

void gen_jump(InterpMasm& g) { g.branch(1); }
void gen_iffalse(InterpMasm& g) { if_bool(g, false, vm::Op::iffalse); }
void gen_iftrue(InterpMasm& g) { if_bool(g, true, vm::Op::iftrue); }
void gen_if_icmpeq(InterpMasm& g) { if_compare(g, CondCode::kE, vm::Op::if_icmpeq); }
void gen_if_icmpne(InterpMasm& g) { if_compare(g, CondCode::kNE, vm::Op::if_icmpne); }
void gen_if_icmplt(InterpMasm& g) { if_compare(g, CondCode::kL, vm::Op::if_icmplt); }
void gen_if_icmple(InterpMasm& g) { if_compare(g, CondCode::kLE, vm::Op::if_icmple); }
void gen_if_icmpgt(InterpMasm& g) { if_compare(g, CondCode::kG, vm::Op::if_icmpgt); }
void gen_if_icmpge(InterpMasm& g) { if_compare(g, CondCode::kGE, vm::Op::if_icmpge); }

// Counted-loop latch: i += 1; loop while i < limit. The front end guarantees i < limit
// before the increment, so it cannot overflow. No stack effect: rax is left alone.
void gen_forloop(InterpMasm& g) {
  Assembler& a = g.a;
  Label exit = a.newLabel();
  g.load_local_index(rcx, vm::kOperandA);
  g.load_local_index(rdx, vm::kOperandB);
  a.mov(r11, g.local_slot(rcx));
  a.add(r11, 1);
  a.mov(g.local_slot(rcx), r11);
  a.cmp(r11, g.local_slot(rdx));
  a.jge(exit);
  g.branch(vm::kOperandC);
  a.bind(exit);
  NEXT(forloop);
}

// The TLAB bump inline (runtime/alloc_asm.h); the runtime when it is full or the array
// is large. newarray's operand T is the ArrayKind itself (0 int, 1 float) but for bool
// (2), whose arrays are int arrays: T & 1. anewarray's arrays are of kind Ref.
void new_array(InterpMasm& g, vm::Op op) {
  Assembler& a = g.a;
  Label slow = a.newLabel();
  if (op == vm::Op::newarray) {
    a.movzx(ecx, byte_ptr(kBcp, 1));
    a.and_(ecx, 1);
  } else {
    a.mov(ecx, int(runtime::ArrayKind::Ref));
  }
  runtime::emit_allocate_array(a, rdx, kTos, rcx, r11, slow);
  a.mov(kTos, rdx);
  g.dispatch_next(len(op));
  a.bind(slow);
  g.call_stack_helper(fnptr(&minivm_rt_newarray));
  g.dispatch_next(len(op));
}
void gen_newarray(InterpMasm& g) { new_array(g, vm::Op::newarray); }
void gen_anewarray(InterpMasm& g) { new_array(g, vm::Op::anewarray); }

void gen_iaload(InterpMasm& g) { array_load(g, vm::Op::iaload); }
void gen_faload(InterpMasm& g) { array_load(g, vm::Op::faload); }
void gen_iastore(InterpMasm& g) { array_store(g, vm::Op::iastore); }
void gen_aaload(InterpMasm& g) { array_load(g, vm::Op::aaload); }
void gen_aastore(InterpMasm& g) { array_store(g, vm::Op::aastore); }
void gen_fastore(InterpMasm& g) { array_store(g, vm::Op::fastore); }

void gen_arraylength(InterpMasm& g) {
  Label null = g.a.newLabel();
  g.implicit_null_check(null);
  g.a.mov(rax, qword_ptr(rax, kArrayLengthOffset));  // an array's elements or a string's bytes
  NEXT(arraylength);
  g.a.bind(null);
  g.a.mov(esi, int(runtime::NullUse::length));
  g.call_throw(fnptr(&minivm_rt_throw_null));
}

// --- references and strings ---
void gen_aconst_null(InterpMasm& g) {
  g.a.push(rax);
  g.a.xor_(eax, eax);
  NEXT(aconst_null);
}
void gen_acmpeq(InterpMasm& g) { int_compare(g, CondCode::kE, vm::Op::acmpeq); }
void gen_acmpne(InterpMasm& g) { int_compare(g, CondCode::kNE, vm::Op::acmpne); }

void gen_sload(InterpMasm& g) {
  Assembler& a = g.a;
  a.mov(rcx, rax);  // index
  a.pop(r8);        // string
  bounds_check(g, runtime::NullUse::string_index);
  a.movzx(eax, byte_ptr(r8, rcx, 0, kArrayDataOffset));
  NEXT(sload);
}

// The operations that make strings, or compare their bytes, are the runtime's.
void gen_sconcat(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_sconcat));
  NEXT(sconcat);
}
void gen_scmpeq(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_scompare));
  NEXT(scmpeq);
}
void gen_scmpne(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_scompare));
  NEXT(scmpne);
}
void gen_substring(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_substring));
  NEXT(substring);
}
void gen_tostring(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_tostring));
  NEXT(tostring);
}

// Calls the Method* in rbx, the arguments pushed and bcp saved in the frame. The callee
// replaces the arguments by its result (or by nothing): either way the new top of stack
// is in memory. Our registers are gone.
void call_method_in_rbx(InterpMasm& g) {
  Assembler& a = g.a;
  a.call(qword_ptr(rbx, kMethodEntryOffset));
  a.pop(rax);
  a.mov(kBcp, qword_ptr(rbp, kInterpFrameBcpOffset));
  a.mov(kLocals, qword_ptr(rbp, kInterpFrameLocalsOffset));
}

// --- objects ---
// The class's shape (runtime/classes.h) of class index `index` into `shape`.
void class_shape(InterpMasm& g, const Gp& shape, const Gp& index) {
  Assembler& a = g.a;
  a.shl(index, runtime::kClassShapeShift);
  a.mov(shape, imm(reinterpret_cast<uint64_t>(&runtime::g_class_shapes)));
  a.mov(shape, qword_ptr(shape));
  a.add(shape, index);
}

// The TLAB bump inline, as newarray's, with the class's header word and field count.
void gen_newobject(InterpMasm& g) {
  Assembler& a = g.a;
  Label slow = a.newLabel();
  a.push(rax);  // the new object becomes the cached top
  a.movzx(ecx, g.u16_operand());
  class_shape(g, r8, rcx);
  a.mov(rcx, qword_ptr(r8, runtime::kClassShapeHeaderOffset));
  a.mov(r9, qword_ptr(r8, runtime::kClassShapeFieldsOffset));
  runtime::emit_allocate_array(a, rax, r9, rcx, r11, slow);
  NEXT(newobject);
  a.bind(slow);
  a.pop(rax);
  g.call_stack_helper(fnptr(&minivm_rt_newobject));
  NEXT(newobject);
}

// A getfield, putfield, invokevirtual or invokeinterface on null: the error names the member.
void null_member(InterpMasm& g, Label& null) {
  g.a.bind(null);
  g.a.mov(rsi, kBcp);
  g.call_throw(fnptr(&minivm_rt_throw_null_member));
}

void gen_getfield(InterpMasm& g) {
  Assembler& a = g.a;
  Label null = a.newLabel();
  a.test(rax, rax);
  a.jz(null);
  a.movzx(ecx, word_ptr(kBcp, vm::kOperandB));
  a.mov(rax, qword_ptr(rax, rcx, 3, kArrayDataOffset));
  NEXT(getfield);
  null_member(g, null);
}

void gen_putfield(InterpMasm& g) {
  Assembler& a = g.a;
  Label null = a.newLabel();
  a.pop(r8);  // the object; the value is the cached top
  a.test(r8, r8);
  a.jz(null);
  a.movzx(ecx, word_ptr(kBcp, vm::kOperandB));
  a.mov(qword_ptr(r8, rcx, 3, kArrayDataOffset), rax);
  // Whatever the field's type: the template serves every field, and a clean card only
  // spares a young collection one object's rescan.
  runtime::emit_card_mark(a, r8, rcx);
  a.pop(rax);
  NEXT(putfield);
  null_member(g, null);
}

// The arguments pushed, and the static class's (or interface's) method at the slot the
// operands name into rbx: r8 <- its shape, rcx <- the shape's offset, rdx <- the slot.
void static_method(InterpMasm& g) {
  Assembler& a = g.a;
  a.push(rax);  // arguments all in memory, as the convention wants
  a.mov(qword_ptr(rbp, kInterpFrameBcpOffset), kBcp);
  a.movzx(ecx, g.u16_operand());
  class_shape(g, r8, rcx);
  a.mov(r9, qword_ptr(r8, runtime::kClassShapeVtableOffset));
  a.movzx(edx, word_ptr(kBcp, vm::kOperandB));
  a.mov(rbx, qword_ptr(r9, rdx, 3));
}

// The call of the method at index rdx of the receiver's class's table at `table` (its
// vtable or itable). rbx holds the static method (which says how many arguments there
// are, so where the receiver is), r8 the static class's shape and rcx its offset in the
// shape table.
void call_on_receiver(InterpMasm& g, int32_t table, Label& null) {
  Assembler& a = g.a;
  a.movzx(r10d, word_ptr(rbx, kMethodParamCountOffset));
  a.mov(r11, qword_ptr(rsp, r10, 3, -8));  // the receiver, the deepest argument
  a.test(r11, r11);
  a.jz(null);
  a.mov(r11d, dword_ptr(r11, runtime::kObjectClassOffset));
  a.shl(r11, runtime::kClassShapeShift);
  a.sub(r8, rcx);  // back to the table's start
  a.mov(r9, qword_ptr(r8, r11, 0, table));
  a.mov(rbx, qword_ptr(r9, rdx, 3));
  call_method_in_rbx(g);
}

// Dispatch on the receiver's class: its vtable's entry at the method slot. The static
// class's entry says how many arguments there are, so where the receiver is.
void gen_invokevirtual(InterpMasm& g) {
  Label null = g.a.newLabel();
  static_method(g);
  call_on_receiver(g, runtime::kClassShapeVtableOffset, null);
  NEXT(invokevirtual);
  null_member(g, null);
}

// Dispatch on the receiver's class through its itable, at the selector of the
// interface's method slot. The interface's own (abstract) method says how many
// arguments there are, so where the receiver is.
void gen_invokeinterface(InterpMasm& g) {
  Label null = g.a.newLabel();
  static_method(g);
  g.a.add(edx, dword_ptr(r8, runtime::kClassShapeFirstSelectorOffset));
  call_on_receiver(g, runtime::kClassShapeItableOffset, null);
  NEXT(invokeinterface);
  null_member(g, null);
}

// CF <- whether the (non-null) object in `object` is of the operand's class, a subclass
// or (an interface) implements it:
// its class's bit in the object's class's ancestor set (runtime/classes.h).
void class_test(InterpMasm& g, const Gp& object) {
  Assembler& a = g.a;
  a.mov(ecx, dword_ptr(object, runtime::kObjectClassOffset));
  class_shape(g, r8, rcx);
  a.mov(r8, qword_ptr(r8, runtime::kClassShapeAncestorsOffset));
  a.movzx(ecx, g.u16_operand());
  a.mov(edx, ecx);
  a.shr(edx, 6);
  a.mov(r8, qword_ptr(r8, rdx, 3));
  a.bt(r8, rcx);  // the bit number modulo 64
}

void gen_instanceof(InterpMasm& g) {
  Assembler& a = g.a;
  Label null = a.newLabel();
  a.test(rax, rax);
  a.jz(null);  // false, and rax is 0 already
  class_test(g, rax);
  a.setc(al);
  a.movzx(eax, al);
  a.bind(null);
  NEXT(instanceof);
}

void gen_checkcast(InterpMasm& g) {
  Assembler& a = g.a;
  Label ok = a.newLabel();
  a.test(rax, rax);
  a.jz(ok);  // null casts to every class
  class_test(g, rax);
  a.jc(ok);
  a.mov(rsi, kBcp);
  a.mov(rdx, rax);
  g.call_throw(fnptr(&minivm_rt_throw_cast));
  a.bind(ok);
  NEXT(checkcast);
}

void gen_fsqrt(InterpMasm& g) {
  g.a.movq(xmm0, rax);
  g.a.sqrtsd(xmm0, xmm0);
  g.a.movq(rax, xmm0);
  NEXT(fsqrt);
}

void gen_atomic_add(InterpMasm& g) {
  Assembler& a = g.a;
  a.pop(rcx);  // i
  a.pop(r8);   // a
  bounds_check(g);
  a.mov(r9, rax);  // v
  a.lock().xadd(qword_ptr(r8, rcx, 3, kArrayDataOffset), rax);
  a.add(rax, r9);
  NEXT(atomic_add);
}

void gen_call(InterpMasm& g) {
  Assembler& a = g.a;
  a.push(rax);  // arguments all in memory, as the convention wants
  a.mov(qword_ptr(rbp, kInterpFrameBcpOffset), kBcp);
  a.movzx(ecx, g.u16_operand());
  a.mov(rdx, qword_ptr(kThread, kThreadMethodsOffset));
  a.mov(rbx, qword_ptr(rdx, rcx, 3));
  call_method_in_rbx(g);
  NEXT(call);
}

void gen_spawn(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_spawn));
  NEXT(spawn);
}

// --- function values (runtime/closures.h) ---
void gen_newclosure(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_newclosure));
  NEXT(newclosure);
}

void gen_loadcapture(InterpMasm& g) {
  Assembler& a = g.a;
  a.push(rax);
  a.mov(rax, qword_ptr(kLocals));  // local 0: the lambda's closure
  a.movzx(ecx, g.u16_operand());
  a.mov(rax, qword_ptr(rax, rcx, 3, runtime::kArrayDataOffset + 8));  // after the Method*
  NEXT(loadcapture);
}

// The function value below the N arguments chooses the method. A lambda takes the
// closure as its first argument, where it already is; a top-level function does not,
// so the arguments move down over it. Either way the result ends where the value was.
void gen_callvalue(InterpMasm& g) {
  Assembler& a = g.a;
  Label null = a.newLabel(), top_level = a.newLabel(), call = a.newLabel();
  a.push(rax);  // arguments all in memory, as the convention wants
  a.mov(qword_ptr(rbp, kInterpFrameBcpOffset), kBcp);
  a.movzx(ecx, word_ptr(kBcp, vm::kOperandB));
  a.mov(r11, qword_ptr(rsp, rcx, 3));  // the function value
  a.test(r11, r11);
  a.jz(null);
  a.mov(rbx, qword_ptr(r11, runtime::kClosureMethodOffset));
  a.movzx(edx, word_ptr(rbx, kMethodParamCountOffset));
  a.cmp(edx, ecx);
  a.je(top_level);
  a.bind(call);
  call_method_in_rbx(g);
  NEXT(callvalue);
  a.bind(top_level);  // rcx = N: move argument k (at rsp + 8k) to rsp + 8(k + 1), deepest first
  Label moved = a.newLabel(), loop = a.newLabel();
  a.test(ecx, ecx);
  a.jz(moved);
  a.bind(loop);
  a.mov(rax, qword_ptr(rsp, rcx, 3, -8));
  a.mov(qword_ptr(rsp, rcx, 3), rax);
  a.dec(ecx);
  a.jnz(loop);
  a.bind(moved);
  a.add(rsp, 8);
  a.jmp(call);
  a.bind(null);
  a.mov(esi, int(runtime::NullUse::call));
  g.call_throw(fnptr(&minivm_rt_throw_null));
}

void gen_spawnvalue(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_spawn_value));
  NEXT(spawnvalue);
}

void gen_native(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_native));
  NEXT(native);
}

void gen_print(InterpMasm& g) {
  g.call_stack_helper(fnptr(&minivm_rt_print));
  NEXT(print);
}

// After the return poll the frame is being torn down: a sample there cannot be matched
// to this frame at a later poll, so samplers are told (runtime::PcRange).
void returning(InterpMasm& g, bool value) {
  g.poll();  // while the frame is intact
  Label begin = g.a.newLabel(), end = g.a.newLabel();
  g.left_frame = g.a.newLabel();
  g.a.bind(begin);
  return_from_frame(g, value);  // for vret the result is the cached top, in rax
  g.a.bind(end);
  g.frames.range(begin, g.left_frame, runtime::PcRangeKind::interp_epilogue);
  g.frames.range(g.left_frame, end, runtime::PcRangeKind::interp_epilogue_left);
}

void gen_ret(InterpMasm& g) { returning(g, false); }
void gen_vret(InterpMasm& g) { returning(g, true); }

// Method entry: rbx = Method*, [rsp] = return pc, arguments above it.
void gen_method_entry(InterpMasm& g) {
  Assembler& a = g.a;
  Label overflow = a.newLabel(), zero_loop = a.newLabel(), zeroed = a.newLabel();
  Label begin = a.newLabel(), complete = a.newLabel();
  a.bind(begin);
  g.frames.shape(FrameRow::entry());
  a.mov(rax, rsp);
  a.mov(ecx, dword_ptr(rbx, kMethodFrameBytesOffset));
  a.sub(rax, rcx);
  a.cmp(rax, qword_ptr(kThread, kThreadStackLimitOffset));
  a.jb(overflow);
  a.movzx(ecx, word_ptr(rbx, kMethodParamCountOffset));
  a.lea(kLocals, ptr(rsp, rcx, 3));  // argument 0
  a.pop(rax);                        // return pc, pushed back above the new locals
  // While the extra locals are pushed rsp moves by a per-method amount: the caller's sp
  // follows from the locals pointer, r14 = CFA - 8 + 8 * param_count.
  FrameRow pushing = FrameRow::entry().with_cfa(FrameRow::Cfa::r14_less_params, 8);
  g.frames.shape(FrameRow(pushing).with_ra(FrameRow::Ra::in_rax));
  a.movzx(ecx, word_ptr(rbx, kMethodExtraLocalsOffset));
  a.test(ecx, ecx);
  a.jz(zeroed);
  a.bind(zero_loop);
  a.push(0);
  a.dec(ecx);
  a.jnz(zero_loop);
  a.bind(zeroed);
  a.push(rax);
  g.frames.shape(FrameRow(pushing).with_ra(FrameRow::Ra::at_rsp));
  g.frames.push_rbp_frame();
  Label framed = a.newLabel();
  a.bind(framed);                                   // from here rbp is this frame's
  a.push(rbx);                                      // Method*
  a.mov(kBcp, qword_ptr(rbx, kMethodCodeOffset));
  a.push(kBcp);                                     // bcp
  a.push(kLocals);                                  // locals
  a.bind(complete);
  g.frames.range(begin, framed, runtime::PcRangeKind::interp_entry);
  g.frames.range(framed, complete, runtime::PcRangeKind::interp_entry_framed);
  // Count the invocation; past the threshold, tell the tier policy (which compiles it
  // for the next calls; this one goes on interpreting).
  if (tier_thresholds().invocations == UINT32_MAX) {  // --xint: nothing to count for
    g.dispatch_next(0);                             // rax (the empty stack's top) is junk
  } else {
    Label hot = a.newLabel(), after = a.newLabel();
    a.add(dword_ptr(rbx, kMethodInvocationsOffset), 1);
    a.cmp(dword_ptr(rbx, kMethodInvocationsOffset), imm(int32_t(tier_thresholds().invocations)));
    a.jae(hot);
    g.dispatch_next(0);
    a.bind(hot);
    g.set_anchor(after);
    a.mov(rdi, kThread);
    a.mov(rsi, rbx);
    a.and_(rsp, -16);
    a.mov(rax, imm(reinterpret_cast<uint64_t>(&minivm_rt_hot_method)));
    a.call(rax);
    a.bind(after);
    g.clear_anchor();
    a.lea(rsp, ptr(rbp, -8 * kInterpFrameFixedSlots));
    g.dispatch_next(0);
  }

  // Not enough stack for this frame: report it from the caller's frame, which is intact
  // (its bcp was saved at the call).
  runtime::emit_stack_overflow_path(a, g.frames, overflow, FrameRow::rbp_frame());
}

// `a op local L` superinstructions: the local is read straight from its slot.
void local_int_op(InterpMasm& g, Inst::Id id, vm::Op op) {
  g.load_local_index(rcx);
  g.a.emit(id, rax, g.local_slot(rcx));
  g.dispatch_next(len(op));
}
void local_float_op(InterpMasm& g, Inst::Id id, vm::Op op) {
  g.load_local_index(rcx);
  g.a.movq(xmm0, rax);
  g.a.emit(id, xmm0, g.local_slot(rcx));
  g.a.movq(rax, xmm0);
  g.dispatch_next(len(op));
}
// `a[local L]`: the array is the cached top, the index is read from its slot.
void local_index_load(InterpMasm& g, vm::Op op) {
  Assembler& a = g.a;
  a.mov(r8, rax);  // array
  g.load_local_index(rcx);
  a.mov(rcx, g.local_slot(rcx));  // index
  bounds_check(g);
  a.mov(rax, qword_ptr(r8, rcx, 3, kArrayDataOffset));
  g.dispatch_next(len(op));
}
// The array local A in r8 and the index local B in rcx, checked: nothing of the stack
// touched yet, so a failure leaves it as the instruction found it.
void local_array_and_index(InterpMasm& g) {
  g.load_local_index(rcx, int(vm::kOperandA));
  g.a.mov(r8, g.local_slot(rcx));  // array
  g.load_local_index(rcx, int(vm::kOperandB));
  g.a.mov(rcx, g.local_slot(rcx));  // index
  bounds_check(g);
}
// `local A[local B]`: the element the new top.
void local_array_index_load(InterpMasm& g, vm::Op op) {
  Assembler& a = g.a;
  local_array_and_index(g);
  a.push(rax);
  a.mov(rax, qword_ptr(r8, rcx, 3, kArrayDataOffset));
  g.dispatch_next(len(op));
}
// `local A * local B`, floats: both read from their slots, the product the new top.
void gen_fmulll(InterpMasm& g) {
  Assembler& a = g.a;
  a.push(rax);
  g.load_local_index(rcx, int(vm::kOperandA));
  a.movsd(xmm0, g.local_slot(rcx));
  g.load_local_index(rcx, int(vm::kOperandB));
  a.mulsd(xmm0, g.local_slot(rcx));
  a.movq(rax, xmm0);
  g.dispatch_next(len(vm::Op::fmulll));
}
// `local A[local B] = top`, the top popped.
void local_array_index_store(InterpMasm& g, vm::Op op) {
  Assembler& a = g.a;
  local_array_and_index(g);
  a.mov(qword_ptr(r8, rcx, 3, kArrayDataOffset), rax);
  a.pop(rax);
  g.dispatch_next(len(op));
}
void gen_iaddl(InterpMasm& g) { local_int_op(g, Inst::kIdAdd, vm::Op::iaddl); }
void gen_isubl(InterpMasm& g) { local_int_op(g, Inst::kIdSub, vm::Op::isubl); }
void gen_imull(InterpMasm& g) { local_int_op(g, Inst::kIdImul, vm::Op::imull); }
void gen_faddl(InterpMasm& g) { local_float_op(g, Inst::kIdAddsd, vm::Op::faddl); }
void gen_fsubl(InterpMasm& g) { local_float_op(g, Inst::kIdSubsd, vm::Op::fsubl); }
void gen_fmull(InterpMasm& g) { local_float_op(g, Inst::kIdMulsd, vm::Op::fmull); }
void gen_fdivl(InterpMasm& g) { local_float_op(g, Inst::kIdDivsd, vm::Op::fdivl); }
void gen_ialoadl(InterpMasm& g) { local_index_load(g, vm::Op::ialoadl); }
void gen_faloadl(InterpMasm& g) { local_index_load(g, vm::Op::faloadl); }
void gen_ialoadll(InterpMasm& g) { local_array_index_load(g, vm::Op::ialoadll); }
void gen_faloadll(InterpMasm& g) { local_array_index_load(g, vm::Op::faloadll); }
void gen_iastorell(InterpMasm& g) { local_array_index_store(g, vm::Op::iastorell); }
void gen_fastorell(InterpMasm& g) { local_array_index_store(g, vm::Op::fastorell); }

// --slowdown's work (runtime/slowdown.h): N ns of the calibrated chain, the cached top and
// everything else untouched, so a sample in it is taken at this bcp, on its line.
void gen_slowdown(InterpMasm& g) {
  Assembler& a = g.a;
  Label done = a.newLabel();
  a.movzx(ecx, g.u16_operand());  // the site: one more pass on this thread's counter
  a.mov(rdx, qword_ptr(kThread, runtime::kThreadSlowdownPassesOffset));
  a.inc(qword_ptr(rdx, rcx, 3));
  a.mov(ecx, g.i32_operand(int(vm::kOperandB)));  // at most vm::kMaxSlowdownNs (verified)
  a.mov(rdx, imm(reinterpret_cast<uint64_t>(&runtime::g_slowdown_turns_per_1024ns)));
  a.imul(rcx, qword_ptr(rdx));
  a.shr(rcx, 10);
  a.jz(done);
  runtime::emit_slowdown_spin(a, rcx, rdx);
  a.bind(done);
  NEXT(slowdown);
}

// The array templates' failure paths (bounds_check), shared so that the templates stay
// short: a template jumps here (or the SIGSEGV handler resumes here, for null) with its
// frame intact and bcp current, the index in rcx and the array (or string) in r8.
void gen_array_failures(InterpMasm& g) {
  Assembler& a = g.a;
  a.bind(g.index_out_of_bounds);
  a.mov(rsi, rcx);
  a.mov(rdx, qword_ptr(r8, kArrayLengthOffset));
  g.call_throw(fnptr(&minivm_rt_throw_index));
  a.bind(g.null_array_index);
  a.mov(esi, int(runtime::NullUse::array_index));
  g.call_throw(fnptr(&minivm_rt_throw_null));
  a.bind(g.null_string_index);
  a.mov(esi, int(runtime::NullUse::string_index));
  g.call_throw(fnptr(&minivm_rt_throw_null));
}

// Reached only through a corrupt bcp: the verifier admits no unknown opcode.
void gen_bad_opcode(InterpMasm& g) {
  g.a.movzx(esi, byte_ptr(kBcp));
  g.call_throw(fnptr(&minivm_rt_throw_bad_opcode));
}

}  // namespace interp
