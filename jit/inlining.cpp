// Inlining: which calls to inline (should_inline, decided up front by plan) and the
// callee's body in place of the call (inline_call).
#include "jit/compiler.h"

#include <algorithm>

#include "runtime/invariant.h"
#include "runtime/vm.h"

namespace jit::baseline {

namespace {

// Inlining rule: @inline always (unless recursive), @noinline never, otherwise callees
// of at most kMaxInlineBytes bytecode bytes, or kFreqInlineBytes where the call runs
// often (a recursive call is one); a method already on the inline chain (recursion)
// only kMaxRecursiveInlineLevel more times, at most
// kMaxInlineDepth levels, kInlineBudget bytes per compilation. The two sizes are
// HotSpot's MaxInlineSize and FreqInlineSize. HotSpot calls a site frequent from its
// profiled count; a baseline compiler has no counts, so here a site is frequent when a
// loop of its own body, or of a body it is inlined into, contains it: a call in a loop
// pays its call, spills and return on every iteration. A callee with a loop of its own
// keeps the smaller size: its time is in that loop, which runs faster in its own frame,
// where its locals need not compete with its caller's for the few registers.
constexpr size_t kMaxInlineBytes = 35;
constexpr size_t kFreqInlineBytes = 325;
constexpr size_t kMaxInlineDepth = 6;
constexpr size_t kInlineBudget = 2000;
// A recursive method is inlined into itself once (HotSpot's MaxRecursiveInlineLevel):
// fib's compiled frame then does the work of three calls, and makes the calls of four.
constexpr size_t kMaxRecursiveInlineLevel = 1;

// The one function every concrete class that is a `static_class` (a subclass, or an
// implementor of an interface: its ancestor bit) has in the table entry `entry` reads,
// or -1 when they differ or there is none.
template <typename Entry>
int32_t only_target(const vm::Module& m, uint16_t static_class, Entry entry) {
  int32_t target = -1;
  for (size_t c = 0; c < m.classes.size(); c++) {  // no object's class is abstract or an interface
    const vm::ClassInfo& k = m.classes[c];
    if (k.is_abstract || k.is_interface || !runtime::class_is(uint32_t(c), static_class)) continue;
    int32_t f = entry(k);
    if (target >= 0 && f != target) return -1;
    target = f;
  }
  return target;
}

}  // namespace

// Class hierarchy analysis: Mini programs are closed (every class is known before main
// runs), so when every concrete class at or below the static class (or implementing the
// interface) has the same method in the slot, every receiver runs it, and the call is
// direct, or inlined, once the receiver is known not to be null. Otherwise the receiver's
// class's vtable, or its itable with the interface method's selector, chooses.
Compiler::DispatchTarget Compiler::dispatch_target(const uint8_t* p) const {
  const vm::Module& m = runtime::VM::get().module();
  uint16_t static_class = vm::read_u16(p, vm::kOperandA);
  const vm::ClassInfo& in = m.classes[static_class];
  uint16_t slot = vm::read_u16(p, vm::kOperandB);
  DispatchTarget t;
  int32_t target;
  if (Op(*p) == Op::invokevirtual) {
    target = only_target(m, static_class, [&](const vm::ClassInfo& k) { return k.methods[slot]; });
    t.slot = slot;
    t.table = runtime::kClassShapeVtableOffset;
  } else {
    uint32_t selector = in.first_selector + slot;
    target = only_target(m, static_class, [&](const vm::ClassInfo& k) { return k.itable[selector]; });
    t.slot = int(selector);
    t.table = runtime::kClassShapeItableOffset;
  }
  t.direct = target >= 0;
  t.callee = runtime::VM::get().method(t.direct ? uint16_t(target) : in.methods[slot]);
  return t;
}

bool Compiler::should_inline(const Method* callee, const InlineScope* chain, bool frequent) const {
  const vm::Function& f = *callee->function;
  if (f.inline_hint == vm::InlineHint::NoInline) return false;
  size_t depth = 0, recursion = 0;
  for (const InlineScope* s = chain; s != nullptr; s = s->caller, depth++)
    if (s->m == callee) recursion++;
  if (recursion > kMaxRecursiveInlineLevel || depth > kMaxInlineDepth) return false;
  if (f.inline_hint == vm::InlineHint::Inline && recursion == 0) return true;
  size_t size = f.code.size() - f.slowdown_bytes;  // a --slowdown changes no decision
  // A call of a method to itself runs as often as the method does: a frequent site.
  size_t limit = (frequent || recursion > 0) && f.loops.empty() ? kFreqInlineBytes : kMaxInlineBytes;
  return size <= limit && inline_bytes_ + size <= kInlineBudget;
}

// Decides every inlining of body `s` (recursively, in emission order) and sizes the
// frame: locals of inlined bodies and the deepest expression stack.
void Compiler::plan(InlineScope& s) {
  max_depth_ = std::max(max_depth_, s.depth_base + int(s.fn->max_stack) + 1);
  plan_strip_loops(s);
  find_branch_targets(s);
  const vm::Function& f = *s.fn;
  s.skipped_load.assign(f.code.size(), false);
  std::vector<size_t> starts;
  for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length) {
    starts.push_back(bci);
    Op op = Op(f.code[bci]);
    if ((op != Op::call && op != Op::invokevirtual && op != Op::invokeinterface) || s.info.depth_at[bci] < 0) continue;
    Method* callee = nullptr;
    if (op == Op::call) {
      callee = runtime::VM::get().method(vm::read_u16(f.code.data() + bci, vm::kOperandA));
    } else {
      DispatchTarget t = dispatch_target(f.code.data() + bci);
      if (!t.direct) continue;  // no decision: emit dispatches
      callee = t.callee;
    }
    bool frequent = s.in_loop || std::any_of(f.loops.begin(), f.loops.end(), [&](const vm::LoopEntry& l) {
                      return bci >= l.header_bci && bci <= l.latch_bci;
                    });
    bool yes = should_inline(callee, &s, frequent);
    inline_decisions_.push_back(yes);
    if (!yes) continue;
    inline_bytes_ += callee->function->code.size() - callee->function->slowdown_bytes;
    InlineScope& ns = scopes_.emplace_back();
    ns.m = callee;
    ns.fn = callee->function;
    ns.info = verified(callee);
    ns.caller = &s;
    ns.call_bci = uint32_t(bci);
    ns.in_loop = frequent;
    ns.local_base = inline_slots_;
    inline_slots_ += callee->function->local_count();
    ns.depth_base = s.depth_base + s.info.depth_at[bci] - callee->param_count;
    alias_params(s, ns, starts, starts.size() - 1);
    plan(ns);
  }
}

