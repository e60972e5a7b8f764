#include "runtime/gc_roots.h"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/code_blob.h"
#include "runtime/compiled_code.h"
#include "runtime/frame.h"
#include "runtime/stack_walker.h"
#include "runtime/stubs.h"
#include "runtime/thread.h"
#include "runtime/vm.h"
#include "vm/opcodes.h"
#include "vm/verifier.h"

namespace runtime {

namespace {


int64_t load(uintptr_t address) { return *reinterpret_cast<const int64_t*>(address); }

class RootWalker {
 public:
  RootWalker(const RootVisitor& visit, RootStats& stats) : visit_(visit), stats_(stats) {}

  void globals() {
    VM& vm = VM::get();
    const auto& gs = vm.module().globals;
    for (size_t i = 0; i < gs.size(); i++)
      if (vm::is_reference(gs[i].type)) {
        stats_.globals++;
        value(vm.globals()[i], {RootKind::global, -1, nullptr, -1, 0, int32_t(i)});
      }
  }

  void thread(Thread* t) {
    ThreadState s = t->get_state();
    if (s == ThreadState::terminated) return;
    // The arguments stay referenced until the thread ends: they are where the call
    // stub copies them from, and keeping them is what a Java thread's Runnable does.
    if (t->start_method != nullptr) {
      const auto& types = t->start_method->function->local_types;
      for (size_t i = 0; i < t->start_args.size(); i++)
        if (vm::is_reference(types[i]))
          value(t->start_args[i], {RootKind::start_arg, t->id, t->start_method, -1, 0, int32_t(i)});
    }
    value(t->vm_result, {RootKind::vm_result, t->id});
    if (s == ThreadState::new_thread || !t->has_anchor()) return;
    stats_.threads++;
    thread_ = t->id;
    stack(t);
  }

 private:
  void value(int64_t v, const RootSource& where) {
    stats_.slots++;
    visit_(v, true, where);
  }

  void conservative(uintptr_t lo, uintptr_t hi) {
    stats_.conservative_frames++;
    RootSource where{RootKind::conservative, thread_};
    for (uintptr_t p = lo & ~uintptr_t(7); p + 8 <= hi; p += 8) {
      stats_.slots++;
      visit_(int64_t(load(p)), false, where);
    }
  }

  void stack(Thread* t) {
    uintptr_t anchor_sp = t->core.anchor.sp.load(std::memory_order_acquire);
    uintptr_t anchor_pc = t->core.anchor.pc;
    StackWalker w(t);
    Frame f;
    uintptr_t compiled_fp = 0;
    bool top = true;
    while (w.next(f)) {
      if (f.kind == FrameKind::interp) {
        interpreted(f, top, anchor_sp, anchor_pc);
        top = false;
      } else if (f.pos.fp != compiled_fp) {  // a compiled frame's scopes share one fp
        compiled_fp = f.pos.fp;
        compiled(f, top, anchor_sp);
        top = false;
      }
    }
    if (w.stop() != WalkStop::entry) {
      // Whatever the walk could not parse is scanned whole, with the registers the
      // safepoint blob may have saved just below the anchor.
      if (t->stack_high != 0) conservative(anchor_sp - 1024, t->stack_high);
    }
  }

  static bool at_poll(uintptr_t pc) {
    const CodeBlob* blob = find_blob(pc);
    return blob != nullptr && blob->find_poll_resuming_at(pc) != nullptr;
  }

