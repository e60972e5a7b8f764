// The baseline compiler's one class, shared by its files (jit/README.md lists them):
// where values live, the helpers every emitter uses, and one emitter per opcode.
// Internal to jit/; the rest of the VM calls jit/baseline_compiler.h.
#pragma once
#include <asmjit/x86.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "jit/baseline_compiler.h"
#include "runtime/classes.h"
#include "runtime/compiled_code.h"
#include "runtime/errors.h"
#include "runtime/frame.h"
#include "runtime/frame_recorder.h"
#include "runtime/heap.h"
#include "runtime/method.h"
#include "runtime/poll_asm.h"
#include "vm/builtins.h"
#include "vm/opcodes.h"
#include "vm/verifier.h"

namespace jit::baseline {

using namespace asmjit;
using namespace asmjit::x86;
using runtime::CompiledCode;
using runtime::Method;
using vm::Op;

inline const Gp kExprRegs[] = {rsi, rdi, r8, r9, r11};
constexpr int kExprRegCount = 5;
inline const Gp kLocalRegs[] = {rbx, r13, r14};
constexpr int kLocalRegCount = 3;
// Floats: expression depths 0..5 in xmm2..xmm7, up to eight float locals in xmm8..xmm15.
inline const Xmm kXmmExpr[] = {xmm2, xmm3, xmm4, xmm5, xmm6, xmm7};
constexpr int kXmmExprCount = 6;
inline const Xmm kXmmLocals[] = {xmm8, xmm9, xmm10, xmm11, xmm12, xmm13, xmm14, xmm15};
constexpr int kXmmLocalCount = 8;

// One method body being emitted: the compiled method itself (the root) or a callee
// inlined into it at `call_bci` of `caller`.
struct InlineScope {
  Method* m = nullptr;
  const vm::Function* fn = nullptr;
  vm::VerifyInfo info;
  const InlineScope* caller = nullptr;
  uint32_t call_bci = 0;
  bool in_loop = false;  // a loop of a body up the inline chain contains this body's call
  int local_base = -1;  // -1: the root's own homes; else first slot in the inline-locals area
  int depth_base = 0;   // absolute expression depth of this body's depth 0
  std::vector<Label> labels;
  std::vector<bool> poll_header;
  std::vector<bool> branch_target;  // bcis a branch or loop jumps to (operand_fusion.cpp)
  // An inlined body's parameter that only copies a caller's local, which neither body
  // writes while this one runs, is that local (its unified index; -1: its own slot)
  // (inlining.cpp's alias_params).
  std::vector<int> param_alias;
  std::vector<bool> skipped_load;  // bcis of this body's loads of such arguments: not emitted
  Label exit;           // where an inlined body's returns go
  // Its strip-mined counted loops (jit/strip_mining.cpp), each with a frame slot.
  struct StripLoop {
    uint32_t header, latch;  // LoopEntry's
    int var, limit;          // the loop variable and the hidden limit local
    int slot;                // inline-area slot of the strip's end
  };
  std::vector<StripLoop> strip_loops;
};

// The verifier's facts about `m` (stack depths and types); aborts if it does not verify.
vm::VerifyInfo verified(const Method* m);

class Compiler {
 public:
  Compiler(Method* m, const JitOptions& options, Assembler& a, CodeHolder& code)
      : frames(a), m_(m), fn_(*m->function), options_(options), a(a), code_(code) {}

  void compile();

  // Every poll, and where its stub (emitted after the body) says the thread is: the
  // scope and bci of the poll.
  struct PollAt {
    runtime::PollLabels labels;
    InlineScope* scope;
    int32_t bci;
  };
  std::vector<PollAt> polls;
  struct DescAt {
    Label at;
    const InlineScope* scope;
    int32_t bci;
    bool safepoint;
  };
  std::vector<DescAt> descs;
  struct ImplicitNullAt {
    Label at, handler;
  };
  std::vector<ImplicitNullAt> implicit_nulls;
  // Stack maps (runtime::GcMap), each bound at a resume or return address.
  struct GcMapAt {
    Label at;
    std::vector<runtime::GcSlot> slots;
  };
  std::vector<GcMapAt> gc_maps;
  Label frame_complete;
  std::vector<std::pair<uint32_t, Label>> osr_labels;  // loop header bci -> OSR entry
  runtime::FrameRecorder frames;  // frame shapes and special pc ranges, as emitted

