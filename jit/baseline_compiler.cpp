#include "jit/baseline_compiler.h"
#include "jit/intrinsic_stubs.h"
#include "jit/code_registration.h"

#include <asmjit/x86.h>

#include <algorithm>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/frame.h"
#include "runtime/frame_recorder.h"
#include "runtime/heap.h"
#include "runtime/mini_semantics_asm.h"
#include "runtime/poll.h"
#include "runtime/runtime_calls.h"
#include "runtime/stack_overflow_path.h"
#include "runtime/thread.h"
#include "runtime/vm.h"
#include "vm/builtins.h"
#include "vm/verifier.h"

namespace jit {

using namespace asmjit;
using namespace asmjit::x86;
using runtime::CompiledCode;
using runtime::Method;
using vm::Op;

namespace {

JitRuntime& code_memory() {
  static JitRuntime rt;
  return rt;
}

std::mutex g_cache_mutex;
std::vector<std::unique_ptr<CompiledCode>> g_cache;  // compiled code lives forever

class AbortOnError : public ErrorHandler {
 public:
  void handleError(Error err, const char* message, BaseEmitter*) override {
    std::fprintf(stderr, "minivm: internal error: JIT code generation failed: %s (%u)\n", message, err);
    std::abort();
  }
};

const Gp kExprRegs[] = {rsi, rdi, r8, r9, r11};
constexpr int kExprRegCount = 5;
const Gp kLocalRegs[] = {rbx, r13, r14};
constexpr int kLocalRegCount = 3;
// Floats: expression depths 0..5 in xmm2..xmm7, up to four float locals in xmm8..xmm11.
const Xmm kXmmExpr[] = {xmm2, xmm3, xmm4, xmm5, xmm6, xmm7};
constexpr int kXmmExprCount = 6;
const Xmm kXmmLocals[] = {xmm8, xmm9, xmm10, xmm11};
constexpr int kXmmLocalCount = 4;

// Inlining rule: @inline always (unless recursive), @noinline never, otherwise callees
// of at most kMaxInlineBytes bytecode bytes; never a method already on the inline
// chain (recursion), at most kMaxInlineDepth levels, kInlineBudget bytes per compilation.
constexpr size_t kMaxInlineBytes = 35;
constexpr size_t kMaxInlineDepth = 6;
constexpr size_t kInlineBudget = 2000;

// One method body being emitted: the compiled method itself (the root) or a callee
// inlined into it at `call_bci` of `caller`.
struct InlineScope {
  Method* m = nullptr;
  const vm::Function* fn = nullptr;
  vm::VerifyInfo info;
  const InlineScope* caller = nullptr;
  uint32_t call_bci = 0;
  int local_base = -1;  // -1: the root's own homes; else first slot in the inline-locals area
  int depth_base = 0;   // absolute expression depth of this body's depth 0
  std::vector<Label> labels;
  std::vector<bool> poll_header;
  Label exit;           // where an inlined body's returns go
};

vm::VerifyInfo verified(const Method* m) {
  vm::VerifyError verr;
  vm::VerifyInfo info;
  if (!vm::verify_function(runtime::VM::get().module(), *m->function, verr, info)) {
    std::fprintf(stderr, "minivm: internal error: JIT got unverifiable %s: %s\n", m->function->name.c_str(),
                 verr.message.c_str());
    std::abort();
  }
  return info;
}

class Compiler {
 public:
  Compiler(Method* m, const JitOptions& options, Assembler& a, CodeHolder& code)
      : frames(a), m_(m), fn_(*m->function), options_(options), a(a), code_(code) {}

  void compile();

  std::vector<std::pair<Label, Label>> polls;
  struct DescAt {
    Label at;
    const InlineScope* scope;
    int32_t bci;
    bool safepoint;
  };
  std::vector<DescAt> descs;
  Label frame_complete;
  std::vector<std::pair<uint32_t, Label>> osr_labels;  // loop header bci -> OSR entry
  runtime::FrameRecorder frames;  // frame shapes and special pc ranges, as emitted

 private:
  using Types = std::vector<vm::Type>;
  static bool is_float(vm::Type t) { return t == vm::Type::Float; }

  // --- locations ---
  int extra() const { return m_->extra_locals; }
  // Home of the root method's local i: arguments above the return pc, the rest below rbp.
  Mem home_local(int i) const {
    int n = m_->param_count;
    if (i < n) return qword_ptr(rbp, 16 + 8 * (n - 1 - i));
    return qword_ptr(rbp, -8 * (1 + (i - n)));
  }
  // Home of local i of an inlined body (after the root's extra locals).
  Mem inline_home(const InlineScope& s, int i) const { return qword_ptr(rbp, -8 * (1 + extra() + s.local_base + i)); }
  Mem home_expr(int d) const { return qword_ptr(rbp, -8 * (2 + extra() + inline_slots_ + d)); }
  // Where the value at absolute expression depth d of type t lives: floats in xmm2..7,
  // everything else in rsi, rdi, r8, r9, r11; deeper values in their homes.
  Operand expr(int d, vm::Type t) const {
    if (is_float(t)) return d < kXmmExprCount ? Operand(kXmmExpr[d]) : Operand(home_expr(d));
    return d < kExprRegCount ? Operand(kExprRegs[d]) : Operand(home_expr(d));
  }
  // Integer-class value at depth d (int, bool, arrays).
  Operand expr(int d) const { return expr(d, vm::Type::Int); }
  Operand fexpr(int d) const { return expr(d, vm::Type::Float); }
  Operand local(int i) const {
    if (sc_->local_base >= 0) return inline_home(*sc_, i);
    for (int k = 0; k < kLocalRegCount; k++)
      if (reg_local_[k] == i) return kLocalRegs[k];
    for (int k = 0; k < kXmmLocalCount; k++)
      if (xmm_local_[k] == i) return kXmmLocals[k];
    return home_local(i);
  }