  void interpreted(const Frame& f, bool top, uintptr_t anchor_sp, uintptr_t anchor_pc) {
    const vm::VerifyInfo& info = *f.method->verified;
    const vm::Function& fn = *f.method->function;
    uintptr_t fp = f.pos.fp;
    if (f.bci < 0 || size_t(f.bci) >= info.depth_at.size() || info.depth_at[size_t(f.bci)] < 0) {
      conservative(f.pos.sp, sender_sp(fp, f.method->param_count));
      return;
    }
    stats_.frames++;
    uintptr_t locals = uintptr_t(load(fp + kInterpFrameLocalsOffset));
    RootSource where{RootKind::interp_local, thread_, f.method, f.bci};
    for (size_t i = 0; i < fn.local_types.size(); i++)
      if (vm::is_reference(fn.local_types[i]) && info.live_locals.live(size_t(f.bci), uint32_t(i))) {
        where.index = int32_t(i);
        value(load(locals - 8 * i), where);
      }
    const std::vector<vm::Type>& stack = info.stack_at[size_t(f.bci)];
    bool cached_top_in_rax = top && at_poll(anchor_pc);
    where.kind = RootKind::interp_expr;
    size_t depth = stack.size();
    // A call of a function value in progress: its value and arguments are the callee's
    // (a top-level function's arguments were moved down over the value).
    if (!top && vm::Op(fn.code[size_t(f.bci)]) == vm::Op::callvalue)
      depth -= std::min<size_t>(depth, size_t(vm::read_u16(fn.code.data() + f.bci, vm::kOperandB)) + 1);
    for (size_t k = 0; k < depth; k++) {
      if (!vm::is_reference(stack[k])) continue;
      where.index = int32_t(k);
      if (cached_top_in_rax && k + 1 == stack.size())
        value(load(poll_saved_register_address(anchor_sp, Reg::rax)), where);
      else
        value(load(interp_expr_address(fp, int(k))), where);
    }
  }

  void compiled(const Frame& f, bool top, uintptr_t anchor_sp) {
    auto* code = static_cast<const CompiledCode*>(find_blob(f.pos.pc));
    uintptr_t fp = f.pos.fp;
    uintptr_t frame_end = sender_sp(fp, code->method->param_count);
    const GcMap* map = code->gc_map_at(f.pos.pc);
    bool registers_ok = true;
    if (map != nullptr)
      for (uint32_t k = 0; k < map->count; k++)
        if (code->gc_slots[map->first + k].reg != GcSlot::kFrame && !top) registers_ok = false;
    if (map == nullptr || !registers_ok) {
      conservative(top ? anchor_sp - 1024 : f.pos.sp, frame_end);
      return;
    }
    stats_.frames += code->scopes_at_return(f.pos.pc).count;
    RootSource where{RootKind::compiled_slot, thread_, code->method, f.bci, uint32_t(f.pos.pc - code->begin)};
    for (uint32_t k = 0; k < map->count; k++) {
      const GcSlot& s = code->gc_slots[map->first + k];
      if (s.reg == GcSlot::kFrame) {
        where.kind = RootKind::compiled_slot;
        where.index = s.rbp_offset;
        value(load(fp + uintptr_t(intptr_t(s.rbp_offset))), where);
      } else {
        where.kind = RootKind::compiled_register;
        where.index = s.reg;
        value(load(poll_saved_register_address(anchor_sp, Reg(s.reg))), where);
      }
    }
  }

  const RootVisitor& visit_;
  RootStats& stats_;
  int thread_ = -1;
};

}  // namespace

std::string describe(const RootSource& w) {
  std::string s;
  switch (w.kind) {
    case RootKind::global: return fmt::format("global {}", w.index);
    case RootKind::start_arg: return fmt::format("argument {} of thread {} (not started)", w.index, w.thread);
    case RootKind::vm_result: return fmt::format("vm_result of thread {}", w.thread);
    case RootKind::interp_local: s = fmt::format("local {}", w.index); break;
    case RootKind::interp_expr: s = fmt::format("expression value {}", w.index); break;
    case RootKind::compiled_slot: s = fmt::format("compiled slot [rbp{:+}]", w.index); break;
    case RootKind::compiled_register: s = fmt::format("compiled register {} (saved at a poll)", w.index); break;
    case RootKind::conservative: s = "a conservative scan"; break;
    case RootKind::array_element: return fmt::format("element {} of a reference array at {}", w.index, w.object);
    case RootKind::object_field: {
      const auto& classes = VM::get().module().classes;
      std::string name = w.bci >= 0 && size_t(w.bci) < classes.size() ? classes[size_t(w.bci)].name : "?";
      return fmt::format("field {} of an object of class {} at {}", w.index, name, w.object);
    }
  }
  if (w.method != nullptr) s += fmt::format(" of {} at bci {}", w.method->function->name, w.bci);
  if (w.kind == RootKind::compiled_slot || w.kind == RootKind::compiled_register)
    s += fmt::format(" (pc +{:#x})", w.pc_offset);
  return s + fmt::format(" in thread {}", w.thread);
}

void visit_roots(const RootVisitor& visit, RootStats& stats) {
  RootWalker roots(visit, stats);
  roots.globals();
  for (Thread* t : VM::get().threads()) roots.thread(t);
}

}  // namespace runtime