 private:
  using Types = std::vector<vm::Type>;
  static bool is_float(vm::Type t) { return t == vm::Type::Float; }

  // The instruction being emitted: at `bci` of the current body, expression depth `d`
  // (absolute) before it, `p` at its opcode byte.
  struct Insn {
    size_t bci;
    int d;
    const uint8_t* p;
    Op op() const { return Op(*p); }
    uint16_t a() const { return vm::read_u16(p, vm::kOperandA); }  // operand A (U16)
    uint16_t b() const { return vm::read_u16(p, vm::kOperandB); }  // operand B (U16U16)
  };

  // --- where values live ---
  int extra() const { return m_->extra_locals; }
  // Home of the root method's local i: arguments above the return pc, the rest below rbp.
  Mem home_local(int i) const {
    int n = m_->param_count;
    if (i < n) return qword_ptr(rbp, runtime::frame_arg_offset(i, n));
    return qword_ptr(rbp, -8 * (1 + (i - n)));
  }
  // A slot of the inline area (after the root's extra locals): an inlined body's local,
  // or strip-mining state.
  Mem inline_slot(int k) const { return qword_ptr(rbp, -8 * (1 + extra() + k)); }
  // Every frame local of the compilation, the root's and the inlined bodies', has one
  // index, so that they all compete for the same registers: the root's local i is i,
  // local i of an inlined body is root_locals() + its local_base + i, or the caller's
  // local it aliases (param_alias) (the inline area's strip-mining slots have indices
  // too, which no code uses).
  int root_locals() const { return int(fn_.local_count()); }
  int unified(const InlineScope& s, int i) const {
    if (size_t(i) < s.param_alias.size() && s.param_alias[size_t(i)] >= 0) return s.param_alias[size_t(i)];
    return s.local_base < 0 ? i : root_locals() + s.local_base + i;
  }
  int unified_count() const { return root_locals() + inline_slots_; }
  Mem home(int u) const { return u < root_locals() ? home_local(u) : inline_slot(u - root_locals()); }
  // Where frame local u lives: its register, or its home.
  Operand where(int u) const {
    for (int k = 0; k < kLocalRegCount; k++)
      if (reg_local_[k] == u) return kLocalRegs[k];
    for (int k = 0; k < kXmmLocalCount; k++)
      if (xmm_local_[k] == u) return kXmmLocals[k];
    return home(u);
  }
  // Whether frame local u belongs to a body on the chain being emitted (the root's
  // always do): the others are dead here, whatever their registers hold.
  bool in_scope_chain(int u) const;
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
  Operand local(int i) const { return where(unified(*sc_, i)); }

