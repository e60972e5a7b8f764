#include "runtime/poll_lines.h"

#include <algorithm>
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
  if (code == nullptr) {
    const vm::Function& f = *m.function;
    for (const vm::LoopEntry& l : f.loops) add(out, f, l.latch_bci, PollKind::backward_branch);
    for (uint32_t bci = 0; bci < f.code.size(); bci += vm::op_info(vm::Op(f.code[bci])).length)
      if (is_return(f, bci)) add(out, f, bci, PollKind::method_return);
  } else {
    // The methods whose code this blob holds: its own and every inlined callee.
    std::vector<const vm::Function*> functions{m.function};
    for (const Scope& s : code->scopes)
      if (std::find(functions.begin(), functions.end(), s.method->function) == functions.end())
        functions.push_back(s.method->function);
    std::vector<std::pair<const vm::Function*, uint32_t>> polled;  // (function, bci) of each poll
    for (const PollSite& p : code->polls) {
      ScopeChain chain = code->scopes_at(p.pc);
      if (chain.count == 0) continue;
      const vm::Function& f = *chain[0].method->function;
      uint32_t bci = uint32_t(chain[0].bci);
      polled.push_back({&f, bci});
      add(out, f, bci, compiled_poll_kind(f, bci));
    }
    for (const vm::Function* f : functions)
      for (const vm::LoopEntry& l : f->loops) {
        bool header_polls = std::find(polled.begin(), polled.end(), std::pair{f, l.header_bci}) != polled.end();
        if (l.counted && !header_polls) add(out, *f, l.latch_bci, PollKind::counted_no_poll);
      }
  }
  auto key = [](const PollLine& p) { return std::tuple(p.function->index, p.line, p.kind, p.bci); };
  std::sort(out.begin(), out.end(), [&](const PollLine& a, const PollLine& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end(), [](const PollLine& a, const PollLine& b) {
              return a.function == b.function && a.line == b.line && a.kind == b.kind;
            }),
            out.end());
  return out;
}

}  // namespace runtime
