// Which frame locals live in registers: the most used (loop-weighted) ones of the root
// and of every inlined body alike; and which locals may have a stale home while they do.
#include "jit/compiler.h"

#include <algorithm>
#include <limits>

namespace jit::baseline {

namespace {

// Weights only order locals: one that overflows is simply among the heaviest.
uint64_t times8(uint64_t w) { return w > std::numeric_limits<uint64_t>::max() / 8 ? std::numeric_limits<uint64_t>::max() : w * 8; }

uint64_t plus(uint64_t x, uint64_t y) { return x > std::numeric_limits<uint64_t>::max() - y ? std::numeric_limits<uint64_t>::max() : x + y; }

// 8 for each loop of `f` around `bci`.
uint64_t loop_weight(const vm::Function& f, size_t bci, uint64_t w) {
  for (auto& l : f.loops)
    if (bci >= l.header_bci && bci <= l.latch_bci) w = times8(w);
  return w;
}

// The weight of a use at loop depth 0 of body `s`: 8 for each loop around its call
// site, and around its caller's, up to the root. A body inlined into a loop runs as
// often as that loop's own code does.
uint64_t call_site_weight(const InlineScope& s) {
  uint64_t w = 1;
  for (const InlineScope* t = &s; t->caller != nullptr; t = t->caller) w = loop_weight(*t->caller->fn, t->call_bci, w);
  return w;
}

}  // namespace

bool Compiler::in_scope_chain(int u) const {
  for (const InlineScope* s = sc_; s != nullptr; s = s->caller) {
    int first = s->local_base < 0 ? 0 : root_locals() + s->local_base;  // its own slots (an aliased parameter is its caller's)
    if (u >= first && u < first + int(s->fn->local_count())) return true;
  }
  return false;
}

void Compiler::choose_register_locals() {
  // Weight each local's uses by 8 per enclosing loop (of its body and around its call
  // sites); the heaviest floats go to xmm registers, the heaviest others to general
  // registers.
  std::vector<uint64_t> weight(size_t(unified_count()), 0);
  local_types_.assign(weight.size(), vm::Type::Void);  // Void: a strip-mining slot
  // An inlined body's locals are all written where the body is entered (its arguments,
  // zeros for the rest), only to where they live.
  written_.assign(weight.size(), true);
  std::fill(written_.begin(), written_.begin() + root_locals(), false);
  for (const InlineScope& s : scopes_) {
    const vm::Function& f = *s.fn;
    for (int i = 0; i < int(f.local_count()); i++)
      if (size_t(i) >= s.param_alias.size() || s.param_alias[size_t(i)] < 0) local_types_[size_t(unified(s, i))] = f.local_types[size_t(i)];
    uint64_t site = call_site_weight(s);
    for (size_t bci = 0; bci < f.code.size(); bci += vm::op_info(Op(f.code[bci])).length) {
      Op op = Op(f.code[bci]);
      const uint8_t* p = f.code.data() + bci;
      if (vm::writes_local(op)) written_[size_t(unified(s, vm::read_u16(p, vm::kOperandA)))] = true;
      uint64_t w = loop_weight(f, bci, site);
      auto use = [&](uint16_t i) { weight[size_t(unified(s, i))] = plus(weight[size_t(unified(s, i))], w); };
      if (vm::op_has(op, vm::kOpLocal)) use(vm::read_u16(p, vm::kOperandA));
      if (vm::op_has(op, vm::kOpLocal2)) use(vm::read_u16(p, vm::kOperandB));
    }
  }
  std::vector<int> order(weight.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = int(i);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return weight[size_t(x)] > weight[size_t(y)]; });
  int gp = 0, xmm = 0;
  for (int i : order) {
    if (weight[size_t(i)] == 0) break;
    if (is_float(local_types_[size_t(i)])) {
      if (xmm < kXmmLocalCount) xmm_local_[xmm++] = i;
    } else if (gp < kLocalRegCount) {
      reg_local_[gp++] = i;
    }
  }
}

}  // namespace jit::baseline