  // --- emit_support.cpp: what every emitter uses ---
  // dst <- src (64 bits) between any two locations: registers of either class or memory.
  void move(const Operand& dst, const Operand& src);
  void load(const Gp& r, const Operand& src) { move(r, src); }
  void zero(const Operand& dst);  // 0 (or 0.0) into any location
  // x = x OP y for an integer instruction (add, sub, imul, and, or, xor), whatever x and
  // y are: a memory destination goes through rax (imul cannot write memory anyway).
  void int_op(Inst::Id id, const Operand& x, const Operand& y);
  // x = x OP y for a scalar double instruction (addsd, ...), x an xmm register or memory.
  void float_op(Inst::Id id, const Operand& x, const Operand& y);
  // Two-operand integer instruction on depths d-2 (destination) and d-1, or where they
  // were deferred to. With both deferred (FUSE_LEFT), x + y, x + k and x - k are one lea,
  // and a `store` after it takes the result in the local's register.
  void binop(Inst::Id id, const Insn& i);
  // The same for `iaddl x` and the like: the one stack operand op local x, into depth d-1
  // (or into x itself, accumulate, when a `store x` follows).
  void local_binop(Inst::Id id, const Insn& i);
  // dst = left OP right with `left` fused too (not in its expression register): depth's
  // register, or the local a `store` after it writes.
  void fused_binop(Inst::Id id, const Insn& i, int depth, Operand left, Operand right);
  void cmp(const Operand& x, const Operand& y);
  // An xmm register holding the float at `o` (o itself, or xmm0/xmm1 loaded from memory).
  Xmm in_xmm(const Operand& o, const Xmm& scratch);
  // A general register holding the value at `o`: o itself, or `scratch` loaded from it.
  Gp in_gp(const Operand& o, const Gp& scratch);
  // A stub call does `n` elements of work without a poll: it counts as n iterations
  // against the strip-mining countdown, and the loops around it end their strips, so a
  // counted loop around stub calls still polls within the bound. Clobbers rax.
  void charge_strip_countdown(const Gp& n, size_t bci);
  void poll(int32_t bci);
  // Records, at `at`, where the arrays of every scope of the current body chain are:
  // expression depths below `depth` (those below `spilled_below` in their homes, the
  // rest where expr() puts them), and every array local (those of any scope that live
  // in registers, in their registers unless `locals_in_homes`).
  void record_gc_map(const Label& at, size_t bci, int depth, int spilled_below, bool locals_in_homes);
  // Stores the reference locals of the body chain live at `bci` that are in general
  // registers to their homes, so a runtime call that may collect finds them there (C
  // code may keep the callee-saved registers anywhere).
  void spill_reference_locals(size_t bci);
  // Starts a new pc desc at the current position.
  void mark(int32_t bci, bool safepoint);
  // The types of the whole (absolute) expression stack before `bci` of the current body.
  Types stack_types(size_t bci) const;
  void spill_exprs(const Types& t, int below);
  void reload_exprs(const Types& t, int below);
  // Register locals of the body chain to their homes and back: all of them around Mini
  // calls (the callee may be interpreted and use every register); only the xmm ones
  // around C calls (the others are callee-saved in C). With `across` (a Mini call at
  // that bci of the current body), only those whose value some path after the call
  // still reads.
  void spill_locals(bool gp, std::optional<size_t> across = std::nullopt);
  void reload_locals(bool gp, std::optional<size_t> across = std::nullopt);
  // Whether frame local u is live after the call at `bci` of the current body: in that
  // body, or in a caller at its inlined call (an aliased parameter counts in both).
  bool live_across(int u, size_t bci) const;
  // Whether frame local u is live before `bci` of the current body, or before the
  // inlined call of a body on the chain.
  bool live_in_chain(int u, size_t bci) const;
  // Anchor at this frame with pc = `after`, then call `fn` with rsp aligned; rsp is
  // restored from rbp afterwards.
  void call_runtime(void* fn, const Label& after);
  void throw_call(void* fn);
  // A path the hot code jumps to only to throw or to take a slow path, emitted after the
  // body by cold_paths so that the fast path falls through from one check to the next:
  // a loop stays short and its taken branches few. `emit` runs there with the registers
  // as at the jump, under the scope and bci of the instruction being emitted, which the
  // path's pc desc names (a safepoint desc: it calls the runtime, whose Mini stack trace
  // needs the line). A slow path ends with a jump back.
  Label cold(std::function<void()> emit);
  // A runtime stack helper (runtime_calls.h) at depth d popping `pops` values and
  // pushing one of type `result` (Void: none). Its operands are passed in their homes.
  void stack_helper(void* fn, size_t bci, int d, int pops, vm::Type result, bool spilled = false);
  // Report the contract's errors (runtime/errors.h's NullUse for a null reference).
  std::function<void()> throws_null(runtime::NullUse use);
  std::function<void()> throws_null_member(size_t bci);
  void null_member_check(const Gp& ref, size_t bci);
  void field_null_check(const Gp& ref, size_t bci, uint16_t field);
  // The next instruction reads or writes through a reference at a displacement below
  // runtime::kImplicitNullLimit and is its null check: on null it faults, and the
  // SIGSEGV handler resumes at the cold path `throw_path` (runtime/code_blob.h,
  // ImplicitNull). The hot path has neither a test nor a branch, as HotSpot's.
  void implicit_null_check(std::function<void()> throw_path);
  // dispatch_slot >= 0: the receiver's class's table at `dispatch_table` (its vtable, or
  // its itable with a selector for the slot) chooses the method (callee is the static
  // class's or interface's, which has the same signature).
  void invoke(size_t bci, int d, Method* callee, int dispatch_slot = -1,
              int32_t dispatch_table = runtime::kClassShapeVtableOffset);
  void invoke_on_object(const Insn& i);
  // A call of a function value (callvalue) with n arguments and this result type.
  void invoke_value(size_t bci, int d, int n, vm::Type result);
  void push_arguments(const Types& t, int d, int n);
  void take_result(const Types& t, int d, vm::Type result, size_t bci);
  void new_array(const Insn& i, vm::Type type, runtime::ArrayKind kind);
  void class_test(uint16_t target);
  void bounds_check(const Gp& array, const Gp& index, runtime::NullUse use = runtime::NullUse::array_index);

