// Operands used where they are: a constant or a local that the next instruction consumes
// is never copied to its expression register. `ldc 2; if_icmpge` becomes `cmp reg, 2`,
// `load i; load n; if_icmplt` becomes `cmp r13, [rbp+16]`, `ldc 4.0; fcmple; iftrue`
// becomes one `ucomisd` against the constant in memory and a branch. Only within a
// straight line: nothing is fused across an instruction that a branch targets, so every
// path into an instruction finds its operands where expr() says.
#include "jit/compiler.h"
#include "jit/emitter_traits.h"
#include "runtime/invariant.h"

namespace jit::baseline {

// 2.0 * x is x + x, exactly (for every x: NaN, infinities, -0.0), and an add takes half
// the latency of a multiply on the chains that float loops carry.
constexpr uint64_t kTwo = 0x4000000000000000;

void Compiler::find_branch_targets(InlineScope& s) {
  const vm::Function& f = *s.fn;
  s.branch_target.assign(f.code.size() + 1, false);
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length)
    if (vm::op_has(Op(f.code[bci]), vm::kOpBranch))
      s.branch_target[size_t(int64_t(bci) + vm::branch_offset(f.code.data() + bci))] = true;
  for (auto& l : f.loops) s.branch_target[l.header_bci] = true;
}

bool Compiler::operand_of(size_t bci, Operand& o, vm::Type& t) {
  const vm::Function& f = *sc_->fn;
  const uint8_t* p = f.code.data() + bci;
  if (Op(*p) == Op::load) {
    o = local(vm::read_u16(p, vm::kOperandA));
    t = f.local_types[vm::read_u16(p, vm::kOperandA)];
    return true;
  }
  if (Op(*p) != Op::ldc) return false;
  const vm::Constant& c = f.constants[vm::read_u16(p, vm::kOperandA)];
  t = c.type;
  if (vm::is_reference(t)) return false;  // a string's or function's value: a pointer only the Method has (never an imm32)
  if (is_float(t)) {
    o = float_constant(uint64_t(c.bits));
    return true;
  }
  if (c.bits != int64_t(int32_t(c.bits))) return false;
  o = imm(c.bits);
  return true;
}

bool Compiler::fusible(size_t bci) const {
  return bci < sc_->fn->code.size() && !sc_->branch_target[bci] && sc_->info.depth_at[bci] >= 0;
}

bool Compiler::defer_operand(size_t bci) {
  const vm::Function& f = *sc_->fn;
  Operand o;
  vm::Type t;
  if (!operand_of(bci, o, t)) return false;
  size_t n1 = bci + vm::op_info(Op(f.code[bci])).length;
  if (!fusible(n1)) return false;
  if (takes_operand(Op(f.code[n1]), t) || (Op(f.code[n1]) == Op::fmull && o == Operand(float_constant(kTwo)))) {
    deferred_.push_back(o);
    return true;
  }
  // The left operand of a comparison whose right operand is deferred too: a local only
  // (an immediate cannot be cmp's first operand).
  if (Op(f.code[bci]) != Op::load || is_float(t) || !deferred_.empty()) return false;
  size_t n2 = n1 + vm::op_info(Op(f.code[n1])).length;
  Operand o1;
  vm::Type t1;
  if (!fusible(n2) || !(emitter_traits(Op(f.code[n2])) & FUSE_LEFT) || !operand_of(n1, o1, t1) || is_float(t1)) return false;
  deferred_.push_back(o);
  return true;
}

Operand Compiler::right_operand(const Insn& i, vm::Type t) {
  if (deferred_.empty()) return expr(i.d - 1, t);
  Operand o = deferred_.back();
  deferred_.pop_back();
  return o;
}

Operand Compiler::left_operand(const Insn& i, vm::Type t) {
  if (deferred_.empty()) return expr(i.d - 2, t);
  Operand o = deferred_.back();
  MVM_ASSERT(!o.isImm(), "a fused left operand is a local (defer_operand): an immediate cannot be cmp's first operand");
  deferred_.pop_back();
  return o;
}

const uint8_t* Compiler::fusible_next(const Insn& i) const {
  size_t next = i.bci + vm::op_info(i.op()).length;
  return fusible(next) ? sc_->fn->code.data() + next : nullptr;
}

void Compiler::take_next(const Insn& i) {
  size_t next = i.bci + vm::op_info(i.op()).length;
  a.bind(sc_->labels[next]);
  mark(int32_t(next), false);
  skip_next_ = true;
}

int Compiler::next_store_to_register(const Insn& i) const {
  const uint8_t* p = fusible_next(i);
  if (p == nullptr || Op(*p) != Op::store) return -1;
  int x = vm::read_u16(p, vm::kOperandA);
  return local(x).isReg() && !is_float(sc_->fn->local_types[size_t(x)]) ? x : -1;
}

const Label* Compiler::fused_branch(const Insn& i, bool& when) {
  const uint8_t* p = fusible_next(i);
  if (p == nullptr || (Op(*p) != Op::iftrue && Op(*p) != Op::iffalse)) return nullptr;
  when = Op(*p) == Op::iftrue;
  // The branch's own pc desc and label, at its jump.
  take_next(i);
  return &sc_->labels[size_t(int64_t(p - sc_->fn->code.data()) + vm::branch_offset(p))];
}

bool Compiler::accumulate(const Insn& i, Inst::Id id, vm::Type t, const Operand& top) {
  const uint8_t* p = fusible_next(i);
  if (p == nullptr || Op(*p) != Op::store || vm::read_u16(p, vm::kOperandA) != i.a()) return false;
  // x OP top rather than top OP x: the same value, + and * being commutative (a NaN's
  // payload aside, which Mini never shows), and no copy of the sum back into x.
  if (is_float(t))
    float_op(id, local(i.a()), top);
  else
    int_op(id, local(i.a()), top);
  take_next(i);
  after_local_write(i.a());
  return true;
}

Inst::Id Compiler::fused_float_consumer(const Insn& i, int to) {
  const uint8_t* p = fusible_next(i);
  if (p == nullptr || to < 1) return Inst::kIdNone;
  Inst::Id id;
  switch (Op(*p)) {
    case Op::fadd: id = Inst::kIdAddsd; break;
    case Op::fsub: id = Inst::kIdSubsd; break;
    case Op::fmul: id = Inst::kIdMulsd; break;
    case Op::fdiv: id = Inst::kIdDivsd; break;
    default: return Inst::kIdNone;
  }
  take_next(i);
  return id;
}

bool Compiler::is_two(const Operand& o) const {
  for (auto& [b, l] : float_constants_)
    if (b == kTwo) return o == Operand(qword_ptr(l));
  return false;
}

Mem Compiler::float_constant(uint64_t bits) {
  for (auto& [b, l] : float_constants_)
    if (b == bits) return qword_ptr(l);
  float_constants_.push_back({bits, a.newLabel()});
  return qword_ptr(float_constants_.back().second);
}

Label Compiler::sign_mask() {
  if (!sign_mask_.isValid()) sign_mask_ = a.newLabel();
  return sign_mask_;
}

void Compiler::emit_float_constants() {
  if (sign_mask_.isValid()) {
    a.align(AlignMode::kData, 16);
    a.bind(sign_mask_);
    a.embedUInt64(uint64_t(1) << 63);
    a.embedUInt64(0);
  }
  if (float_constants_.empty()) return;
  a.align(AlignMode::kData, 8);
  for (auto& [bits, label] : float_constants_) {
    a.bind(label);
    a.embedUInt64(bits);
  }
}

}  // namespace jit::baseline