  // dst <- src (64 bits) between any two locations: registers of either class or memory.
  void move(const Operand& dst, const Operand& src) {
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
  void load(const Gp& r, const Operand& src) { move(r, src); }
  // x = x OP y for an integer instruction (add, sub, imul, and, or, xor), whatever x and
  // y are: a memory destination goes through rax (imul cannot write memory anyway).
  void int_op(Inst::Id id, const Operand& x, const Operand& y) {
    if (x.isReg()) {
      a.emit(id, x, y);
    } else {
      a.mov(rax, x.as<Mem>());
      a.emit(id, rax, y);
      a.mov(x.as<Mem>(), rax);
    }
  }
  // x = x OP y for a scalar double instruction (addsd, ...), x an xmm register or memory.
  void float_op(Inst::Id id, const Operand& x, const Operand& y) {
    if (x.isReg()) {
      a.emit(id, x, y);
    } else {
      a.movsd(xmm0, x.as<Mem>());
      a.emit(id, xmm0, y);
      a.movsd(x.as<Mem>(), xmm0);
    }
  }
  // Two-operand integer instruction on depths d-2 (destination) and d-1.
  void binop(Inst::Id id, int d) { int_op(id, expr(d - 2), expr(d - 1)); }
  void cmp(const Operand& x, const Operand& y) {
    if (x.isMem() && y.isMem()) {
      a.mov(rax, y.as<Mem>());
      a.cmp(x.as<Mem>(), rax);
    } else {
      a.emit(Inst::kIdCmp, x, y);
    }
  }
  // An xmm register holding the float at `o` (o itself, or xmm0/xmm1 loaded from memory).
  Xmm in_xmm(const Operand& o, const Xmm& scratch) {
    if (o.isReg()) return o.as<Xmm>();
    a.movsd(scratch, o.as<Mem>());
    return scratch;
  }

  // A stub call does `n` elements of work without a poll: it counts as n iterations
  // against the strip-mining countdown, so a counted loop around stub calls still polls
  // within the bound.
  void charge_strip_countdown(const Gp& n) {
    if (options_.strip_mining_iters != 0 && options_.emit_polls)
      a.sub(qword_ptr(r15, runtime::kThreadStripCountdownOffset), n);
  }

  void poll(int32_t bci) {
    Label test = a.newLabel(), resume = a.newLabel();
    mark(bci, true);
    if (!options_.emit_polls) return;
    a.mov(r10, qword_ptr(r15, runtime::kThreadPollWordOffset));
    a.bind(test);
    a.test(dword_ptr(r10), eax);
    a.bind(resume);
    polls.push_back({test, resume});
  }
  // Starts a new pc desc at the current position.
  void mark(int32_t bci, bool safepoint) {
    Label l = a.newLabel();
    a.bind(l);
    descs.push_back({l, sc_, bci, safepoint});
  }

  // The types of the whole (absolute) expression stack before `bci` of the current body.
  Types stack_types(size_t bci) const {
    Types t = outer_types_;
    const Types& own = sc_->info.stack_at[bci];
    t.insert(t.end(), own.begin(), own.end());
    return t;
  }
  void spill_exprs(const Types& t, int below) {
    for (int d = 0; d < below; d++) {
      Operand o = expr(d, t[size_t(d)]);
      if (o.isReg()) move(home_expr(d), o);
    }
  }
  void reload_exprs(const Types& t, int below) {
    for (int d = 0; d < below; d++) {
      Operand o = expr(d, t[size_t(d)]);
      if (o.isReg()) move(o, home_expr(d));
    }
  }
  // Register locals to their homes and back: all of them around Mini calls (the callee
  // may be interpreted and use every register); only the xmm ones around C calls (the
  // others are callee-saved in C).
  void spill_locals(bool gp) {
    for (int k = 0; gp && k < kLocalRegCount; k++)
      if (reg_local_[k] >= 0) a.mov(home_local(reg_local_[k]), kLocalRegs[k]);
    for (int k = 0; k < kXmmLocalCount; k++)
      if (xmm_local_[k] >= 0) a.movsd(home_local(xmm_local_[k]), kXmmLocals[k]);
  }
  void reload_locals(bool gp) {
    for (int k = 0; gp && k < kLocalRegCount; k++)
      if (reg_local_[k] >= 0) a.mov(kLocalRegs[k], home_local(reg_local_[k]));
    for (int k = 0; k < kXmmLocalCount; k++)
      if (xmm_local_[k] >= 0) a.movsd(kXmmLocals[k], home_local(xmm_local_[k]));
  }

  // Anchor at this frame with pc = `after`, then call `fn` with rsp aligned; rsp is
  // restored from rbp afterwards.
  void call_runtime(void* fn, const Label& after) {
    a.lea(rax, ptr(after));
    a.mov(qword_ptr(r15, runtime::kThreadAnchorPcOffset), rax);
    a.mov(qword_ptr(r15, runtime::kThreadAnchorFpOffset), rbp);
    a.mov(qword_ptr(r15, runtime::kThreadAnchorSpOffset), rsp);
    a.and_(rsp, -16);
    a.mov(rax, imm(reinterpret_cast<uint64_t>(fn)));
    a.call(rax);
    a.bind(after);
    a.lea(rsp, ptr(rbp, -int32_t(frame_bytes_)));
  }
  void throw_call(void* fn) {
    Label after = a.newLabel();
    a.mov(rdi, r15);
    call_runtime(fn, after);
    a.ud2();
  }
  // A runtime stack helper (runtime_calls.h) at depth d popping `pops` values and
  // pushing one of type `result` (Void: none). Its operands are passed in their homes.
  void stack_helper(void* fn, size_t bci, int d, int pops, vm::Type result, bool spilled = false) {
    Label after = a.newLabel();
    Types t = stack_types(bci);
    if (!spilled) spill_exprs(t, d);
    spill_locals(false);
    a.mov(rdi, r15);
    a.mov(rsi, imm(reinterpret_cast<uint64_t>(sc_->fn->code.data() + bci)));
    a.lea(rdx, home_expr(d - 1));  // d == 0: the slot above depth 0, which is never read
    a.mov(rcx, imm(reinterpret_cast<uint64_t>(sc_->m)));
    mark(int32_t(bci), true);
    call_runtime(fn, after);
    a.mov(qword_ptr(r15, runtime::kThreadAnchorSpOffset), 0);
    t.resize(size_t(d - pops));
    if (result != vm::Type::Void) t.push_back(result);
    reload_exprs(t, int(t.size()));
    reload_locals(false);
  }
  void bounds_check(const Gp& array, const Gp& index) {
    Label ok = a.newLabel();
    a.cmp(index, qword_ptr(array, runtime::kArrayLengthOffset));
    a.jb(ok);
    a.mov(rsi, index);
    a.mov(rdx, qword_ptr(array, runtime::kArrayLengthOffset));
    throw_call(reinterpret_cast<void*>(&minivm_rt_throw_index));
    a.bind(ok);
  }

  void intrinsic_call(vm::NativeId id, size_t bci, int d);
  void choose_register_locals();
  bool should_inline(const Method* callee, const InlineScope* chain) const;
  void plan(InlineScope& s);
  void emit_body(InlineScope& s);
  void inline_call(size_t bci, int d, Method* callee);
  void prologue();
  void osr_entry(uint32_t header_bci);
  void emit(size_t bci, int d);
  void emit_return(int d, bool value, vm::Type type);

  Method* m_;                  // the root method
  const vm::Function& fn_;     // its function
  InlineScope* sc_ = nullptr;  // the body being emitted
  Types outer_types_;          // expression types below the current body's depth 0
  std::deque<InlineScope> scopes_;       // every body, root first; addresses stay put
  std::deque<bool> inline_decisions_;    // made by plan(), consumed in the same order by emit
  size_t inline_bytes_ = 0;
  int inline_slots_ = 0;                 // locals of all inlined bodies
  int max_depth_ = 0;                    // deepest absolute expression depth, plus slack
  const JitOptions& options_;
  Assembler& a;
  CodeHolder& code_;
  int reg_local_[kLocalRegCount] = {-1, -1, -1};
  int xmm_local_[kXmmLocalCount] = {-1, -1, -1, -1};
  uint32_t frame_bytes_ = 0;
};

void Compiler::choose_register_locals() {
  // Weight each local's uses by 8 per enclosing loop; the heaviest floats go to xmm
  // registers, the heaviest others to general registers.
  std::vector<uint64_t> weight(fn_.local_count(), 0);
  for (size_t bci = 0; bci < fn_.code.size(); bci += vm::op_info(Op(fn_.code[bci])).length) {
    Op op = Op(fn_.code[bci]);
    uint64_t w = 1;
    for (auto& l : fn_.loops)
      if (bci >= l.header_bci && bci <= l.latch_bci) w *= 8;
    const uint8_t* p = fn_.code.data() + bci;
    switch (op) {
      case Op::load: case Op::store: case Op::iinc:
      case Op::iaddl: case Op::isubl: case Op::imull:
      case Op::faddl: case Op::fsubl: case Op::fmull: case Op::fdivl:
        weight[vm::read_u16(p, vm::kOperandA)] += w;
        break;
      case Op::forloop:
        weight[vm::read_u16(p, vm::kOperandA)] += w;
        weight[vm::read_u16(p, vm::kOperandB)] += w;
        break;
      default:
        break;
    }
  }
  std::vector<int> order(weight.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = int(i);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return weight[size_t(x)] > weight[size_t(y)]; });
  int gp = 0, xmm = 0;
  for (int i : order) {
    if (weight[size_t(i)] == 0) break;
    if (is_float(fn_.local_types[size_t(i)])) {
      if (xmm < kXmmLocalCount) xmm_local_[xmm++] = i;
    } else if (gp < kLocalRegCount) {
      reg_local_[gp++] = i;
    }
  }
}

void Compiler::prologue() {
  using runtime::FrameRow;
  Label overflow = a.newLabel(), body = a.newLabel(), begin = a.newLabel();
  a.bind(begin);
  frames.range(begin, frame_complete, runtime::PcRangeKind::prologue);
  frames.shape(FrameRow::entry());
  mark(0, false);
  a.lea(rax, ptr(rsp, -int32_t(frame_bytes_ + 64)));
  a.cmp(rax, qword_ptr(r15, runtime::kThreadStackLimitOffset));
  a.jb(overflow);
  a.push(rbp);
  frames.shape(FrameRow::rbp_pushed());
  a.mov(rbp, rsp);
  frames.shape(FrameRow::rbp_frame());
  a.sub(rsp, frame_bytes_);
  a.bind(frame_complete);
  if (extra() > 0) {
    a.xor_(eax, eax);
    for (int j = 0; j < extra(); j++) a.mov(home_local(m_->param_count + j), rax);
  }
  reload_locals(true);
  a.jmp(body);
  // Not enough stack: report from the caller's frame (anchor = caller), like the
  // interpreter's method entry.
  runtime::emit_stack_overflow_path(a, frames, overflow, FrameRow::rbp_frame());
  a.bind(body);
}

// OSR entry for a loop header: entered by a jump from an interpreter frame that has been
// turned back into "just called" (rsp at the return pc, arguments above); builds the
// frame, takes the other locals from the thread's OSR buffer, and joins the loop.
void Compiler::osr_entry(uint32_t header_bci) {
  using runtime::FrameRow;
  Label entry = a.newLabel(), complete = a.newLabel();
  a.bind(entry);
  frames.shape(FrameRow::entry());
  osr_labels.push_back({header_bci, entry});
  mark(int32_t(header_bci), false);
  a.push(rbp);
  frames.shape(FrameRow::rbp_pushed());
  a.mov(rbp, rsp);
  frames.shape(FrameRow::rbp_frame());
  a.sub(rsp, frame_bytes_);
  a.bind(complete);
  frames.range(entry, complete, runtime::PcRangeKind::prologue);
  a.mov(rcx, qword_ptr(r15, runtime::kThreadOsrBufferOffset));
  for (int j = 0; j < extra(); j++) {
    int i = m_->param_count + j;
    a.mov(rax, qword_ptr(rcx, 8 * i));
    a.mov(home_local(i), rax);
  }
  reload_locals(true);
  a.jmp(scopes_.front().labels[header_bci]);
}

void Compiler::emit_return(int d, bool value, vm::Type type) {
  using runtime::FrameRow;
  // From here (after the return poll) to the `ret` the frame goes away.
  Label begin = a.newLabel(), left = a.newLabel(), end = a.newLabel();
  a.bind(begin);
  struct Close {
    Assembler& a;
    runtime::FrameRecorder& frames;
    Label end;
    ~Close() {
      a.bind(end);
      frames.shape(FrameRow::rbp_frame());  // the code after the return is in the frame again
    }
  } close{a, frames, end};
  frames.range(begin, left, runtime::PcRangeKind::epilogue);
  frames.range(left, end, runtime::PcRangeKind::epilogue_left);
  int n = m_->param_count;
  if (value) load(rax, expr(d - 1, type));
  a.leave();
  a.bind(left);
  frames.shape(FrameRow::entry());  // frame gone, rbp the caller's again
  if (!value) {
    if (n == 0)
      a.ret();
    else
      a.ret(imm(8 * n));
  } else if (n == 0) {
    // The result goes under the return pc, which waits in rcx meanwhile.
    a.pop(rcx);
    frames.shape(FrameRow::entry().with_cfa(FrameRow::Cfa::rsp, 0).with_ra(FrameRow::Ra::in_rcx));
    a.push(rax);
    frames.shape(FrameRow::entry().with_ra(FrameRow::Ra::in_rcx));
    a.push(rcx);
    frames.shape(FrameRow::entry().with_cfa(FrameRow::Cfa::rsp, 16).with_ra(FrameRow::Ra::at_cfa, -16));
    a.ret();
  } else {
    // The result replaces argument 0; `ret` drops the return pc and the other arguments.
    a.mov(qword_ptr(rsp, 8 * n), rax);
    if (n == 1)
      a.ret();
    else
      a.ret(imm(8 * (n - 1)));
  }
}

void Compiler::emit(size_t bci, int d) {
  const vm::Function& fn = *sc_->fn;
  const uint8_t* p = fn.code.data() + bci;
  Op op = Op(*p);
  auto u16a = [&] { return vm::read_u16(p, vm::kOperandA); };
  auto target = [&] { return sc_->labels[size_t(int64_t(bci) + vm::branch_offset(p))]; };
  auto top_type = [&](int k) { return stack_types(bci)[size_t(d - k)]; };  // type at depth d-k
  switch (op) {
    case Op::nop: break;
    case Op::ldc: {
      const vm::Constant& c = fn.constants[u16a()];
      Operand dst = expr(d, c.type);
      if (dst.isReg() && dst.as<Reg>().isXmm()) {
        if (c.bits == 0) {
          a.xorps(dst.as<Xmm>(), dst.as<Xmm>());
        } else {
          a.mov(rax, imm(c.bits));
          a.movq(dst.as<Xmm>(), rax);
        }
      } else if (dst.isReg()) {
        a.mov(dst.as<Gp>(), imm(c.bits));
      } else if (c.bits == int64_t(int32_t(c.bits))) {
        a.mov(dst.as<Mem>(), imm(c.bits));
      } else {
        a.mov(rax, imm(c.bits));
        a.mov(dst.as<Mem>(), rax);
      }
      break;
    }
    case Op::load: move(expr(d, fn.local_types[u16a()]), local(u16a())); break;
    case Op::store: move(local(u16a()), expr(d - 1, fn.local_types[u16a()])); break;
    case Op::gload:
    case Op::gstore: {
      vm::Type t = runtime::VM::get().module().globals[u16a()].type;
      a.mov(rcx, imm(reinterpret_cast<uint64_t>(runtime::VM::get().globals() + u16a())));
      if (op == Op::gload)
        move(expr(d, t), qword_ptr(rcx));
      else
        move(qword_ptr(rcx), expr(d - 1, t));
      break;
    }
    case Op::iinc: a.emit(Inst::kIdAdd, local(u16a()), imm(vm::read_i32(p, vm::kOperandB))); break;
    case Op::pop: break;
    case Op::dup: move(expr(d, top_type(1)), expr(d - 1, top_type(1))); break;
    case Op::dup2:
      move(expr(d, top_type(2)), expr(d - 2, top_type(2)));
      move(expr(d + 1, top_type(1)), expr(d - 1, top_type(1)));
      break;
    case Op::iadd: binop(Inst::kIdAdd, d); break;
    case Op::isub: binop(Inst::kIdSub, d); break;
    case Op::iand: case Op::zand: binop(Inst::kIdAnd, d); break;
    case Op::ior: case Op::zor: binop(Inst::kIdOr, d); break;
    case Op::ixor: case Op::zxor: binop(Inst::kIdXor, d); break;
    case Op::imul: binop(Inst::kIdImul, d); break;
    case Op::idiv:
    case Op::irem: {
      Label minus_one = a.newLabel(), done = a.newLabel(), nonzero = a.newLabel();
      load(rcx, expr(d - 1));
      a.test(rcx, rcx);
      a.jnz(nonzero);
      throw_call(reinterpret_cast<void*>(&minivm_rt_throw_div_zero));
      a.bind(nonzero);
      load(rax, expr(d - 2));
      a.cmp(rcx, -1);
      a.je(minus_one);
      a.cqo();
      a.idiv(rcx);
      a.emit(Inst::kIdMov, expr(d - 2), op == Op::idiv ? rax : rdx);
      a.jmp(done);
      a.bind(minus_one);  // MIN / -1 = MIN (negation wraps), MIN % -1 = 0
      if (op == Op::idiv) {
        a.neg(rax);
        a.emit(Inst::kIdMov, expr(d - 2), rax);
      } else {
        a.emit(Inst::kIdMov, expr(d - 2), imm(0));
      }
      a.bind(done);
      break;
    }
    case Op::ineg: a.emit(Inst::kIdNeg, expr(d - 1)); break;
    case Op::inot: a.emit(Inst::kIdNot, expr(d - 1)); break;
    case Op::znot: a.emit(Inst::kIdXor, expr(d - 1), imm(1)); break;
    case Op::ishl: case Op::ishr: case Op::iushr: {
      load(rcx, expr(d - 1));
      Inst::Id id = op == Op::ishl ? Inst::kIdShl : op == Op::ishr ? Inst::kIdSar : Inst::kIdShr;
      a.emit(id, expr(d - 2), cl);  // x86 masks the count to 6 bits, as Mini does
      break;
    }
    case Op::fadd: case Op::fsub: case Op::fmul: case Op::fdiv: {
      Inst::Id id = op == Op::fadd ? Inst::kIdAddsd : op == Op::fsub ? Inst::kIdSubsd
                  : op == Op::fmul ? Inst::kIdMulsd : Inst::kIdDivsd;
      float_op(id, fexpr(d - 2), fexpr(d - 1));
      break;
    }
    case Op::fneg: {
      Operand x = fexpr(d - 1);
      if (x.isMem()) {
        a.btc(x.as<Mem>(), 63);
      } else {
        a.mov(rax, imm(INT64_MIN));
        a.movq(xmm0, rax);
        a.xorpd(x.as<Xmm>(), xmm0);
      }
      break;
    }
    case Op::i2f: {
      Operand src = expr(d - 1), dst = fexpr(d - 1);
      Xmm r = dst.isReg() ? dst.as<Xmm>() : xmm0;
      a.xorps(r, r);  // breaks cvtsi2sd's false dependency
      a.emit(Inst::kIdCvtsi2sd, r, src);
      if (dst.isMem()) a.movsd(dst.as<Mem>(), r);
      break;
    }
    case Op::f2i:
      runtime::emit_float_to_int(a, in_xmm(fexpr(d - 1), xmm0));  // shared with the interpreter
      a.emit(Inst::kIdMov, expr(d - 1), rax);
      break;
    case Op::icmpeq: case Op::icmpne: case Op::icmplt: case Op::icmple: case Op::icmpgt: case Op::icmpge:
    case Op::zcmpeq: case Op::zcmpne: {
      static const CondCode kCc[] = {CondCode::kE, CondCode::kNE, CondCode::kL, CondCode::kLE, CondCode::kG, CondCode::kGE};
      CondCode cc = op == Op::zcmpeq ? CondCode::kE : op == Op::zcmpne ? CondCode::kNE
                  : kCc[int(op) - int(Op::icmpeq)];
      a.xor_(edx, edx);
      cmp(expr(d - 2), expr(d - 1));
      a.set(cc, dl);
      a.emit(Inst::kIdMov, expr(d - 2), rdx);
      break;
    }
    case Op::fcmpeq: case Op::fcmpne: case Op::fcmplt: case Op::fcmple: case Op::fcmpgt: case Op::fcmpge: {
      // IEEE: ordered compares are false on NaN, != is true; a < b is computed as b > a.
      bool swap = op == Op::fcmplt || op == Op::fcmple;
      Xmm x = in_xmm(fexpr(swap ? d - 1 : d - 2), xmm0);
      Operand y = fexpr(swap ? d - 2 : d - 1);
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
      break;
    }
    case Op::iaddl: case Op::isubl: case Op::imull: {
      int_op(op == Op::iaddl ? Inst::kIdAdd : op == Op::isubl ? Inst::kIdSub : Inst::kIdImul, expr(d - 1), local(u16a()));
      break;
    }
    case Op::faddl: case Op::fsubl: case Op::fmull: case Op::fdivl: {
      Inst::Id id = op == Op::faddl ? Inst::kIdAddsd : op == Op::fsubl ? Inst::kIdSubsd
                  : op == Op::fmull ? Inst::kIdMulsd : Inst::kIdDivsd;
      float_op(id, fexpr(d - 1), local(u16a()));
      break;
    }
    case Op::jump: a.jmp(target()); break;
    case Op::iffalse: case Op::iftrue: {
      Operand x = expr(d - 1);
      if (x.isReg())
        a.test(x.as<Gp>(), x.as<Gp>());
      else
        a.cmp(x.as<Mem>(), 0);
      if (op == Op::iffalse) a.jz(target()); else a.jnz(target());
      break;
    }
    case Op::if_icmpeq: case Op::if_icmpne: case Op::if_icmplt: case Op::if_icmple: case Op::if_icmpgt:
    case Op::if_icmpge: {
      static const CondCode kCc[] = {CondCode::kE, CondCode::kNE, CondCode::kL, CondCode::kLE, CondCode::kG, CondCode::kGE};
      cmp(expr(d - 2), expr(d - 1));
      a.j(kCc[int(op) - int(Op::if_icmpeq)], target());
      break;
    }
    case Op::forloop: {
      Operand i = local(vm::read_u16(p, vm::kOperandA)), limit = local(vm::read_u16(p, vm::kOperandB));
      a.emit(Inst::kIdAdd, i, imm(1));
      cmp(i, limit);
      uint32_t strip = options_.strip_mining_iters;
      size_t header = size_t(int64_t(bci) + vm::branch_offset(p));
      if (strip == 0 || sc_->poll_header[header] || !options_.emit_polls) {
        a.jl(target());
        break;
      }
      // Strip mining: back to the body at once unless the thread's countdown of
      // counted-loop iterations (shared by every loop, so a nest of short loops counts
      // too) has run out; then reset it and poll.
      Label leave = a.newLabel();
      a.jge(leave);
      a.sub(qword_ptr(r15, runtime::kThreadStripCountdownOffset), 1);
      a.jg(target());  // (intrinsic stub calls subtract their element count: it may go below 0)
      a.mov(qword_ptr(r15, runtime::kThreadStripCountdownOffset), imm(int32_t(strip)));
      poll(int32_t(bci));
      a.jmp(target());
      a.bind(leave);
      break;
    }
    case Op::newarray:
      stack_helper(reinterpret_cast<void*>(&minivm_rt_newarray), bci, d, 1,
                   p[1] == 0 ? vm::Type::IntArray : vm::Type::FloatArray);
      break;
    case Op::spawn: {
      int n = runtime::VM::get().method(u16a())->param_count;
      stack_helper(reinterpret_cast<void*>(&minivm_rt_spawn), bci, d, n, vm::Type::Int);
      break;
    }
    case Op::native: {
      vm::NativeId id = vm::NativeId(u16a());
      const vm::NativeInfo& info = vm::native_info(id);
      if (id == vm::NativeId::arraycopy || id == vm::NativeId::crc32) {
        intrinsic_call(id, bci, d);
        break;
      }
      stack_helper(reinterpret_cast<void*>(&minivm_rt_native), bci, d, int(info.params.size()), info.result);
      break;
    }
    case Op::print:
      stack_helper(reinterpret_cast<void*>(&minivm_rt_print), bci, d, fn.prints[u16a()].value_count(), vm::Type::Void);
      break;
    case Op::iaload: case Op::faload: {
      load(rax, expr(d - 2));
      load(rcx, expr(d - 1));
      bounds_check(rax, rcx);
      a.mov(rax, qword_ptr(rax, rcx, 3, runtime::kArrayDataOffset));
      move(expr(d - 2, op == Op::faload ? vm::Type::Float : vm::Type::Int), rax);
      break;
    }
    case Op::iastore: case Op::fastore: {
      load(rax, expr(d - 3));
      load(rcx, expr(d - 2));
      bounds_check(rax, rcx);
      load(rdx, expr(d - 1, op == Op::fastore ? vm::Type::Float : vm::Type::Int));
      a.mov(qword_ptr(rax, rcx, 3, runtime::kArrayDataOffset), rdx);
      break;
    }
    case Op::arraylength:
      load(rax, expr(d - 1));
      a.mov(rax, qword_ptr(rax, runtime::kArrayLengthOffset));
      a.emit(Inst::kIdMov, expr(d - 1), rax);
      break;
    case Op::fsqrt: {
      Operand x = fexpr(d - 1);
      if (x.isMem()) {
        a.sqrtsd(xmm0, x.as<Mem>());
        a.movsd(x.as<Mem>(), xmm0);
      } else {
        a.sqrtsd(x.as<Xmm>(), x.as<Xmm>());
      }
      break;
    }
    case Op::atomic_add: {
      load(rax, expr(d - 3));
      load(rcx, expr(d - 2));
      bounds_check(rax, rcx);
      load(rdx, expr(d - 1));
      a.mov(r10, rdx);
      a.lock().xadd(qword_ptr(rax, rcx, 3, runtime::kArrayDataOffset), rdx);
      a.add(rdx, r10);
      a.emit(Inst::kIdMov, expr(d - 3), rdx);
      break;
    }
    case Op::call: {
      Method* callee = runtime::VM::get().method(u16a());
      bool inline_it = inline_decisions_.front();
      inline_decisions_.pop_front();
      if (inline_it) {
        inline_call(bci, d, callee);
        break;
      }
      int n = callee->param_count;
      vm::Type result = callee->function->result;
      Types t = stack_types(bci);
      spill_exprs(t, d - n);
      for (int i = 0; i < n; i++) {
        Operand arg = expr(d - n + i, t[size_t(d - n + i)]);
        if (arg.isReg() && arg.as<Reg>().isXmm()) {
          a.sub(rsp, 8);
          a.movsd(qword_ptr(rsp), arg.as<Xmm>());
        } else {
          a.emit(Inst::kIdPush, arg);
        }
      }
      spill_locals(true);
      a.mov(rbx, imm(reinterpret_cast<uint64_t>(callee)));
      mark(int32_t(bci), true);
      a.call(qword_ptr(rbx, runtime::kMethodEntryOffset));
      if (result != vm::Type::Void) a.pop(rax);
      reload_locals(true);
      reload_exprs(t, d - n);
      if (result != vm::Type::Void) move(expr(d - n, result), rax);
      break;
    }
    case Op::ret:
    case Op::vret: {
      vm::Type t = op == Op::vret ? top_type(1) : vm::Type::Void;
      if (sc_->caller != nullptr) {
        // An inlined return is a jump: no frame to tear down, so no poll (as in HotSpot).
        if (op == Op::vret) move(expr(sc_->depth_base, t), expr(d - 1, t));
        a.jmp(sc_->exit);
        break;
      }
      poll(int32_t(bci));
      emit_return(d, op == Op::vret, t);
      break;
    }
  }
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
    charge_strip_countdown(r10);
    a.mov(rax, imm(stubs.arraycopy.blob.begin));
    a.call(rax);
    t.resize(size_t(d - 5));
  } else {
    a.mov(rax, home_expr(d - 3));   // a
    a.mov(rcx, home_expr(d - 2));   // from
    a.mov(rdx, home_expr(d - 1));   // to
    a.test(rcx, rcx);
    a.js(slow);
    a.cmp(rdx, qword_ptr(rax, runtime::kArrayLengthOffset));
    a.jg(slow);
    a.cmp(rcx, rdx);
    a.jg(slow);
    a.lea(rdi, ptr(rax, rcx, 3, runtime::kArrayDataOffset));
    a.sub(rdx, rcx);
    a.mov(rsi, rdx);
    charge_strip_countdown(rsi);
    a.mov(rax, imm(stubs.crc32.blob.begin));
    a.call(rax);
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

bool Compiler::should_inline(const Method* callee, const InlineScope* chain) const {
  const vm::Function& f = *callee->function;
  if (f.inline_hint == vm::InlineHint::NoInline) return false;
  size_t depth = 0;
  for (const InlineScope* s = chain; s != nullptr; s = s->caller, depth++)
    if (s->m == callee) return false;  // recursion
  if (depth > kMaxInlineDepth) return false;
  if (f.inline_hint == vm::InlineHint::Inline) return true;
  return f.code.size() <= kMaxInlineBytes && inline_bytes_ + f.code.size() <= kInlineBudget;
}

// Decides every inlining of body `s` (recursively, in emission order) and sizes the
// frame: locals of inlined bodies and the deepest expression stack.
void Compiler::plan(InlineScope& s) {
  max_depth_ = std::max(max_depth_, s.depth_base + int(s.fn->max_stack) + 1);
  const vm::Function& f = *s.fn;
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length) {
    if (Op(f.code[bci]) != Op::call || s.info.depth_at[bci] < 0) continue;
    Method* callee = runtime::VM::get().method(vm::read_u16(f.code.data() + bci, vm::kOperandA));
    bool yes = should_inline(callee, &s);
    inline_decisions_.push_back(yes);
    if (!yes) continue;
    inline_bytes_ += callee->function->code.size();
    InlineScope& ns = scopes_.emplace_back();
    ns.m = callee;
    ns.fn = callee->function;
    ns.info = verified(callee);
    ns.caller = &s;
    ns.call_bci = uint32_t(bci);
    ns.local_base = inline_slots_;
    inline_slots_ += callee->function->local_count();
    ns.depth_base = s.depth_base + s.info.depth_at[bci] - callee->param_count;
    plan(ns);
  }
}

void Compiler::emit_body(InlineScope& s) {
  InlineScope* saved = sc_;
  sc_ = &s;
  const vm::Function& f = *s.fn;
  s.labels.resize(f.code.size() + 1);
  for (auto& l : s.labels) l = a.newLabel();
  s.poll_header.assign(f.code.size(), false);
  for (auto& l : f.loops)
    if (!l.counted || options_.counted_loop_polls) s.poll_header[l.header_bci] = true;
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length) {
    a.bind(s.labels[bci]);
    int d = s.info.depth_at[bci];
    if (d < 0) continue;  // unreachable: never emitted by the front end
    if (a.logger()) {
      a.commentf("%s%s bci %zu: %s  (line %u, depth %d)", s.caller ? "[inlined] " : "", f.name.c_str(), bci,
                 std::string(vm::op_info(Op(f.code[bci])).name).c_str(), f.line_at(uint32_t(bci)), d);
    }
    mark(int32_t(bci), false);
    if (s.poll_header[bci]) poll(int32_t(bci));
    emit(bci, s.depth_base + d);
  }
  sc_ = saved;
}

// The callee's body in place of the call: the arguments become its first locals, its
// returns jump to the end, and its pcs map to [callee@bci, caller@call_bci, ...].
void Compiler::inline_call(size_t bci, int d, Method* callee) {
  // The bodies were created by plan() in this same order.
  InlineScope* ns = nullptr;
  for (auto& s : scopes_)
    if (s.caller == sc_ && s.call_bci == bci && s.labels.empty()) {
      ns = &s;
      break;
    }
  int n = callee->param_count;
  Types t = stack_types(bci);
  if (a.logger()) a.commentf("inline %s", callee->function->name.c_str());
  for (int i = 0; i < n; i++) move(inline_home(*ns, i), expr(d - n + i, t[size_t(d - n + i)]));
  for (int i = n; i < int(callee->function->local_count()); i++) a.mov(inline_home(*ns, i), 0);
  ns->exit = a.newLabel();
  Types saved_outer = outer_types_;
  outer_types_.assign(t.begin(), t.begin() + (d - n));
  emit_body(*ns);
  outer_types_ = saved_outer;
  a.bind(ns->exit);
  mark(int32_t(bci), false);  // back in the caller, at the call
}

void Compiler::compile() {
  InlineScope& root = scopes_.emplace_back();
  root.m = m_;
  root.fn = &fn_;
  root.info = verified(m_);
  sc_ = &root;
  plan(root);
  frame_bytes_ = uint32_t(8 * (extra() + inline_slots_ + max_depth_ + 2));
  frame_bytes_ = (frame_bytes_ + 15) & ~15u;
  choose_register_locals();
  frame_complete = a.newLabel();

  prologue();
  emit_body(root);
  sc_ = &root;
  a.ud2();  // the verifier admits no fall-through off the end
  for (auto& l : fn_.loops)
    if (root.info.depth_at[l.header_bci] == 0) osr_entry(l.header_bci);
}

}  // namespace