  // --- register_locals.cpp ---
  // After plan(): every body's locals compete, weighted by the loops around them.
  void choose_register_locals();

  // --- inlining.cpp ---
  // The method an invokevirtual or invokeinterface at p calls: the only one class
  // hierarchy analysis finds (direct), or the static class's or interface's, which has
  // the same signature, with the table entry that chooses at run time.
  struct DispatchTarget {
    Method* callee = nullptr;
    bool direct = false;
    int slot = -1;                                      // vtable slot or itable selector
    int32_t table = runtime::kClassShapeVtableOffset;  // which of the class's tables
  };
  DispatchTarget dispatch_target(const uint8_t* p) const;
  bool should_inline(const Method* callee, const InlineScope* chain, bool frequent) const;
  void plan(InlineScope& s);
  // Which parameters of `ns`, inlined into `s` at `call` (the instruction's index in
  // `starts`, the bcis of s's instructions so far), are copies of s's locals.
  void alias_params(InlineScope& s, InlineScope& ns, const std::vector<size_t>& starts, size_t call);
  void inline_call(size_t bci, int d, Method* callee);

  // --- operand_fusion.cpp: constants and locals used where they are ---
  void find_branch_targets(InlineScope& s);
  // The operand a `load` or `ldc` at `bci` of the current body pushes, used in place:
  // a local's register or home, an int constant as an immediate (if it fits 32 bits), a
  // float constant in the code's constant pool. False for anything else.
  bool operand_of(size_t bci, Operand& o, vm::Type& t);
  bool fusible(size_t bci) const;  // in this body, reachable, and no branch lands on it
  // If the instruction after the `load`/`ldc` at `bci` consumes its value (or, for a
  // comparison, its value and the next one's), defers it instead of emitting it: the
  // consumer takes it with right_operand/left_operand.
  bool defer_operand(size_t bci);
  // The top (right) and second (left) operand of `i`: deferred, or at depth d-1 / d-2.
  // Take the right one first.
  Operand right_operand(const Insn& i, vm::Type t);
  Operand left_operand(const Insn& i, vm::Type t);
  // The instruction after `i` when `i`'s emitter may do its work too: in this body, and
  // no branch lands on it; else null. take_next then binds its label, marks its pc desc
  // and tells emit_body to skip it.
  const uint8_t* fusible_next(const Insn& i) const;
  void take_next(const Insn& i);
  // The local a `store` right after `i` writes, if it is in a general register that i's
  // result can go to directly; else -1.
  int next_store_to_register(const Insn& i) const;
  // A comparison followed by iftrue/iffalse: the branch's target and sense (`when`), its
  // label bound and pc desc marked here, and emit_body told to skip it; else null.
  const Label* fused_branch(const Insn& i, bool& when);
  // `iaddl x; store x` and the like (`x += e`, vm/codegen.cpp's accumulate): x = x OP top
  // in x's own register or home, and the store taken (take_next). False, emitting
  // nothing, for any other next instruction.
  bool accumulate(const Insn& i, Inst::Id id, vm::Type t, const Operand& top);
  // A float element loaded at depth `to` whose next instruction is fadd, fsub, fmul or
  // fdiv: that instruction's scalar double op (taken, take_next), to be done on the
  // element in memory. kIdNone for any other next instruction.
  Inst::Id fused_float_consumer(const Insn& i, int to);
  Mem float_constant(uint64_t bits);  // RIP-relative, emitted after the code
  bool is_two(const Operand& o) const;  // the constant 2.0 of the pool
  Label sign_mask();                   // 16 bytes: the sign bit of a double, for xorpd
  void emit_float_constants();