// Copy propagation of arguments: `a(i, j)` inlined in a loop makes a's i and j the
// caller's i and j, in their registers, rather than copies that compete with them for
// registers and are written at every call. An argument qualifies when a `load` of a
// caller's local pushed it, with no branch landing between that load and the call (then
// each of the last loads pushed one argument), when the callee never writes the
// parameter, and when both are floats, references or neither (the register class and the
// stack maps). The caller cannot write its local while the callee runs: a body reads and
// writes only its own locals (a lambda captures a cell, not the local). The receiver of
// an invokevirtual is still loaded: its null check reads it on the expression stack.
void Compiler::alias_params(InlineScope& s, InlineScope& ns, const std::vector<size_t>& starts, size_t call) {
  const vm::Function& caller = *s.fn;
  const vm::Function& callee = *ns.fn;
  int n = ns.m->param_count;
  std::vector<bool> written(size_t(n), false);
  for (size_t bci = 0; bci < callee.code.size(); bci += vm::op_info(Op(callee.code[bci])).length) {
    if (!vm::writes_local(Op(callee.code[bci]))) continue;
    uint16_t l = vm::read_u16(callee.code.data() + bci, vm::kOperandA);
    if (l < n) written[l] = true;
  }
  ns.param_alias.assign(size_t(n), -1);
  bool receiver = Op(caller.code[starts[call]]) != Op::call;
  for (int k = n - 1, q = int(call) - 1; k >= 0 && q >= 0; k--, q--) {
    size_t bci = starts[size_t(q)];
    if (s.branch_target[starts[size_t(q) + 1]] || Op(caller.code[bci]) != Op::load) break;
    uint16_t local = vm::read_u16(caller.code.data() + bci, vm::kOperandA);
    vm::Type from = caller.local_types[local], to = callee.local_types[size_t(k)];
    if (written[size_t(k)] || is_float(from) != is_float(to) || vm::is_reference(from) != vm::is_reference(to)) continue;
    ns.param_alias[size_t(k)] = unified(s, local);
    if (k > 0 || !receiver) s.skipped_load[bci] = true;
  }
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
  MVM_ASSERT(ns != nullptr && ns->m == callee, "plan() made a body for every call that emit_body inlines");
  int n = callee->param_count;
  Types t = stack_types(bci);
  // The body's locals get their values here, where they live: its arguments, and zero
  // for the others that some path reads before writing. An argument that is a caller's
  // local (param_alias) is already in place. (register_locals.cpp counts all the body's
  // own locals as written: until this entry their registers held nothing live, and
  // spill_locals and reload_locals left them alone.)
  for (int i = 0; i < n; i++)
    if (ns->param_alias[size_t(i)] < 0) move(where(unified(*ns, i)), expr(d - n + i, t[size_t(d - n + i)]));
  for (int i = n; i < int(callee->function->local_count()); i++)
    if (ns->info.live_locals.live(0, uint32_t(i))) zero(where(unified(*ns, i)));
  reset_strips(*ns);
  ns->exit = a.newLabel();
  Types saved_outer = outer_types_;
  outer_types_.assign(t.begin(), t.begin() + (d - n));
  emit_body(*ns);
  outer_types_ = saved_outer;
  a.bind(ns->exit);
  // Every return of the body comes here, the last one emitted perhaps not the only one
  // to have checked an element's bounds.
  checked_element_ = {-1, -1};
  mark(int32_t(bci), false);  // back in the caller, at the call
}

}  // namespace jit::baseline
