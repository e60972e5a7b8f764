#include "runtime/poll_lines.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "vm/opcodes.h"

namespace runtime {

namespace {

bool is_return(const vm::Function& f, uint32_t bci) {
  return bci < f.code.size() && vm::op_has(vm::Op(f.code[bci]), vm::kOpReturn);
}

void add(std::vector<PollLine>& out, const vm::Function& f, uint32_t bci, PollKind kind) {
  out.push_back({&f, f.line_at(bci), bci, kind});
}

// The functions whose bytecode `m`'s code holds: its own and, compiled, every inlined callee.
std::vector<const vm::Function*> functions_in(const Method& m, const CompiledCode* code) {
  std::vector<const vm::Function*> out{m.function};
  if (code != nullptr)
    for (const Scope& s : code->scopes)
      if (std::find(out.begin(), out.end(), s.method->function) == out.end()) out.push_back(s.method->function);
  return out;
}

}  // namespace

PollKind compiled_poll_kind(const vm::Function& f, uint32_t bci) {
  if (is_return(f, bci)) return PollKind::method_return;
  for (const vm::LoopEntry& l : f.loops)
    if (l.latch_bci == bci && l.header_bci != bci) return PollKind::strip_mined_latch;
  return PollKind::loop_header;
}

std::vector<PollLine> poll_lines(const Method& m, const CompiledCode* code) {
  std::vector<PollLine> out;
  if (m.function->is_abstract) return out;  // its body never runs: no line of it polls
  std::vector<const vm::Function*> functions = functions_in(m, code);
  std::vector<std::pair<const vm::Function*, uint32_t>> polled;  // (function, bci) of each compiled poll
  if (code != nullptr) {
    for (const PollSite& p : code->polls) {
      ScopeChain chain = code->scopes_at(p.pc);
      if (chain.count > 0) polled.push_back({chain[0].method->function, uint32_t(chain[0].bci)});
    }
  }
  auto polls_at = [&](const vm::Function* f, uint32_t bci) {
    return std::find(polled.begin(), polled.end(), std::pair{f, bci}) != polled.end();
  };
  auto in_a_loop = [](const vm::Function& f, uint32_t bci) {
    return std::any_of(f.loops.begin(), f.loops.end(),
                       [&](const vm::LoopEntry& l) { return l.header_bci == bci || l.latch_bci == bci; });
  };
  for (const vm::Function* f : functions) {
    for (const vm::LoopEntry& l : f->loops) {
      if (code == nullptr) add(out, *f, l.latch_bci, PollKind::backward_branch);
      else if (polls_at(f, l.header_bci)) add(out, *f, l.latch_bci, PollKind::loop_header);
      else if (polls_at(f, l.latch_bci)) add(out, *f, l.latch_bci, PollKind::strip_mined_latch);
      else if (l.counted) add(out, *f, l.latch_bci, PollKind::counted_no_poll);
    }
  }
  if (code == nullptr) {
    const vm::Function& f = *m.function;
    for (uint32_t bci = 0; bci < f.code.size(); bci += vm::op_info(vm::Op(f.code[bci])).length)
      if (is_return(f, bci)) add(out, f, bci, PollKind::method_return);
  } else {
    // Every other poll where it is: a return's (the JIT places no poll elsewhere).
    for (const auto& [f, bci] : polled)
      if (!in_a_loop(*f, bci)) add(out, *f, bci, compiled_poll_kind(*f, bci));
  }
  auto key = [](const PollLine& p) { return std::tuple(p.function->index, p.line, p.kind, p.bci); };
  std::sort(out.begin(), out.end(), [&](const PollLine& a, const PollLine& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end(), [](const PollLine& a, const PollLine& b) {
              return a.function == b.function && a.line == b.line && a.kind == b.kind;
            }),
            out.end());
  return out;
}

namespace {

// The function an instruction that names one calls, starts or makes a closure of.
std::optional<uint16_t> function_operand(const vm::Function& f, uint32_t bci) {
  vm::Op op = vm::Op(f.code[bci]);
  if (op != vm::Op::call && op != vm::Op::spawn && op != vm::Op::newclosure) return std::nullopt;
  return vm::read_u16(f.code.data(), bci + 1);
}

}  // namespace

std::vector<bool> methods_that_run(const std::vector<const Method*>& methods, size_t main,
                                   const std::function<const CompiledCode*(const Method&)>& code_of) {
  std::vector<bool> runs(methods.size(), false);
  std::vector<size_t> todo;
  auto enter = [&](size_t i) {
    if (i < runs.size() && !runs[i]) {
      runs[i] = true;
      todo.push_back(i);
    }
  };
  enter(main);
  for (size_t i = 0; i < methods.size(); i++)
    if (methods[i]->function->owner >= 0) enter(i);  // a virtual call may reach it
  auto each_instruction = [](const vm::Function& f, auto&& visit) {
    for (uint32_t bci = 0; bci < f.code.size(); bci += vm::op_info(vm::Op(f.code[bci])).length) visit(bci);
  };
  while (!todo.empty()) {
    const Method& m = *methods[todo.back()];
    todo.pop_back();
    const CompiledCode* code = code_of(m);
    if (code == nullptr) {
      each_instruction(*m.function, [&](uint32_t bci) {
        if (auto callee = function_operand(*m.function, bci)) enter(*callee);
      });
      continue;
    }
    // Threads and closures of the functions whose code it holds; calls only where it
    // calls: a call site's innermost scope is a call (an inlined one has none).
    for (const vm::Function* f : functions_in(m, code))
      each_instruction(*f, [&](uint32_t bci) {
        if (vm::Op(f->code[bci]) != vm::Op::call)
          if (auto callee = function_operand(*f, bci)) enter(*callee);
      });
    for (const PcDesc& d : code->pc_descs) {
      if (!d.safepoint || d.scope_count == 0) continue;
      const Scope& s = code->scope_chain(d)[0];
      const vm::Function& f = *s.method->function;
      if (s.bci >= 0 && uint32_t(s.bci) < f.code.size() && vm::Op(f.code[s.bci]) == vm::Op::call)
        enter(*function_operand(f, uint32_t(s.bci)));
    }
  }
  return runs;
}

}  // namespace runtime