  // --- loop_products.cpp: a while loop's products carried from its condition into its body ---
  // `fmulll a, b` at `bci` of the current body: (a, b).
  std::optional<std::pair<int, int>> product_at(size_t bci) const;
  // Which products the root body's while loops carry, in which free float-local register.
  void plan_loop_products(InlineScope& s);
  // At a body's `fmulll a, b` whose product the condition left in a register: uses it
  // instead of multiplying (true).
  bool reuse_loop_product(size_t bci, int d);
  // After a condition's `fmulll` whose product the body reuses: a copy in its register.
  void keep_loop_product(size_t bci, int d);
  // The OSR entry into a loop's header: the products its body expects in registers.
  void loop_products_at_osr(uint32_t header_bci);

  // --- compile_method.cpp: one body, bytecode by bytecode ---
  void emit_body(InlineScope& s);

  // --- compiler_frames.cpp: building and tearing down the frame ---
  void prologue();
  void stack_overflow_path();  // the prologue's, emitted after the body
  void poll_stubs();           // every poll's slow path, emitted after the body
  void cold_paths();           // every throw and slow path, emitted after the body
  void osr_entry(uint32_t header_bci);
  void emit_return(int d, bool value, vm::Type type);

  // --- emit_ops.cpp: one emitter per opcode of vm/opcodes.def (Insn: above) ---
  const Label& target(const Insn& i) const { return sc_->labels[size_t(int64_t(i.bci) + vm::branch_offset(i.p))]; }
  vm::Type top_type(const Insn& i, int k) const { return stack_types(i.bci)[size_t(i.d - k)]; }  // at depth d-k
  void emit(size_t bci, int d);  // dispatches to emit_op<op>
  template <Op op>
  void emit_op(const Insn& i);
  // Bodies shared by several opcodes' emitters.
  void global_access(const Insn& i, bool store);
  void divide(const Insn& i, bool remainder);
  void divide_by_power_of_two(const Operand& x, int64_t v, bool remainder);  // v = 2^k, k >= 1
  void shift(const Insn& i, Inst::Id id);
  void int_compare(const Insn& i, CondCode cc);
  void float_compare(const Insn& i);
  void float_branch(Op op, bool when, const Label& to);
  void if_bool(const Insn& i, bool when);
  void if_compare(const Insn& i, CondCode cc);
  void array_load(const Insn& i, vm::Type elem);
  void array_load(const Insn& i, vm::Type elem, const Operand& array, const Operand& index, int to);
  void array_store(const Insn& i, vm::Type elem);
  // ialoadll/faloadll and iastorell/fastorell: the store skips the bounds check when
  // the load has made it on the same two locals (checked_element_).
  void local_element_load(const Insn& i, vm::Type elem);
  void local_element_store(const Insn& i, vm::Type elem);
  void array_store(vm::Type elem, const Operand& array, const Operand& index, const Operand& value,
                   bool checked = false);
  void intrinsic_call(vm::NativeId id, size_t bci, int d);
  void return_from(const Insn& i, bool value);