CompiledCode* compile_method(Method* m, const JitOptions& options, std::string* listing) {
  AbortOnError errors;
  StringLogger logger;
  CodeHolder code;
  code.init(code_memory().environment());
  code.setErrorHandler(&errors);
  if (listing) {
    logger.addFlags(FormatFlags::kMachineCode);
    code.setLogger(&logger);
  }
  Assembler a(&code);
  Compiler c(m, options, a, code);
  c.compile();

  void* base = nullptr;
  if (code_memory().add(&base, &code) != kErrorOk) {
    std::fprintf(stderr, "minivm: internal error: cannot install compiled code for %s\n", m->function->name.c_str());
    std::abort();
  }
  auto out = std::make_unique<CompiledCode>();
  out->name = m->function->name;
  out->kind = runtime::BlobKind::compiled;
  out->begin = reinterpret_cast<uintptr_t>(base);
  out->end = out->begin + code.codeSize();
  out->method = m;
  out->frame_complete_offset = uint32_t(code.labelOffsetFromBase(c.frame_complete));
  out->frame_bytes = 0;
  for (auto& p : c.polls)
    out->polls.push_back({out->begin + code.labelOffsetFromBase(p.first), out->begin + code.labelOffsetFromBase(p.second)});
  std::sort(out->polls.begin(), out->polls.end(), [](auto& x, auto& y) { return x.pc < y.pc; });
  for (auto& [bci, label] : c.osr_labels) out->osr_entries.push_back({bci, out->begin + code.labelOffsetFromBase(label)});
  c.frames.describe(*out, code);
  // Debug info: every pc is covered; with safepoint_debug_info only poll and call sites
  // keep their own entries and every other pc maps to the nearest one before it.
  for (auto& dsc : c.descs) {
    if (options.safepoint_debug_info && !dsc.safepoint && !out->pc_descs.empty()) continue;
    uint32_t off = uint32_t(code.labelOffsetFromBase(dsc.at));
    runtime::PcDesc pd{off, uint32_t(out->scopes.size()), 0, dsc.safepoint};
    // The scope chain, innermost first: this body at bci, then each caller at its call.
    int32_t bci = dsc.bci;
    for (const InlineScope* s = dsc.scope; s != nullptr; bci = int32_t(s->call_bci), s = s->caller) {
      out->scopes.push_back({s->m, bci});
      pd.scope_count++;
    }
    if (!out->pc_descs.empty() && out->pc_descs.back().pc_offset == off)
      out->pc_descs.back() = pd;  // a later desc at the same pc is the more precise one
    else
      out->pc_descs.push_back(pd);
  }
  if (listing) listing->append(logger.data(), logger.dataSize());
  CompiledCode* result = out.get();
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    g_cache.push_back(std::move(out));
  }
  runtime::register_blob(result);
  // [tools] DWARF unwind info for libunwind always; perf map + jitdump with --perf-map.
  register_code_with_tools(*result);
  return result;
}

}  // namespace jit