  // --- strip_mining.cpp: counted loops that poll every strip of iterations ---
  void plan_strip_loops(InlineScope& s);
  Mem strip_countdown() const;  // the thread's countdown, shared by every strip-mined loop
  const InlineScope::StripLoop* strip_loop_at_latch(size_t bci) const;
  void strip_latch(const Insn& i, const InlineScope::StripLoop& loop);
  // After a write to local `i` of the current body: a strip-mined loop whose limit it is
  // is being entered, and starts its first strip (or ends it, for its next latch to start).
  void after_local_write(int i);
  // A stub call's elements were charged to the countdown: the enclosing strip-mined
  // loops (of every scope up the inline chain) end their strips at their next latch.
  void end_enclosing_strips(size_t bci);
  // Every strip of scope `s` ends at its next latch (at frame, inline and OSR entry).
  void reset_strips(const InlineScope& s);

  Method* m_;                  // the root method
  const vm::Function& fn_;     // its function
  InlineScope* sc_ = nullptr;  // the body being emitted
  Types outer_types_;          // expression types below the current body's depth 0
  struct ColdPath {
    Label entry;
    InlineScope* scope;
    int32_t bci;
    Types outer;  // the inlining callers' expression stack (outer_types_) at the jump
    std::function<void()> emit;
  };
  std::vector<ColdPath> cold_;
  // The instruction being emitted (a cold path's scope and bci): emit sets it and puts
  // the caller's back after an inlined body.
  InlineScope* emitting_scope_ = nullptr;
  int32_t emitting_bci_ = 0;
  std::deque<InlineScope> scopes_;       // every body, root first; addresses stay put
  std::deque<bool> inline_decisions_;    // made by plan(), consumed in the same order by emit
  size_t inline_bytes_ = 0;
  int inline_slots_ = 0;                 // locals of all inlined bodies
  int max_depth_ = 0;                    // deepest absolute expression depth, plus slack
  const JitOptions& options_;
  Assembler& a;
  CodeHolder& code_;
  std::vector<Operand> deferred_;  // operands not yet in their expression registers
  uint32_t calls_emitted_ = 0;     // calls emitted so far (checks the emitters' CALLS trait)
  // The element `local A[local B]` whose bounds an ialoadll or faloadll has checked, as
  // unified locals, while neither is written and no branch lands in between: the
  // iastorell or fastorell of the same `a[i] op= e` then stores without a second check.
  // {-1, -1} when none.
  std::pair<int, int> checked_element_{-1, -1};
  bool skip_next_ = false;          // a fused branch was emitted with its comparison
  std::vector<std::pair<uint64_t, Label>> float_constants_;
  Label sign_mask_;
  Label stack_overflow_;  // the prologue's out-of-line path
  Label code_begin_;      // the method's entry: where a call of the method itself goes
  // Frame locals (unified indices) whose home may be stale while they are in a
  // register: the root's that some bytecode stores to, every inlined body's
  // (register_locals.cpp).
  std::vector<bool> written_;
  std::vector<vm::Type> local_types_;  // of every frame local (unified indices)
  int reg_local_[kLocalRegCount] = {-1, -1, -1};  // unified indices
  int xmm_local_[kXmmLocalCount] = {-1, -1, -1, -1, -1, -1, -1, -1};
  uint32_t frame_bytes_ = 0;
  // Loop-carried products (loop_products.cpp): per bci of the root body, the float-local
  // register (index into kXmmLocals) a producing fmull copies to / a reusing load takes.
  struct LoopProduct {
    uint32_t header;
    int a, b, reg;
  };
  std::vector<LoopProduct> loop_products_;
  std::vector<int8_t> product_reg_, reused_reg_;
};

}  // namespace jit::baseline
